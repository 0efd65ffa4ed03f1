// Client-side form rules, the same as the API's checks (host/user, host/org):
// the API still decides, and its msgKey error is shown when it refuses.
import type { FormItemRule } from 'element-plus'
import { tr } from './paged'

export const required = (): FormItemRule => ({
  required: true,
  trigger: 'blur',
  validator: (_r, v, cb) => (typeof v === 'string' ? v.trim() : v ?? '') === '' ? cb(new Error(tr('admin.rule.required'))) : cb(),
})

const chars = (s: string) => [...s].length

export const maxLen = (n: number): FormItemRule => ({
  trigger: 'blur',
  validator: (_r, v, cb) => (typeof v === 'string' && chars(v.trim()) > n ? cb(new Error(tr('admin.rule.maxLen', { max: n }))) : cb()),
})

// host/user validAccount: 1-64 characters, no spaces or control characters.
export function validAccount(a: string): boolean {
  return a !== '' && chars(a) <= 64 && !/[\s\p{Cc}]/u.test(a)
}
export const accountRule = (): FormItemRule => ({
  trigger: 'blur',
  validator: (_r, v, cb) => (!v || validAccount(String(v).trim()) ? cb() : cb(new Error(tr('admin.rule.account')))),
})

// host/user validPhone: 5-20 digits, an optional leading +.
export function validPhone(p: string): boolean {
  return /^\+?[0-9]+$/.test(p) && p.length >= 5 && p.length <= 20
}
export const phoneRule = (): FormItemRule => ({
  trigger: 'blur',
  validator: (_r, v, cb) => (!v || !String(v).trim() || validPhone(String(v).trim()) ? cb() : cb(new Error(tr('admin.rule.phone')))),
})

// host/user validEmail: a bare address (no display name), at most 128 characters.
export function validEmail(e: string): boolean {
  if (chars(e) > 128 || /[\s<>]/.test(e)) return false
  const at = e.lastIndexOf('@')
  if (at <= 0 || at === e.length - 1) return false
  const domain = e.slice(at + 1)
  return !domain.startsWith('.') && !domain.endsWith('.') && !domain.includes('@')
}
export const emailRule = (): FormItemRule => ({
  trigger: 'blur',
  validator: (_r, v, cb) => (!v || !String(v).trim() || validEmail(String(v).trim()) ? cb() : cb(new Error(tr('admin.rule.email')))),
})
