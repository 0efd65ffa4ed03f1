// Business resources in chromium against the example application
// (examples/inventory: the kernel plus a module declaring products and
// org-scoped stock levels, no frontend code of its own for them): the
// standard page rendered from the description — add through the form,
// filter, both languages, the phone layout and dark mode — and a clerk
// whose role holds only the stock page and whose data scope is their own
// site: they see that page and its rows only, no products entry, and the
// API refuses what the page hides.
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { start, stop, context, done, login, open, axe, shot, role, user, must, api, userPassword } from './adminlib.js'

let env
const file = 'admin-resources'

before(async () => {
  env = await start('admin-resources', {}, { app: true })
})
after(async () => {
  await stop(env, file)
})

const row = (page, text) => page.locator('[data-test=table] .el-table__body tr').filter({ hasText: text })
const products = '/api/v1/inventory/product'
const stock = '/api/v1/inventory/stock-level'

describe('business resources: the standard page', { concurrency: 1 }, () => {
  it('products: add through the form, filter, switch language, phone and dark', { timeout: 120000 }, async () => {
    await must(env.base, 'POST', products, { sku: 'P-100', name: 'Hex bolt', category: 'spare', price: 0.25 }, env.adminToken)
    const ctx = await context(env)
    const page = await ctx.newPage()
    await login(env, page, 'superAdmin', env.adminPassword)
    await open(page, 'resource/inventory-product')
    assert.equal((await page.locator('[data-test=resource-title]').textContent()).trim(), 'Products')
    await row(page, 'Hex bolt').waitFor()
    assert.match(await row(page, 'Hex bolt').textContent(), /P-100.*Hex bolt.*备件/, 'the category shows its dictionary label')

    await page.click('[data-test=add]')
    await page.fill('[data-test=f-sku]', 'P-200')
    await page.fill('[data-test=f-name]', 'Washer M8')
    await page.locator('[data-test=edit-dialog] [data-test=f-category]').click()
    await page.locator('.el-select-dropdown:visible .el-select-dropdown__item').filter({ hasText: '原材料' }).click()
    await page.click('[data-test=dialog-save]')
    await row(page, 'Washer M8').waitFor()
    const created = await must(env.base, 'GET', products + '/page?sku=P-200', undefined, env.adminToken)
    assert.equal(created.total, 1, 'the form created the row')
    assert.equal(created.items[0].category, 'raw')

    // A duplicate SKU: the kernel's message in the dialog, nothing written.
    await page.click('[data-test=add]')
    await page.fill('[data-test=f-sku]', 'P-200')
    await page.fill('[data-test=f-name]', 'Twin')
    await page.locator('[data-test=edit-dialog] [data-test=f-category]').click()
    await page.locator('.el-select-dropdown:visible .el-select-dropdown__item').filter({ hasText: '成品' }).click()
    await page.click('[data-test=dialog-save]')
    await page.locator('[data-test=dialog-error]').waitFor()
    await page.click('[data-test=dialog-cancel]')
    assert.equal((await must(env.base, 'GET', products + '/page?sku=P-200', undefined, env.adminToken)).total, 1)

    // Filter by the SKU substring.
    await page.fill('[data-test=filter-input-sku]', '100')
    await page.click('[data-test=search]')
    await row(page, 'Washer M8').waitFor({ state: 'detached' })
    await row(page, 'Hex bolt').waitFor()
    await shot(page, 'resource-products')
    await axe(page, 'the products page')

    // Chinese: the labels of the description.
    const zh = await context(env, 'zh-CN')
    const zp = await zh.newPage()
    await zp.addInitScript(() => localStorage.setItem('ak.locale', 'zh-CN'))
    await login(env, zp, 'superAdmin', env.adminPassword)
    await open(zp, 'resource/inventory-product')
    assert.equal((await zp.locator('[data-test=resource-title]').textContent()).trim(), '产品')
    assert.ok(await zp.locator('[data-test=table] th').filter({ hasText: '编码' }).count() > 0, 'the SKU column is titled 编码')
    await shot(zp, 'resource-products-zh')
    await done(zh)

    // Phone, dark.
    const phone = await env.browser.newContext({ viewport: { width: 390, height: 844 }, colorScheme: 'dark', locale: 'en-US' })
    phone.problems = []
    const pp = await phone.newPage()
    await pp.addInitScript(() => localStorage.setItem('ak.theme', 'dark'))
    await login(env, pp, 'superAdmin', env.adminPassword)
    await pp.goto(env.base + '/r/inventory-product')
    await pp.locator('[data-test=table]').waitFor()
    await row(pp, 'Hex bolt').waitFor()
    const cellBox = await row(pp, 'Hex bolt').locator('td').nth(1).boundingBox()
    assert.ok(cellBox && cellBox.x < 390 && cellBox.width > 40, `the first data column is visible on a phone (${JSON.stringify(cellBox)})`)
    const scroll = await pp.evaluate(() => document.documentElement.scrollWidth)
    assert.ok(scroll <= 392, `the page does not scroll sideways on a phone (${scroll} px)`)
    await shot(pp, 'resource-products-phone-dark')
    await axe(pp, 'the products page on a phone, dark')
    await phone.close()
    await done(ctx)
  })

  it('a clerk: only the stock page, only their site, the API agrees', { timeout: 120000 }, async () => {
    for (const org of [4, 5]) {
      await must(env.base, 'POST', stock, { sku: 'P-100', orgId: org, quantity: 10 * org }, env.adminToken)
    }
    // The stock page and its query and edit buttons (Menu.ID 1110, buttons 1111 and 1113), scope: own organisation.
    const rid = await role(env, 'clerk', [1000, 1110, 1111, 1113])
    await must(env.base, 'PUT', '/api/v1/sys/role/datascope', { roleId: rid, scopeType: 2 }, env.adminToken)
    const tok = await user(env, 'clerk', [rid], { orgId: 4 })

    const ctx = await context(env)
    const page = await ctx.newPage()
    await login(env, page, 'clerk', userPassword)
    assert.equal(await page.locator('[data-test="menu-resource/inventory-product"]').count(), 0, 'no products entry without its codes')
    await open(page, 'resource/inventory-stock')
    await row(page, '40').waitFor()
    const rows = await page.locator('[data-test=table] .el-table__body-wrapper tr').count()
    assert.equal(rows, 1, 'the clerk sees only their site')
    assert.equal(await page.locator('[data-test=add]').count(), 0, 'no add button without the create code')
    await shot(page, 'resource-stock-clerk')
    await axe(page, 'the stock page of a clerk')
    const other = (await must(env.base, 'GET', stock + '/page?orgId=5', undefined, env.adminToken)).items[0]
    const refused = await api(env.base, 'PUT', `${stock}/${other.id}`, { quantity: 1 }, tok)
    assert.equal(refused.code, 42035, 'another site is out of reach')
    const noCreate = await api(env.base, 'POST', stock, { sku: 'P-100', orgId: 4, quantity: 1 }, tok)
    assert.equal(noCreate.http, 403, 'create needs its code')
    await done(ctx)
  })
})
