// The organisations and positions pages (issue 25) in chromium against the
// kernel binary: organisations add (root and child), edit, copy a subtree,
// delete; positions add, edit, delete; then the permission case for both
// (a viewer sees no action button and the API refuses the calls).
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { start, stop, context, done, login, open, axe, shot, confirm, role, user, api, must, userPassword } from './adminlib.js'

let env
const file = 'admin-org'

before(async () => {
  env = await start('admin-org')
})
after(async () => {
  await stop(env, file)
})

const row = (page, text) => page.locator('[data-test=table] .el-table__body tr').filter({ hasText: text })
const orgs = async () => must(env.base, 'GET', '/api/v1/sys/org/list', undefined, env.adminToken)

describe('organisations and positions pages (issue 25)', { concurrency: 1 }, () => {
  it('organisations: add a root and a child, edit, copy the subtree, delete', { timeout: 120000 }, async () => {
    const ctx = await context(env)
    const page = await ctx.newPage()
    await login(env, page, 'superAdmin', env.adminPassword)
    await open(page, 'system/org/index')

    await page.click('[data-test=add]')
    await page.fill('[data-test=f-name]', 'E2E Root')
    await page.fill('[data-test=f-code]', 'e2e-root')
    await page.click('[data-test=dialog-save]')
    await row(page, 'E2E Root').waitFor()
    await page.click('[data-test="child-E2E Root"]')
    await page.fill('[data-test=f-name]', 'E2E Child')
    await page.click('[data-test=dialog-save]')
    await row(page, 'E2E Child').waitFor()
    const root = (await orgs()).find((o) => o.name === 'E2E Root')
    const child = (await orgs()).find((o) => o.name === 'E2E Child')
    assert.equal(String(child.parentId), String(root.id), 'the child is under the root')

    // A client rule (required name) before any request.
    await page.click('[data-test="edit-E2E Child"]')
    await page.fill('[data-test=f-name]', '')
    await page.click('[data-test=dialog-save]')
    await page.locator('[data-test=edit-dialog] .el-form-item__error').filter({ hasText: 'Required.' }).waitFor()
    await page.fill('[data-test=f-name]', 'E2E Child 2')
    await page.click('[data-test=dialog-save]')
    await row(page, 'E2E Child 2').waitFor()

    // Copy the subtree under a new name.
    await page.click('[data-test="copy-E2E Root"]')
    await page.locator('.el-message-box input').fill('E2E Copy')
    await confirm(page)
    await row(page, 'E2E Copy').waitFor()
    const all = await orgs()
    const copy = all.find((o) => o.name === 'E2E Copy')
    assert.ok(copy, 'the copy exists')
    assert.ok(all.some((o) => String(o.parentId) === String(copy.id) && o.name === 'E2E Child 2'), 'the copy has the child')
    await shot(page, 'admin-org')
    await axe(page, 'the organisations page')

    // Deleting an org with children is refused with the kernel's text; a leaf goes.
    const leaf = all.find((o) => String(o.parentId) === String(copy.id))
    await page.locator(`[data-test=table] .el-table__body tr`).filter({ hasText: 'E2E Copy' }).locator('[data-test="delete-E2E Copy"]').click()
    await confirm(page)
    await page.locator('.el-message--error').waitFor()
    assert.ok((await orgs()).some((o) => o.id === copy.id), 'an org with children is not deleted')
    await page.locator('[data-test="delete-E2E Child 2"]').last().click()
    await confirm(page)
    await page.waitForFunction(async () => true)
    for (let i = 0; i < 50 && (await orgs()).some((o) => o.id === leaf.id); i++) await new Promise((r) => setTimeout(r, 100))
    assert.ok(!(await orgs()).some((o) => o.id === leaf.id), 'the leaf is deleted')
    await done(ctx)
  })

  it('positions: add, edit, delete', { timeout: 60000 }, async () => {
    const ctx = await context(env)
    const page = await ctx.newPage()
    await login(env, page, 'superAdmin', env.adminPassword)
    await open(page, 'system/position/index')
    await page.click('[data-test=add]')
    await page.fill('[data-test=f-name]', 'E2E Engineer')
    await page.fill('[data-test=f-code]', 'e2e-eng')
    await page.click('[data-test=dialog-save]')
    await row(page, 'E2E Engineer').waitFor()
    // A duplicate code: the API's msgKey text in the dialog.
    await page.click('[data-test=add]')
    await page.fill('[data-test=f-name]', 'Twin')
    await page.fill('[data-test=f-code]', 'e2e-eng')
    await page.click('[data-test=dialog-save]')
    await page.locator('[data-test=dialog-error]').waitFor()
    await page.click('[data-test=dialog-cancel]')
    await page.click('[data-test=edit-e2e-eng]')
    await page.fill('[data-test=f-name]', 'E2E Senior Engineer')
    await page.click('[data-test=dialog-save]')
    await row(page, 'E2E Senior Engineer').waitFor()
    await page.fill('[data-test=filter-name]', 'Senior')
    await page.click('[data-test=search]')
    await row(page, 'E2E Senior Engineer').waitFor()
    await shot(page, 'admin-positions')
    await axe(page, 'the positions page')
    await page.click('[data-test=delete-e2e-eng]')
    await confirm(page)
    await row(page, 'E2E Senior Engineer').waitFor({ state: 'detached' })
    const left = await must(env.base, 'GET', '/api/v1/sys/position/page?Name=Senior', undefined, env.adminToken)
    assert.equal(left.total, 0)
    await done(ctx)
  })

  it('a viewer sees no action button and the API refuses the calls', { timeout: 60000 }, async () => {
    // Catalog 200, orgs 210 + read 211, positions 220 + read 221.
    const viewer = await role(env, 'e2e-org-viewer', [200, 210, 211, 220, 221])
    const token = await user(env, 'e2e.orgviewer', [viewer])
    const ctx = await context(env, 'zh-CN')
    const page = await ctx.newPage()
    await login(env, page, 'e2e.orgviewer', userPassword)
    for (const c of ['system/org/index', 'system/position/index']) {
      await open(page, c)
      await page.locator('[data-test=table] .el-table__body tr').first().waitFor()
      for (const sel of ['[data-test=add]', '[data-test^=edit-]', '[data-test^=child-]', '[data-test^=copy-]', '[data-test^=delete-]']) {
        assert.equal(await page.locator(sel).count(), 0, `${c}: ${sel} is shown without its code`)
      }
      await axe(page, `${c} (viewer, zh-CN)`)
    }
    await shot(page, 'admin-positions-viewer')
    const org = (await orgs())[0]
    for (const [method, path, body] of [
      ['POST', '/api/v1/sys/org/add', { parentId: 0, name: 'x' }],
      ['PUT', `/api/v1/sys/org/${org.id}`, { parentId: 0, name: 'x' }],
      ['POST', `/api/v1/sys/org/${org.id}/copy`, {}],
      ['DELETE', `/api/v1/sys/org/${org.id}`, undefined],
      ['POST', '/api/v1/sys/position/add', { name: 'x', code: 'x' }],
      ['DELETE', '/api/v1/sys/position/1', undefined],
    ]) {
      const r = await api(env.base, method, path, body, token)
      assert.equal(r.http, 403, `${method} ${path} answered ${r.http} ${r.code}`)
      assert.notEqual(r.code, 0)
    }
    await done(ctx)
  })
})
