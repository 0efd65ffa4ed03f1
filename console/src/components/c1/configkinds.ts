// The config center's value rules on the client: the same checks as the
// kernel's settings registry (host/sysconfig Entry.Valid), driven by the
// registry itself (GET /sys/config/schema). The API still decides (43012).
import type { SchemaEntry } from '@/api/system'

const familyCode = '[A-Za-z0-9_-]{1,64}'
const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** entryOf finds the registry entry of a key: exact first, then a family pattern ("a.*.b"). */
export function entryOf(schema: SchemaEntry[], key: string): SchemaEntry | undefined {
  const exact = schema.find((e) => e.key === key)
  if (exact) return exact
  return schema.find((e) => e.key.includes('*') && new RegExp('^' + e.key.split('*').map(esc).join(familyCode) + '$').test(key))
}

const runes = (s: string) => [...s].length

function validURL(v: string): boolean {
  if (v === '') return true
  if (/[ \t\r\n]/.test(v)) return false
  if (v.startsWith('/') && !v.startsWith('//')) return true
  try {
    const u = new URL(v)
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.host !== ''
  } catch {
    return false
  }
}

/** validValue reports whether the kernel accepts v for the entry. */
export function validValue(e: SchemaEntry, v: string): boolean {
  switch (e.kind) {
    case 'bool':
      return v === 'true' || v === 'false'
    case 'int': {
      if (e.optional && v.trim() === '') return true
      if (!/^[+-]?\d+$/.test(v)) return false
      const n = Number(v)
      return Number.isSafeInteger(n) && n >= (e.min ?? -Infinity) && n <= (e.max ?? Infinity)
    }
    case 'enum':
      return (e.values ?? []).includes(v)
    case 'url':
      return (e.maxLen <= 0 || runes(v) <= e.maxLen) && validURL(v)
    case 'idList':
      return v.trim() === '' || v.split(',').every((p) => /^\s*\+?\d+\s*$/.test(p) && Number(p) > 0)
    default:
      return e.maxLen <= 0 || runes(v) <= e.maxLen
  }
}

/** hint is the i18n key and args describing the accepted values. */
export function hint(e: SchemaEntry): [string, Record<string, unknown>] {
  switch (e.kind) {
    case 'int':
      return [e.optional ? 'c1.kind.intOptional' : 'c1.kind.int', { min: e.min, max: e.max }]
    case 'enum':
      return ['c1.kind.enum', { values: (e.values ?? []).join(', ') }]
    case 'url':
      return ['c1.kind.url', { max: e.maxLen }]
    case 'idList':
      return ['c1.kind.idList', {}]
    case 'bool':
      return ['c1.kind.bool', {}]
    default:
      return e.maxLen > 0 ? ['c1.kind.string', { max: e.maxLen }] : ['c1.kind.text', {}]
  }
}

/** allRows pages through a config query (Size=100) until every row is read. */
export async function allRows<T>(load: (current: number) => Promise<{ items: T[]; total: number }>): Promise<T[]> {
  const out: T[] = []
  for (let current = 1; current <= 50; current++) {
    const p = await load(current)
    const items = p?.items ?? []
    out.push(...items)
    if (!items.length || out.length >= (p?.total ?? 0)) break
  }
  return out
}
