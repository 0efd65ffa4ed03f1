// The standard resource page (src/resource/): rendered from a description
// with the API mocked at fetch. Columns, filters and the form come from the
// description; the page query carries the filters, the range bounds and the
// sort; the buttons follow the caller's codes; the import can be committed
// when rows merely exist and not while a row has errors; the labels follow
// the console's language.
import { describe, it, expect, vi, beforeEach, afterEach } from 'vitest'
import { createApp, nextTick, type App } from 'vue'
import { createPinia, setActivePinia } from 'pinia'
import { createRouter, createMemoryHistory } from 'vue-router'
import { i18n, msgText } from '../src/i18n'
import { resource as pack } from '../src/i18n/resource'
import { useApp } from '../src/stores/app'
import ResourcePage from '../src/resource/ResourcePage.vue'
import { cellText, filterQuery, formBody, importable, pageQuery, rulesOf, sortOf, toForm, blankFilter } from '../src/resource/schema'
import type { ImportPreview, ResourceField, ResourceSchema } from '../src/api/resource'

const BASE = '/api/v1/inventory/item'
const L = (en: string, zh: string) => ({ 'en-US': en, 'zh-CN': zh })
const FIELDS: ResourceField[] = [
  { name: 'name', label: L('Name', '名称'), type: 'string', required: true, max: 64, list: true, filter: 'contains', form: true, sortable: true, unique: true },
  { name: 'category', label: L('Category', '类别'), type: 'dict', dict: 'inventory_category', list: true, filter: 'eq', form: true },
  { name: 'stock', label: L('Stock', '库存'), type: 'int', min: 0, max: 1000000, list: true, filter: 'range', form: true, sortable: true },
  { name: 'price', label: L('Price', '价格'), type: 'decimal', scale: 2, min: 0, list: true, form: true },
  { name: 'orgId', label: L('Organisation', '机构'), type: 'org', list: true, filter: 'eq', form: true, required: true },
  { name: 'enabled', label: L('Enabled', '启用'), type: 'bool', list: true, filter: 'eq', form: true },
  { name: 'arrivedOn', label: L('Arrived on', '到货日期'), type: 'date', list: true, filter: 'range', form: true },
  { name: 'code', label: L('Code', '编码'), type: 'string', form: true, readOnly: true },
  { name: 'note', label: L('Note', '备注'), type: 'text', max: 500, form: true },
  { name: 'createTime', label: L('Created', '创建时间'), type: 'datetime', list: true, sortable: true, readOnly: true },
]
const CODES = {
  page: 'GET:/api/v1/inventory/item/page', detail: 'GET:/api/v1/inventory/item/{id}', create: 'POST:/api/v1/inventory/item', update: 'PUT:/api/v1/inventory/item/{id}',
  delete: 'DELETE:/api/v1/inventory/item/{id}', batchDelete: 'POST:/api/v1/inventory/item/batch-delete', export: 'GET:/api/v1/inventory/item/export',
  import: 'POST:/api/v1/inventory/item/import/commit', recycle: 'GET:/api/v1/sys/recycle/inventory-item/page',
} as const
const SCHEMA: ResourceSchema = {
  name: 'inventory-item', module: 'Inventory', label: L('Items', '物品'), base: BASE, key: 'id',
  operations: ['page', 'detail', 'create', 'update', 'delete', 'batchDelete', 'export', 'import', 'recycle'], codes: { ...CODES }, fields: FIELDS,
}
const ROWS = [
  { id: 7, name: 'Bolt', category: 'hw', stock: 12, price: 1.5, orgId: 3, orgName: 'Warehouse A', enabled: true, arrivedOn: '2026-03-05', note: 'n', code: 'B-7', createTime: '2026-03-05T08:09:10Z' },
  { id: 8, name: 'Nut', category: 'zz', stock: 0, price: 0.25, orgId: 4, orgName: 'Warehouse B', enabled: false, arrivedOn: null, note: '', code: 'N-8', createTime: '2026-03-06T10:00:00Z' },
]

const ok = (data: unknown) => new Response(JSON.stringify({ code: 0, msgKey: 'ok', data }), { status: 200, headers: { 'Content-Type': 'application/json' } })
let calls: { method: string; url: string; body?: unknown }[] = []
let preview: ImportPreview | null = null
function api(url: string, init: RequestInit = {}): Response {
  const method = init.method ?? 'GET'
  const u = new URL(url, 'http://localhost')
  calls.push({ method, url: u.pathname + u.search, body: typeof init.body === 'string' ? JSON.parse(init.body) : init.body })
  if (u.pathname === '/api/v1/sys/resource/inventory-item/schema') return ok(SCHEMA)
  if (u.pathname === '/api/v1/sys/resource/missing/schema') return new Response(JSON.stringify({ code: 41007, msgKey: 'error.code.41007' }), { status: 200, headers: { 'Content-Type': 'application/json' } })
  if (u.pathname === '/api/v1/sys/dict/items/inventory_category') return ok([{ label: 'Hardware', value: 'hw', sort: 1, enabled: true }, { label: 'Tools', value: 'tl', sort: 2, enabled: true }])
  if (u.pathname === '/api/v1/sys/org/list') return ok([{ id: 3, parentId: 0, name: 'Warehouse A', code: 'A', sort: 1, enabled: true }])
  if (u.pathname === `${BASE}/page`) return ok({ current: 1, size: 20, total: 2, pages: 1, items: ROWS })
  if (u.pathname === `${BASE}/import/preview`) return ok(preview)
  if (u.pathname === `${BASE}/import/commit`) return ok({ created: 1, updated: 1, skipped: 0 })
  if (u.pathname === `${BASE}/7`) return ok(ROWS[0])
  return new Response(JSON.stringify({ code: 40400, msgKey: 'error.http.404' }), { status: 404, headers: { 'Content-Type': 'application/json' } })
}

const flush = async (n = 6) => {
  for (let i = 0; i < n; i++) {
    await new Promise((r) => setTimeout(r, 0))
    await nextTick()
  }
}

let app: App | null = null
let host: HTMLElement
async function mount(codes: string[], name = 'inventory-item') {
  const pinia = createPinia()
  setActivePinia(pinia)
  useApp().permissions = new Set(codes)
  const router = createRouter({ history: createMemoryHistory(), routes: [{ path: '/:rest(.*)*', component: { render: () => null } }] })
  host = document.createElement('div')
  document.body.appendChild(host)
  app = createApp(ResourcePage, { name }).use(pinia).use(i18n).use(router)
  app.mount(host)
  await router.isReady()
  await flush()
  return host
}
const q = (sel: string, root: ParentNode = document) => root.querySelector(sel) as HTMLElement | null
const texts = (sel: string, root: ParentNode = document) => [...root.querySelectorAll(sel)].map((e) => e.textContent?.trim() ?? '')
const pageCalls = () => calls.filter((c) => c.url.startsWith(`${BASE}/page`)).map((c) => c.url)
async function type(el: HTMLInputElement, v: string) {
  el.value = v
  el.dispatchEvent(new Event('input', { bubbles: true }))
  el.dispatchEvent(new Event('change', { bubbles: true }))
  await flush(2)
}

beforeEach(() => {
  calls = []
  preview = null
  i18n.global.locale.value = 'en-US'
  vi.stubGlobal('fetch', vi.fn(async (url: string, init?: RequestInit) => api(url, init)))
  if (!('ResizeObserver' in globalThis)) vi.stubGlobal('ResizeObserver', class { observe() {} unobserve() {} disconnect() {} })
})
afterEach(() => {
  app?.unmount()
  app = null
  document.body.innerHTML = ''
  vi.unstubAllGlobals()
})

describe('resource page: rendered from the description', () => {
  it('shows the title, the list columns, the filters and the cells', async () => {
    const el = await mount(Object.values(CODES))
    expect(q('h1', el)?.textContent).toBe('Items')
    expect(calls[0].url).toBe('/api/v1/sys/resource/inventory-item/schema')
    const heads = texts('.el-table__header-wrapper th .cell', el).filter(Boolean)
    expect(heads).toEqual(['Name', 'Category', 'Stock', 'Price', 'Organisation', 'Enabled', 'Arrived on', 'Created', 'Actions'])
    // Filters: the fields with filter, in order; none for price/note/createTime.
    expect(texts('[data-test=filters] .el-form-item__label', el)).toEqual(['Name', 'Category', 'Stock', 'Organisation', 'Enabled', 'Arrived on'])
    expect(q('[data-test=filter-stockFrom] input', el)?.getAttribute('aria-label')).toBe('Stock from')
    expect(q('[data-test=filter-stockTo] input', el)?.getAttribute('aria-label')).toBe('Stock to')
    expect(q('[data-test=filter-arrivedOn] .el-date-editor--daterange', el)).not.toBeNull()
    // Cells: dict label, org name, bool tag, localized date, decimal scale.
    const body = q('.el-table__body-wrapper', el)!
    expect(texts('[data-test=cell-category]', body).slice(0, 2)).toEqual(['Hardware', 'zz'])
    expect(texts('[data-test=cell-orgId]', body).slice(0, 2)).toEqual(['Warehouse A', 'Warehouse B'])
    expect(texts('[data-test=cell-arrivedOn]', body)[0]).toBe('Mar 5, 2026')
    expect(texts('[data-test=cell-price]', body).slice(0, 2)).toEqual(['1.50', '0.25'])
    expect(texts('.el-tag', body).slice(0, 2)).toEqual(['Yes', 'No'])
    // The first page: Current and Size only.
    expect(pageCalls()).toEqual([`${BASE}/page?Current=1&Size=20`])
  })

  it('builds the add form from the form fields: textarea, read-only disabled, rules', async () => {
    const el = await mount(Object.values(CODES))
    q('[data-test=add]', el)!.click()
    await flush()
    const dialog = q('[data-test=edit-dialog]')!
    expect(dialog).not.toBeNull()
    expect(q('.el-dialog__title', dialog)?.textContent).toBe('Add Items')
    expect(texts('.el-form-item__label', dialog)).toEqual(['Name', 'Category', 'Stock', 'Price', 'Organisation', 'Enabled', 'Arrived on', 'Code', 'Note'])
    expect(dialog.classList.contains('ak-res-dialog')).toBe(true)
    expect(q('[data-test=form-note] textarea', dialog)).not.toBeNull()
    expect((q('[data-test=form-code] input', dialog) as HTMLInputElement).disabled).toBe(true)
    expect((q('[data-test=form-name] input', dialog) as HTMLInputElement).disabled).toBe(false)
    expect(q('[data-test=form-name] label', dialog)?.getAttribute('for')).toBe(q('[data-test=form-name] input', dialog)?.id)
    expect(q('[data-test=form-name]', dialog)?.classList.contains('is-required')).toBe(true)
    expect(q('[data-test=form-enabled] .el-switch', dialog)).not.toBeNull()
    // (The rules themselves are judged in 'resource helpers': under vitest, Element Plus's
    // externalized build gets async-validator's CJS namespace and every form validates, so
    // a DOM-level save check would prove nothing here.)
    expect(q('[data-test=form-orgId]', dialog)?.classList.contains('is-required')).toBe(true)
    expect(q('[data-test=form-note]', dialog)?.classList.contains('is-required')).toBe(false)
  })

  it('a refused description shows the envelope error', async () => {
    const el = await mount([], 'missing')
    expect(q('[data-test=schema-error]', el)?.textContent?.trim()).toBe(msgText('error.code.41007'))
    expect(q('h1', el)?.textContent).toBe('missing')
    expect(q('[data-test=table]', el)).toBeNull()
  })
})

describe('resource page: the page query', () => {
  it('sends the filters, the range bounds and the sort', async () => {
    const el = await mount(Object.values(CODES))
    await type(q('input[data-test=filter-input-name]', el) as HTMLInputElement, '  bolt ')
    await type(q('[data-test=filter-stockFrom] input', el) as HTMLInputElement, '5')
    await type(q('[data-test=filter-stockTo] input', el) as HTMLInputElement, '50')
    q('[data-test=search]', el)!.click()
    await flush()
    expect(pageCalls().at(-1)).toBe(`${BASE}/page?Current=1&Size=20&name=bolt&stockFrom=5&stockTo=50`)
    // Sorting by Stock, descending, keeps the filters.
    const stockHead = [...el.querySelectorAll('.el-table__header-wrapper th')].find((th) => th.textContent?.trim() === 'Stock')!
    ;(stockHead.querySelector('.sort-caret.descending') as HTMLElement).click()
    await flush()
    expect(pageCalls().at(-1)).toBe(`${BASE}/page?Current=1&Size=20&SortField=stock&SortOrder=desc&name=bolt&stockFrom=5&stockTo=50`)
    // Export takes the same filters and the list columns.
    q('[data-test=export]', el)!.click()
    await flush()
    q('[data-test=export-run]')!.click()
    await flush(10)
    expect(calls.filter((c) => c.url.startsWith(`${BASE}/export`)).map((c) => c.url)).toEqual([
      `${BASE}/export?name=bolt&stockFrom=5&stockTo=50&columns=name%2Ccategory%2Cstock%2Cprice%2CorgId%2Cenabled%2CarrivedOn%2CcreateTime`,
    ])
    // Reset clears the filters (the sort stays the table's).
    q('[data-test=reset]', el)!.click()
    await flush()
    expect(pageCalls().at(-1)).toBe(`${BASE}/page?Current=1&Size=20&SortField=stock&SortOrder=desc`)
  })

  it('pageQuery: eq, dict, bool, org and date ranges', () => {
    const f = { ...blankFilter(FIELDS), category: 'hw', enabled: 'false', orgId: 3, arrivedOnFrom: '2026-01-01', arrivedOnTo: '2026-01-31', name: '' }
    expect(pageQuery(FIELDS, f, 2, 50, sortOf('createTime', 'ascending'))).toEqual({
      Current: 2, Size: 50, SortField: 'createTime', SortOrder: 'asc', category: 'hw', orgId: 3, enabled: 'false', arrivedOnFrom: '2026-01-01', arrivedOnTo: '2026-01-31',
    })
    expect(sortOf('stock', null)).toBeNull()
    expect(filterQuery(FIELDS, { ...blankFilter(FIELDS), stockFrom: 0 })).toEqual({ stockFrom: 0 })
  })
})

describe('resource page: buttons follow the codes', () => {
  it('all codes: every toolbar button and row action', async () => {
    const el = await mount(Object.values(CODES))
    for (const k of ['add', 'batch-delete', 'export', 'import', 'recycle']) expect(q(`[data-test=${k}]`, el), k).not.toBeNull()
    expect(q('[data-test=recycle]', el)?.getAttribute('href')).toBe('/system/recycle?type=inventory-item')
    expect(q('[data-test=detail-7]', el)).not.toBeNull()
    expect(q('[data-test=edit-7]', el)).not.toBeNull()
    expect(q('[data-test=delete-7]', el)).not.toBeNull()
    expect((q('[data-test=batch-delete]', el) as HTMLButtonElement).disabled).toBe(true)
  })
  it('only page and update: no add, delete, export, import or recycle; edit only', async () => {
    const el = await mount([CODES.page, CODES.update])
    for (const k of ['add', 'batch-delete', 'export', 'import', 'recycle']) expect(q(`[data-test=${k}]`, el), k).toBeNull()
    expect(q('[data-test=edit-7]', el)).not.toBeNull()
    expect(q('[data-test=delete-7]', el)).toBeNull()
    expect(q('[data-test=detail-7]', el)).toBeNull()
    expect(q('.el-table-column--selection', el)).toBeNull()
    expect(texts('.el-table__header-wrapper th .cell', el).filter(Boolean)).toContain('Actions')
  })
  it('no row action code: no actions column', async () => {
    const el = await mount([CODES.page, CODES.export])
    expect(texts('.el-table__header-wrapper th .cell', el).filter(Boolean)).not.toContain('Actions')
    expect(q('[data-test=export]', el)).not.toBeNull()
  })
})

describe('resource page: row actions', () => {
  it('detail opens a drawer with every field; edit fills the form from the detail', async () => {
    const el = await mount(Object.values(CODES))
    q('[data-test=detail-7]', el)!.click()
    await flush()
    const drawer = q('[data-test=detail-drawer]')!
    expect(q('[data-test=detail-name]', drawer)?.textContent).toBe('Bolt')
    expect(q('[data-test=detail-orgId]', drawer)?.textContent).toBe('Warehouse A')
    expect(q('[data-test=detail-category]', drawer)?.textContent).toBe('Hardware')
    expect(q('[data-test=detail-note]', drawer)?.textContent).toBe('n')
    expect(q('[data-test=detail-enabled]', drawer)?.textContent).toBe('Yes')
    q('[data-test=edit-7]', el)!.click()
    await flush()
    const dialog = q('[data-test=edit-dialog]')!
    expect(q('.el-dialog__title', dialog)?.textContent).toBe('Edit Items')
    expect((q('[data-test=form-name] input', dialog) as HTMLInputElement).value).toBe('Bolt')
    expect((q('[data-test=form-note] textarea', dialog) as HTMLTextAreaElement).value).toBe('n')
    expect(calls.filter((c) => c.url === `${BASE}/7`).length).toBe(2)
  })
})

describe('resource page: import', () => {
  async function openPreview(p: ImportPreview) {
    preview = p
    const el = await mount(Object.values(CODES))
    q('[data-test=import]', el)!.click()
    await flush()
    const input = q('[data-test=import-file]') as HTMLInputElement
    const file = new File(['x'], 'items.xlsx', { type: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' })
    Object.defineProperty(input, 'files', { value: [file], configurable: true })
    input.dispatchEvent(new Event('change'))
    await flush(10)
    return q('[data-test=import-dialog]')!
  }
  it('rows that only exist: Import enabled, the strategy sent with the rows', async () => {
    const d = await openPreview({
      total: 2, errorCount: 0, existing: 1,
      rows: [
        { row: 2, values: { name: 'Bolt', stock: 3 }, exists: true, errors: [] },
        { row: 3, values: { name: 'Screw', stock: 4 }, exists: false, errors: null },
      ],
    })
    expect(calls.some((c) => c.method === 'POST' && c.url === `${BASE}/import/preview`)).toBe(true)
    expect(q('[data-test=exists-2]', d)?.textContent?.trim()).toBe('Exists')
    expect(q('[data-test=exists-3]', d)).toBeNull()
    expect(q('[data-test=import-summary]', d)?.textContent?.trim()).toBe('2 rows: 0 with errors, 1 already existing')
    const commit = q('[data-test=import-commit]', d) as HTMLButtonElement
    expect(commit.disabled).toBe(false)
    commit.click()
    await flush(10)
    const sent = calls.find((c) => c.url === `${BASE}/import/commit`)
    expect(sent?.body).toEqual({ rows: [{ row: 2, values: { name: 'Bolt', stock: 3 } }, { row: 3, values: { name: 'Screw', stock: 4 } }], strategy: 'skip' })
    expect(q('[data-test=import-result]', d)?.textContent).toContain('1 added, 1 updated, 0 skipped.')
  })
  it('a row with errors: Import disabled, the error shown with the field label', async () => {
    const d = await openPreview({
      total: 2, errorCount: 1, existing: 1,
      rows: [
        { row: 2, values: { name: 'Bolt', stock: 3 }, exists: true, errors: [] },
        { row: 3, values: { name: 'Screw', stock: -4 }, exists: false, errors: [{ field: 'stock', code: 48002, msgKey: 'error.code.48002', args: {} }] },
      ],
    })
    expect((q('[data-test=import-commit]', d) as HTMLButtonElement).disabled).toBe(true)
    expect(q('[data-test=row-error-3]', d)?.textContent).toBe(`Stock: ${msgText('error.request.invalid')}`)
    expect(msgText('error.request.invalid')).toBe('Invalid request. Please check your input.')
    expect(q('[data-test=import-blocked]', d)).not.toBeNull()
  })
  it('importable(): rows needed, errors block, exists never does', () => {
    expect(importable(null)).toBe(false)
    expect(importable({ total: 0, errorCount: 0, existing: 0, rows: [] })).toBe(false)
    expect(importable({ total: 1, errorCount: 0, existing: 1, rows: [{ row: 2, values: {}, exists: true, errors: null }] })).toBe(true)
    expect(importable({ total: 1, errorCount: 1, existing: 0, rows: [{ row: 2, values: {}, exists: false, errors: [{ field: 'x', code: 1, msgKey: 'k' }] }] })).toBe(false)
  })
})

describe('resource page: language', () => {
  it('switching to Chinese changes the title, columns, filters and cells live', async () => {
    const el = await mount(Object.values(CODES))
    expect(q('h1', el)?.textContent).toBe('Items')
    i18n.global.locale.value = 'zh-CN'
    await flush()
    expect(q('h1', el)?.textContent).toBe('物品')
    const heads = texts('.el-table__header-wrapper th .cell', el).filter(Boolean)
    expect(heads.slice(0, 3)).toEqual(['名称', '类别', '库存'])
    expect(q('[data-test=filter-stockFrom] input', el)?.getAttribute('aria-label')).toBe('库存起')
    expect(texts('[data-test=cell-arrivedOn]', el)[0]).toBe('2026年3月5日')
    expect(texts('.el-tag', q('.el-table__body-wrapper', el)!).slice(0, 2)).toEqual(['是', '否'])
  })
})

describe('resource helpers', () => {
  it('form: edit values from a row, the body without read-only fields, rules from the description', async () => {
    const form = toForm(FIELDS, { ...ROWS[0], arrivedOn: '2026-03-05T00:00:00Z' })
    expect(form.arrivedOn).toBe('2026-03-05')
    expect(form.code).toBe('B-7')
    const body = formBody(FIELDS, { ...form, name: '  Bolt  ', note: '' })
    expect(body).toEqual({ name: 'Bolt', category: 'hw', stock: 12, price: 1.5, orgId: 3, enabled: true, arrivedOn: '2026-03-05', note: '' })
    const rules = rulesOf(FIELDS)
    expect(Object.keys(rules)).toEqual(['name', 'stock', 'price', 'orgId', 'note'])
    const check = (field: string, v: unknown) =>
      new Promise<string>((resolve) => {
        const list = rules[field] as { validator?: (r: unknown, v: unknown, cb: (e?: Error) => void) => void }[]
        let msg = ''
        for (const r of list) r.validator?.({}, v, (e) => (msg ||= e?.message ?? ''))
        resolve(msg)
      })
    expect(await check('price', 1.234)).toBe('At most 2 decimal places.')
    expect(await check('price', -1)).toBe('At least 0.')
    expect(await check('stock', 1000001)).toBe('At most 1000000.')
    expect(await check('stock', 2.5)).toBe('A whole number.')
    expect(await check('stock', 10)).toBe('')
    expect(await check('name', 'x'.repeat(65))).toBe('At most 64 characters.')
    expect(await check('orgId', null)).toBe('Required.')
  })
  it('cell texts: datetime in the locale, org fallback to the id', () => {
    const f = FIELDS.find((x) => x.name === 'orgId')!
    expect(cellText(f, { id: 1, orgId: 9 }, {}, 'en-US')).toBe('9')
    const created = FIELDS.find((x) => x.name === 'createTime')!
    const txt = cellText(created, ROWS[0], {}, 'en-US')
    expect(txt).toMatch(/^03\/0[56]\/2026, \d\d:\d\d:10$/)
  })
  it('the text pack is complete in both languages with the same placeholders', () => {
    const ph = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort().join(',')
    expect(Object.keys(pack['zh-CN']).sort()).toEqual(Object.keys(pack['en-US']).sort())
    for (const k of Object.keys(pack['en-US'])) expect(ph(pack['zh-CN'][k]), k).toBe(ph(pack['en-US'][k]))
  })
})
