// The endpoints of the menus, modules, config-center and error-catalog
// pages (issue 25). Every call goes through the shared client (api): the
// 401 refresh, the 403/40024 re-authentication with one replay and the
// envelope errors.
import { api } from '@/api'
import { query, type Paged } from '@/api/admin'

/** MenuItem is the contract's MenuTreeNode (§4.3). */
export interface MenuItem {
  id: number
  parentId: number
  type: number
  title: string
  permission: string
  sort: number
  enabled: boolean
  moduleId?: number | null
  path?: string | null
  component?: string | null
  icon?: string | null
  visible: boolean
  children?: MenuItem[] | null
}
export type MenuInput = Omit<MenuItem, 'id' | 'children'>
export interface RouteItem {
  code: string
  method: string
  path: string
}
export interface SysModule {
  id: number
  code: string
  title: string
  icon?: string | null
  defaultRoute?: string | null
  apiPrefix?: string | null
  sort: number
  enabled: boolean
  remark?: string | null
}
export type ModuleInput = Omit<SysModule, 'id'>

export interface ConfigItem {
  id: number
  configKey: string
  configValue?: string | null
  name: string
  groupCode?: string | null
  sort: number
  remark?: string | null
}
export type ConfigInput = Omit<ConfigItem, 'id'>
/** SchemaEntry is one key of the settings registry (GET /sys/config/schema). */
export interface SchemaEntry {
  key: string
  kind: 'string' | 'bool' | 'int' | 'enum' | 'url' | 'idList'
  min?: number
  max?: number
  values?: string[]
  maxLen: number
  optional: boolean
  default: string
  group: string
  expected: string
  description: string
}
export interface Sensitive {
  defaults: string[]
  customs: { id: number; permissionCode: string; remark?: string | null }[]
}
export interface ErrorCode {
  code: number
  name: string
  msgKey: string
  source: string
}

export const system = {
  menuTree: () => api.get<MenuItem[]>('/api/v1/sys/menu/tree'),
  menuRoutes: () => api.get<RouteItem[]>('/api/v1/sys/menu/routes'),
  addMenu: (b: MenuInput) => api.post<number>('/api/v1/sys/menu/add', b),
  updateMenu: (id: number, b: MenuInput) => api.put<boolean>(`/api/v1/sys/menu/${id}`, b),
  deleteMenu: (id: number) => api.del<boolean>(`/api/v1/sys/menu/${id}`),

  modules: () => api.get<SysModule[]>('/api/v1/sys/module/list'),
  addModule: (b: ModuleInput) => api.post<number>('/api/v1/sys/module/add', b),
  updateModule: (id: number, b: ModuleInput) => api.put<boolean>(`/api/v1/sys/module/${id}`, b),
  deleteModule: (id: number) => api.del<boolean>(`/api/v1/sys/module/${id}`),

  configs: (p: { Current: number; Size: number; GroupCode?: string; ConfigKey?: string; Name?: string; ExcludedGroupCodes?: string[] }) => {
    const { ExcludedGroupCodes, ...rest } = p
    let q = query(rest)
    for (const g of ExcludedGroupCodes ?? []) q += `${q ? '&' : '?'}ExcludedGroupCodes=${encodeURIComponent(g)}`
    return api.get<Paged<ConfigItem>>(`/api/v1/sys/config/page${q}`)
  },
  configSchema: () => api.get<SchemaEntry[]>('/api/v1/sys/config/schema'),
  configBatch: (items: { configKey: string; configValue: string | null }[]) => api.put<boolean>('/api/v1/sys/config/batch', items),
  addConfig: (b: ConfigInput) => api.post<number>('/api/v1/sys/config', b),
  updateConfig: (id: number, b: ConfigInput) => api.put<boolean>(`/api/v1/sys/config/${id}`, b),
  deleteConfig: (id: number) => api.del<boolean>(`/api/v1/sys/config/${id}`),

  sensitive: () => api.get<Sensitive>('/api/v1/sys/mfa/high-sensitivity'),
  addSensitive: (permissionCode: string, remark: string | null) => api.post<unknown>('/api/v1/sys/mfa/high-sensitivity', { permissionCode, remark }),
  deleteSensitive: (id: number) => api.del<unknown>(`/api/v1/sys/mfa/high-sensitivity/${id}`),
  clearMfa: (userId: number) => api.post<unknown>('/api/v1/sys/mfa/clear', { userId }),

  errorCodes: () => api.get<ErrorCode[]>('/api/v1/meta/error-codes'),
}
