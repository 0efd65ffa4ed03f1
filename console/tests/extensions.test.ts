// Pages shipped by modules (module.Console): the route resolution of their
// menu components, their menu titles and texts, the router's late routes,
// and the console kit's shims (export lists that cannot drift).
import { describe, it, expect, beforeEach } from 'vitest'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import * as vue from 'vue'
import * as elementPlus from 'element-plus'
import { applyExtensions, extensions, extensionRoutes, hasPage, KIT_VERSION, menuTitle, pagePath, pageRoutes, resolvePage, type ConsoleExtensions } from '../src/pages'
import { i18n } from '../src/i18n'
import type { MenuNode } from '../src/api'
// @ts-ignore: a plain ES module of the build scripts
import { elementPlusNames, facades, kitNames, packageNames, shims } from '../scripts/kit-shims.mjs'

const answer: ConsoleExtensions = {
  kit: '1.0',
  modules: [
    {
      module: 'Inventory',
      pages: { 'inventory/dashboard/index': '/console-ext/inventory/dashboard.js', 'system/user/index': '/console-ext/inventory/evil.js', 'inventory/elsewhere/index': 'https://cdn.example/x.js' },
      texts: { 'en-US': { 'inventory.dash.title': 'Stock dashboard', 'shell.home': 'Overridden' }, 'zh-CN': { 'inventory.dash.title': '库存看板' } },
      menuTitles: { 'en-US': { '/inventory': 'Inventory', '/inventory/dashboard': 'Stock dashboard' }, 'zh-CN': { '/inventory/dashboard': '库存看板' } },
    },
    { module: 'Shop', pages: { 'inventory/dashboard/index': '/console-ext/shop/other.js', 'shop/orders/index': '/console-ext/shop/orders.js' } },
  ],
}

const menu: MenuNode[] = [
  { id: 1000, title: '库存', path: '/inventory', type: 1, children: [
    { id: 1010, title: '库存查询', path: '/inventory/items', component: 'inventory/items/index', type: 2 },
    { id: 1020, title: '库存看板', path: '/inventory/dashboard', component: 'inventory/dashboard/index', type: 2, children: [{ id: 1021, title: 'btn', type: 3 }] },
    { id: 1030, title: 'orders', path: '/system/user', component: 'shop/orders/index', type: 2 },
    { id: 1040, title: 'resource', path: '/res/books', component: 'resource/books', type: 2 },
  ] },
  { id: 200, title: '用户管理', path: '/system/user', component: 'system/user/index', type: 2 },
]

describe('extension pages', () => {
  beforeEach(() => applyExtensions(answer))

  it('resolves a module page to a lazy route at its menu path', () => {
    const r = resolvePage('inventory/dashboard/index', '/inventory/dashboard')
    expect(r?.path).toBe('/inventory/dashboard')
    expect(r?.name).toBe('ext:inventory/dashboard/index')
    expect(r?.meta?.extension).toBe('Inventory')
    expect(typeof r?.component).toBe('function')
    expect(hasPage('inventory/dashboard/index')).toBe(true)
    expect(extensions.pages['inventory/dashboard/index'].url).toBe('/console-ext/inventory/dashboard.js')
  })

  it('keeps the built-in pages first and refuses foreign URLs', () => {
    expect(resolvePage('system/user/index')).toBe(pageRoutes['system/user/index'])
    expect(hasPage('inventory/elsewhere/index')).toBe(false)
    expect(hasPage('inventory/items/index')).toBe(false)
    expect(hasPage(null)).toBe(false)
  })

  it('the first module claiming a component keeps it', () => {
    expect(extensions.pages['inventory/dashboard/index'].module).toBe('Inventory')
  })

  it('a taken or missing menu path gives /ext/<component>', () => {
    expect(pagePath({ component: 'shop/orders/index', path: '/system/user' })).toBe('/ext/shop/orders/index')
    expect(pagePath({ component: 'shop/orders/index', path: null })).toBe('/ext/shop/orders/index')
    expect(pagePath({ component: 'shop/orders/index', path: '/login' })).toBe('/ext/shop/orders/index')
    expect(pagePath({ component: 'shop/orders/index', path: '/a/../b' })).toBe('/ext/shop/orders/index')
    expect(pagePath({ component: 'nothing', path: '/x' })).toBe('/')
  })

  it('gives resource/<name> the standard resource page at /r/<name>', () => {
    const r = resolvePage('resource/books', '/res/books')
    expect([r?.name, r?.path, (r as { props?: unknown })?.props]).toEqual(['res:books', '/r/books', { name: 'books' }])
    expect(resolvePage('resource/Bad Name', '/x')).toBeUndefined()
  })

  it('lists the routes of the menu’s module pages once', () => {
    const rs = extensionRoutes([...menu, ...menu])
    expect(rs.map((r) => [r.name, r.path])).toEqual([
      ['ext:inventory/dashboard/index', '/inventory/dashboard'],
      ['ext:shop/orders/index', '/ext/shop/orders/index'],
      ['res:books', '/r/books'],
    ])
  })

  it('translates the modules’ menu titles, not the console’s', () => {
    const dash = menu[0].children![1]
    expect(menuTitle(dash, 'en-US')).toBe('Stock dashboard')
    expect(menuTitle(dash, 'zh-CN')).toBe('库存看板')
    expect(menuTitle(menu[0], 'en-US')).toBe('Inventory')
    expect(menuTitle(menu[0], 'zh-CN')).toBe('库存')
    expect(menuTitle({ ...menu[1], path: '/inventory' }, 'en-US')).toBe('用户管理')
  })

  it('merges the modules’ texts without overriding the console’s', () => {
    expect(i18n.global.t('inventory.dash.title')).toBe('Stock dashboard')
    expect(i18n.global.t('shell.home')).toBe('Home')
  })

  it('ignores an answer of another kit major version', () => {
    applyExtensions({ ...answer, kit: '2.0' })
    expect(hasPage('inventory/dashboard/index')).toBe(false)
    applyExtensions(null)
    expect(extensions.loaded).toBe(true)
    expect(Object.keys(extensions.pages)).toEqual([])
  })
})

describe('the router adds module pages after the boot', () => {
  it('an unknown path resolves to the module page once its route is added', async () => {
    const { router, syncExtensionRoutes } = await import('../src/router')
    applyExtensions(answer)
    expect(router.resolve('/inventory/dashboard').name).toBe('not-found')
    expect(syncExtensionRoutes(menu)).toBe(true)
    expect(syncExtensionRoutes(menu)).toBe(false)
    const r = router.resolve('/inventory/dashboard')
    expect(r.name).toBe('ext:inventory/dashboard/index')
    expect(r.matched[0].path).toBe('/')
    expect(router.resolve('/ext/shop/orders/index').name).toBe('ext:shop/orders/index')
    expect(router.resolve('/system/user').name).toBe('sys-user')
  })
})

describe('console kit shims', () => {
  it('the kit version is the kernel’s', () => {
    const go = readFileSync(join(process.cwd(), '../host/webconsole/extensions.go'), 'utf8')
    expect(go).toContain(`const KitVersion = "${KIT_VERSION}"`)
  })

  it('export every name of the running Vue, and the Element Plus the console uses', () => {
    const v = new Set(packageNames('vue'))
    for (const n of Object.keys(vue).filter((n) => n !== 'default' && n !== '__esModule')) expect(v.has(n), `vue ${n}`).toBe(true)
    for (const n of ['ref', 'computed', 'defineComponent', 'onMounted', 'createElementBlock', 'openBlock']) expect(v.has(n)).toBe(true)
    const ep: string[] = elementPlusNames(process.cwd())
    for (const n of ep) expect(n in elementPlus, `element-plus ${n}`).toBe(true)
    for (const n of ['ElButton', 'ElTable', 'ElTableColumn', 'ElMessage', 'ElCard', 'vLoading']) expect(ep).toContain(n)
    expect(ep).not.toContain('ElColorPicker') // not used by the console: not in its first-load chunk, not offered
    const f = facades(process.cwd()) as Record<string, string>
    expect(f['virtual:ak-kit/element-plus']).toBe(`export { ${ep.join(', ')} } from 'element-plus'\n`)
    expect(f['virtual:ak-kit/vue']).toContain(' ref, ')
  })

  it('export every name of the kit, and re-export from __AK_KIT__', async () => {
    const kit = await import('../src/kit/kit')
    expect(kitNames(process.cwd())).toEqual(Object.keys(kit).sort())
    const s = shims(process.cwd()) as Record<string, string>
    expect(Object.keys(s).sort()).toEqual(['element-plus.js', 'kit.js', 'vue.js'])
    expect(s['kit.js']).toContain('const m = k.kit')
    expect(s['kit.js']).toContain('export const api = m.api')
    expect(s['vue.js']).toContain('export const ref = m.ref')
    expect(s['element-plus.js']).toContain('export const ElTable = m.ElTable')
    expect(s['element-plus.js']).not.toContain('ElColorPicker')
    expect(kit.version).toBe(KIT_VERSION)
  })
})

describe('the kit runtime', () => {
  it('installs the running console’s Vue, Element Plus and kit once', async () => {
    await import('../src/kit/runtime')
    const k = globalThis.__AK_KIT__!
    expect(k.version).toBe(KIT_VERSION)
    expect(k.vue.ref).toBe(vue.ref)
    expect(k.vue.defineComponent).toBe(vue.defineComponent)
    expect(k.elementPlus.ElTable).toBe(elementPlus.ElTable)
    expect(typeof k.kit.api.get).toBe('function')
    expect(typeof k.kit.hasCode).toBe('function')
    expect(typeof k.kit.echarts).toBe('function')
  })
})

describe('the kit’s permission checks', () => {
  it('hasCode and v-auth follow the user’s codes', async () => {
    const { createPinia, setActivePinia } = await import('pinia')
    setActivePinia(createPinia())
    const { useApp } = await import('../src/stores/app')
    const { hasCode, vAuth } = await import('../src/kit/kit')
    const app = useApp()
    app.permissions = new Set(['GET:/api/v1/inventory/items'])
    expect(hasCode('GET:/api/v1/inventory/items')).toBe(true)
    expect(hasCode('DELETE:/api/v1/inventory/items/{id}')).toBe(false)
    const el = document.createElement('button')
    const mounted = vAuth.mounted as (el: HTMLElement, b: { value: string | string[] }) => void
    const updated = vAuth.updated as typeof mounted
    mounted(el, { value: 'DELETE:/api/v1/inventory/items/{id}' })
    expect(el.style.getPropertyValue('display')).toBe('none')
    expect(el.style.getPropertyPriority('display')).toBe('important')
    app.permissions = new Set(['DELETE:/api/v1/inventory/items/{id}'])
    updated(el, { value: ['GET:/x', 'DELETE:/api/v1/inventory/items/{id}'] })
    expect(el.style.getPropertyValue('display')).toBe('')
  })
})
