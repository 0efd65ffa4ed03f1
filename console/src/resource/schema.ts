// The pure part of the standard resource page: from a resource description
// (api/resource.ts) to the filter query, the form's blank values, rules and
// request body, and the table's cell texts. Kept free of components so the
// tests can judge it directly.
import type { FormItemRule, FormRules } from 'element-plus'
import { maxLen, required } from '@/components/admin/rules'
import { tr } from '@/components/admin/paged'
import type { DictOption, ImportPreview, Localized, ResourceField, ResourceRow, ResourceSchema } from '@/api/resource'

/** localized is the text in the locale, else English, else Chinese, else any. */
export function localized(l: Localized | null | undefined, locale: string): string {
  if (!l) return ''
  return l[locale] ?? l['en-US'] ?? l['zh-CN'] ?? Object.values(l).find((v) => !!v) ?? ''
}

export const listFields = (s: ResourceSchema) => s.fields.filter((f) => f.list)
export const filterFields = (s: ResourceSchema) => s.fields.filter((f) => f.filter)
export const formFields = (s: ResourceSchema) => s.fields.filter((f) => f.form)

/** has tells whether the resource offers an operation (the caller's codes decide separately). */
export const has = (s: ResourceSchema, op: string) => (s.operations ?? []).includes(op as never)

export const fromKey = (f: ResourceField) => `${f.name}From`
export const toKey = (f: ResourceField) => `${f.name}To`

/**
 * blankFilter: the filter model, keyed as the query is: eq/contains by the
 * field name, range by <name>From and <name>To. A bool eq filter is a
 * three-way choice ('' all, 'true', 'false').
 */
export function blankFilter(fields: ResourceField[]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const f of fields) {
    if (!f.filter) continue
    if (f.filter === 'range') {
      out[fromKey(f)] = null
      out[toKey(f)] = null
    } else out[f.name] = f.type === 'string' || f.type === 'text' || f.type === 'bool' ? '' : null
  }
  return out
}

const isBlank = (v: unknown) => v === undefined || v === null || (typeof v === 'string' && v.trim() === '')

/** filterQuery: the set filters as query parameters (strings trimmed, blanks left out). */
export function filterQuery(fields: ResourceField[], filter: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const f of fields) {
    if (!f.filter) continue
    const keys = f.filter === 'range' ? [fromKey(f), toKey(f)] : [f.name]
    for (const k of keys) {
      const v = filter[k]
      if (isBlank(v)) continue
      out[k] = typeof v === 'string' ? v.trim() : v
    }
  }
  return out
}

export interface SortState {
  prop: string
  order: 'asc' | 'desc'
}

/** pageQuery: GET {base}/page's query: Current, Size, SortField, SortOrder (the contract's paging names), then the filters. */
export function pageQuery(fields: ResourceField[], filter: Record<string, unknown>, current: number, size: number, sort: SortState | null): Record<string, unknown> {
  return { Current: current, Size: size, ...(sort ? { SortField: sort.prop, SortOrder: sort.order } : {}), ...filterQuery(fields, filter) }
}

/** sortOf turns el-table's sort-change into the API's SortField/SortOrder (null: the server's order). */
export function sortOf(prop: string | null | undefined, order: string | null | undefined): SortState | null {
  if (!prop || !order) return null
  return { prop, order: order === 'descending' ? 'desc' : 'asc' }
}

function blankValue(f: ResourceField): unknown {
  switch (f.type) {
    case 'string':
    case 'text':
      return ''
    case 'bool':
      return false
    default:
      return null
  }
}

/** blankForm: the add form of the form fields. */
export function blankForm(fields: ResourceField[]): Record<string, unknown> {
  return Object.fromEntries(fields.filter((f) => f.form).map((f) => [f.name, blankValue(f)]))
}

/** toForm: a row (or detail) as the edit form; a date keeps its YYYY-MM-DD. */
export function toForm(fields: ResourceField[], row: Record<string, unknown>): Record<string, unknown> {
  const out = blankForm(fields)
  for (const f of fields) {
    if (!f.form) continue
    const v = row[f.name]
    if (v === undefined || v === null) continue
    out[f.name] = f.type === 'date' && typeof v === 'string' ? v.slice(0, 10) : f.type === 'dict' && typeof v !== 'string' ? String(v) : v
  }
  return out
}

/** formBody: the request body of create/update: the editable form fields (read-only ones are the server's). */
export function formBody(fields: ResourceField[], form: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const f of fields) {
    if (!f.form || f.readOnly) continue
    let v = form[f.name]
    if (typeof v === 'string') v = v.trim()
    if (v === '' && f.type !== 'string' && f.type !== 'text') v = null
    if (v === undefined) v = blankValue(f)
    out[f.name] = v
  }
  return out
}

const decimals = (n: number) => {
  const s = String(n)
  if (/e-/i.test(s)) return Number(s.split(/e-/i)[1]) + (s.split('.')[1]?.split(/e/i)[0].length ?? 0)
  return s.split('.')[1]?.length ?? 0
}

const rule = (check: (v: number) => string | null): FormItemRule => ({
  trigger: ['blur', 'change'],
  validator: (_r, v, cb) => {
    if (v === null || v === undefined || v === '') return cb()
    const n = Number(v)
    const why = Number.isFinite(n) ? check(n) : tr('resource.rule.int')
    return why ? cb(new Error(why)) : cb()
  },
})

/** rulesOf: the client checks of the form, the same as the API's (it still decides). */
export function rulesOf(fields: ResourceField[]): FormRules {
  const out: FormRules = {}
  for (const f of fields) {
    if (!f.form || f.readOnly) continue
    const r: FormItemRule[] = []
    if (f.required) r.push(required())
    if ((f.type === 'string' || f.type === 'text') && f.max) r.push(maxLen(f.max))
    if (f.type === 'int' || f.type === 'decimal') {
      const { min, max, scale } = f
      r.push(
        rule((n) => {
          if (f.type === 'int' && !Number.isInteger(n)) return tr('resource.rule.int')
          if (f.type === 'decimal' && scale !== undefined && decimals(n) > scale) return tr('resource.rule.scale', { scale })
          if (min !== undefined && n < min) return tr('resource.rule.min', { min })
          if (max !== undefined && n > max) return tr('resource.rule.max', { max })
          return null
        }),
      )
    }
    if (r.length) out[f.name] = r
  }
  return out
}

/** formatDate: a "YYYY-MM-DD" day in the locale (the day as written: no zone shift). */
export function formatDate(v: unknown, locale: string): string {
  if (typeof v !== 'string' || !v) return ''
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(v)
  if (!m) return v
  const d = new Date(Date.UTC(+m[1], +m[2] - 1, +m[3]))
  return new Intl.DateTimeFormat(locale, { year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' }).format(d)
}

/** formatDateTime: an ISO 8601 instant in the locale and the browser's zone. */
export function formatDateTime(v: unknown, locale: string, timeZone?: string): string {
  if (typeof v !== 'string' || !v) return ''
  const d = new Date(v)
  if (Number.isNaN(d.getTime())) return v
  return new Intl.DateTimeFormat(locale, { year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false, timeZone }).format(d)
}

export type Dicts = Record<string, DictOption[]>

/**
 * orgName: the name the API sends next to an org field: "<name>Name", where
 * the contract's example strips a trailing "Id" (orgId → orgName); both
 * spellings are read.
 */
export function orgName(f: ResourceField, row: Record<string, unknown>): unknown {
  const stem = f.name.replace(/Id$/, '')
  return row[`${stem}Name`] ?? row[`${f.name}Name`]
}

/** dictLabel: the item's label of a value (the value itself when the item is unknown). */
export function dictLabel(dicts: Dicts, code: string | undefined, v: unknown): string {
  if (v === undefined || v === null || v === '') return ''
  const hit = (dicts[code ?? ''] ?? []).find((o) => String(o.value) === String(v))
  return hit ? hit.label : String(v)
}

/**
 * cellText: what a cell shows for a field (bool is a tag in the template;
 * here it is the yes/no text, for the detail drawer).
 */
export function cellText(f: ResourceField, row: ResourceRow | Record<string, unknown>, dicts: Dicts, locale: string): string {
  const v = row[f.name]
  switch (f.type) {
    case 'dict':
      return dictLabel(dicts, f.dict, v)
    case 'org': {
      const name = orgName(f, row)
      return name !== undefined && name !== null && name !== '' ? String(name) : v === undefined || v === null ? '' : String(v)
    }
    case 'bool':
      return v === undefined || v === null ? '' : tr(v ? 'admin.yes' : 'admin.no')
    case 'date':
      return formatDate(v, locale)
    case 'datetime':
      return formatDateTime(v, locale)
    case 'decimal':
      if (typeof v !== 'number') return v === undefined || v === null ? '' : String(v)
      return f.scale !== undefined ? new Intl.NumberFormat(locale, { minimumFractionDigits: f.scale, maximumFractionDigits: f.scale }).format(v) : new Intl.NumberFormat(locale).format(v)
    default:
      return v === undefined || v === null ? '' : String(v)
  }
}

/** importable: the preview may be committed: it has rows and none with errors (rows that merely exist are fine). */
export function importable(p: ImportPreview | null | undefined): boolean {
  if (!p || !p.rows?.length) return false
  return !p.rows.some((r) => (r.errors?.length ?? 0) > 0)
}
