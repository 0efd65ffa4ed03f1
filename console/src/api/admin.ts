// The administration endpoints the console's system pages call (issue 25).
// Every call goes through the shared client (api): the 401 refresh, the
// 403/40024 re-authentication with one replay and the envelope errors.
import { api } from '@/api'

/** Paged is the contract's PagedList. */
export interface Paged<T> {
  current: number
  size: number
  total: number
  pages: number
  items: T[]
}

/** query builds a query string from the set values (the API's PascalCase names). */
export function query(params: Record<string, unknown>): string {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === '') continue
    q.set(k, String(v))
  }
  const s = q.toString()
  return s ? `?${s}` : ''
}

export interface UserItem {
  id: number
  account: string
  name: string
  nickname?: string | null
  phone?: string | null
  email?: string | null
  gender?: string | null
  avatar?: string | null
  orgId?: number | null
  positionId?: number | null
  directorId?: number | null
  orgName?: string | null
  positionName?: string | null
  enabled: boolean
  isSuperAdmin: boolean
  forceTotp: boolean
  totpEnabled: boolean
  createTime: string
}
export interface UserDetail extends UserItem {
  roleIds: number[]
}
export interface UserInput {
  name: string
  nickname?: string | null
  phone?: string | null
  email?: string | null
  gender?: string | null
  avatar?: string | null
  orgId?: number | null
  positionId?: number | null
  directorId?: number | null
  enabled: boolean
  forceTotp: boolean
  roleIds: number[]
}
export interface Org {
  id: number
  parentId: number
  name: string
  code: string
  category?: string | null
  sort: number
  enabled: boolean
}
export interface OrgInput {
  parentId: number
  name: string
  code?: string | null
  category?: string | null
  sort: number
  enabled: boolean
}
export interface Position {
  id: number
  name: string
  code: string
  sort: number
  enabled: boolean
  createTime: string
}
export interface PositionInput {
  name: string
  code: string
  sort: number
  enabled: boolean
}
export interface Role {
  id: number
  name: string
  code: string
  sort: number
  enabled: boolean
  remark?: string | null
  isDelegatable: boolean
  createTime: string
}

export interface RoleInput {
  name: string
  code: string
  sort: number
  enabled: boolean
  remark?: string | null
  isDelegatable: boolean
}
export interface MenuTreeNode {
  id: number
  parentId: number
  type: number
  title: string
  permission?: string | null
  children?: MenuTreeNode[] | null
}
export interface RoleDataScope {
  scopeType: number
  customOrgIds?: string | null
}

export interface OnlineSession {
  sessionId: string
  userId: number
  account: string
  ip?: string | null
  userAgent?: string | null
  loginTime: string
  expiresAt: string
}
export interface LoginLogItem {
  id: number
  account: string
  success: boolean
  resultCode: number
  loginMethod?: string | null
  ip?: string | null
  userAgent?: string | null
  name?: string | null
  createTime: string
}

export interface ServerInfo {
  machineName: string
  osDescription: string
  frameworkDescription: string
  processArchitecture: string
  processorCount: number
  processUptimeSeconds: number
  processCpuPercent: number
  processWorkingSetBytes: number
  gcHeapBytes: number
  totalAvailableMemoryBytes: number
  threadCount: number
  disks?: { name: string; totalBytes: number; freeBytes: number }[] | null
}
export type CacheAction = 'flush-auth' | 'flush-dict' | 'flush-config' | 'rebuild-portal'

export interface OpLogItem {
  id: number
  title: string
  /** the msgKey of the title (op. + permission code) when the row has one */
  titleKey?: string
  httpMethod: string
  path: string
  paramJson?: string | null
  resultCode: number
  success: boolean
  exceptionMessage?: string | null
  elapsedMs: number
  operatorName?: string | null
  ip?: string | null
  userAgent?: string | null
  createTime: string
}
export interface ExceptionLogItem {
  id: number
  httpMethod: string
  path: string
  traceId?: string | null
  exceptionType: string
  message?: string | null
  stackTrace?: string | null
  operatorName?: string | null
  ip?: string | null
  userAgent?: string | null
  createTime: string
}

export interface DictType {
  id: number
  code: string
  name: string
  sort: number
  enabled: boolean
  remark?: string | null
}
export interface DictTypeInput {
  code: string
  name: string
  sort: number
  enabled: boolean
  remark?: string | null
}
export interface DictItem {
  id: number
  dictTypeCode: string
  label: string
  value: string
  sort: number
  enabled: boolean
}
export interface DictItemInput {
  dictTypeCode: string
  label: string
  value: string
  sort: number
  enabled: boolean
}

const enc = encodeURIComponent

export const admin = {
  users: (p: { Current: number; Size: number; Account?: string; Name?: string; OrgId?: number | null; Enabled?: boolean | '' }) =>
    api.get<Paged<UserItem>>(`/api/v1/sys/user/page${query(p)}`),
  user: (id: number) => api.get<UserDetail>(`/api/v1/sys/user/${id}`),
  addUser: (b: UserInput & { account: string; password?: string | null }) => api.post<{ id: number; initialPassword: string }>('/api/v1/sys/user', b),
  updateUser: (id: number, b: UserInput) => api.put<boolean>(`/api/v1/sys/user/${id}`, b),
  deleteUser: (id: number) => api.del<boolean>(`/api/v1/sys/user/${id}`),
  resetPassword: (id: number, newPassword?: string) => api.put<string>(`/api/v1/sys/user/${id}/password`, newPassword ? { newPassword } : {}),
  setUserEnabled: (id: number, enabled: boolean) => api.put<boolean>(`/api/v1/sys/user/${id}/enabled`, { enabled }),

  orgs: () => api.get<Org[]>('/api/v1/sys/org/list'),
  addOrg: (b: OrgInput) => api.post<number>('/api/v1/sys/org/add', b),
  updateOrg: (id: number, b: OrgInput) => api.put<boolean>(`/api/v1/sys/org/${id}`, b),
  deleteOrg: (id: number) => api.del<boolean>(`/api/v1/sys/org/${id}`),
  copyOrg: (id: number, name?: string) => api.post<number>(`/api/v1/sys/org/${id}/copy`, name ? { name } : {}),

  positions: (p: { Current: number; Size: number; Name?: string }) => api.get<Paged<Position>>(`/api/v1/sys/position/page${query(p)}`),
  addPosition: (b: PositionInput) => api.post<number>('/api/v1/sys/position/add', b),
  updatePosition: (id: number, b: PositionInput) => api.put<boolean>(`/api/v1/sys/position/${id}`, b),
  deletePosition: (id: number) => api.del<boolean>(`/api/v1/sys/position/${id}`),

  online: (p: { Current: number; Size: number }) => api.get<Paged<OnlineSession>>(`/api/v1/sys/session/online${query(p)}`),
  endOnline: (sessionId: string) => api.del<boolean>(`/api/v1/sys/session/${enc(sessionId)}`),
  loginLog: (p: { Current: number; Size: number; Account?: string; Success?: boolean | '' }) => api.get<Paged<LoginLogItem>>(`/api/v1/sys/log/login/page${query(p)}`),
  clearLoginLog: () => api.del<boolean>('/api/v1/sys/log/login'),

  server: () => api.get<ServerInfo>('/api/v1/sys/monitor/server'),
  cache: (action: CacheAction) => api.post<number>(`/api/v1/sys/cache/${action}`),

  opLog: (p: { Current: number; Size: number; Title?: string; Path?: string; Success?: boolean | '' }) => api.get<Paged<OpLogItem>>(`/api/v1/sys/log/op/page${query(p)}`),
  clearOpLog: () => api.del<boolean>('/api/v1/sys/log/op'),
  exceptionLog: (p: { Current: number; Size: number; Path?: string; ExceptionType?: string }) => api.get<Paged<ExceptionLogItem>>(`/api/v1/sys/log/exception/page${query(p)}`),
  clearExceptionLog: () => api.del<boolean>('/api/v1/sys/log/exception'),

  dictTypes: (p: { Current: number; Size: number; Code?: string; Name?: string }) => api.get<Paged<DictType>>(`/api/v1/sys/dict/type/page${query(p)}`),
  addDictType: (b: DictTypeInput) => api.post<number>('/api/v1/sys/dict/type', b),
  updateDictType: (id: number, b: DictTypeInput) => api.put<boolean>(`/api/v1/sys/dict/type/${id}`, b),
  deleteDictType: (id: number) => api.del<boolean>(`/api/v1/sys/dict/type/${id}`),
  dictItems: (p: { Current: number; Size: number; TypeCode: string }) => api.get<Paged<DictItem>>(`/api/v1/sys/dict/item/page${query(p)}`),
  addDictItem: (b: DictItemInput) => api.post<number>('/api/v1/sys/dict/item', b),
  updateDictItem: (id: number, b: DictItemInput) => api.put<boolean>(`/api/v1/sys/dict/item/${id}`, b),
  deleteDictItem: (id: number) => api.del<boolean>(`/api/v1/sys/dict/item/${id}`),

  roles: (p: { Current: number; Size: number; Name?: string }) => api.get<Paged<Role>>(`/api/v1/sys/role/page${query(p)}`),
  addRole: (b: RoleInput) => api.post<number>('/api/v1/sys/role/add', b),
  updateRole: (id: number, b: RoleInput) => api.put<boolean>(`/api/v1/sys/role/${id}`, b),
  deleteRole: (id: number) => api.del<boolean>(`/api/v1/sys/role/${id}`),
  menuTree: () => api.get<MenuTreeNode[]>('/api/v1/sys/menu/tree'),
  roleMenus: (id: number) => api.get<number[]>(`/api/v1/sys/role/${id}/menus`),
  setRoleMenus: (roleId: number, menuIds: number[]) => api.put<boolean>('/api/v1/sys/role/menu', { roleId, menuIds }),
  roleDataScope: (id: number) => api.get<RoleDataScope | null>(`/api/v1/sys/role/${id}/datascope`),
  setRoleDataScope: (roleId: number, scopeType: number, customOrgIds: number[]) => api.put<boolean>('/api/v1/sys/role/datascope', { roleId, scopeType, customOrgIds }),
  roleUsers: (id: number) => api.get<number[]>(`/api/v1/sys/role/${id}/users`),
  setRoleUsers: (roleId: number, userIds: number[]) => api.put<boolean>('/api/v1/sys/role/users', { roleId, userIds }),
}

