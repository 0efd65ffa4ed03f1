// The kernel's menu components (seeded in host/*/module.go) the console has
// a page for. A menu entry whose component is not listed here is not shown:
// no placeholders.
import type { RouteRecordRaw } from 'vue-router'

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

export function hasPage(component?: string | null): boolean {
  return !!component && component in pageRoutes
}
