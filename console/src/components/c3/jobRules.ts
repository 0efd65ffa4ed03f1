// The job editor's client checks: the same rules as host/job validate()
// (service.go) and parseHeaders (httpjob.go). The API still decides; its
// msgKey error is shown when it refuses.
import type { FormItemRule } from 'element-plus'
import { tr } from '@/components/admin/paged'

const chars = (s: string) => [...s].length

// host/job codePattern.
export function validJobCode(c: string): boolean {
  return /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/.test(c)
}

/** validJSON: empty, or JSON text (handlerParam). */
export function validJSON(s: string): boolean {
  if (!s.trim()) return true
  try {
    JSON.parse(s)
    return true
  } catch {
    return false
  }
}

/** validHeaders: empty, or a JSON object of strings without CR/LF, colons in names or Host. */
export function validHeaders(s: string): boolean {
  if (!s.trim()) return true
  let h: unknown
  try {
    h = JSON.parse(s)
  } catch {
    return false
  }
  if (h === null || typeof h !== 'object' || Array.isArray(h)) return false
  for (const [k, v] of Object.entries(h as Record<string, unknown>)) {
    if (typeof v !== 'string') return false
    if (k === '' || /[\r\n:]/.test(k) || /[\r\n]/.test(v) || k.toLowerCase() === 'host') return false
  }
  return true
}

/** validHttpUrl: an absolute http(s) URL with a host, at most 2048 characters (the allow-list is the API's). */
export function validHttpUrl(s: string): boolean {
  const v = s.trim()
  if (!v || chars(v) > 2048) return false
  try {
    const u = new URL(v)
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== ''
  } catch {
    return false
  }
}

/** parseLocal reads the editor's "YYYY-MM-DD HH:mm:ss" as local time (null when empty or unreadable). */
export function parseLocal(s?: string | null): Date | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})$/.exec((s ?? '').trim())
  if (!m) return null
  return new Date(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6])
}

const rule = (ok: (v: string) => boolean, key: string, args: Record<string, unknown> = {}): FormItemRule => ({
  trigger: 'blur',
  validator: (_r, v, cb) => (ok(String(v ?? '')) ? cb() : cb(new Error(tr(key, args)))),
})

export const codeRule = () => rule((v) => validJobCode(v.trim()), 'jobs.rule.code')
export const jsonRule = () => rule(validJSON, 'jobs.rule.json')
export const headersRule = () => rule(validHeaders, 'jobs.rule.headers')
export const urlRule = () => rule(validHttpUrl, 'jobs.rule.url')
export const rangeRule = (min: number, max: number): FormItemRule => ({
  trigger: 'change',
  validator: (_r, v, cb) => (v === null || v === undefined || (Number.isInteger(v) && v >= min && v <= max) ? cb() : cb(new Error(tr('jobs.rule.range', { min, max })))),
})
