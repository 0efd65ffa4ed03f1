// The kernel's menu components (seeded in host/*/module.go) the console has
// a page for, and the pages business modules ship (module.Console, listed
// by GET /api/v1/sys/console/extensions and loaded at run time through the
// console kit, docs/developers/frontend.md "Pages shipped by a module"). A
// menu entry whose component resolves to no page is not shown: no
// placeholders.
import { h, reactive, type Component } from 'vue'
import type { RouteRecordRaw } from 'vue-router'
import { api, type MenuNode } from '@/api'
import { i18n } from '@/i18n'

export const pageRoutes: Record<string, RouteRecordRaw> = {
  // The config center: a tab per group, the providers page as its "External login" tab.
  'system/config/index': { path: '/system/config', name: 'config', component: () => import('@/views/system/config/ConfigPage.vue') },
  // The administration pages (issue 25), lazy routes under views/system/.
  'system/user/index': { path: '/system/user', name: 'sys-user', component: () => import('@/views/system/user/UserPage.vue') },
  'system/org/index': { path: '/system/org', name: 'sys-org', component: () => import('@/views/system/org/OrgPage.vue') },
  'system/role/index': { path: '/system/role', name: 'sys-role', component: () => import('@/views/system/role/RolePage.vue') },
  'system/session/index': { path: '/system/session', name: 'sys-session', component: () => import('@/views/system/session/SessionPage.vue') },
  'system/log/login/index': { path: '/system/log/login', name: 'sys-log-login', component: () => import('@/views/system/log/LoginLogPage.vue') },
  'system/monitor/index': { path: '/system/monitor', name: 'sys-monitor', component: () => import('@/views/system/monitor/MonitorPage.vue') },
  'system/cache/index': { path: '/system/cache', name: 'sys-cache', component: () => import('@/views/system/cache/CachePage.vue') },
  'system/log/op/index': { path: '/system/log/op', name: 'sys-log-op', component: () => import('@/views/system/log/OpLogPage.vue') },
  'system/log/exception/index': { path: '/system/log/exception', name: 'sys-log-exception', component: () => import('@/views/system/log/ExceptionLogPage.vue') },
  'system/dict/index': { path: '/system/dict', name: 'sys-dict', component: () => import('@/views/system/dict/DictPage.vue') },
  'system/position/index': { path: '/system/position', name: 'sys-position', component: () => import('@/views/system/position/PositionPage.vue') },
  // Jobs, runs, job monitor and the workbench (issue 25, c3).
  'system/job/index': { path: '/system/job', name: 'sys-job', component: () => import('@/views/system/job/JobPage.vue') },
  'system/job-log/index': { path: '/system/job-log', name: 'sys-job-log', component: () => import('@/views/system/job/JobLogPage.vue') },
  'system/job-monitor/index': { path: '/system/job-monitor', name: 'sys-job-monitor', component: () => import('@/views/system/job/JobMonitorPage.vue') },
  'dashboard/workbench': { path: '/workbench', name: 'workbench', component: () => import('@/views/system/dashboard/WorkbenchPage.vue') },
  'dashboard/biz': { path: '/business/workbench', name: 'biz-workbench', component: () => import('@/views/system/dashboard/BizWorkbenchPage.vue') },
  'system/file/index': { path: '/system/file', name: 'sys-file', component: () => import('@/views/system/file/FilePage.vue') },
  'system/notice/index': { path: '/system/notice', name: 'sys-notice', component: () => import('@/views/system/notice/NoticePage.vue') },
  'system/recycle/index': { path: '/system/recycle', name: 'sys-recycle', component: () => import('@/views/system/recycle/RecyclePage.vue') },
  'system/menu/index': { path: '/system/menu', name: 'sys-menu', component: () => import('@/views/system/menu/MenuPage.vue') },
  'system/module/index': { path: '/system/module', name: 'sys-module', component: () => import('@/views/system/module/ModulePage.vue') },
  'system/errorcode/index': { path: '/system/errorcode', name: 'sys-errorcode', component: () => import('@/views/system/errorcode/ErrorCodePage.vue') },
}

/** KIT_VERSION is the version of the console kit (/console-kit/kit.js) this
 * console offers; the kernel declares the same (webconsole.KitVersion). */
export const KIT_VERSION = '1.1'

/** ConsoleExtension is one module's entry of GET /sys/console/extensions. */
export interface ConsoleExtension {
  module: string
  /** menu component → URL of the ES module whose default export is the page */
  pages: Record<string, string>
  /** language → key → text (the kit's useI18n/t) */
  texts?: Record<string, Record<string, string>>
  /** language → menu path → title */
  menuTitles?: Record<string, Record<string, string>>
}
export interface ConsoleExtensions {
  kit: string
  modules: ConsoleExtension[]
}

/** extensions: the modules' pages by menu component and their menu titles
 * by language, once loaded (loadExtensions). */
export const extensions = reactive({
  loaded: false,
  pages: {} as Record<string, { module: string; url: string }>,
  menuTitles: {} as Record<string, Record<string, string>>,
})

/** applyExtensions takes an answer of the endpoint in: pages a built-in
 * page already has are ignored (the console's own page wins), texts are
 * merged into the console's where it has no text of that key. */
export function applyExtensions(answer: ConsoleExtensions | null | undefined): void {
  const pages: typeof extensions.pages = {}
  const titles: typeof extensions.menuTitles = {}
  if (answer && String(answer.kit).split('.')[0] === KIT_VERSION.split('.')[0]) {
    for (const m of answer.modules ?? []) {
      for (const [component, url] of Object.entries(m.pages ?? {})) {
        if (!(component in pageRoutes) && !pages[component] && typeof url === 'string' && url.startsWith('/console-ext/')) pages[component] = { module: m.module, url }
      }
      for (const [lang, byPath] of Object.entries(m.menuTitles ?? {})) titles[lang] = { ...byPath, ...titles[lang] }
      for (const [lang, texts] of Object.entries(m.texts ?? {})) {
        const have = i18n.global.getLocaleMessage(lang) as Record<string, unknown>
        const add = Object.fromEntries(Object.entries(texts).filter(([k]) => !(k in have)))
        i18n.global.mergeLocaleMessage(lang, add)
      }
    }
  }
  extensions.pages = pages
  extensions.menuTitles = titles
  extensions.loaded = true
}

/** loadExtensions reads the modules' pages once per load of the console; a
 * failure leaves none (the console's own pages work on). */
export async function loadExtensions(): Promise<void> {
  if (extensions.loaded) return
  try {
    applyExtensions(await api.get<ConsoleExtensions>('/api/v1/sys/console/extensions'))
  } catch {
    applyExtensions(null)
  }
}

/** Paths an extension page never takes (then it is at /ext/<component>). */
const reservedPaths = ['/login', '/oauth', '/mfa', '/boot-error', '/password-change', '/personal', '/ext', '/console-', '/api', '/assets', '/health', '/hub']

function extensionPath(component: string, menuPath?: string | null): string {
  const p = (menuPath ?? '').replace(/\/+$/, '')
  const clean = /^\/[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*$/.test(p)
  const taken = Object.values(pageRoutes).some((r) => r.path === p) || reservedPaths.some((r) => p === r || p.startsWith(r.endsWith('-') ? r : r + '/'))
  return clean && !taken ? p : `/ext/${component}`
}

/** The page shown when a module's page cannot be loaded. */
function failedPage(module: string): Component {
  return {
    name: 'ExtensionFailed',
    render: () => h('p', { class: 'ak-ext-failed', role: 'alert', 'data-test': 'ext-failed' }, i18n.global.t('shell.extFailed', { module })),
  }
}

/** loadExtensionPage installs the console kit (globalThis.__AK_KIT__, read
 * by the /console-kit/*.js modules the page imports) and imports the page. */
async function loadExtensionPage(component: string): Promise<Component> {
  const e = extensions.pages[component]
  try {
    await import('@/kit/runtime')
    const m = await import(/* @vite-ignore */ e.url)
    if (!m?.default) throw new Error(`${e.url} has no default export`)
    return m.default as Component
  } catch (err) {
    console.error('console extension', component, err)
    return failedPage(e?.module ?? '?')
  }
}

/** resolvePage is the route of a menu component: a built-in page, a page
 * a module ships, or undefined (the entry is not shown). menuPath is the
 * menu entry's path (where a module's page is served when it is free). */
export function resolvePage(component?: string | null, menuPath?: string | null): RouteRecordRaw | undefined {
  if (!component) return undefined
  const builtin = pageRoutes[component]
  if (builtin) return builtin
  if (component.startsWith('resource/')) {
    // A business resource (host/resource): the standard page rendered from
    // its description, at /r/<name>.
    const name = component.slice('resource/'.length)
    if (!/^[a-z][a-z0-9-]{0,47}$/.test(name)) return undefined
    return { path: '/r/' + name, name: 'res:' + name, component: () => import('@/resource/ResourcePage.vue'), props: { name } }
  }
  const ext = extensions.pages[component]
  if (ext) {
    return { path: extensionPath(component, menuPath), name: `ext:${component}`, component: () => loadExtensionPage(component), meta: { extension: ext.module } }
  }
  return undefined
}

export function hasPage(component?: string | null): boolean {
  return !!resolvePage(component)
}

/** pagePath is where the menu entry's page is ('/' when it has none). */
export function pagePath(n: Pick<MenuNode, 'component' | 'path'>): string {
  return resolvePage(n.component, n.path)?.path ?? '/'
}

/** menuTitle is the entry's title in locale: a module's translation
 * (menuTitles, by path, else by component) for entries that are not the
 * console's own pages, the seeded title otherwise. */
export function menuTitle(n: Pick<MenuNode, 'component' | 'path' | 'title'>, locale: string): string {
  if (n.component && n.component in pageRoutes) return n.title
  const t = extensions.menuTitles[locale]
  return (n.path && t?.[n.path]) || (n.component && t?.[n.component]) || n.title
}

/** extensionRoutes are the routes of the menu's pages that are not built in: pages modules ship and business resources' standard pages (resource/<name>). */
export function extensionRoutes(menu: MenuNode[] | null | undefined, out: RouteRecordRaw[] = []): RouteRecordRaw[] {
  for (const n of menu ?? []) {
    if (n.component && (extensions.pages[n.component] || n.component.startsWith('resource/')) && !(n.component in pageRoutes)) {
      const r = resolvePage(n.component, n.path)
      if (r && !out.some((o) => o.name === r.name)) out.push(r)
    }
    extensionRoutes(n.children, out)
  }
  return out
}
