// The console's look (issue 25) in chromium against the kernel binary:
// dark mode (following prefers-color-scheme, the header toggle, the choice
// kept) axe-clean on the login page, the shell and an administration page;
// the phone layout at 390×844 (no horizontal scroll, the menu as a drawer)
// on the login page and every personal tab. With AK_GALLERY=1 it also
// writes the README's gallery (docs/img/*.png, small PNGs).
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { start, stop, login, axe, shot, done } from './adminlib.js'

let env
const file = 'console-look'
const gallery = process.env.AK_GALLERY === '1' ? path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs', 'img') : ''

before(async () => {
  env = await start('console-look')
})
after(async () => {
  await stop(env, file)
})

/** ctxOf opens a context like adminlib's context, with its own viewport and colour scheme. */
async function ctxOf(opts) {
  const ctx = await env.browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 720 }, ...opts })
  ctx.setDefaultTimeout(15000)
  ctx.problems = []
  ctx.on('page', (page) => {
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) ctx.problems.push('CSP: ' + m.text())
    })
    page.on('pageerror', (e) => ctx.problems.push('page error: ' + e.message))
  })
  return ctx
}
const isDark = (page) => page.evaluate(() => document.documentElement.classList.contains('dark'))
/** noSideScroll fails when the document or the main area scrolls sideways. */
async function noSideScroll(page, what) {
  const w = await page.evaluate(() => {
    const m = document.querySelector('.ak-main')
    return { doc: document.documentElement.scrollWidth, view: document.documentElement.clientWidth, main: m ? m.scrollWidth - m.clientWidth : 0 }
  })
  assert.ok(w.doc <= w.view && w.main <= 0, `${what} scrolls sideways: ${JSON.stringify(w)}`)
}
async function galleryShot(page, name) {
  if (!gallery) return
  fs.mkdirSync(gallery, { recursive: true })
  const p = path.join(gallery, name + '.png')
  await page.screenshot({ path: p })
  const size = fs.statSync(p).size
  assert.ok(size <= 150 * 1024, `${name}.png is ${size} B (> 150 KB)`)
}

describe('the console look (issue 25)', { concurrency: 1 }, () => {
  it('dark mode follows the system, toggles from the header, is kept, and is axe-clean', { timeout: 90000 }, async () => {
    const ctx = await ctxOf({ colorScheme: 'dark' })
    const page = await ctx.newPage()
    await page.goto(env.base + '/login')
    await page.locator('[data-test=submit]').waitFor()
    assert.equal(await isDark(page), true, 'the login page follows prefers-color-scheme: dark')
    await shot(page, 'dark-login')
    await axe(page, 'the login page (dark)')
    await login(env, page, 'superAdmin', env.adminPassword)
    await shot(page, 'dark-shell')
    await axe(page, 'the shell (dark)')
    await page.locator('[data-test="menu-system/role/index"]').click()
    await page.locator('[data-test=table] .el-table__body tr').first().waitFor()
    await page.locator('.el-loading-mask').waitFor({ state: 'detached' }).catch(() => {})
    await shot(page, 'dark-roles')
    await axe(page, 'the roles page (dark)')
    await page.click('[data-test=add]')
    await page.locator('[data-test=edit-dialog]').waitFor()
    await axe(page, 'the role dialog (dark)')
    await page.click('[data-test=dialog-cancel]')
    // The toggle: light, kept across a reload though the system says dark.
    await page.click('[data-test=theme-toggle]')
    assert.equal(await isDark(page), false)
    await page.reload()
    await page.locator('[data-test=table]').waitFor()
    assert.equal(await isDark(page), false, 'the choice is kept')
    await axe(page, 'the roles page (light, chosen)')
    await page.click('[data-test=theme-toggle]')
    assert.equal(await isDark(page), true)
    assert.equal(await page.evaluate(() => localStorage.getItem('ak.theme')), 'dark')
    await done(ctx)
  })

  it('a phone (390×844): the login page and every personal tab without sideways scrolling, the menu as a drawer', { timeout: 90000 }, async () => {
    const ctx = await ctxOf({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, colorScheme: 'light' })
    const page = await ctx.newPage()
    await page.goto(env.base + '/login')
    await page.locator('[data-test=submit]').waitFor()
    await noSideScroll(page, 'the login page')
    await shot(page, 'phone-login')
    await axe(page, 'the login page (phone)')
    await login(env, page, 'superAdmin', env.adminPassword)
    await noSideScroll(page, 'the home page')
    // The menu is off-canvas until the header's button opens it.
    const aside = page.locator('.ak-aside')
    const shown = async () => {
      const b = await aside.boundingBox()
      return !!b && b.x + b.width > 1
    }
    assert.equal(await shown(), false, 'the menu is hidden on a phone')
    await page.click('[data-test=nav-toggle]')
    await page.waitForFunction(() => {
      const b = document.querySelector('.ak-aside').getBoundingClientRect()
      return b.x >= 0
    })
    await shot(page, 'phone-menu')
    await axe(page, 'the menu drawer (phone)')
    await aside.locator('.el-menu-item').filter({ hasText: 'Personal centre' }).click()
    await page.waitForURL(/\/personal\/profile/)
    await page.waitForFunction(() => document.querySelector('.ak-aside').getBoundingClientRect().right <= 1)
    for (const tab of ['profile', 'password', 'sessions', 'bindings', 'passkeys']) {
      await page.goto(env.base + '/personal/' + tab)
      await page.locator('.el-tabs__item.is-active').waitFor()
      await page.locator('.el-loading-mask').waitFor({ state: 'detached' }).catch(() => {})
      await noSideScroll(page, `the personal tab ${tab}`)
      await shot(page, 'phone-personal-' + tab)
      await axe(page, `the personal tab ${tab} (phone)`)
    }
    await page.goto(env.base + '/personal/sessions')
    await page.locator('.el-tabs__item.is-active').waitFor()
    await galleryShot(page, 'console-personal-phone')
    await done(ctx)
  })

  it('the README gallery at 1280×720 (written to docs/img with AK_GALLERY=1)', { timeout: 90000 }, async () => {
    const ctx = await ctxOf({ colorScheme: 'light' })
    const page = await ctx.newPage()
    await page.goto(env.base + '/login')
    await page.locator('[data-test=submit]').waitFor()
    await galleryShot(page, 'console-login')
    await login(env, page, 'superAdmin', env.adminPassword)
    for (const [component, name] of [['system/user/index', 'users'], ['system/role/index', 'roles']]) {
      await page.locator(`[data-test="menu-${component}"]`).click()
      await page.locator('[data-test=table] .el-table__body tr').first().waitFor()
      await page.locator('.el-loading-mask').waitFor({ state: 'detached' }).catch(() => {})
      await noSideScroll(page, `the ${name} page at 1280×720`)
      await shot(page, 'look-' + name)
      await galleryShot(page, 'console-' + name)
    }
    // The users table keeps the account column in view next to the pinned actions.
    await page.locator('[data-test="menu-system/user/index"]').click()
    await page.locator('[data-test=table] .el-table__body tr').first().waitFor()
    const fixedLeft = await page.locator('[data-test=table] .el-table-fixed-column--left').first().isVisible()
    assert.ok(fixedLeft, 'the account column is pinned on the left')
    // Every column is in view at 1280×720: the last unpinned header ends before the pinned actions start.
    const cols = await page.evaluate(() => {
      const ths = [...document.querySelectorAll('[data-test=table] .el-table__header-wrapper th')]
      const right = ths.filter((th) => th.classList.contains('el-table-fixed-column--right'))[0].getBoundingClientRect().left
      const free = ths.filter((th) => !th.className.includes('el-table-fixed-column'))
      return { right, last: free[free.length - 1].getBoundingClientRect().right }
    })
    assert.ok(cols.last <= cols.right + 1, `the status column runs under the actions: ${JSON.stringify(cols)}`)
    // The user dialog's roles list opens below its field, not over the phone and e-mail fields.
    await page.click('[data-test=add]')
    await page.locator('[data-test=edit-dialog]').waitFor()
    await page.locator('[data-test=f-roles]').click()
    const list = page.locator('.el-select-dropdown:visible').last()
    await list.waitFor()
    const [roles, email, dropdown] = [await page.locator('[data-test=f-roles]').boundingBox(), await page.locator('[data-test=f-email]').boundingBox(), await list.boundingBox()]
    assert.ok(dropdown.y >= roles.y + roles.height - 1, `the roles list opens below its field: ${JSON.stringify({ roles, dropdown })}`)
    assert.ok(dropdown.y >= email.y + email.height, 'the roles list does not cover the e-mail field')
    await shot(page, 'look-user-dialog-roles')
    await page.keyboard.press('Escape')
    await page.click('[data-test=dialog-cancel]')
    await page.goto(env.base + '/system/config')
    await page.locator('.ak-panel').first().waitFor()
    await page.locator('.el-loading-mask').waitFor({ state: 'detached' }).catch(() => {})
    await galleryShot(page, 'console-providers')
    await shot(page, 'look-providers')
    await done(ctx)
  })
})
