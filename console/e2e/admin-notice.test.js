// The notices page and the header's unread bell (issue 25) in chromium
// against the kernel binary: the publish form's client rules, a notice to
// one user with an action; that user's second browser context sees the
// badge go up without a reload (realtime hub), opens the notice from the
// bell's drawer (read: the badge goes down) and follows its action; with
// the hub's socket refused the badge still follows by polling (30 s, the
// page's clock moved forward); delete (confirmed); then the permission
// case (a viewer sees no publish or delete button, the API refuses).
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { start, stop, context, done, login, open, axe, shot, confirm, role, user, api, must, userPassword } from './adminlib.js'

let env
const file = 'admin-notice'
const figures = {}

before(async () => {
  env = await start('admin-notice')
})
after(async () => {
  if (env) fs.writeFileSync(path.join(path.dirname(new URL(import.meta.url).pathname), 'output', 'admin-notice.figures.json'), JSON.stringify(figures) + '\n')
  await stop(env, file)
})

const row = (page, text) => page.locator('[data-test=table] .el-table__body tr').filter({ hasText: text })
const badge = (page, n) => page.locator(`[data-test=notice-badge][data-unread="${n}"]`)

describe('notices page and unread bell (issue 25)', { concurrency: 1 }, () => {
  it('publish to a user: the badge rises live, read from the drawer, polling without the hub, delete', { timeout: 180000 }, async () => {
    await user(env, 'e2e.reader', [])
    // The receiver, signed in in another context, with the socket open.
    const rctx = await context(env)
    const reader = await rctx.newPage()
    await login(env, reader, 'e2e.reader', userPassword)
    await reader.locator('[data-test=notice-badge][data-live="1"]').waitFor()
    await badge(reader, 0).waitFor()

    const ctx = await context(env)
    const page = await ctx.newPage()
    await login(env, page, 'superAdmin', env.adminPassword)
    await open(page, 'system/notice/index')
    await page.click('[data-test=publish]')
    await page.fill('[data-test=f-title]', 'E2E maintenance window')
    await page.fill('[data-test=f-content]', 'The service stops at 22:00.\n<b>not HTML</b>')
    // Client rules: users without a receiver, an action with a foreign URL.
    await page.click('[data-test=receiver-2]')
    await page.click('[data-test=add-action]')
    await page.locator('[data-test=action-0] [data-test=a-label]').fill('Open users')
    await page.locator('[data-test=action-0] [data-test=a-url]').fill('//evil.example/x')
    await page.click('[data-test=dialog-save]')
    await page.locator('[data-test=edit-dialog] .el-form-item__error').filter({ hasText: 'Choose at least one receiver' }).waitFor()
    await page.locator('[data-test=edit-dialog] .el-form-item__error').filter({ hasText: 'site path' }).waitFor()
    await page.locator('[data-test=action-0] [data-test=a-url]').fill('/personal/profile')
    await page.locator('[data-test=f-receivers]').click()
    await page.keyboard.type('e2e.reader')
    await page.locator('.el-select-dropdown:visible .el-select-dropdown__item').filter({ hasText: 'e2e.reader' }).click()
    await page.keyboard.press('Escape')
    await page.locator('[data-test=edit-dialog] .el-form-item__error').filter({ hasText: 'Choose at least one receiver' }).waitFor({ state: 'detached' })
    await shot(page, 'admin-notice-publish')
    await axe(page, 'the publish dialog')
    const t0 = Date.now()
    await page.click('[data-test=dialog-save]')
    await page.locator('[data-test=edit-dialog]').waitFor({ state: 'hidden' })
    await badge(reader, 1).waitFor()
    figures.liveBadgeMs = Date.now() - t0
    await row(page, 'E2E maintenance window').waitFor()
    const published = await must(env.base, 'GET', '/api/v1/sys/notice/page?Title=maintenance', undefined, env.adminToken)
    assert.equal(published.total, 1)
    assert.equal(published.items[0].receiverType, 2)
    assert.deepEqual(JSON.parse(published.items[0].actionsJson), [{ label: 'Open users', method: 'GET', url: '/personal/profile' }])
    await shot(page, 'admin-notice')
    await axe(page, 'the notices page')

    // The reader opens it from the bell: read, the badge goes down; the action follows its path.
    await reader.click('[data-test=notice-bell]')
    await reader.locator('[data-test=notice-drawer] [data-test=table] .el-table__body tr').first().waitFor()
    await axe(reader, 'the my-notices drawer')
    await shot(reader, 'admin-notice-drawer')
    await reader.click('[data-test="mine-E2E maintenance window"]')
    assert.equal(await reader.locator('[data-test=notice-content]').innerText(), 'The service stops at 22:00.\n<b>not HTML</b>')
    await badge(reader, 0).waitFor()
    await reader.click('[data-test=notice-action-0]')
    await reader.waitForURL('**/personal/profile')
    assert.equal(await must(env.base, 'GET', '/api/v1/sys/notice/unread-count', undefined, (await must(env.base, 'POST', '/api/v1/auth/login', { account: 'e2e.reader', password: userPassword })).accessToken), 0)
    await done(rctx)

    // Without the hub (its socket refused), the badge follows by polling.
    const pctx = await context(env, 'zh-CN')
    const polled = await pctx.newPage()
    await polled.clock.install()
    let sockets = 0
    await polled.routeWebSocket(/\/hub\/realtime/, (ws) => {
      sockets++
      ws.close({ code: 1011, reason: 'blocked by the test' })
    })
    await login(env, polled, 'e2e.reader', userPassword)
    await badge(polled, 0).waitFor()
    await must(env.base, 'POST', '/api/v1/sys/notice', { title: 'E2E broadcast', type: 2, receiverType: 0 }, env.adminToken)
    await polled.waitForTimeout(500)
    assert.equal(await badge(polled, 0).count(), 1, 'no socket: nothing before the poll')
    await polled.clock.fastForward(31_000)
    await badge(polled, 1).waitFor()
    assert.ok(sockets >= 1, 'the page tried the hub')
    await shot(polled, 'admin-notice-polled')
    await done(pctx)

    // Delete (confirmed).
    await page.click('[data-test="delete-E2E maintenance window"]')
    await confirm(page)
    await row(page, 'E2E maintenance window').waitFor({ state: 'detached' })
    assert.equal((await must(env.base, 'GET', '/api/v1/sys/notice/page?Title=maintenance', undefined, env.adminToken)).total, 0)
    await done(ctx)
  })

  it('a viewer sees no publish or delete button and the API refuses the calls', { timeout: 60000 }, async () => {
    await must(env.base, 'POST', '/api/v1/sys/notice', { title: 'E2E viewer notice', type: 1, receiverType: 0 }, env.adminToken)
    const viewer = await role(env, 'e2e-notice-viewer', [300, 350, 351])
    const token = await user(env, 'e2e.noticeviewer', [viewer])
    // The admin page lists notices within the reader's data scope: with
    // the default scope (their own) the admin's notice is not there...
    assert.equal((await must(env.base, 'GET', '/api/v1/sys/notice/page?Title=viewer', undefined, token)).total, 0, 'a notice outside the data scope')
    // ...with the whole scope it is.
    await must(env.base, 'PUT', '/api/v1/sys/role/datascope', { roleId: viewer, scopeType: 1 }, env.adminToken)
    const ctx = await context(env, 'zh-CN')
    const page = await ctx.newPage()
    await login(env, page, 'e2e.noticeviewer', userPassword)
    await open(page, 'system/notice/index')
    await row(page, 'E2E viewer notice').waitFor()
    for (const sel of ['[data-test=publish]', '[data-test^=delete-]']) {
      assert.equal(await page.locator(sel).count(), 0, `${sel} is shown without its code`)
    }
    await shot(page, 'admin-notice-viewer')
    await axe(page, 'the notices page (viewer, zh-CN)')
    const id = (await must(env.base, 'GET', '/api/v1/sys/notice/page?Title=viewer', undefined, env.adminToken)).items[0].id
    for (const [method, p, body] of [
      ['POST', '/api/v1/sys/notice', { title: 'x', type: 1, receiverType: 0 }],
      ['DELETE', `/api/v1/sys/notice/${id}`, undefined],
    ]) {
      const r = await api(env.base, method, p, body, token)
      assert.equal(r.http, 403, `${method} ${p} answered ${r.http} ${r.code}`)
    }
    await done(ctx)
  })
})
