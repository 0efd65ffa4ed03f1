// The recycle bin (issue 25) in chromium against the kernel binary: every
// type's tab loads; a user deleted through the users API is restored from
// the bin, deleted again, refused with the kernel's 42021 text while a new
// user holds the account, then purged (confirmed, then re-authenticated:
// +R with TOTP on); an org under a deleted
// org is refused with the 42032 text; then the permission case (a viewer
// sees no restore or purge button and the API refuses the calls).
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { start, stop, context, done, login, open, axe, shot, confirm, role, user, api, must, userPassword } from './adminlib.js'

let env
const file = 'admin-recycle'

before(async () => {
  env = await start('admin-recycle')
})
after(async () => {
  await stop(env, file)
})

const row = (page, text) => page.locator('[data-test=table] .el-table__body tr').filter({ hasText: text })
const call = (method, path, body) => must(env.base, method, path, body, env.adminToken)
async function tab(page, label) {
  await page.locator('[data-test=recycle-types] .el-tabs__item').filter({ hasText: label }).click()
  await page.locator('.el-loading-mask').waitFor({ state: 'detached' }).catch(() => {})
}
async function message(page, text) {
  await page.locator('.el-message').filter({ hasText: text }).last().waitFor()
}

describe('recycle bin (issue 25)', { concurrency: 1 }, () => {
  it('restore a deleted user, 42021 and 42032 shown, purge with re-authentication', { timeout: 120000 }, async () => {
    const first = await call('POST', '/api/v1/sys/user', { account: 'e2e.binned', name: 'E2E Binned', password: 'Init#Pass123', roleIds: [] })
    await call('DELETE', `/api/v1/sys/user/${first.id}`)
    const parent = await call('POST', '/api/v1/sys/org/add', { parentId: 0, name: 'E2E Parent', code: 'e2e-parent', sort: 0, enabled: true })
    const child = await call('POST', '/api/v1/sys/org/add', { parentId: Number(parent), name: 'E2E Child', code: 'e2e-child', sort: 0, enabled: true })
    await call('DELETE', `/api/v1/sys/org/${child}`)
    await call('DELETE', `/api/v1/sys/org/${parent}`)

    const ctx = await context(env)
    const page = await ctx.newPage()
    await login(env, page, 'superAdmin', env.adminPassword)
    await open(page, 'system/recycle/index')
    await row(page, 'e2e.binned').waitFor()

    // Every type the API serves has its tab, and each loads.
    for (const label of ['Roles', 'Organisations', 'Positions', 'Menus', 'Modules', 'Settings', 'Dictionaries', 'Dictionary items', 'Jobs', 'Files', 'Users']) {
      await tab(page, label)
      assert.equal(await page.locator('[data-test=table-error]').count(), 0, `the ${label} tab failed`)
    }
    await row(page, 'e2e.binned').waitFor()
    await shot(page, 'admin-recycle')
    await axe(page, 'the recycle bin')

    // Restore, then the account is live again.
    await page.click('[data-test="restore-e2e.binned"]')
    await message(page, 'Restored.')
    await row(page, 'e2e.binned').waitFor({ state: 'detached' })
    assert.equal((await call('GET', '/api/v1/sys/user/page?Account=e2e.binned')).total, 1)

    // Deleted again while a new user takes the account: the restore is refused with the kernel's text.
    await call('DELETE', `/api/v1/sys/user/${first.id}`)
    await call('POST', '/api/v1/sys/user', { account: 'e2e.binned', name: 'E2E Newcomer', password: 'Init#Pass123', roleIds: [] })
    await tab(page, 'Roles')
    await tab(page, 'Users')
    await page.click('[data-test="restore-e2e.binned"]')
    await message(page, 'a record with the same unique value already exists')
    await shot(page, 'admin-recycle-conflict')

    // Purge (confirmed; +R): with TOTP on, the page's session has no
    // re-authentication window: 403/40024 opens the dialog, the password
    // opens the window and the purge is replayed once.
    await call('POST', '/api/v1/auth/reauth', { method: 'password', password: env.adminPassword })
    await call('PUT', '/api/v1/sys/config/batch', [{ configKey: 'sys.security.totp.enabled', configValue: 'true' }])
    const purges = []
    page.on('response', (r) => {
      if (r.request().method() === 'DELETE' && r.url().includes('/api/v1/sys/recycle/user/')) purges.push([r.status(), r.request().headers()['x-smart-reauth-retried'] || ''])
    })
    await page.click('[data-test="purge-e2e.binned"]')
    await confirm(page)
    const dialog = page.locator('.el-dialog', { hasText: 'Confirm it is you' })
    await dialog.waitFor()
    await page.fill('#reauth-password', env.adminPassword)
    await page.click('[data-test=reauth-confirm]')
    await message(page, 'Purged for good.')
    assert.deepEqual(purges, [[403, ''], [200, '1']])
    await call('PUT', '/api/v1/sys/config/batch', [{ configKey: 'sys.security.totp.enabled', configValue: 'false' }])
    await row(page, 'e2e.binned').waitFor({ state: 'detached' })
    const left = await call('GET', '/api/v1/sys/recycle/user/page?Current=1&Size=100')
    assert.equal(left.items.filter((i) => i.code === 'e2e.binned').length, 0)
    const r = await api(env.base, 'POST', `/api/v1/sys/recycle/user/${first.id}/restore`, undefined, env.adminToken)
    assert.equal(r.code, 42020)

    // An org under a deleted org: 42032, the parent named.
    await tab(page, 'Organisations')
    await page.click('[data-test="restore-e2e-child"]')
    await message(page, 'its parent (org) is deleted')
    await page.click('[data-test="restore-e2e-parent"]')
    await message(page, 'Restored.')
    await page.click('[data-test="restore-e2e-child"]')
    await row(page, 'e2e-child').waitFor({ state: 'detached' })
    assert.ok((await call('GET', '/api/v1/sys/org/list')).some((o) => o.code === 'e2e-child'))
    await done(ctx)
  })

  it('a viewer sees no restore or purge button and the API refuses the calls', { timeout: 60000 }, async () => {
    const gone = await call('POST', '/api/v1/sys/position/add', { name: 'E2E Gone', code: 'e2e-gone', sort: 0, enabled: true })
    await call('DELETE', `/api/v1/sys/position/${gone}`)
    const viewer = await role(env, 'e2e-recycle-viewer', [300, 360, 361])
    const token = await user(env, 'e2e.recycleviewer', [viewer])
    const ctx = await context(env, 'zh-CN')
    const page = await ctx.newPage()
    await login(env, page, 'e2e.recycleviewer', userPassword)
    await open(page, 'system/recycle/index')
    await tab(page, '岗位')
    await row(page, 'e2e-gone').waitFor()
    for (const sel of ['[data-test^=restore-]', '[data-test^=purge-]']) {
      assert.equal(await page.locator(sel).count(), 0, `${sel} is shown without its code`)
    }
    await shot(page, 'admin-recycle-viewer')
    await axe(page, 'the recycle bin (viewer, zh-CN)')
    for (const [method, p] of [
      ['POST', `/api/v1/sys/recycle/position/${gone}/restore`],
      ['DELETE', `/api/v1/sys/recycle/position/${gone}`],
    ]) {
      const r = await api(env.base, method, p, undefined, token)
      assert.equal(r.http, 403, `${method} ${p} answered ${r.http} ${r.code}`)
    }
    await done(ctx)
  })
})
