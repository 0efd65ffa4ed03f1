// The config center and the error catalog (issue 25) in chromium against
// the kernel binary: General (site info saved in one batch and served by
// the anonymous site endpoint), Security (a typed switch, the
// high-sensitivity list: add and remove a code chosen from the routes;
// a user's second factors cleared, the user picked by name),
// External login (the providers page as a tab), Other (free rows: the
// client's key rule, the kernel refusing an unknown sys.* key with its
// text, add, edit, delete); the error catalog searched by code and by
// text in both languages. Then the permission case.
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { start, stop, context, done, login, axe, shot, confirm, role, user, api, must, userPassword } from './adminlib.js'

let env
const file = 'admin-config'

before(async () => {
  env = await start('admin-config')
})
after(async () => {
  await stop(env, file)
})

const value = async (key) => must(env.base, 'GET', `/api/v1/sys/config/value/${key}`, undefined, env.adminToken)
const field = (page, key) => page.locator(`[data-test="field-${key}"]`)
async function tab(page, name) {
  await page.click(`#tab-${name}`)
  await page.locator('.el-loading-mask').waitFor({ state: 'detached' }).catch(() => {})
}

describe('config center and error catalog (issue 25)', { concurrency: 1 }, () => {
  it('the groups as typed forms, the security section, free rows', { timeout: 120000 }, async () => {
    const ctx = await context(env)
    const page = await ctx.newPage()
    await login(env, page, 'superAdmin', env.adminPassword)
    await page.locator('[data-test="menu-system/config/index"]').click()

    // General: the site info.
    await field(page, 'sys.site.title').locator('input').fill('E2E Site')
    await field(page, 'sys.site.logo').locator('input').fill('javascript:alert(1)')
    await page.click('[data-test=group-sys] [data-test=group-save]')
    await field(page, 'sys.site.logo').locator('.el-form-item__error').waitFor()
    await field(page, 'sys.site.logo').locator('input').fill('/logo.png')
    await page.click('[data-test=group-sys] [data-test=group-save]')
    await page.locator('.el-message--success').waitFor()
    const site = await must(env.base, 'GET', '/api/v1/sys/config/site')
    assert.deepEqual([site.title, site.logo], ['E2E Site', '/logo.png'])
    await shot(page, 'admin-config-general')
    await axe(page, 'the config center (General)')

    // Security: a switch and a number, typed by the registry.
    await tab(page, 'security')
    await field(page, 'sys.security.captcha.enabled').locator('.el-switch').click()
    const minutes = field(page, 'sys.security.session.accessMinutes').locator('input')
    await minutes.fill('99999')
    await minutes.blur()
    assert.equal(await minutes.inputValue(), '1440', 'the number editor keeps the registry range')
    await minutes.fill('90')
    await minutes.blur()
    await page.click('[data-test=group-security] [data-test=group-save]')
    await page.locator('.el-message--success').last().waitFor()
    assert.deepEqual([await value('sys.security.captcha.enabled'), await value('sys.security.session.accessMinutes')], ['true', '90'])
    await must(env.base, 'PUT', '/api/v1/sys/config/batch', [{ configKey: 'sys.security.captcha.enabled', configValue: 'false' }], env.adminToken)

    // The high-sensitivity list: a code chosen from the routes, then removed.
    await page.locator('[data-test=sensitive-code]').click()
    await page.keyboard.type('sys/dict/type/page')
    await page.locator('.el-select-dropdown:visible .el-select-dropdown__item').filter({ hasText: 'GET:/api/v1/sys/dict/type/page' }).first().click()
    await page.fill('[data-test=sensitive-remark]', 'e2e')
    await page.click('[data-test=sensitive-add]')
    const del = page.locator('[data-test="sensitive-delete-GET:/api/v1/sys/dict/type/page"]')
    await del.waitFor()
    let hs = await must(env.base, 'GET', '/api/v1/sys/mfa/high-sensitivity', undefined, env.adminToken)
    assert.deepEqual(hs.customs.map((c) => [c.permissionCode, c.remark]), [['GET:/api/v1/sys/dict/type/page', 'e2e']])
    await shot(page, 'admin-config-security')
    await axe(page, 'the config center (Security)')
    await del.click()
    await confirm(page)
    await del.waitFor({ state: 'detached' })
    hs = await must(env.base, 'GET', '/api/v1/sys/mfa/high-sensitivity', undefined, env.adminToken)
    assert.equal(hs.customs.length, 0)

    // Clear a user's second factors: the user picked by name (remote search
    // over sys/user/page), shown with the account, the id sent; the user's
    // sessions end (so the right user was cleared).
    const victimToken = await user(env, 'e2e.lostphone', [])
    const victimId = (await must(env.base, 'GET', '/api/v1/sys/user/page?Account=e2e.lostphone', undefined, env.adminToken)).items[0].id
    await user(env, 'e2e.bystander', [])
    await page.locator('[data-test=clear-user]').click()
    const searched = Promise.all(['Account', 'Name'].map((k) => page.waitForResponse((r) => r.url().includes(`/api/v1/sys/user/page?`) && r.url().includes(`${k}=lostph`))))
    await page.keyboard.type('lostph')
    await searched
    const option = page.locator('.el-select-dropdown:visible .el-select-dropdown__item').filter({ hasText: 'e2e.lostphone' })
    await option.waitFor()
    await page.locator('.el-select-dropdown:visible .el-select-dropdown__item').filter({ hasText: 'e2e.bystander' }).waitFor({ state: 'detached' })
    assert.equal(await page.locator('.el-select-dropdown:visible .el-select-dropdown__item').count(), 1, 'one user matches')
    await shot(page, 'admin-config-clear-mfa')
    await axe(page, 'the user picker of clear second factors')
    await option.click()
    const cleared = page.waitForRequest((r) => r.url().endsWith('/api/v1/sys/mfa/clear'))
    await page.click('[data-test=clear-mfa]')
    assert.match(await page.locator('.el-message-box').textContent(), /Clear the second factors of e2e\.lostphone\?/)
    assert.equal((await api(env.base, 'GET', '/api/v1/personal/profile', undefined, victimToken)).http, 200)
    await confirm(page)
    assert.deepEqual(JSON.parse((await cleared).postData()), { userId: victimId })
    await page.locator('.el-message--success').last().waitFor()
    assert.equal((await api(env.base, 'GET', '/api/v1/personal/profile', undefined, victimToken)).http, 401, 'the cleared user\'s session goes on')

    // External login: the providers page is the tab.
    await tab(page, 'externalauth')
    await page.getByRole('heading', { name: 'External login providers' }).waitFor()

    // Other: free rows.
    await tab(page, 'other')
    await page.locator('[data-test=group-other] [data-test=table]').waitFor()
    await page.click('[data-test=add-config]')
    await page.fill('[data-test=f-key]', 'bad key')
    await page.fill('[data-test=f-name]', 'E2E flag')
    await page.click('[data-test=dialog-save]')
    await page.locator('[data-test=edit-dialog] .el-form-item__error').filter({ hasText: 'Letters, digits' }).waitFor()
    await page.fill('[data-test=f-key]', 'sys.e2e.unknown')
    await page.click('[data-test=dialog-save]')
    await page.locator('[data-test=dialog-error]').waitFor()
    await page.fill('[data-test=f-key]', 'e2e.flag')
    await page.fill('[data-test=f-value]', 'one')
    await page.fill('[data-test=f-group]', 'e2e')
    await page.click('[data-test=dialog-save]')
    await page.locator('[data-test="edit-config-e2e.flag"]').waitFor()
    await page.click('[data-test="edit-config-e2e.flag"]')
    await page.fill('[data-test=f-value]', 'two')
    await page.click('[data-test=dialog-save]')
    await page.locator('[data-test=table] tr').filter({ hasText: 'two' }).waitFor()
    assert.equal(await value('e2e.flag'), 'two')
    await shot(page, 'admin-config-other')
    await axe(page, 'the config center (Other)')
    await page.click('[data-test="delete-config-e2e.flag"]')
    await confirm(page)
    await page.locator('[data-test="edit-config-e2e.flag"]').waitFor({ state: 'detached' })
    assert.equal(await value('e2e.flag'), null)
    await done(ctx)
  })

  it('the error catalog: searched by code and by text, both languages', { timeout: 60000 }, async () => {
    const ctx = await context(env)
    const page = await ctx.newPage()
    await login(env, page, 'superAdmin', env.adminPassword)
    await page.locator('[data-test="menu-system/errorcode/index"]').click()
    const rows = page.locator('[data-test=table] .el-table__body tr')
    await rows.first().waitFor()
    await page.fill('[data-test=filter]', '40024')
    await rows.filter({ hasText: 'ReauthRequired' }).waitFor()
    assert.equal(await rows.count(), 1)
    const text = await rows.first().textContent()
    assert.match(text, /auth\.reauthRequired/)
    assert.match(text, /[\u4e00-\u9fff]/, 'the zh-CN text is shown')
    await page.fill('[data-test=filter]', 'menu.hasChildren')
    await rows.filter({ hasText: '42016' }).waitFor()
    await shot(page, 'admin-errorcodes')
    await axe(page, 'the error catalog')
    await done(ctx)
  })

  it('a caller who may clear second factors but not list users types the id (no picker)', { timeout: 60000 }, async () => {
    const clearer = await role(env, 'e2e-mfa-clearer', [300, 310, 311, 318])
    const token = await user(env, 'e2e.mfaclearer', [clearer])
    const ctx = await context(env)
    const page = await ctx.newPage()
    await login(env, page, 'e2e.mfaclearer', userPassword)
    await page.locator('[data-test="menu-system/config/index"]').click()
    await tab(page, 'security')
    await page.locator('[data-test=clear-mfa]').waitFor()
    assert.equal(await page.locator('.el-input-number[data-test=clear-user]').count(), 1, 'the id field')
    assert.equal(await page.locator('.el-select[data-test=clear-user]').count(), 0, 'the user picker without GET /sys/user/page')
    assert.equal((await api(env.base, 'GET', '/api/v1/sys/user/page?Current=1&Size=20', undefined, token)).http, 403)
    await axe(page, 'the security section (clear only)')
    await done(ctx)
  })

  it('a viewer sees no save or add button and the API refuses the calls', { timeout: 60000 }, async () => {
    const viewer = await role(env, 'e2e-config-viewer', [300, 310, 311, 390])
    const token = await user(env, 'e2e.configviewer', [viewer])
    const ctx = await context(env, 'zh-CN')
    const page = await ctx.newPage()
    await login(env, page, 'e2e.configviewer', userPassword)
    await page.locator('[data-test="menu-system/config/index"]').click()
    await field(page, 'sys.site.title').waitFor()
    assert.equal(await page.locator('[data-test=group-save]').count(), 0, 'save is shown without its code')
    await tab(page, 'security')
    await field(page, 'sys.security.captcha.enabled').waitFor()
    assert.equal(await page.locator('[data-test=security-ops]').count(), 0, 'the security section is shown without its codes')
    assert.equal(await page.locator('[data-test=clear-user], [data-test=clear-mfa]').count(), 0, 'clearing second factors is offered without its code')
    await tab(page, 'other')
    await page.locator('[data-test=group-other] [data-test=table]').waitFor()
    assert.equal(await page.locator('[data-test=add-config]').count(), 0)
    await shot(page, 'admin-config-viewer')
    await axe(page, 'the config center (viewer, zh-CN)')
    await page.locator('[data-test="menu-system/errorcode/index"]').click()
    await page.locator('[data-test=table] .el-table__body tr').first().waitFor()
    for (const [method, path, body] of [
      ['PUT', '/api/v1/sys/config/batch', [{ configKey: 'sys.site.title', configValue: 'x' }]],
      ['POST', '/api/v1/sys/config', { configKey: 'e2e.x', name: 'x' }],
      ['DELETE', '/api/v1/sys/config/1', undefined],
      ['POST', '/api/v1/sys/mfa/high-sensitivity', { permissionCode: 'GET:/api/v1/ping' }],
      ['POST', '/api/v1/sys/mfa/clear', { userId: 1 }],
    ]) {
      const r = await api(env.base, method, path, body, token)
      assert.equal(r.http, 403, `${method} ${path} answered ${r.http} ${r.code}`)
      assert.notEqual(r.code, 0)
    }
    assert.equal((await must(env.base, 'GET', '/api/v1/sys/config/site')).title, 'E2E Site')
    await done(ctx)
  })
})
