// The dictionaries page (issue 25) in chromium against the kernel binary:
// a type (client rule on its code), its items (add, edit, delete), a seed
// type's refusal shown with the kernel's text, the type's deletion; then
// the permission case (a viewer sees no action button and the API refuses).
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { start, stop, context, done, login, open, axe, shot, confirm, role, user, api, must, userPassword } from './adminlib.js'

let env
const file = 'admin-dict'

before(async () => {
  env = await start('admin-dict')
})
after(async () => {
  await stop(env, file)
})

const row = (page, panel, text) => page.locator(`${panel} [data-test=table] .el-table__body tr`).filter({ hasText: text })

describe('dictionaries page (issue 25)', { concurrency: 1 }, () => {
  it('types and items: add, edit, delete', { timeout: 120000 }, async () => {
    const ctx = await context(env)
    const page = await ctx.newPage()
    await login(env, page, 'superAdmin', env.adminPassword)
    await open(page, 'system/dict/index')

    await page.click('[data-test=add-type]')
    await page.fill('[data-test=f-code]', 'bad code!')
    await page.fill('[data-test=f-name]', 'E2E Colours')
    await page.click('[data-test=dialog-save]')
    await page.locator('[data-test=edit-dialog] .el-form-item__error').filter({ hasText: 'letters, digits' }).waitFor()
    await page.fill('[data-test=f-code]', 'e2e_colour')
    await page.click('[data-test=dialog-save]')
    await page.fill('[data-test=filter-code]', 'e2e_')
    await page.click('[data-test=search]')
    await row(page, '', 'e2e_colour').waitFor()

    await page.click('[data-test=items-e2e_colour]')
    await page.click('[data-test=add-item]')
    await page.fill('[data-test=f-label]', 'Red')
    await page.fill('[data-test=f-value]', 'red')
    await page.click('[data-test=dialog-save]')
    await row(page, '[data-test=items-panel]', 'Red').waitFor()
    await page.click('[data-test=edit-item-red]')
    await page.fill('[data-test=f-label]', 'Crimson')
    await page.click('[data-test=dialog-save]')
    await row(page, '[data-test=items-panel]', 'Crimson').waitFor()
    const enabled = await must(env.base, 'GET', '/api/v1/sys/dict/items/e2e_colour', undefined, env.adminToken)
    assert.deepEqual(enabled.map((i) => [i.label, i.value]), [['Crimson', 'red']])
    await shot(page, 'admin-dict')
    await axe(page, 'the dictionaries page')
    await page.click('[data-test=delete-item-red]')
    await confirm(page)
    await row(page, '[data-test=items-panel]', 'Crimson').waitFor({ state: 'detached' })

    // A seed type cannot be deleted: the kernel's text is shown.
    await page.fill('[data-test=filter-code]', 'gender')
    await page.click('[data-test=search]')
    await page.click('[data-test=delete-type-gender]')
    await confirm(page)
    await page.locator('.el-message--error').waitFor()
    assert.equal((await must(env.base, 'GET', '/api/v1/sys/dict/type/page?Code=gender', undefined, env.adminToken)).total, 1)

    await page.fill('[data-test=filter-code]', 'e2e_')
    await page.click('[data-test=search]')
    await page.click('[data-test=delete-type-e2e_colour]')
    await confirm(page)
    await row(page, '', 'e2e_colour').waitFor({ state: 'detached' })
    await done(ctx)
  })

  it('a viewer sees no action button and the API refuses the calls', { timeout: 60000 }, async () => {
    const viewer = await role(env, 'e2e-dict-viewer', [300, 320, 321, 325])
    const token = await user(env, 'e2e.dictviewer', [viewer])
    const ctx = await context(env, 'zh-CN')
    const page = await ctx.newPage()
    await login(env, page, 'e2e.dictviewer', userPassword)
    await open(page, 'system/dict/index')
    await page.locator('[data-test=items-gender]').click()
    await page.locator('[data-test=items-panel] [data-test=table] .el-table__body tr').first().waitFor()
    for (const sel of ['[data-test=add-type]', '[data-test^=edit-type-]', '[data-test^=delete-type-]', '[data-test=add-item]', '[data-test^=edit-item-]', '[data-test^=delete-item-]']) {
      assert.equal(await page.locator(sel).count(), 0, `${sel} is shown without its code`)
    }
    await shot(page, 'admin-dict-viewer')
    await axe(page, 'the dictionaries page (viewer, zh-CN)')
    for (const [method, path, body] of [
      ['POST', '/api/v1/sys/dict/type', { code: 'x', name: 'x' }],
      ['PUT', '/api/v1/sys/dict/type/1', { code: 'x', name: 'x' }],
      ['DELETE', '/api/v1/sys/dict/type/1', undefined],
      ['POST', '/api/v1/sys/dict/item', { dictTypeCode: 'gender', label: 'x', value: 'x' }],
      ['DELETE', '/api/v1/sys/dict/item/1', undefined],
    ]) {
      const r = await api(env.base, method, path, body, token)
      assert.equal(r.http, 403, `${method} ${path} answered ${r.http} ${r.code}`)
      assert.notEqual(r.code, 0)
    }
    await done(ctx)
  })
})
