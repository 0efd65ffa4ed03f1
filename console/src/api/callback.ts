// The /oauth/callback query, read in the wire contract's order (§3.3):
// totpChallenge, pendingLink, error, bind, bindTicket, ticket, else a
// generic failure. `bindTicket` is the end of a bind started with a binding
// challenge (docs/developers/frontend.md §3.3): the console starts its binds that way.

export type CallbackAction =
  | { kind: 'totp'; challengeId: string; passkey: boolean }
  | { kind: 'pending'; pendingLink: string; provider: string; displayName: string }
  | { kind: 'error'; code: number }
  | { kind: 'bind'; provider: string }
  | { kind: 'bindTicket'; bindTicket: string; provider: string }
  | { kind: 'ticket'; ticket: string }
  | { kind: 'none' }

export function readCallback(q: URLSearchParams): CallbackAction {
  const totp = q.get('totpChallenge')
  if (totp) return { kind: 'totp', challengeId: totp, passkey: q.get('passkey') === '1' }
  const pending = q.get('pendingLink')
  if (pending) return { kind: 'pending', pendingLink: pending, provider: q.get('provider') ?? '', displayName: q.get('displayName') ?? '' }
  const error = q.get('error')
  if (error !== null) {
    const code = Number(error)
    return { kind: 'error', code: Number.isInteger(code) ? code : 0 }
  }
  const bind = q.get('bind')
  if (bind) return { kind: 'bind', provider: bind }
  const bindTicket = q.get('bindTicket')
  if (bindTicket) return { kind: 'bindTicket', bindTicket, provider: q.get('provider') ?? '' }
  const ticket = q.get('ticket')
  if (ticket) return { kind: 'ticket', ticket }
  return { kind: 'none' }
}

/** The SSO error codes with their own text; anything else is oauth.failed. */
export const OAUTH_ERRORS = new Set([40013, 40014, 40015, 40016, 40017])

export interface CallbackDeps {
  /** strip removes the query from the address bar (history.replaceState). */
  strip: () => void
  clearSession: () => void
  exchange: (ticket: string) => Promise<void>
  /** completeBind: POST bind/complete {bindTicket, bindingVerifier} with the kept verifier. */
  completeBind: (bindTicket: string, provider: string) => Promise<void>
  /** bound tells the user the identity was bound. */
  bound?: (provider: string) => void
  go: (to: string) => void
  showError: (code: number) => void
  hasSession: () => boolean
  wait: (ms: number) => Promise<void>
}

/**
 * runCallback performs the action of the query: the query is stripped
 * before any request, so a reload after success (no query left) goes home
 * instead of replaying a spent ticket (40014).
 */
export async function runCallback(search: string, d: CallbackDeps): Promise<CallbackAction> {
  const action = readCallback(new URLSearchParams(search))
  d.strip()
  switch (action.kind) {
    case 'totp':
      d.clearSession()
      d.go(`/login?totpChallenge=${encodeURIComponent(action.challengeId)}${action.passkey ? '&passkey=1' : ''}`)
      break
    case 'pending': {
      d.clearSession()
      const q = new URLSearchParams({ pendingLink: action.pendingLink, provider: action.provider })
      if (action.displayName) q.set('displayName', action.displayName)
      d.go(`/login?${q}`)
      break
    }
    case 'error':
      d.showError(action.code)
      await d.wait(2600)
      d.go('/login')
      break
    case 'bind':
      d.go('/personal/bindings')
      break
    case 'bindTicket':
      // Only the signed-in user who started the bind can complete it.
      if (!d.hasSession()) {
        d.showError(40014)
        await d.wait(2600)
        d.go('/login')
        break
      }
      try {
        await d.completeBind(action.bindTicket, action.provider)
        d.bound?.(action.provider)
        d.go('/personal/bindings')
      } catch (e) {
        const code = (e as { code?: number }).code ?? 0
        d.showError(code)
        await d.wait(2600)
        d.go('/personal/bindings')
      }
      break
    case 'ticket':
      try {
        await d.exchange(action.ticket)
        d.go('/')
      } catch (e) {
        const code = (e as { code?: number }).code ?? 0
        d.showError(code)
        await d.wait(2600)
        d.go('/login')
      }
      break
    case 'none':
      if (d.hasSession()) {
        d.go('/')
      } else {
        d.showError(0)
        await d.wait(2600)
        d.go('/login')
      }
  }
  return action
}
