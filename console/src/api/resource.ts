// The business resources (wire contract: reports/resource-contract.md): the
// description of a resource and its standard API under the description's
// base. JSON calls go through the shared client (refresh, re-authentication
// replay on 40024, envelope errors); the file calls (template, export,
// preview upload) go through components/admin/transfer.
import { api } from '@/api'
import { query, type Org, type Paged } from '@/api/admin'

/** Localized is a text per console language ("zh-CN", "en-US"). */
export type Localized = Partial<Record<string, string>>

export type FieldType = 'string' | 'text' | 'int' | 'decimal' | 'bool' | 'date' | 'datetime' | 'dict' | 'org'
export type FilterKind = 'eq' | 'contains' | 'range'

export interface ResourceField {
  name: string
  label: Localized
  type: FieldType
  required?: boolean
  /** string/text: characters; int/decimal: the largest value. */
  max?: number
  min?: number
  /** decimal: digits after the point. */
  scale?: number
  /** dict: the dictionary type code. */
  dict?: string
  list?: boolean
  filter?: FilterKind
  form?: boolean
  sortable?: boolean
  readOnly?: boolean
  unique?: boolean
  help?: Localized
}

export type Operation = 'page' | 'detail' | 'create' | 'update' | 'delete' | 'batchDelete' | 'export' | 'import' | 'recycle'

export interface ResourceSchema {
  name: string
  module?: string
  label: Localized
  /** The API base, /api/v1 included. */
  base: string
  key?: string
  operations: Operation[]
  codes: Partial<Record<Operation, string>>
  fields: ResourceField[]
}

/** DictOption is one enabled item of GET /sys/dict/items/{typeCode}. */
export interface DictOption {
  label: string
  value: string
  sort?: number
  enabled?: boolean
}

export type ResourceRow = Record<string, unknown> & { id: number }

export interface ImportCellError {
  field: string
  code: number
  msgKey: string
  args?: Record<string, unknown> | null
}
export interface ImportRow {
  row: number
  values: Record<string, unknown>
  /** exists: the row's unique value matches a live row (not an error: the strategy decides). */
  exists: boolean
  errors?: ImportCellError[] | null
}
export interface ImportPreview {
  total: number
  errorCount: number
  existing: number
  rows: ImportRow[]
}
export type ImportStrategy = 'skip' | 'overwrite' | 'fail'
export interface ImportResult {
  created: number
  updated: number
  skipped: number
}

const seg = (s: string | number) => encodeURIComponent(String(s))

export const resourceApi = {
  schema: (name: string) => api.get<ResourceSchema>(`/api/v1/sys/resource/${seg(name)}/schema`),
  dictItems: (typeCode: string) => api.get<DictOption[]>(`/api/v1/sys/dict/items/${seg(typeCode)}`),
  /** orgs: the organisations as the user and org pages read them (a flat list, made a tree by toTree). */
  orgs: () => api.get<Org[]>('/api/v1/sys/org/list'),
  page: (base: string, q: Record<string, unknown>) => api.get<Paged<ResourceRow>>(`${base}/page${query(q)}`),
  detail: (base: string, id: number) => api.get<ResourceRow>(`${base}/${seg(id)}`),
  create: (base: string, body: Record<string, unknown>) => api.post<number>(base, body),
  update: (base: string, id: number, body: Record<string, unknown>) => api.put<boolean>(`${base}/${seg(id)}`, body),
  remove: (base: string, id: number) => api.del<boolean>(`${base}/${seg(id)}`),
  batchDelete: (base: string, ids: number[]) => api.post<number>(`${base}/batch-delete`, { ids }),
  importCommit: (base: string, rows: ImportRow[], strategy: ImportStrategy) =>
    api.post<ImportResult>(`${base}/import/commit`, { rows: rows.map((r) => ({ row: r.row, values: r.values })), strategy }),
}
