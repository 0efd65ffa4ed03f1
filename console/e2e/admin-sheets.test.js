// Spreadsheets on the console (issue 25, docs/developers/spreadsheets.md) in chromium
// against the kernel binary: the users export (columns chosen, the file's
// rows checked against the API's total), the import (template, upload,
// header mapping, a row in error with the error report, a correction,
// validation, commit with the passwords shown once and signing in), the
// operation-log export with its column choice, and the permission case
// (no buttons without the codes, the API refusing).
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { start, stop, context, done, login, open, axe, shot, role, user, api, must, userPassword } from './adminlib.js'
import * as xlsx from './xlsx.js'

let env
const file = 'admin-sheets'

before(async () => {
  env = await start('admin-sheets')
})
after(async () => {
  await stop(env, file)
})

/** saved clicks and returns the downloaded file's bytes. */
async function saved(page, selector) {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click(selector)])
  const p = await dl.path()
  return { name: dl.suggestedFilename(), buf: fs.readFileSync(p) }
}
const isZip = (buf) => buf.subarray(0, 4).equals(Buffer.from([0x50, 0x4b, 0x03, 0x04]))

describe('spreadsheets on the console (issue 25)', { concurrency: 1 }, () => {
  it('exports the users with the chosen columns and imports a file: mapping, errors, report, correction, commit', { timeout: 120000 }, async () => {
    await must(env.base, 'POST', '/api/v1/sys/org/add', { parentId: 0, name: 'Sheet Org', code: 'sheet-org', sort: 1 }, env.adminToken)
    await role(env, 'sheet-role', [])
    for (const a of ['sheet.a', 'sheet.b']) await must(env.base, 'POST', '/api/v1/sys/user', { account: a, name: a, password: 'Init#Pass123' }, env.adminToken)

    const ctx = await context(env)
    const page = await ctx.newPage()
    await login(env, page, 'superAdmin', env.adminPassword)
    await open(page, 'system/user/index')

    // Export: every column but the creation time; the file is an xlsx whose
    // rows are the API's total, its header the chosen columns.
    await page.click('[data-test=export]')
    await page.locator('[data-test=export-dialog]').waitFor()
    await page.locator('[data-test=col-CreateTime]').click()
    await page.locator('[data-test=col-IsSuperAdmin]').click()
    await shot(page, 'admin-users-export')
    await axe(page, 'the export dialog')
    const exp = await saved(page, '[data-test=export-run]')
    await page.locator('[data-test=export-done]').waitFor()
    assert.ok(isZip(exp.buf), 'the export is a zip (xlsx)')
    assert.match(exp.name, /\.xlsx$/)
    const sheet = xlsx.rows(exp.buf)
    const total = (await must(env.base, 'GET', '/api/v1/sys/user/page?Current=1&Size=1', undefined, env.adminToken)).total
    assert.equal(sheet.length - 1, total, 'one row per user')
    assert.equal(sheet[0].length, 10, 'the ten chosen columns')
    assert.ok(sheet.some((r) => r[0] === 'sheet.a'), 'sheet.a is exported')
    // The filters apply: only the accounts matching "sheet.".
    await page.locator('[data-test=export-dialog] .el-dialog__headerbtn').click()
    await page.fill('[data-test=filter-account]', 'sheet.')
    await page.click('[data-test=search]')
    await page.locator('[data-test=table] .el-table__body tr').filter({ hasText: 'sheet.b' }).waitFor()
    await page.click('[data-test=export]')
    const filtered = xlsx.rows((await saved(page, '[data-test=export-run]')).buf)
    assert.deepEqual(filtered.slice(1).map((r) => r[0]).sort(), ['sheet.a', 'sheet.b'])
    await page.locator('[data-test=export-dialog] .el-dialog__headerbtn').click()
    await page.click('[data-test=reset]')

    // Import: the template first.
    await page.click('[data-test=import]')
    const dlg = page.locator('[data-test=import-dialog]')
    await dlg.waitFor()
    const tpl = await saved(page, '[data-test=import-template]')
    assert.ok(isZip(tpl.buf), 'the template is an xlsx')
    assert.ok(xlsx.rows(tpl.buf)[0].some((h) => h.startsWith('账号')), 'the template has the account header')

    // A file with a header the kernel does not know ("Mail") and a row
    // missing its name.
    const book = xlsx.write([
      ['账号', '姓名', 'Mail', '机构', '角色编码'],
      ['imp.one', 'Import One', 'one@example.com', 'sheet-org', 'sheet-role'],
      ['imp.two', 'Import Two', 'two@example.com', 'Sheet Org', ''],
      ['imp.bad', '', 'bad@example.com', '', ''],
    ])
    // The API's own answer for this file, to compare with the page.
    const form = new FormData()
    form.append('file', new Blob([book]), 'users.xlsx')
    const direct = await (await fetch(env.base + '/api/v1/sys/user/import/preview', { method: 'POST', headers: { Authorization: 'Bearer ' + env.adminToken }, body: form })).json()
    assert.equal(direct.code, 0)
    assert.equal(direct.data.total, 3)
    assert.equal(direct.data.errorRows, 1)
    assert.ok(!direct.data.mapping.Mail, 'Mail is not mapped by itself')
    assert.ok(direct.data.headers.includes('Mail'))

    await page.locator('[data-test=import-file]').setInputFiles({ name: 'users.xlsx', mimeType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', buffer: book })
    await dlg.locator('[data-test=import-summary]').filter({ hasText: '3 rows, 1 with errors' }).waitFor()
    await dlg.locator('[data-test=row-error]').filter({ hasText: 'This field is required.' }).waitFor()
    // Map "Mail" onto the e-mail column and read the file again.
    await page.locator('[data-test="map-Mail"]').click()
    await page.locator('.el-select-dropdown:visible .el-select-dropdown__item').filter({ hasText: /^邮箱$/ }).click()
    await page.click('[data-test=import-remap]')
    await dlg.locator('.el-table__header th').filter({ hasText: '邮箱' }).waitFor()
    await shot(page, 'admin-users-import')
    await axe(page, 'the import dialog')
    assert.equal(await dlg.locator('[data-test=import-commit]').isDisabled(), true, 'no commit while a row is in error')

    // The error report: an xlsx with the row in error.
    const report = await saved(page, '[data-test=import-report]')
    assert.ok(isZip(report.buf))
    const reportRows = xlsx.rows(report.buf)
    assert.equal(reportRows.length, 4, 'the header and the three rows')
    assert.equal(reportRows[0][0], '行号')
    const bad = reportRows.find((r) => r.includes('imp.bad'))
    const good = reportRows.find((r) => r.includes('imp.one'))
    assert.ok(bad.some((c) => /46005/.test(c)), 'the row in error carries its message and code: ' + bad.join(' | '))
    assert.ok(!good.some((c) => /460\d\d/.test(c)), 'a valid row carries none')

    // Correct the cell, validate again, commit.
    await page.fill('[data-test=cell-4-name]', 'Import Fixed')
    await page.click('[data-test=import-validate]')
    await dlg.locator('[data-test=import-summary]').filter({ hasText: '3 rows, 0 with errors' }).waitFor()
    await page.click('[data-test=import-commit]')
    const secret = page.locator('[data-test=secret-dialog] [data-test=secret]')
    await secret.waitFor()
    const lines = (await secret.textContent()).trim().split('\n').map((l) => l.trim().split(/\s+/))
    assert.deepEqual(lines.map((l) => l[0]).sort(), ['imp.bad', 'imp.one', 'imp.two'])
    await page.click('[data-test=secret-close]')
    await secret.waitFor({ state: 'detached' })
    await dlg.locator('[data-test=import-result]').filter({ hasText: '3 added' }).waitFor()
    for (const [account, pw] of lines) {
      const r = await api(env.base, 'POST', '/api/v1/auth/login', { account, password: pw })
      assert.equal(r.code, 0, `${account} signs in with the password shown once`)
    }
    const one = (await must(env.base, 'GET', '/api/v1/sys/user/page?Account=imp.one', undefined, env.adminToken)).items[0]
    const detail = await must(env.base, 'GET', `/api/v1/sys/user/${one.id}`, undefined, env.adminToken)
    assert.equal(detail.email, 'one@example.com', 'the mapped column was imported')
    assert.equal(detail.roleIds.length, 1)
    assert.equal(one.orgName, 'Sheet Org')
    await page.locator('[data-test=import-dialog] .el-dialog__headerbtn').click()
    await page.locator('[data-test=table] .el-table__body tr').filter({ hasText: 'imp.one' }).first().waitFor()
    await done(ctx)
  })

  it('exports the operation log with its column choice', { timeout: 60000 }, async () => {
    const ctx = await context(env, 'zh-CN')
    const page = await ctx.newPage()
    await login(env, page, 'superAdmin', env.adminPassword)
    await open(page, 'system/log/op/index')
    const before = (await must(env.base, 'GET', '/api/v1/sys/log/op/page?Current=1&Size=1', undefined, env.adminToken)).total
    await page.click('[data-test=export]')
    await page.locator('[data-test=export-dialog]').waitFor()
    // The default profile leaves out the exception message; keep only three columns.
    for (const k of ['HttpMethod', 'ResultCode', 'Success', 'OperatorName', 'Ip', 'ElapsedMs', 'CreateTime']) await page.locator(`[data-test=col-${k}]`).click()
    await page.locator('[data-test=col-ExceptionMessage]').click()
    await shot(page, 'admin-oplog-export')
    await axe(page, 'the op-log export dialog (zh-CN)')
    const exp = await saved(page, '[data-test=export-run]')
    assert.ok(isZip(exp.buf))
    const sheet = xlsx.rows(exp.buf)
    assert.deepEqual(sheet[0], ['操作', '请求路径', '异常信息'])
    const after = (await must(env.base, 'GET', '/api/v1/sys/log/op/page?Current=1&Size=1', undefined, env.adminToken)).total
    assert.ok(sheet.length - 1 >= before && sheet.length - 1 <= after, `${sheet.length - 1} rows, the API counted ${before}..${after}`)
    await done(ctx)
  })

  it('without the codes: no import or export button, and the API refuses', { timeout: 60000 }, async () => {
    // Users page with read only (230, 231); op-log page with read only (520, 521).
    const viewer = await role(env, 'sheet-viewer', [200, 230, 231, 500, 520, 521])
    const token = await user(env, 'sheet.viewer', [viewer])
    const ctx = await context(env)
    const page = await ctx.newPage()
    await login(env, page, 'sheet.viewer', userPassword)
    await open(page, 'system/user/index')
    assert.equal(await page.locator('[data-test=import]').count(), 0)
    assert.equal(await page.locator('[data-test=export]').count(), 0)
    for (const [method, path] of [['GET', '/api/v1/sys/user/export'], ['GET', '/api/v1/sys/log/op/export']]) {
      const r = await fetch(env.base + path, { method, headers: { Authorization: 'Bearer ' + token, Accept: 'application/json' } })
      assert.equal(r.status, 403, `${path} answered ${r.status}`)
      assert.notEqual((await r.json()).code, 0)
    }
    const form = new FormData()
    form.append('file', new Blob([xlsx.write([['账号', '姓名'], ['x.y', 'X']])]), 'u.xlsx')
    const r = await fetch(env.base + '/api/v1/sys/user/import/preview', { method: 'POST', headers: { Authorization: 'Bearer ' + token }, body: form })
    assert.equal(r.status, 403)
    await done(ctx)
  })
})
