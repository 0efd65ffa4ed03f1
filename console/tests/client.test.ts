import { describe, it, expect, vi } from 'vitest'
import { Client, ApiError, REFRESH_PATH, REAUTH_RETRIED } from '../src/api/client'
import { Session, type LoginOutput } from '../src/api/session'

function memStorage(): Storage {
  const m = new Map<string, string>()
  return {
    get length() { return m.size },
    clear: () => m.clear(),
    getItem: (k) => m.get(k) ?? null,
    key: (i) => [...m.keys()][i] ?? null,
    removeItem: (k) => void m.delete(k),
    setItem: (k, v) => void m.set(k, String(v)),
  }
}

function login(access: string, refresh = 'rt-1', extra: Partial<LoginOutput> = {}): LoginOutput {
  return { accessToken: access, refreshToken: refresh, userId: '7', account: 'a', name: 'A', mustChangePassword: false, isSuperAdmin: false, sessionMode: 'body', csrfRequired: false, ...extra }
}

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } })
const ok = (data: unknown) => json(200, { code: 0, msgKey: 'common.success', data })

describe('401: one shared refresh', () => {
  it('refreshes once for concurrent 401s and replays each request with the new token', async () => {
    const session = new Session(memStorage())
    session.set(login('old'))
    let refreshes = 0
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    const seen: string[] = []
    const fetch = vi.fn(async (url: string, init: RequestInit) => {
      const auth = (init.headers as Record<string, string>).Authorization
      if (url === REFRESH_PATH) {
        refreshes++
        expect(JSON.parse(init.body as string)).toEqual({ refreshToken: 'rt-1' })
        await gate
        return ok(login('new', 'rt-2'))
      }
      seen.push(`${url} ${auth}`)
      return auth === 'Bearer new' ? ok(url) : json(401, { code: 40006, msgKey: 'error.auth.tokenInvalid' })
    })
    const ended = vi.fn()
    const c = new Client({ session, fetch: fetch as unknown as typeof globalThis.fetch, sessionEnded: ended, cookies: () => '' })
    const calls = ['/api/v1/a', '/api/v1/b', '/api/v1/c'].map((p) => c.get<string>(p))
    await new Promise((r) => setTimeout(r, 10))
    release()
    expect(await Promise.all(calls)).toEqual(['/api/v1/a', '/api/v1/b', '/api/v1/c'])
    expect(refreshes).toBe(1)
    expect(session.refreshToken).toBe('rt-2')
    expect(seen.filter((s) => s.endsWith('Bearer new')).length).toBe(3)
    expect(ended).not.toHaveBeenCalled()
  })

  it('ends the session once when the refresh is refused', async () => {
    const session = new Session(memStorage())
    session.set(login('old'))
    const fetch = vi.fn(async (url: string) =>
      url === REFRESH_PATH ? json(200, { code: 40007, msgKey: 'error.auth.sessionRevoked' }) : json(401, { code: 40006, msgKey: 'error.auth.tokenInvalid' }),
    )
    const ended = vi.fn()
    const c = new Client({ session, fetch: fetch as unknown as typeof globalThis.fetch, sessionEnded: ended, cookies: () => '' })
    const results = await Promise.allSettled([c.get('/api/v1/x'), c.get('/api/v1/y')])
    for (const r of results) {
      expect(r.status).toBe('rejected')
      expect((r as PromiseRejectedResult).reason).toBeInstanceOf(ApiError)
      expect(((r as PromiseRejectedResult).reason as ApiError).sessionDead).toBe(true)
    }
    expect(fetch.mock.calls.filter((c) => c[0] === REFRESH_PATH).length).toBe(1)
    expect(ended).toHaveBeenCalledTimes(1)
    expect(session.active).toBe(false)
  })

  it('does not refresh for a 401 of the login call itself, and keeps business codes from ending the session', async () => {
    const session = new Session(memStorage())
    session.set(login('t'))
    const fetch = vi.fn(async (url: string) => (url === '/api/v1/auth/login' ? json(401, { code: 40006, msgKey: 'error.auth.tokenInvalid' }) : json(403, { code: 41001, msgKey: 'error.perm.denied' })))
    const ended = vi.fn()
    const c = new Client({ session, fetch: fetch as unknown as typeof globalThis.fetch, sessionEnded: ended, cookies: () => '' })
    await expect(c.post('/api/v1/auth/login', {})).rejects.toBeInstanceOf(ApiError)
    const err = (await c.get('/api/v1/sys/user/page').catch((e) => e)) as ApiError
    expect(err.code).toBe(41001)
    expect(err.sessionDead).toBe(false)
    expect(fetch.mock.calls.some((c) => c[0] === REFRESH_PATH)).toBe(false)
    expect(ended).not.toHaveBeenCalled()
    expect(session.active).toBe(true)
  })

  it('cookie mode: refresh sends an empty token, keeps no refresh token, and sends the CSRF header', async () => {
    const storage = memStorage()
    const session = new Session(storage)
    session.set(login('a1', '', { sessionMode: 'cookie', csrfRequired: true }))
    expect(session.cookieMode).toBe(true)
    expect(storage.getItem('ak.refreshToken')).toBeNull()
    expect(storage.getItem('ak.accessToken')).toBeNull()
    const bodies: unknown[] = []
    const fetch = vi.fn(async (url: string, init: RequestInit) => {
      const h = init.headers as Record<string, string>
      expect(init.credentials).toBe('include')
      if (url === REFRESH_PATH) {
        expect(h['X-Smart-CSRF']).toBe('csrf-v')
        bodies.push(JSON.parse(init.body as string))
        return ok(login('a2', '', { sessionMode: 'cookie', csrfRequired: true }))
      }
      return h.Authorization === 'Bearer a2' ? ok(true) : json(401, { code: 40006 })
    })
    const c = new Client({ session, fetch: fetch as unknown as typeof globalThis.fetch, cookies: () => 'x=1; smart_csrf=csrf-v' })
    expect(await c.get('/api/v1/personal/profile')).toBe(true)
    expect(bodies).toEqual([{ refreshToken: '' }])
  })
})

describe('403/40024: re-authentication then one replay', () => {
  it('asks once and replays with X-Smart-Reauth-Retried: 1', async () => {
    const session = new Session(memStorage())
    session.set(login('t'))
    let granted = false
    const fetch = vi.fn(async (_url: string, init: RequestInit) => {
      const h = init.headers as Record<string, string>
      if (granted && h[REAUTH_RETRIED] === '1') return ok('done')
      return json(403, { code: 40024, msgKey: 'error.auth.reauthRequired' })
    })
    const reauth = vi.fn(async () => {
      granted = true
      return true
    })
    const c = new Client({ session, fetch: fetch as unknown as typeof globalThis.fetch, reauth, cookies: () => '' })
    const [a, b] = await Promise.all([c.put('/api/v1/sys/config/batch', []), c.del('/api/v1/sys/session/1')])
    expect([a, b]).toEqual(['done', 'done'])
    expect(reauth).toHaveBeenCalledTimes(1)
    expect(fetch).toHaveBeenCalledTimes(4)
  })

  it('replays only once: a second 40024 is the error', async () => {
    const session = new Session(memStorage())
    session.set(login('t'))
    const fetch = vi.fn(async () => json(403, { code: 40024, msgKey: 'error.auth.reauthRequired' }))
    const reauth = vi.fn(async () => true)
    const c = new Client({ session, fetch: fetch as unknown as typeof globalThis.fetch, reauth, cookies: () => '' })
    const err = (await c.put('/api/v1/sys/config/batch', []).catch((e) => e)) as ApiError
    expect(err.code).toBe(40024)
    expect(fetch).toHaveBeenCalledTimes(2)
    expect(reauth).toHaveBeenCalledTimes(1)
    expect(session.active).toBe(true)
  })

  it('a cancelled dialog is no replay', async () => {
    const session = new Session(memStorage())
    session.set(login('t'))
    const fetch = vi.fn(async () => json(403, { code: 40024, msgKey: 'error.auth.reauthRequired' }))
    const c = new Client({ session, fetch: fetch as unknown as typeof globalThis.fetch, reauth: async () => false, cookies: () => '' })
    const err = (await c.del('/api/v1/sys/session/9').catch((e) => e)) as ApiError
    expect(err.code).toBe(40024)
    expect(fetch).toHaveBeenCalledTimes(1)
  })
})

describe('unwrap', () => {
  it('maps envelopes, empty bodies and ProblemDetails', async () => {
    const session = new Session(memStorage())
    const answers = [new Response('', { status: 200 }), json(200, { code: 40001, msgKey: 'error.auth.passwordWrong', args: {}, message: 'error.auth.passwordWrong' }), json(400, { title: 'Bad', detail: 'field x' })]
    const fetch = vi.fn(async () => answers.shift()!)
    const c = new Client({ session, fetch: fetch as unknown as typeof globalThis.fetch, cookies: () => '' })
    expect(await c.post('/api/v1/auth/mfa/recovery', {})).toBeNull()
    const e1 = (await c.post('/api/v1/auth/login', {}).catch((e) => e)) as ApiError
    expect([e1.code, e1.msgKey, e1.detail]).toEqual([40001, 'error.auth.passwordWrong', ''])
    const e2 = (await c.post('/api/v1/x', {}).catch((e) => e)) as ApiError
    expect([e2.code, e2.status, e2.detail]).toEqual([400, 400, 'field x'])
  })
})
