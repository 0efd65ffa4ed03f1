// The business module's workbench (issue 25, menu 110 `dashboard/biz`) in
// chromium against the kernel binary: switch to the business module, the
// workbench shows the user's latest notices (unread marked, the tag drawn at
// once, light and dark) and the other
// modules to switch to; back in the system module; a role without the
// business module sees neither the module nor its workbench.
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { start, stop, context, done, login, axe, shot, role, user, must, userPassword } from './adminlib.js'

let env
const file = 'admin-biz'

before(async () => {
  env = await start('admin-biz')
})
after(async () => {
  await stop(env, file)
})

describe('business workbench (issue 25)', { concurrency: 1 }, () => {
  it('notices and module shortcuts', { timeout: 120000 }, async () => {
    await must(env.base, 'POST', '/api/v1/sys/notice', { title: 'E2E biz broadcast', type: 1, receiverType: 0 }, env.adminToken)
    const ctx = await context(env)
    const page = await ctx.newPage()
    await login(env, page, 'superAdmin', env.adminPassword)
    await page.locator('[data-test=module-switch]').click()
    await page.locator('.el-select-dropdown:visible .el-select-dropdown__item').filter({ hasText: '业务中心' }).click()
    await page.locator('[data-test="menu-dashboard/biz"]').click()
    await page.locator('[data-test=biz-workbench]').waitFor()
    const notices = page.locator('[data-test=biz-notices] li')
    await notices.filter({ hasText: 'E2E biz broadcast' }).waitFor()
    assert.match(await notices.filter({ hasText: 'E2E biz broadcast' }).textContent(), /Unread/)
    // The Unread tag is drawn at once: no entry animation (Element Plus's
    // zoom-in-center starts at opacity 0, scaleX(0): the screenshot taken
    // right after the notices arrived showed a blank tag).
    const unread = notices.filter({ hasText: 'E2E biz broadcast' }).locator('[data-test=biz-unread]')
    const look = await unread.evaluate((el) => {
      const cs = getComputedStyle(el)
      return { opacity: cs.opacity, transform: cs.transform, width: el.getBoundingClientRect().width, text: el.textContent.trim(), color: cs.color, bg: cs.backgroundColor }
    })
    assert.equal(look.opacity, '1', JSON.stringify(look))
    assert.equal(look.transform, 'none', JSON.stringify(look))
    assert.ok(look.width > 20, JSON.stringify(look))
    assert.equal(look.text, 'Unread')
    assert.notEqual(look.color, look.bg)
    // The business module has no other page; the system module is offered.
    await page.locator('[data-test=biz-no-quick]').waitFor()
    await page.locator('[data-test=biz-module-system]').waitFor()
    await shot(page, 'admin-biz-workbench')
    await axe(page, 'the business workbench')
    // Dark theme: the tag keeps its text and contrast (axe).
    await page.click('[data-test=theme-toggle]')
    await page.waitForFunction(() => document.documentElement.classList.contains('dark'))
    assert.equal(await unread.evaluate((el) => getComputedStyle(el).opacity), '1')
    await shot(page, 'admin-biz-workbench-dark')
    await axe(page, 'the business workbench (dark)')
    await page.click('[data-test=theme-toggle]')
    await page.click('[data-test=biz-module-system]')
    await page.locator('[data-test="menu-system/user/index"]').waitFor()
    await done(ctx)
  })

  it('a user without the business module sees neither it nor its workbench', { timeout: 60000 }, async () => {
    const viewer = await role(env, 'e2e-biz-none', [100])
    const token = await user(env, 'e2e.biznone', [viewer])
    const ctx = await context(env)
    const page = await ctx.newPage()
    await login(env, page, 'e2e.biznone', userPassword)
    assert.equal(await page.locator('[data-test="menu-dashboard/biz"]').count(), 0)
    const modules = await must(env.base, 'GET', '/api/v1/personal/modules', undefined, token)
    assert.ok(!(modules.modules ?? []).some((m) => m.code === 'business'), 'the business module is not offered')
    await done(ctx)
  })
})
