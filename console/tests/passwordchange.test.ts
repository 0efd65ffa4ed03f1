// The forced password change (40028): the client records it and tells the
// app, the boot answers 'password' instead of a network failure, and the
// policy rules are judged as the kernel judges them.
import { describe, it, expect, vi, beforeEach } from 'vitest'
import { setActivePinia, createPinia } from 'pinia'
import { Client, ApiError } from '../src/api/client'
import { Session, type LoginOutput } from '../src/api/session'
import { policyRules } from '../src/views/passwordRules'

const mocks = vi.hoisted(() => ({ endpoints: {} as Record<string, ReturnType<typeof vi.fn>>, refresh: vi.fn(), session: null as unknown }))
vi.mock('@/api', async () => {
  const { Session } = await import('../src/api/session')
  const session = new Session(null)
  mocks.session = session
  return { session, api: { refresh: mocks.refresh }, endpoints: mocks.endpoints }
})
const { useApp } = await import('../src/stores/app')

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

function login(extra: Partial<LoginOutput> = {}): LoginOutput {
  return { accessToken: 'at', refreshToken: 'rt', userId: '9', account: 'newcomer', name: 'N', mustChangePassword: false, isSuperAdmin: false, sessionMode: 'body', csrfRequired: false, ...extra }
}

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } })
const refused = () => json(403, { code: 40028, msgKey: 'error.auth.passwordChangeRequired' })

describe('client: 40028', () => {
  it('is an ApiError that records the change on the session (kept across a reload) and calls the hook, without ending the session', async () => {
    const storage = memStorage()
    const session = new Session(storage)
    session.set(login())
    const hook = vi.fn()
    const ended = vi.fn()
    const c = new Client({ session, fetch: (async () => refused()) as unknown as typeof fetch, passwordChangeRequired: hook, sessionEnded: ended, cookies: () => '' })
    const err = await c.get('/api/v1/personal/modules').catch((e) => e)
    expect(err).toBeInstanceOf(ApiError)
    expect(err.passwordChangeRequired).toBe(true)
    expect(err.sessionDead).toBe(false)
    expect(err.status).toBe(403)
    expect(hook).toHaveBeenCalledTimes(1)
    expect(ended).not.toHaveBeenCalled()
    expect(session.active).toBe(true)
    expect(session.user?.mustChangePassword).toBe(true)
    expect(new Session(storage).user?.mustChangePassword).toBe(true)
    // A successful change lifts it, also across a reload.
    session.setMustChangePassword(false)
    expect(new Session(storage).user?.mustChangePassword).toBe(false)
    expect(new Session(storage).accessToken).toBe('at')
  })

  it('other 403s are not a password change', async () => {
    const session = new Session(memStorage())
    session.set(login())
    const hook = vi.fn()
    const c = new Client({ session, fetch: (async () => json(403, { code: 41001, msgKey: 'error.perm.noPermission' })) as unknown as typeof fetch, passwordChangeRequired: hook, cookies: () => '' })
    const err = await c.get('/api/v1/sys/user').catch((e) => e)
    expect(err.passwordChangeRequired).toBe(false)
    expect(hook).not.toHaveBeenCalled()
    expect(session.user?.mustChangePassword).toBe(false)
  })
})

describe('boot', () => {
  const session = () => mocks.session as Session
  beforeEach(() => {
    setActivePinia(createPinia())
    session().set(login())
    for (const k of ['modules', 'permissions', 'profile', 'menu']) mocks.endpoints[k] = vi.fn()
    mocks.refresh.mockReset()
  })
  const pcr = () => new ApiError(40028, 'error.auth.passwordChangeRequired', {}, '', 403)

  it("answers 'password' (not 'retry') when the kernel refuses the portal with 40028", async () => {
    mocks.endpoints.modules.mockRejectedValue(pcr())
    mocks.endpoints.permissions.mockRejectedValue(pcr())
    mocks.endpoints.profile.mockResolvedValue({ id: 9, account: 'newcomer', name: 'N' })
    expect(await useApp().boot()).toBe('password')
    expect(session().user?.mustChangePassword).toBe(true)
    expect(useApp().booted).toBe(false)
  })

  it("answers 'password' without calling the portal when the session is known to need the change", async () => {
    session().setMustChangePassword(true)
    expect(await useApp().boot()).toBe('password')
    expect(mocks.endpoints.modules).not.toHaveBeenCalled()
  })

  it('after a reload without an access token, the refresh says so', async () => {
    session().set(login({ accessToken: '' }))
    mocks.refresh.mockImplementation(async () => {
      session().set(login({ mustChangePassword: true }))
      return true
    })
    expect(await useApp().boot()).toBe('password')
    expect(mocks.endpoints.modules).not.toHaveBeenCalled()
  })

  it("a network failure is still 'retry', a dead session 'dead', and a good boot 'ok'", async () => {
    mocks.endpoints.modules.mockRejectedValue(new TypeError('fetch failed'))
    mocks.endpoints.permissions.mockResolvedValue([])
    mocks.endpoints.profile.mockResolvedValue({})
    expect(await useApp().boot()).toBe('retry')
    mocks.endpoints.modules.mockRejectedValue(new ApiError(40006, 'error.auth.tokenInvalid', {}, '', 401))
    expect(await useApp().boot()).toBe('dead')
    mocks.endpoints.modules.mockResolvedValue({ modules: [{ id: 1, code: 'm', title: 'M' }], defaultModuleId: 1 })
    mocks.endpoints.menu.mockResolvedValue([])
    expect(await useApp().boot()).toBe('ok')
    expect(session().user?.mustChangePassword).toBe(false)
  })
})

describe('policyRules', () => {
  const t = (k: string, a?: Record<string, unknown>) => (a ? `${k}:${JSON.stringify(a)}` : k)
  const policy = { minLength: 8, requireUpper: true, requireLower: true, requireDigit: true, requireSpecial: true }
  const met = (pw: string) => Object.fromEntries(policyRules(policy, pw, t).map((r) => [r.key, r.met]))

  it('lists only the rules the policy sets, with the minimum length', () => {
    const rules = policyRules({ ...policy, requireSpecial: false, requireUpper: false }, '', t)
    expect(rules.map((r) => r.key)).toEqual(['min', 'lower', 'digit'])
    expect(rules[0].text).toBe('personal.policy:{"min":8}')
  })
  it('judges each rule as the kernel does', () => {
    expect(met('')).toEqual({ min: false, upper: false, lower: false, digit: false, special: false })
    expect(met('Aa1#aaaa')).toEqual({ min: true, upper: true, lower: true, digit: true, special: true })
    expect(met('ÄÖÜäöü١٢')).toEqual({ min: true, upper: true, lower: true, digit: true, special: false })
    // Length in characters, not UTF-16 units: four emoji are four characters.
    expect(met('😀😀😀😀').min).toBe(false)
    expect(met('😀😀😀😀').special).toBe(true)
    expect(met('密码密码密码密码').min).toBe(true)
  })
})
