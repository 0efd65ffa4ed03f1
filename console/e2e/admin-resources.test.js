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
// businessModule switches the shell to the business module and makes the
// inventory group's entries visible (a group may start collapsed).
async function businessModule(page, title = '业务中心', entry = 'resource/inventory-product') {
  await page.locator('[data-test=module-switch]').click()
  await page.locator('.el-select-dropdown:visible .el-select-dropdown__item').filter({ hasText: title }).click()
  const group = page.locator('.el-sub-menu__title').filter({ hasText: /Inventory|库存/ }).first()
  await group.waitFor()
  const item = page.locator(`[data-test="menu-${entry}"]`)
  for (let i = 0; i < 3 && !(await item.isVisible()); i++) {
    await group.click()
    await item.waitFor({ state: 'visible', timeout: 2000 }).catch(() => {})
  }
}
const products = '/api/v1/inventory/product'
const stock = '/api/v1/inventory/stock-level'

describe('business resources: the standard page', { concurrency: 1 }, () => {
  it('products: add through the form, filter, switch language, phone and dark', { timeout: 120000 }, async () => {
    await must(env.base, 'POST', products, { sku: 'P-100', name: 'Hex bolt', category: 'spare', price: 0.25 }, env.adminToken)
    const ctx = await context(env)
    const page = await ctx.newPage()
    await login(env, page, 'superAdmin', env.adminPassword)
    await businessModule(page)
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

    // Delete into the recycle bin, follow the page's link to the bin's tab
    // of this resource, restore.
    await page.click('[data-test=reset]')
    await row(page, 'Washer M8').waitFor()
    const washer = created.items[0].id
    await page.click(`[data-test="delete-${washer}"]`)
    await page.locator('.el-message-box').getByRole('button', { name: /Confirm|确定|OK/ }).click()
    await row(page, 'Washer M8').waitFor({ state: 'detached' })
    await page.click('[data-test=recycle]')
    await page.locator('[data-test=recycle-types] .el-tabs__item.is-active').filter({ hasText: 'Products' }).waitFor()
    const binned = page.locator('.el-table__body tr').filter({ hasText: 'Washer M8' })
    await binned.waitFor()
    assert.match(await binned.textContent(), /P-200/, 'the SKU is the code in the bin')
    await shot(page, 'resource-products-bin')
    await page.click('[data-test="restore-P-200"]')
    await binned.waitFor({ state: 'detached' })
    assert.equal((await must(env.base, 'GET', products + '/page?sku=P-200', undefined, env.adminToken)).total, 1, 'restored')

    // Chinese: the labels of the description.
    const zh = await context(env, 'zh-CN')
    const zp = await zh.newPage()
    await zp.addInitScript(() => localStorage.setItem('ak.locale', 'zh-CN'))
    await login(env, zp, 'superAdmin', env.adminPassword)
    await businessModule(zp, '业务中心')
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
    await pp.locator('[data-test=resource-title]').waitFor()
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

  it('a page the module ships: loaded at run time, survives a token refresh and a re-authentication', { timeout: 120000 }, async () => {
    const ctx = await context(env)
    const page = await ctx.newPage()
    const kit = []
    page.on('request', (r) => {
      if (/\/console-(kit|ext)\//.test(r.url())) kit.push(new URL(r.url()).pathname)
    })
    await login(env, page, 'superAdmin', env.adminPassword)
    assert.deepEqual(kit, [], 'the first load fetches nothing of the kit or the modules')
    await businessModule(page, '业务中心', 'inventory/dashboard/index')
    await page.locator('[data-test="menu-inventory/dashboard/index"]').click()
    await page.locator('[data-test=inventory-table] .el-table__body tr').first().waitFor()
    assert.ok(kit.some((p) => p.startsWith('/console-ext/inventory/')), `the module's page came from /console-ext/inventory/ (${kit.join(', ')})`)
    assert.ok(kit.some((p) => p.startsWith('/console-kit/')), 'and used the console kit')
    const url = page.url()

    // An access token the kernel refuses (as after it expired), in the
    // running page: the kit's client refreshes with the refresh token and
    // replays the page's call.
    await page.evaluate(() => {
      const s = globalThis.__AK_KIT__.kit.api.session
      s.accessToken = 'expired.' + s.accessToken
    })
    const calls = []
    page.on('response', (r) => {
      if (r.url().includes('/api/v1/inventory/items') || r.url().includes('/api/v1/auth/refresh')) calls.push([new URL(r.url()).pathname, r.status()])
    })
    await page.click('[data-test=inventory-refresh]')
    await page.waitForFunction(() => !document.querySelector('[data-test=inventory-refresh].is-loading'))
    await page.locator('[data-test=inventory-table] .el-table__body tr').first().waitFor()
    assert.equal(page.url(), url, 'still on the page')
    assert.deepEqual(calls.map((c) => c.join(' ')), ['/api/v1/inventory/items 401', '/api/v1/auth/refresh 200', '/api/v1/inventory/items 200'])

    // The delete code made high-sensitivity and TOTP on: the call is
    // refused with 40024, the console's re-authentication dialog opens,
    // the password opens the window and the kit replays the call once.
    await must(env.base, 'POST', '/api/v1/auth/reauth', { method: 'password', password: env.adminPassword }, env.adminToken)
    await must(env.base, 'POST', '/api/v1/sys/mfa/high-sensitivity', { permissionCode: 'DELETE:/api/v1/inventory/items/{id}' }, env.adminToken)
    await must(env.base, 'PUT', '/api/v1/sys/config/batch', [{ configKey: 'sys.security.totp.enabled', configValue: 'true' }], env.adminToken)
    const deletes = []
    page.on('response', (r) => {
      if (r.request().method() === 'DELETE' && r.url().includes('/api/v1/inventory/items/')) deletes.push([r.status(), r.request().headers()['x-smart-reauth-retried'] || ''])
    })
    const before = await page.locator('[data-test=inventory-table] .el-table__body tr').count()
    await page.locator('[data-test=inventory-table] .el-table__body tr').first().getByRole('button').last().click()
    const dialog = page.locator('.el-dialog', { hasText: 'Confirm it is you' })
    await dialog.waitFor()
    await page.fill('#reauth-password', env.adminPassword)
    await page.click('[data-test=reauth-confirm]')
    await page.waitForFunction((n) => document.querySelectorAll('[data-test=inventory-table] .el-table__body tr').length === n - 1, before)
    await must(env.base, 'PUT', '/api/v1/sys/config/batch', [{ configKey: 'sys.security.totp.enabled', configValue: 'false' }], env.adminToken)
    assert.deepEqual(deletes, [[403, ''], [200, '1']])
    await shot(page, 'resource-extension-dashboard')
    await axe(page, 'the stock dashboard a module ships')
    await done(ctx)
  })
})
