// The roles page (issue 25) in chromium against the kernel binary: add,
// edit, the menu grant (checking a button checks its page and catalog),
// the data scope with custom orgs, the members, delete; then the
// permission case (a viewer sees no action button and the API refuses).
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { start, stop, context, done, login, open, axe, shot, confirm, role, user, api, must, userPassword } from './adminlib.js'

let env
const file = 'admin-roles'

before(async () => {
  env = await start('admin-roles')
})
after(async () => {
  await stop(env, file)
})

const row = (page, text) => page.locator('[data-test=table] .el-table__body tr').filter({ hasText: text })
const treeNode = (page, dialog, text) => page.locator(`[data-test=${dialog}] .el-tree-node__content`).filter({ hasText: text }).first()

describe('roles page (issue 25)', { concurrency: 1 }, () => {
  it('add, edit, grant menus, set the data scope and members, delete', { timeout: 120000 }, async () => {
    const orgId = await must(env.base, 'POST', '/api/v1/sys/org/add', { parentId: 0, name: 'E2E Scope Org', code: 'e2e-scope' }, env.adminToken)
    await user(env, 'e2e.member')
    const ctx = await context(env)
    const page = await ctx.newPage()
    await login(env, page, 'superAdmin', env.adminPassword)
    await open(page, 'system/role/index')

    await page.click('[data-test=add]')
    await page.fill('[data-test=f-name]', 'E2E Auditor')
    await page.fill('[data-test=f-code]', 'bad code')
    await page.click('[data-test=dialog-save]')
    await page.locator('[data-test=edit-dialog] .el-form-item__error').filter({ hasText: 'without spaces' }).waitFor()
    await page.fill('[data-test=f-code]', 'e2e-auditor')
    await page.click('[data-test=dialog-save]')
    await row(page, 'e2e-auditor').waitFor()
    const id = (await must(env.base, 'GET', '/api/v1/sys/role/page?Name=E2E%20Auditor', undefined, env.adminToken)).items[0].id

    await page.click('[data-test=edit-e2e-auditor]')
    await page.fill('[data-test=f-name]', 'E2E Auditors')
    await page.click('[data-test=f-delegatable]')
    await page.click('[data-test=dialog-save]')
    await row(page, 'E2E Auditors').waitFor()
    assert.equal((await must(env.base, 'GET', `/api/v1/sys/role/${id}`, undefined, env.adminToken)).isDelegatable, true)

    // Menu grant: checking the users page's read button checks the page (230) and its catalog (200).
    await page.click('[data-test=menus-e2e-auditor]')
    await treeNode(page, 'grant-dialog', '用户-查询').locator('.el-checkbox').click()
    await shot(page, 'admin-role-menus')
    await page.click('[data-test=grant-save]')
    await page.locator('[data-test=grant-dialog]').waitFor({ state: 'hidden' })
    const menus = (await must(env.base, 'GET', `/api/v1/sys/role/${id}/menus`, undefined, env.adminToken)).map(Number).sort((a, b) => a - b)
    assert.deepEqual(menus, [200, 230, 231])

    // Data scope: custom with one org.
    await page.click('[data-test=scope-e2e-auditor]')
    await page.click('[data-test=scope-type-5]')
    await page.click('[data-test=scope-save]')
    await page.locator('[data-test=scope-dialog] [data-test=dialog-error]').waitFor() // no org chosen: the client refuses
    await treeNode(page, 'scope-dialog', 'E2E Scope Org').locator('.el-checkbox').click()
    await page.click('[data-test=scope-save]')
    await page.locator('[data-test=scope-dialog]').waitFor({ state: 'hidden' })
    const ds = await must(env.base, 'GET', `/api/v1/sys/role/${id}/datascope`, undefined, env.adminToken)
    assert.equal(ds.scopeType, 5)
    assert.match(String(ds.customOrgIds), new RegExp(`\\b${orgId}\\b`))

    // Members.
    await page.click('[data-test=members-e2e-auditor]')
    await page.locator('[data-test=members-select]').click()
    await page.locator('.el-select-dropdown:visible .el-select-dropdown__item').filter({ hasText: 'e2e.member' }).click()
    await page.keyboard.press('Escape')
    await page.click('[data-test=members-save]')
    await page.locator('[data-test=members-dialog]').waitFor({ state: 'hidden' })
    const memberIds = await must(env.base, 'GET', `/api/v1/sys/role/${id}/users`, undefined, env.adminToken)
    assert.equal(memberIds.length, 1)
    await shot(page, 'admin-roles')
    await axe(page, 'the roles page')

    await page.click('[data-test=delete-e2e-auditor]')
    await confirm(page)
    await row(page, 'e2e-auditor').waitFor({ state: 'detached' })
    assert.notEqual((await api(env.base, 'GET', `/api/v1/sys/role/${id}`, undefined, env.adminToken)).code, 0, 'the role is gone')
    await done(ctx)
  })

  it('a viewer sees no action button and the API refuses the calls', { timeout: 60000 }, async () => {
    const viewer = await role(env, 'e2e-role-viewer', [200, 240, 241])
    const token = await user(env, 'e2e.roleviewer', [viewer])
    const ctx = await context(env, 'zh-CN')
    const page = await ctx.newPage()
    await login(env, page, 'e2e.roleviewer', userPassword)
    await open(page, 'system/role/index')
    await row(page, 'e2e-role-viewer').waitFor()
    for (const sel of ['[data-test=add]', '[data-test^=edit-]', '[data-test^=menus-]', '[data-test^=scope-]', '[data-test^=members-]', '[data-test^=delete-]']) {
      assert.equal(await page.locator(sel).count(), 0, `${sel} is shown without its code`)
    }
    await shot(page, 'admin-roles-viewer')
    await axe(page, 'the roles page (viewer, zh-CN)')
    for (const [method, path, body] of [
      ['POST', '/api/v1/sys/role/add', { name: 'x', code: 'x' }],
      ['PUT', `/api/v1/sys/role/${viewer}`, { name: 'x', code: 'x' }],
      ['PUT', '/api/v1/sys/role/menu', { roleId: viewer, menuIds: [200] }],
      ['PUT', '/api/v1/sys/role/datascope', { roleId: viewer, scopeType: 1 }],
      ['PUT', '/api/v1/sys/role/users', { roleId: viewer, userIds: [] }],
      ['DELETE', `/api/v1/sys/role/${viewer}`, undefined],
    ]) {
      const r = await api(env.base, method, path, body, token)
      assert.equal(r.http, 403, `${method} ${path} answered ${r.http} ${r.code}`)
      assert.notEqual(r.code, 0)
    }
    await done(ctx)
  })
})
