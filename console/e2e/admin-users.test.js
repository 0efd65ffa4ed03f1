// The users page (issue 25) in chromium against the kernel binary: add
// with org, position and a delegatable role (the generated password shown
// once), a client-side rule, the API's msgKey error, edit, the org-tree
// filter, reset password, disable, delete; then the permission case (a
// viewer sees no action button and the API refuses the call).
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import zlib from 'node:zlib'
import { start, stop, context, done, login, open, axe, shot, pick, confirm, role, user, api, must, userPassword } from './adminlib.js'

let env
const file = 'admin-users'

before(async () => {
  env = await start('admin-users')
})
after(async () => {
  await stop(env, file)
})

const row = (page, text) => page.locator('[data-test=table] .el-table__body tr').filter({ hasText: text })

describe('users page (issue 25)', { concurrency: 1 }, () => {
  it('the administration pages are lazy: the login page loads none of them (JS budget 250 KB gzip)', { timeout: 60000 }, async () => {
    const ctx = await context(env)
    const page = await ctx.newPage()
    const scripts = []
    page.on('response', (r) => {
      if (r.request().resourceType() === 'script') scripts.push(r.body().then((b) => ({ url: r.url(), gz: zlib.gzipSync(b, { level: 9 }).length })))
    })
    await page.goto(env.base + '/login')
    await page.locator('[data-test=submit]').waitFor()
    const loaded = await Promise.all(scripts)
    const total = loaded.reduce((a, s) => a + s.gz, 0)
    console.log(`login page initial JS: ${total} B gzip in ${loaded.length} files`)
    assert.ok(total <= 250 * 1024, `login page JS ${total} B gzip > 250 KB`)
    assert.deepEqual(loaded.filter((s) => /(User|Role|Org|Position|Dict|Session|LoginLog|OpLog|ExceptionLog|Monitor|Cache)Page|PagedTable|SearchForm|rules-/.test(s.url)).map((s) => s.url), [])
    await done(ctx)
  })

  it('add, edit, filter, reset password, disable and delete a user', { timeout: 120000 }, async () => {
    const orgId = await must(env.base, 'POST', '/api/v1/sys/org/add', { parentId: 0, name: 'E2E Org', code: 'e2e-org', sort: 9 }, env.adminToken)
    await must(env.base, 'POST', '/api/v1/sys/position/add', { name: 'E2E Position', code: 'e2e-pos', sort: 1 }, env.adminToken)
    await role(env, 'e2e-role', [])

    const ctx = await context(env)
    const page = await ctx.newPage()
    await login(env, page, 'superAdmin', env.adminPassword)
    await open(page, 'system/user/index')
    await row(page, 'superAdmin').waitFor()

    // Add: a client rule first (the same as the API's), then a valid form.
    await page.click('[data-test=add]')
    const dlg = page.locator('[data-test=edit-dialog]')
    await dlg.waitFor()
    await page.fill('[data-test=f-account]', 'e2e.alice')
    await page.fill('[data-test=f-name]', 'Alice')
    await page.fill('[data-test=f-email]', 'not-an-email')
    await page.click('[data-test=dialog-save]')
    await dlg.locator('.el-form-item__error').filter({ hasText: 'valid e-mail' }).waitFor()
    await page.fill('[data-test=f-email]', 'alice@example.com')
    await pick(page, '[data-test=f-org]', 'E2E Org')
    await pick(page, '[data-test=f-position]', 'E2E Position')
    await pick(page, '[data-test=f-roles]', 'e2e-role')
    await page.keyboard.press('Escape')
    await shot(page, 'admin-user-dialog')
    await page.click('[data-test=dialog-save]')
    // The generated password is shown once and works.
    const secret = page.locator('[data-test=secret-dialog] [data-test=secret]')
    await secret.waitFor()
    const initial = (await secret.textContent()).trim()
    assert.ok(initial.length >= 8, 'a generated password is shown')
    await page.click('[data-test=secret-close]')
    await row(page, 'e2e.alice').waitFor()
    await secret.waitFor({ state: 'detached' }) // the secret is gone once the dialog closed
    const first = await api(env.base, 'POST', '/api/v1/auth/login', { account: 'e2e.alice', password: initial })
    assert.equal(first.code, 0, 'the shown password signs in')
    const list = await must(env.base, 'GET', '/api/v1/sys/user/page?Account=e2e.alice', undefined, env.adminToken)
    const alice = await must(env.base, 'GET', `/api/v1/sys/user/${list.items[0].id}`, undefined, env.adminToken)
    assert.equal(String(alice.orgId), String(orgId))
    assert.equal(alice.roleIds.length, 1)
    assert.equal(alice.email, 'alice@example.com')

    // The API's refusal is shown with its msgKey text (duplicate account).
    await page.click('[data-test=add]')
    await page.fill('[data-test=f-account]', 'e2e.alice')
    await page.fill('[data-test=f-name]', 'Twin')
    await page.click('[data-test=dialog-save]')
    await page.locator('[data-test=dialog-error]').filter({ hasText: 'This account already exists.' }).waitFor()
    await page.click('[data-test=dialog-cancel]')

    // Edit: a full replace keeps the org, position and roles.
    await page.click('[data-test="edit-e2e.alice"]')
    await page.fill('[data-test=f-name]', 'Alice Liddell')
    await page.click('[data-test=dialog-save]')
    await row(page, 'Alice Liddell').waitFor()
    const edited = await must(env.base, 'GET', `/api/v1/sys/user/${alice.id}`, undefined, env.adminToken)
    assert.equal(edited.name, 'Alice Liddell')
    assert.equal(String(edited.orgId), String(orgId))
    assert.deepEqual(edited.roleIds, alice.roleIds)

    // The org tree filters the list.
    await page.locator('[data-test=org-tree] .el-tree-node__content').filter({ hasText: 'E2E Org' }).click()
    await row(page, 'e2e.alice').waitFor()
    await row(page, 'superAdmin').waitFor({ state: 'detached' })
    await page.click('[data-test=org-all]')
    await row(page, 'superAdmin').waitFor()

    // Reset password: a chosen one, shown once, then it signs in.
    await page.click('[data-test="password-e2e.alice"]')
    await page.click('[data-test=pw-set]')
    await page.fill('[data-test=pw-value]', 'Reset#Pass789')
    await page.click('[data-test=pw-confirm]')
    await secret.waitFor()
    assert.equal((await secret.textContent()).trim(), 'Reset#Pass789')
    await page.click('[data-test=secret-close]')
    assert.equal((await api(env.base, 'POST', '/api/v1/auth/login', { account: 'e2e.alice', password: 'Reset#Pass789' })).code, 0)

    // Disable (confirmed), then delete (confirmed).
    await page.click('[data-test="toggle-e2e.alice"]')
    await confirm(page)
    await row(page, 'e2e.alice').filter({ hasText: 'Disabled' }).waitFor()
    assert.equal((await must(env.base, 'GET', `/api/v1/sys/user/${alice.id}`, undefined, env.adminToken)).enabled, false)
    await shot(page, 'admin-users')
    await axe(page, 'the users page')
    await page.click('[data-test="delete-e2e.alice"]')
    await confirm(page)
    await row(page, 'e2e.alice').waitFor({ state: 'detached' })
    assert.notEqual((await api(env.base, 'GET', `/api/v1/sys/user/${alice.id}`, undefined, env.adminToken)).code, 0, 'the user is gone')
    await done(ctx)
  })

  it('a viewer sees no action button and the API refuses the calls', { timeout: 60000 }, async () => {
    // Catalog 200, users page 230 and its read button 231 only.
    const viewer = await role(env, 'e2e-user-viewer', [200, 230, 231])
    const token = await user(env, 'e2e.viewer', [viewer])
    const ctx = await context(env, 'zh-CN')
    const page = await ctx.newPage()
    await login(env, page, 'e2e.viewer', userPassword)
    await open(page, 'system/user/index')
    await row(page, 'e2e.viewer').waitFor()
    for (const sel of ['[data-test=add]', '[data-test^=edit-]', '[data-test^=toggle-]', '[data-test^=password-]', '[data-test^=delete-]']) {
      assert.equal(await page.locator(sel).count(), 0, `${sel} is shown without its code`)
    }
    await shot(page, 'admin-users-viewer')
    await axe(page, 'the users page (viewer, zh-CN)')
    const id = (await must(env.base, 'GET', '/api/v1/sys/user/page?Account=superAdmin', undefined, env.adminToken)).items[0].id
    for (const [method, path, body] of [
      ['POST', '/api/v1/sys/user', { account: 'e2e.sneaky', name: 'x' }],
      ['PUT', `/api/v1/sys/user/${id}/enabled`, { enabled: false }],
      ['PUT', `/api/v1/sys/user/${id}/password`, {}],
      ['DELETE', `/api/v1/sys/user/${id}`, undefined],
    ]) {
      const r = await api(env.base, method, path, body, token)
      assert.equal(r.http, 403, `${method} ${path} answered ${r.http} ${r.code}`)
      assert.notEqual(r.code, 0)
    }
    await done(ctx)
  })
})
