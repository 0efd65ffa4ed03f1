// The kernel's menu components (seeded in host/*/module.go) the console has
// a page for. A menu entry whose component is not listed here is not shown:
// no placeholders.
import type { RouteRecordRaw } from 'vue-router'

export const pageRoutes: Record<string, RouteRecordRaw> = {
  // The config center's page; the console offers its "External login" tab.
  'system/config/index': { path: '/system/config', name: 'config', component: () => import('@/views/ProvidersPage.vue') },
}

export function hasPage(component?: string | null): boolean {
  return !!component && component in pageRoutes
}
