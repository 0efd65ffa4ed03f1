// The job pages and the workbench (issue 25, c3) in chromium against the
// kernel binary: the job editor (client checks, the cron preview equal to
// the kernel's, the kernel's refusal text), edit, pause/resume, run now, the
// run log (detail, kill of a running Http run against a slow local
// endpoint), the job monitor's charts, the workbench's charts (ECharts: no
// CSP violation), delete, batch delete of the selected rows (+R: the
// re-authentication dialog and the one replay); then the permission case in
// zh-CN.
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import { start, stop, context, done, login, open, axe, shot, confirm, pick, role, user, api, must, userPassword } from './adminlib.js'

let env
let slow
const file = 'admin-jobs'

// A local endpoint for the Http jobs: /slow answers after 60 s (the run is
// killed before), /fail answers 500 (a Failed run).
function endpoint() {
  return new Promise((resolve) => {
    const pending = new Set()
    const srv = http.createServer((req, res) => {
      if (req.url.startsWith('/fail')) {
        res.writeHead(500, { 'Content-Type': 'text/plain' })
        res.end('broken on purpose')
        return
      }
      const t = setTimeout(() => res.end('late'), 60000)
      pending.add(t)
      req.on('close', () => clearTimeout(t))
    })
    srv.listen(0, '127.0.0.1', () => resolve({ srv, port: srv.address().port, close: () => { for (const t of pending) clearTimeout(t); srv.closeAllConnections(); srv.close() } }))
  })
}

before(async () => {
  slow = await endpoint()
  env = await start('admin-jobs', { Job: { HttpAllowedHosts: [`127.0.0.1:${slow.port}`], HttpAllowPrivate: true } })
})
after(async () => {
  await stop(env, file)
  slow?.close()
})

const row = (page, text) => page.locator('[data-test=table] .el-table__body tr').filter({ hasText: text })
const jobByCode = async (code) => (await must(env.base, 'GET', `/api/v1/sys/job/page?Name=${code}`, undefined, env.adminToken)).items.find((j) => j.code === code)

// cspWatch records securitypolicyviolation events in the page (besides the
// console messages context() collects).
async function cspWatch(ctx) {
  await ctx.addInitScript(() => {
    window.__csp = []
    document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI} ${e.sample}`))
  })
}
const cspViolations = (page) => page.evaluate(() => window.__csp)

describe('job pages and workbench (issue 25)', { concurrency: 1 }, () => {
  it('jobs: add with the cron preview, edit, pause, run, runs, kill, monitor, workbench, delete', { timeout: 180000 }, async () => {
    const ctx = await context(env)
    await cspWatch(ctx)
    const page = await ctx.newPage()
    await login(env, page, 'superAdmin', env.adminPassword)
    await open(page, 'system/job/index')
    await row(page, 'sys-job-log-cleanup').waitFor()
    assert.equal(await page.locator('[data-test="delete-sys-job-log-cleanup"]').count(), 0, 'the system job offers delete')

    // Add: the client checks, the preview (the kernel's parser), the kernel's refusal.
    await page.click('[data-test=add]')
    await page.fill('[data-test=f-code]', 'bad code!')
    await page.fill('[data-test=f-name]', 'E2E retention')
    await page.fill('[data-test=f-param]', '{days: 3}')
    await page.fill('[data-test=f-cron]', 'not a cron')
    await page.locator('[data-test=cron-error]').waitFor()
    // The kernel's 47003 text, from its own parser.
    await page.locator('[data-test=edit-dialog] .el-form-item__error').filter({ hasText: 'cron' }).waitFor()
    await page.click('[data-test=dialog-save]')
    await page.locator('[data-test=edit-dialog] .el-form-item__error').filter({ hasText: 'Letters, digits' }).waitFor()
    await page.locator('[data-test=edit-dialog] .el-form-item__error').filter({ hasText: 'Not valid JSON' }).waitFor()
    await page.fill('[data-test=f-code]', 'e2e-retention')
    await pick(page, '[data-test=f-handler]', 'kernel.logRetention')
    await page.fill('[data-test=f-param]', '{"days": 3650}')
    await page.fill('[data-test=f-tz]', 'Europe/Berlin')
    await page.fill('[data-test=f-cron]', '0 30 3 * * ?')
    await page.locator('[data-test=cron-occurrence]').nth(4).waitFor()
    const shown = await page.locator('[data-test=cron-occurrence]').allTextContents()
    const kernel = await must(env.base, 'POST', '/api/v1/sys/job/preview-cron', { cron: '0 30 3 * * ?', timeZone: 'Europe/Berlin', count: 5 }, env.adminToken)
    assert.deepEqual(shown, kernel.occurrences, 'the preview is not the kernel\'s')
    assert.equal(shown.length, 5)
    assert.ok(shown.every((o) => /T03:30:00\+0[12]:00$/.test(o)), shown.join(' '))
    await shot(page, 'admin-jobs-editor')
    await axe(page, 'the job editor')
    await page.click('[data-test=dialog-save]')
    await page.locator('[data-test=edit-dialog]').waitFor({ state: 'hidden' })
    await row(page, 'e2e-retention').waitFor()
    const added = await jobByCode('e2e-retention')
    assert.equal(added.cronExpression, '0 30 3 * * ?')
    assert.equal(added.timeZone, 'Europe/Berlin')
    assert.equal(added.handlerKind, 1)
    assert.equal(added.handlerName, 'kernel.logRetention')
    assert.equal(added.handlerParam, '{"days": 3650}')
    assert.equal(added.status, 1)

    // A duplicate code: the kernel's msgKey text in the dialog.
    await page.click('[data-test=add]')
    await page.fill('[data-test=f-code]', 'e2e-retention')
    await page.fill('[data-test=f-name]', 'Again')
    await page.click('[data-test=dialog-save]')
    await page.locator('[data-test=dialog-error]').waitFor()
    assert.match(await page.locator('[data-test=dialog-error]').textContent(), /exist|already/i)
    await page.click('[data-test=dialog-cancel]')

    // Edit to an interval job.
    await page.click('[data-test=edit-e2e-retention]')
    await page.fill('[data-test=f-name]', 'E2E retention hourly')
    await page.click('[data-test=f-trigger-interval]')
    await page.locator('[data-test=f-interval] input, input[data-test=f-interval]').first().fill('3600')
    await page.click('[data-test=dialog-save]')
    await page.locator('[data-test=edit-dialog]').waitFor({ state: 'hidden' })
    await row(page, 'E2E retention hourly').waitFor()
    const edited = await jobByCode('e2e-retention')
    assert.equal(edited.triggerKind, 2)
    assert.equal(edited.intervalSeconds, 3600)
    assert.equal(edited.cronExpression, null)

    // Pause and resume.
    await page.click('[data-test=toggle-e2e-retention]')
    await page.locator('[data-test=status-e2e-retention]').filter({ hasText: 'Paused' }).waitFor()
    assert.equal((await jobByCode('e2e-retention')).status, 2)
    await page.click('[data-test=toggle-e2e-retention]')
    await page.locator('[data-test=status-e2e-retention]').filter({ hasText: 'Ready' }).waitFor()

    // Run now, then its run in the run log (filtered to the job).
    await page.click('[data-test=run-e2e-retention]')
    await confirm(page)
    await page.locator('.el-message--success').filter({ hasText: 'Started: the run' }).waitFor()
    await page.click('[data-test=logs-e2e-retention]')
    await page.waitForURL(/\/system\/job-log\?jobId=\d+/)
    const done1 = row(page, 'E2E retention hourly').filter({ hasText: 'Success' })
    await done1.waitFor({ timeout: 10000 })
    await done1.locator('[data-test^=detail-]').click()
    await page.locator('[data-test=log-output]').waitFor()
    await page.click('[data-test=detail-close]')

    // An Http job made in the editor (headers checked), run and killed while it runs.
    await open(page, 'system/job/index')
    await page.click('[data-test=add]')
    await page.fill('[data-test=f-code]', 'e2e-slow')
    await page.fill('[data-test=f-name]', 'E2E slow call')
    await page.click('[data-test=f-kind-http]')
    await page.fill('[data-test=f-url]', 'not a url')
    await page.fill('[data-test=f-headers]', '{"Host": "evil"}')
    await page.fill('[data-test=f-cron]', '0 0 0 1 1 ?')
    await page.click('[data-test=dialog-save]')
    await page.locator('[data-test=edit-dialog] .el-form-item__error').filter({ hasText: 'http:// or https://' }).waitFor()
    await page.locator('[data-test=edit-dialog] .el-form-item__error').filter({ hasText: 'JSON object of strings' }).waitFor()
    await page.fill('[data-test=f-url]', `http://127.0.0.1:${slow.port}/slow`)
    await page.fill('[data-test=f-headers]', '{"X-E2E": "yes"}')
    await page.click('[data-test=dialog-save]')
    await page.locator('[data-test=edit-dialog]').waitFor({ state: 'hidden' })
    await row(page, 'e2e-slow').waitFor()
    // Header values read back masked (the stored value stays on the kernel).
    assert.equal((await jobByCode('e2e-slow')).httpHeaders, '{"X-E2E":"********"}')
    assert.equal(JSON.parse(JSON.parse((await jobByCode('e2e-slow')).propsJson).headers)['X-E2E'], '********')
    await page.click('[data-test=run-e2e-slow]')
    await confirm(page)
    await page.locator('.el-message--success').filter({ hasText: 'Started: the run' }).last().waitFor()
    await page.click('[data-test=logs-e2e-slow]')
    const running = row(page, 'E2E slow call').filter({ hasText: 'Running' })
    await running.waitFor()
    await shot(page, 'admin-jobs-log')
    await axe(page, 'the run log')
    await running.locator('[data-test^=kill-]').click()
    await confirm(page)
    await page.locator('.el-message--success').filter({ hasText: 'Kill requested' }).waitFor()
    await row(page, 'E2E slow call').filter({ hasText: 'Cancelled' }).waitFor({ timeout: 10000 })
    const runs = await must(env.base, 'GET', `/api/v1/sys/job/log/page?JobId=${(await jobByCode('e2e-slow')).id}`, undefined, env.adminToken)
    assert.deepEqual(runs.items.map((r) => r.runStatus), [5])

    // A failing Http job for the monitor's recent failures.
    const failId = await must(env.base, 'POST', '/api/v1/sys/job', { code: 'e2e-fail', name: 'E2E failing call', handlerKind: 2, handlerName: '', httpUrl: `http://127.0.0.1:${slow.port}/fail`, triggerKind: 1, cronExpression: '0 0 0 1 1 ?', misfireStrategy: 1, concurrencyMode: 1, timeoutSeconds: 0, retryCount: 0, retryIntervalSeconds: 0, failAlertThreshold: 0, alertByNotice: false }, env.adminToken)
    assert.equal(await must(env.base, 'POST', `/api/v1/sys/job/${failId}/run`, undefined, env.adminToken), true)
    for (let i = 0; i < 50; i++) {
      const r = (await must(env.base, 'GET', `/api/v1/sys/job/log/page?JobId=${failId}`, undefined, env.adminToken)).items[0]
      if (r && r.runStatus !== 1) break
      await new Promise((res) => setTimeout(res, 200))
    }

    // The monitor: the dashboard's figures, two charts and the failure with its duration chart.
    await open(page, 'system/job-monitor/index')
    const dash = await must(env.base, 'GET', '/api/v1/sys/job/dashboard', undefined, env.adminToken)
    assert.equal(await page.locator('[data-test=stat-total]').textContent(), String(dash.jobTotal))
    assert.equal(dash.jobTotal, 4)
    await row(page, 'E2E failing call').waitFor()
    assert.equal(await page.locator('[data-test=chart] canvas').count(), 3)
    const label = await page.locator('[data-test=chart]').first().getAttribute('aria-label')
    for (const [k, name] of [['success', 'Success'], ['failed', 'Failed'], ['cancelled', 'Cancelled'], ['running', 'Running']]) assert.match(label, new RegExp(`${name} ${dash.last24h[k]}\\b`))
    assert.ok(dash.last24h.success >= 1 && dash.last24h.failed === 1 && dash.last24h.cancelled === 1, JSON.stringify(dash.last24h))
    await shot(page, 'admin-jobs-monitor')
    await axe(page, 'the job monitor')

    // The workbench: the summary's counts and the 7-day chart.
    await page.locator('[data-test="menu-dashboard/workbench"]').click()
    await page.locator('[data-test=workbench] [data-test=chart] canvas').waitFor()
    const sum = await must(env.base, 'GET', '/api/v1/dashboard/summary', undefined, env.adminToken)
    assert.equal(await page.locator('[data-test=stat-users]').textContent(), String(sum.users))
    assert.equal(await page.locator('[data-test=stat-roles]').textContent(), String(sum.roles))
    assert.equal(await page.locator('[data-test=stat-perms]').textContent(), String(sum.perms))
    assert.equal(await page.locator('[data-test=data-trend] tbody tr').count(), 7)
    assert.match(await page.locator('[data-test=workbench] [data-test=chart]').getAttribute('aria-label'), new RegExp(`${sum.trendDays[6]} Logins ${sum.trendLogins[6]}`))
    await shot(page, 'admin-workbench')
    await axe(page, 'the workbench')
    assert.deepEqual(await cspViolations(page), [], 'CSP violations with the charts')

    // Delete (confirmed).
    await open(page, 'system/job/index')
    await page.click('[data-test=delete-e2e-retention]')
    await confirm(page)
    await row(page, 'e2e-retention').waitFor({ state: 'detached' })
    assert.equal(await jobByCode('e2e-retention'), undefined)
    await shot(page, 'admin-jobs')
    await axe(page, 'the jobs page')

    // Batch delete (+R): the system job cannot be selected; two jobs
    // selected. With TOTP on, the page's session has no re-authentication
    // window: 403/40024 opens the dialog, the password opens the window and
    // the batch is replayed once with X-Smart-Reauth-Retried.
    const cronJob = (code) => ({ code, name: code, handlerKind: 1, handlerName: 'kernel.logRetention', triggerKind: 1, cronExpression: '0 0 0 1 1 ?', misfireStrategy: 1, concurrencyMode: 1, timeoutSeconds: 0, retryCount: 0, retryIntervalSeconds: 0, failAlertThreshold: 0, alertByNotice: false })
    const batchIds = [Number(await must(env.base, 'POST', '/api/v1/sys/job', cronJob('e2e-batch-a'), env.adminToken)), Number(await must(env.base, 'POST', '/api/v1/sys/job', cronJob('e2e-batch-b'), env.adminToken))].sort((a, b) => a - b)
    await page.click('[data-test=search]')
    await row(page, 'e2e-batch-b').waitFor()
    const pick1 = (code) => row(page, code).locator('.el-table-column--selection .el-checkbox')
    assert.match(await pick1('sys-job-log-cleanup').getAttribute('class'), /is-disabled/, 'the system job can be selected')
    const selectedButton = page.locator('[data-test=delete-selected]')
    assert.equal(await selectedButton.isDisabled(), true)
    await pick1('e2e-batch-a').click()
    await pick1('e2e-batch-b').click()
    await selectedButton.filter({ hasText: 'Delete selected (2)' }).waitFor()
    await axe(page, 'the jobs page with a selection')
    await must(env.base, 'POST', '/api/v1/auth/reauth', { method: 'password', password: env.adminPassword }, env.adminToken)
    await must(env.base, 'PUT', '/api/v1/sys/config/batch', [{ configKey: 'sys.security.totp.enabled', configValue: 'true' }], env.adminToken)
    const batches = []
    page.on('request', (r) => {
      if (r.url().endsWith('/api/v1/sys/job/batch-delete')) batches.push(r)
    })
    await selectedButton.click()
    assert.match(await page.locator('.el-message-box').textContent(), /Delete the 2 selected jobs\?/)
    await confirm(page)
    const reauth = page.locator('.el-dialog', { hasText: 'Confirm it is you' })
    await reauth.waitFor()
    await page.fill('#reauth-password', env.adminPassword)
    await page.click('[data-test=reauth-confirm]')
    await row(page, 'e2e-batch-a').waitFor({ state: 'detached' })
    await row(page, 'e2e-batch-b').waitFor({ state: 'detached' })
    await must(env.base, 'PUT', '/api/v1/sys/config/batch', [{ configKey: 'sys.security.totp.enabled', configValue: 'false' }], env.adminToken)
    const answered = await Promise.all(batches.map(async (r) => [(await r.response()).status(), r.headers()['x-smart-reauth-retried'] || '', [...JSON.parse(r.postData()).ids].sort((a, b) => a - b)]))
    assert.deepEqual(answered, [[403, '', batchIds], [200, '1', batchIds]])
    assert.equal(await jobByCode('e2e-batch-a'), undefined)
    assert.equal(await jobByCode('e2e-batch-b'), undefined)
    await row(page, 'e2e-slow').waitFor()
    await row(page, 'sys-job-log-cleanup').waitFor()
    await selectedButton.filter({ hasText: 'Delete selected (0)' }).waitFor()
    await done(ctx)
  })

  it('a viewer (zh-CN) sees no action button and the API refuses the calls', { timeout: 60000 }, async () => {
    // 500/510/511: the login log's read code, which the workbench's login
    // chart needs (a figure is shown only to holders of its read code).
    const viewer = await role(env, 'e2e-job-viewer', [100, 400, 410, 411, 420, 421, 430, 431, 500, 510, 511])
    const token = await user(env, 'e2e.jobviewer', [viewer])
    const ctx = await context(env, 'zh-CN')
    await cspWatch(ctx)
    const page = await ctx.newPage()
    await login(env, page, 'e2e.jobviewer', userPassword)
    await open(page, 'system/job/index')
    await row(page, 'sys-job-log-cleanup').waitFor()
    await row(page, 'e2e-slow').waitFor()
    const codes = ['sys-job-log-cleanup', 'e2e-slow', 'e2e-fail']
    for (const sel of ['[data-test=add]', '[data-test=delete-selected]', '.el-table-column--selection', ...codes.flatMap((c) => ['edit', 'toggle', 'run', 'delete'].map((a) => `[data-test="${a}-${c}"]`))]) {
      assert.equal(await page.locator(sel).count(), 0, `${sel} is shown without its code`)
    }
    await shot(page, 'admin-jobs-viewer')
    await axe(page, 'the jobs page (viewer, zh-CN)')
    await open(page, 'system/job-log/index')
    await pick(page, '[data-test=filter-status]', '已取消')
    await page.click('[data-test=search]')
    await row(page, 'E2E slow call').waitFor()
    assert.equal(await page.locator('[data-test=clear]').count(), 0)
    await open(page, 'system/job-monitor/index')
    await page.locator('[data-test=chart] canvas').first().waitFor()
    assert.match(await page.locator('[data-test=chart]').first().getAttribute('aria-label'), /已取消 1/)
    await shot(page, 'admin-jobs-monitor-zh')
    await axe(page, 'the job monitor (zh-CN)')
    await page.locator('[data-test="menu-dashboard/workbench"]').click()
    await page.locator('[data-test=workbench] [data-test=chart] canvas').waitFor()
    assert.match(await page.locator('[data-test=workbench] [data-test=chart]').getAttribute('aria-label'), /登录次数/)
    await shot(page, 'admin-workbench-zh')
    await axe(page, 'the workbench (zh-CN)')
    assert.deepEqual(await cspViolations(page), [], 'CSP violations with the charts')

    const slowJob = await jobByCode('e2e-slow')
    const slowRun = (await must(env.base, 'GET', `/api/v1/sys/job/log/page?JobId=${slowJob.id}`, undefined, env.adminToken)).items[0]
    const body = { code: 'x-viewer', name: 'x', handlerKind: 1, handlerName: 'kernel.logRetention', triggerKind: 2, intervalSeconds: 60, misfireStrategy: 1, concurrencyMode: 1, timeoutSeconds: 0, retryCount: 0, retryIntervalSeconds: 0, failAlertThreshold: 0, alertByNotice: false }
    for (const [method, path, b] of [
      ['POST', '/api/v1/sys/job', body],
      ['PUT', `/api/v1/sys/job/${slowJob.id}`, { ...body, code: 'e2e-slow' }],
      ['DELETE', `/api/v1/sys/job/${slowJob.id}`, undefined],
      ['POST', '/api/v1/sys/job/batch-delete', { ids: [slowJob.id] }],
      ['PUT', `/api/v1/sys/job/${slowJob.id}/enabled?enabled=false`, undefined],
      ['POST', `/api/v1/sys/job/${slowJob.id}/run`, undefined],
      ['POST', `/api/v1/sys/job/log/${slowRun.id}/kill`, undefined],
      ['POST', '/api/v1/sys/job/log/clear', {}],
    ]) {
      const r = await api(env.base, method, path, b, token)
      assert.equal(r.http, 403, `${method} ${path} answered ${r.http} ${r.code}`)
      assert.notEqual(r.code, 0)
    }
    // Nothing changed.
    assert.equal((await jobByCode('e2e-slow')).status, 1)
    assert.equal((await must(env.base, 'GET', `/api/v1/sys/job/log/page?JobId=${slowJob.id}`, undefined, env.adminToken)).total, 1)
    await done(ctx)
  })
})
