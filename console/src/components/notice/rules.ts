// The notice checks of host/notice (validate, validAction, SitePath), used
// by the publish form before the API decides (its msgKey is still shown).
export const MAX_TITLE = 256
export const MAX_CONTENT = 20000
export const MAX_ACTIONS = 5
export const MAX_LABEL = 64
export const MAX_CONFIRM = 256
export const ACTION_STYLES = ['default', 'primary', 'success', 'info', 'warning', 'danger', 'link']

const chars = (s: string) => [...s].length

/** sitePath: one leading '/', not '//' or '/\', no backslash, space or control character, at most 1024 bytes. */
export function sitePath(u: string): boolean {
  if (!u || new TextEncoder().encode(u).length > 1024 || u[0] !== '/') return false
  if (u.length > 1 && (u[1] === '/' || u[1] === '\\')) return false
  if (/[\\\s\p{Cc}\uFFFD]/u.test(u)) return false
  return true
}

export interface ActionRow {
  label: string
  method: string
  url: string
  style: string
  confirm: string
}

/** validAction mirrors host/notice validAction on a trimmed row. */
export function validAction(a: ActionRow): boolean {
  const label = a.label.trim()
  return (
    label !== '' &&
    chars(label) <= MAX_LABEL &&
    (a.method === 'GET' || a.method === 'POST') &&
    sitePath(a.url.trim()) &&
    (!a.style || ACTION_STYLES.includes(a.style)) &&
    chars(a.confirm.trim()) <= MAX_CONFIRM
  )
}

/**
 * callsApi mirrors host/notice CallsAPI: every POST, and a GET of /api or a
 * path under it, runs with the reader's session; a GET elsewhere is a plain
 * link of the console's router.
 */
export function callsApi(a: { method: string; url: string }): boolean {
  if (a.method.toUpperCase() !== 'GET') return true
  const path = a.url.split(/[?#]/, 1)[0].toLowerCase()
  return path === '/api' || path.startsWith('/api/')
}

/** needsActionConfirm: a non-GET action is confirmed with what it does before it runs. */
export function needsActionConfirm(a: { method: string }): boolean {
  return a.method.toUpperCase() !== 'GET'
}

/** actionSummary: what the confirmation of an action shows (method, path, publisher). */
export function actionSummary(a: { method: string; url: string }, publisher?: string | null): { method: string; path: string; publisher: string } {
  return { method: a.method.toUpperCase(), path: a.url, publisher: publisher || '?' }
}
