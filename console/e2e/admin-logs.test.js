// The online sessions and login log pages (issue 25) in chromium against
// the kernel binary: end a session (the ended token is refused), the login
// log's filters and the kernel's text for a failure, clearing the log;
// then the permission case (a viewer sees no action button and the API
// refuses the calls).
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { start, stop, context, done, login, open, axe, shot, confirm, pick, role, user, api, userPassword } from './adminlib.js'

let env
const file = 'admin-logs'

before(async () => {
  env = await start('admin-logs')
})
after(async () => {
  await stop(env, file)
})

const row = (page, text) => page.locator('[data-test=table] .el-table__body tr').filter({ hasText: text })

describe('online sessions and login log pages (issue 25)', { concurrency: 1 }, () => {
  it('end an online session; filter and clear the login log', { timeout: 120000 }, async () => {
    const target = await user(env, 'e2e.target')
    assert.equal((await api(env.base, 'GET', '/api/v1/personal/profile', undefined, target)).code, 0)
    assert.notEqual((await api(env.base, 'POST', '/api/v1/auth/login', { account: 'e2e.target', password: 'wrong-password' })).code, 0)

    const ctx = await context(env)
    const page = await ctx.newPage()
    await login(env, page, 'superAdmin', env.adminPassword)
    await open(page, 'system/session/index')
    await row(page, 'e2e.target').first().waitFor()
    await shot(page, 'admin-sessions')
    await axe(page, 'the online sessions page')
    const before = await row(page, 'e2e.target').count()
    await page.locator('[data-test="end-e2e.target"]').first().click()
    await confirm(page)
    await page.waitForFunction((n) => document.querySelectorAll('[data-test="end-e2e.target"]').length < n, before)
    // One of the user's sessions is gone; end the rest, then the token is refused.
    while (await page.locator('[data-test="end-e2e.target"]').count()) {
      const n = await page.locator('[data-test="end-e2e.target"]').count()
      await page.locator('[data-test="end-e2e.target"]').first().click()
      await confirm(page)
      await page.waitForFunction((m) => document.querySelectorAll('[data-test="end-e2e.target"]').length < m, n)
    }
    const r = await api(env.base, 'GET', '/api/v1/personal/profile', undefined, target)
    assert.equal(r.http, 401, `an ended session's token answered ${r.http} ${r.code}`)

    await open(page, 'system/log/login/index')
    await page.fill('[data-test=filter-account]', 'e2e.target')
    await pick(page, '[data-test=filter-success]', 'Failure')
    // The rows of the unfiltered first load are on the page until the
    // filtered answer arrives: wait for that answer, then for its rows.
    const filtered = page.waitForResponse((r) => r.url().includes('/api/v1/sys/log/login/page?') && r.url().includes('Success=false'))
    await page.click('[data-test=search]')
    await filtered
    await row(page, 'Success').first().waitFor({ state: 'detached', timeout: 15000 })
    await row(page, 'e2e.target').filter({ hasText: 'Failure' }).first().waitFor()
    assert.equal(await row(page, 'Success').count(), 0, 'the filter keeps failures only')
    await shot(page, 'admin-login-log')
    await axe(page, 'the login log page')
    await page.click('[data-test=clear]')
    await confirm(page)
    await page.locator('[data-test=table] .el-table__empty-text').waitFor()
    await done(ctx)
  })

  it('the operation log shows a redacted input; the exception log clears', { timeout: 90000 }, async () => {
    // An operation-logged call whose body carries a password-like key.
    await api(env.base, 'POST', '/api/v1/sys/position/add', { name: 'E2E Logged', code: 'e2e-logged', password: 'TopSecret#1' }, env.adminToken)
    const ctx = await context(env)
    const page = await ctx.newPage()
    await login(env, page, 'superAdmin', env.adminPassword)
    await open(page, 'system/log/op/index')
    await page.fill('[data-test=filter-title]', 'position')
    await page.click('[data-test=search]')
    const r = row(page, '/api/v1/sys/position/add').first()
    await r.waitFor()
    // Logged under its title key, shown in the console's language.
    assert.match(await r.textContent(), /Add a position/)
    await r.locator('[data-test^=detail-]').click()
    const input = page.locator('[data-test=detail-input]')
    await input.waitFor()
    const text = await input.textContent()
    assert.match(text, /E2E Logged/)
    assert.match(text, /\*\*\*/, 'the password is masked')
    assert.doesNotMatch(text, /TopSecret/, 'the password is not shown')
    await shot(page, 'admin-op-log-detail')
    await axe(page, 'the operation log detail')
    await page.keyboard.press('Escape')
    await page.locator('[data-test=detail-dialog]').waitFor({ state: 'hidden' })
    await page.click('[data-test=clear]')
    await confirm(page)
    await open(page, 'system/log/exception/index')
    await shot(page, 'admin-exception-log')
    await axe(page, 'the exception log page')
    await page.click('[data-test=clear]')
    await confirm(page)
    await page.locator('[data-test=table] .el-table__empty-text').waitFor()
    const left = await api(env.base, 'GET', '/api/v1/sys/log/exception/page', undefined, env.adminToken)
    assert.equal(left.data.total, 0)
    await done(ctx)
  })

  it('a viewer sees no action button and the API refuses the calls', { timeout: 60000 }, async () => {
    const viewer = await role(env, 'e2e-log-viewer', [500, 510, 511, 520, 521, 530, 531, 540, 541])
    const token = await user(env, 'e2e.logviewer', [viewer])
    const ctx = await context(env, 'zh-CN')
    const page = await ctx.newPage()
    await login(env, page, 'e2e.logviewer', userPassword)
    await open(page, 'system/session/index')
    await row(page, 'e2e.logviewer').first().waitFor()
    assert.equal(await page.locator('[data-test^=end-]').count(), 0, 'End is shown without its code')
    await axe(page, 'the online sessions page (viewer, zh-CN)')
    await open(page, 'system/log/login/index')
    assert.equal(await page.locator('[data-test=clear]').count(), 0, 'Clear is shown without its code')
    await shot(page, 'admin-login-log-viewer')
    await axe(page, 'the login log page (viewer, zh-CN)')
    for (const c of ['system/log/op/index', 'system/log/exception/index']) {
      await open(page, c)
      assert.equal(await page.locator('[data-test=clear]').count(), 0, `${c}: Clear is shown without its code`)
      await axe(page, `${c} (viewer, zh-CN)`)
    }
    const online = await api(env.base, 'GET', '/api/v1/sys/session/online', undefined, token)
    const sid = online.data.items[0].sessionId
    for (const [method, path] of [
      ['DELETE', `/api/v1/sys/session/${sid}`],
      ['DELETE', '/api/v1/sys/log/login'],
      ['DELETE', '/api/v1/sys/log/op'],
      ['DELETE', '/api/v1/sys/log/exception'],
    ]) {
      const r = await api(env.base, method, path, undefined, token)
      assert.equal(r.http, 403, `${method} ${path} answered ${r.http} ${r.code}`)
      assert.notEqual(r.code, 0)
    }
    await done(ctx)
  })
})
