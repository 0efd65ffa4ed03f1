// The menus and modules pages (issue 25) in chromium against the kernel
// binary: a folder, a page below it and a button below that whose
// permission code is chosen from the kernel's route codes (the client rule
// asks for one first); the kernel refusing to delete a menu with children;
// edit and delete. A module: the client rule on its home route, add,
// disable, edit, the built-in module's refusal, delete. Then the
// permission case (a viewer sees no action button and the API refuses).
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { start, stop, context, done, login, open, axe, shot, confirm, role, user, api, must, userPassword } from './adminlib.js'

let env
const file = 'admin-menus'

before(async () => {
  env = await start('admin-menus')
})
after(async () => {
  await stop(env, file)
})

const row = (page, text) => page.locator('[data-test=table] .el-table__body tr').filter({ hasText: text })
const findNode = (nodes, title) => {
  for (const n of nodes) {
    if (n.title === title) return n
    const c = findNode(n.children ?? [], title)
    if (c) return c
  }
  return null
}
async function chooseIcon(page, name) {
  await page.locator('[data-test=edit-dialog] [data-test=icon-picker]').click()
  await page.keyboard.type(name)
  await page.locator('.el-select-dropdown:visible .el-select-dropdown__item').filter({ hasText: name }).first().click()
}

describe('menus and modules pages (issue 25)', { concurrency: 1 }, () => {
  it('menus: a folder, a page and a button with a chosen code; edit; delete', { timeout: 120000 }, async () => {
    const ctx = await context(env)
    const page = await ctx.newPage()
    await login(env, page, 'superAdmin', env.adminPassword)
    await open(page, 'system/menu/index')
    await row(page, '菜单管理').first().waitFor()

    await page.click('[data-test=add]')
    await page.fill('[data-test=f-title]', 'E2E Folder')
    await page.fill('[data-test=f-path]', '/e2e')
    await chooseIcon(page, 'ph:folder-duotone')
    await page.click('[data-test=dialog-save]')
    await page.locator('[data-test=edit-dialog]').waitFor({ state: 'hidden' })
    await page.fill('[data-test=filter]', 'E2E')
    await row(page, 'E2E Folder').waitFor()

    await page.click('[data-test="child-E2E Folder"]')
    await page.fill('[data-test=f-title]', 'E2E Page')
    await page.fill('[data-test=f-path]', '/e2e/page')
    await page.fill('[data-test=f-component]', 'e2e/page/index')
    await page.click('[data-test=dialog-save]')
    await row(page, 'E2E Page').waitFor()

    // A button without a code is refused on the client; the code is chosen from the routes.
    await page.click('[data-test="child-E2E Page"]')
    await page.fill('[data-test=f-title]', 'E2E Button')
    await page.click('[data-test=dialog-save]')
    await page.locator('[data-test=edit-dialog] .el-form-item__error').filter({ hasText: 'at least one permission code' }).waitFor()
    await page.locator('[data-test=f-codes]').click()
    await page.keyboard.type('sys/dict/type/page')
    await page.locator('.el-select-dropdown:visible .el-select-dropdown__item').filter({ hasText: 'GET:/api/v1/sys/dict/type/page' }).first().click()
    await page.click('[data-test=edit-dialog] .el-dialog__title')
    await page.locator('.el-select-dropdown:visible').waitFor({ state: 'detached' }).catch(() => {})
    await page.waitForFunction(() => ![...document.querySelectorAll('.el-select-dropdown')].some((d) => d.offsetParent !== null))
    await shot(page, 'admin-menus-dialog')
    await axe(page, 'the menu dialog')
    await page.click('[data-test=dialog-save]')
    await row(page, 'E2E Button').waitFor()
    const tree = await must(env.base, 'GET', '/api/v1/sys/menu/tree', undefined, env.adminToken)
    const folder = findNode(tree, 'E2E Folder')
    assert.equal(folder.moduleId, 1)
    assert.equal(folder.icon, 'ph:folder-duotone')
    assert.equal(folder.children[0].component, 'e2e/page/index')
    assert.equal(folder.children[0].children[0].type, 3)
    assert.equal(folder.children[0].children[0].permission, 'GET:/api/v1/sys/dict/type/page')
    await shot(page, 'admin-menus')
    await axe(page, 'the menus page')

    await page.click('[data-test="edit-E2E Button"]')
    await page.fill('[data-test=f-title]', 'E2E Button 2')
    await page.click('[data-test=dialog-save]')
    await row(page, 'E2E Button 2').waitFor()

    // A menu with children cannot be deleted: the kernel's text is shown.
    await page.click('[data-test="delete-E2E Folder"]')
    await confirm(page)
    await page.locator('.el-message--error').waitFor()
    for (const title of ['E2E Button 2', 'E2E Page', 'E2E Folder']) {
      await page.click(`[data-test="delete-${title}"]`)
      await confirm(page)
      await row(page, title).waitFor({ state: 'detached' })
    }
    assert.equal(findNode(await must(env.base, 'GET', '/api/v1/sys/menu/tree', undefined, env.adminToken), 'E2E Folder'), null)
    await done(ctx)
  })

  it('modules: add, disable, edit, delete; the built-in module is kept', { timeout: 90000 }, async () => {
    const ctx = await context(env)
    const page = await ctx.newPage()
    await login(env, page, 'superAdmin', env.adminPassword)
    await open(page, 'system/module/index')
    await page.click('[data-test=add]')
    await page.fill('[data-test=f-code]', 'e2e_mod')
    await page.fill('[data-test=f-title]', 'E2E Module')
    await chooseIcon(page, 'ph:squares-four-duotone')
    await page.fill('[data-test=f-route]', 'e2e')
    await page.click('[data-test=dialog-save]')
    await page.locator('[data-test=edit-dialog] .el-form-item__error').filter({ hasText: 'starts with /' }).waitFor()
    await page.fill('[data-test=f-route]', '/e2e')
    await page.click('[data-test=dialog-save]')
    await row(page, 'E2E Module').waitFor()

    await page.click('[data-test=toggle-e2e_mod]')
    await row(page, 'E2E Module').filter({ hasText: 'Disabled' }).waitFor()
    let mods = await must(env.base, 'GET', '/api/v1/sys/module/list', undefined, env.adminToken)
    const mine = mods.find((m) => m.code === 'e2e_mod')
    assert.deepEqual([mine.enabled, mine.defaultRoute, mine.icon], [false, '/e2e', 'ph:squares-four-duotone'])

    await page.click('[data-test=edit-e2e_mod]')
    await page.fill('[data-test=f-title]', 'E2E Module 2')
    await page.click('[data-test=dialog-save]')
    await row(page, 'E2E Module 2').waitFor()
    await shot(page, 'admin-modules')
    await axe(page, 'the modules page')

    await page.click('[data-test=delete-system]')
    await confirm(page)
    await page.locator('.el-message--error').waitFor()
    await page.click('[data-test=delete-e2e_mod]')
    await confirm(page)
    await row(page, 'E2E Module 2').waitFor({ state: 'detached' })
    mods = await must(env.base, 'GET', '/api/v1/sys/module/list', undefined, env.adminToken)
    assert.deepEqual(mods.map((m) => m.code).includes('e2e_mod'), false)
    assert.equal(mods.some((m) => m.code === 'system'), true)
    await done(ctx)
  })

  it('a viewer sees no action button and the API refuses the calls', { timeout: 60000 }, async () => {
    const viewer = await role(env, 'e2e-menu-viewer', [300, 330, 331, 340, 341])
    const token = await user(env, 'e2e.menuviewer', [viewer])
    const ctx = await context(env, 'zh-CN')
    const page = await ctx.newPage()
    await login(env, page, 'e2e.menuviewer', userPassword)
    await open(page, 'system/menu/index')
    await row(page, '菜单管理').first().waitFor()
    for (const sel of ['[data-test=add]', '[data-test^=child-]', '[data-test^=edit-]', '[data-test^=delete-]']) {
      assert.equal(await page.locator(sel).count(), 0, `${sel} is shown without its code`)
    }
    await shot(page, 'admin-menus-viewer')
    await axe(page, 'the menus page (viewer, zh-CN)')
    await open(page, 'system/module/index')
    await row(page, 'system').first().waitFor()
    for (const sel of ['[data-test=add]', '[data-test^=edit-]', '[data-test^=toggle-]', '[data-test^=delete-]']) {
      assert.equal(await page.locator(sel).count(), 0, `${sel} is shown without its code`)
    }
    await shot(page, 'admin-modules-viewer')
    await axe(page, 'the modules page (viewer, zh-CN)')
    for (const [method, path, body] of [
      ['POST', '/api/v1/sys/menu/add', { parentId: 0, type: 1, title: 'x' }],
      ['PUT', '/api/v1/sys/menu/330', { parentId: 300, type: 2, title: 'x' }],
      ['DELETE', '/api/v1/sys/menu/334', undefined],
      ['POST', '/api/v1/sys/module/add', { code: 'x', title: 'x' }],
      ['PUT', '/api/v1/sys/module/1', { code: 'system', title: 'x' }],
      ['DELETE', '/api/v1/sys/module/2', undefined],
    ]) {
      const r = await api(env.base, method, path, body, token)
      assert.equal(r.http, 403, `${method} ${path} answered ${r.http} ${r.code}`)
      assert.notEqual(r.code, 0)
    }
    await done(ctx)
  })
})
