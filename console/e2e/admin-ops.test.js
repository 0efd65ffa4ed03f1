// The server monitor and cache pages (issue 25) in chromium against the
// kernel binary: the monitor's snapshot and its auto-refresh, each cache
// action (confirmed) with its result; then the permission case (a viewer
// sees no action button and the API refuses the calls).
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { start, stop, context, done, login, axe, shot, confirm, role, user, api, userPassword } from './adminlib.js'

let env
const file = 'admin-ops'

before(async () => {
  env = await start('admin-ops')
})
after(async () => {
  await stop(env, file)
})

describe('server monitor and cache pages (issue 25)', { concurrency: 1 }, () => {
  it('the monitor refreshes itself; every cache action runs', { timeout: 90000 }, async () => {
    const ctx = await context(env)
    const page = await ctx.newPage()
    await login(env, page, 'superAdmin', env.adminPassword)
    await page.locator('[data-test="menu-system/monitor/index"]').click()
    await page.locator('[data-test=server]').waitFor()
    const stamp = page.locator('[data-test=stamp]')
    const first = await stamp.textContent()
    // The next snapshot comes by itself (every 5 s).
    await page.waitForFunction((s) => document.querySelector('[data-test=stamp]')?.textContent !== s, first, { timeout: 15000 })
    await shot(page, 'admin-monitor')
    await axe(page, 'the server monitor page')

    await page.locator('[data-test="menu-system/cache/index"]').click()
    for (const a of ['flush-auth', 'flush-dict', 'flush-config', 'rebuild-portal']) {
      await page.click(`[data-test=run-${a}]`)
      await confirm(page)
      await page.locator(`[data-test=cache-result-${a}]`).waitFor()
    }
    await shot(page, 'admin-cache')
    await axe(page, 'the cache page')
    await done(ctx)
  })

  it('a viewer sees no action button and the API refuses the calls', { timeout: 60000 }, async () => {
    // The cache page without its buttons; the monitor page without its read code.
    const viewer = await role(env, 'e2e-ops-viewer', [300, 370, 380])
    const token = await user(env, 'e2e.opsviewer', [viewer])
    const ctx = await context(env, 'zh-CN')
    const page = await ctx.newPage()
    await login(env, page, 'e2e.opsviewer', userPassword)
    await page.locator('[data-test="menu-system/cache/index"]').click()
    await page.locator('[data-test=cache-flush-auth]').waitFor()
    assert.equal(await page.locator('[data-test^=run-]').count(), 0, 'a cache action is shown without its code')
    await axe(page, 'the cache page (viewer, zh-CN)')
    await shot(page, 'admin-cache-viewer')
    for (const [method, path] of [
      ['POST', '/api/v1/sys/cache/flush-auth'],
      ['POST', '/api/v1/sys/cache/flush-dict'],
      ['POST', '/api/v1/sys/cache/flush-config'],
      ['POST', '/api/v1/sys/cache/rebuild-portal'],
      ['GET', '/api/v1/sys/monitor/server'],
    ]) {
      const r = await api(env.base, method, path, undefined, token)
      assert.equal(r.http, 403, `${method} ${path} answered ${r.http} ${r.code}`)
      assert.notEqual(r.code, 0)
    }
    await done(ctx)
  })
})
