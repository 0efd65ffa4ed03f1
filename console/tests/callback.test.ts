import { describe, it, expect } from 'vitest'
import { readCallback, runCallback, type CallbackDeps } from '../src/api/callback'

describe('readCallback: the contract order', () => {
  const cases: [string, string, unknown][] = [
    ['totpChallenge wins over everything', '?ticket=t&error=40018&pendingLink=p&totpChallenge=c1', { kind: 'totp', challengeId: 'c1', passkey: false }],
    ['totpChallenge with the passkey hint', '?totpChallenge=c2&error=40018&passkey=1', { kind: 'totp', challengeId: 'c2', passkey: true }],
    ['pendingLink before error', '?error=40016&pendingLink=p1&provider=oidc&displayName=Ann%20B', { kind: 'pending', pendingLink: 'p1', provider: 'oidc', displayName: 'Ann B' }],
    ['error before bind and ticket', '?ticket=t&bind=oidc&error=40013', { kind: 'error', code: 40013 }],
    ['a malformed error is still an error', '?error=x', { kind: 'error', code: 0 }],
    ['bind before ticket', '?ticket=t&bind=oidc', { kind: 'bind', provider: 'oidc' }],
    ['bind before bindTicket', '?bindTicket=b&bind=oidc', { kind: 'bind', provider: 'oidc' }],
    ['error before bindTicket', '?bindTicket=b&provider=oidc&error=40017', { kind: 'error', code: 40017 }],
    ['bindTicket before ticket', '?ticket=t&bindTicket=b&provider=oidc', { kind: 'bindTicket', bindTicket: 'b', provider: 'oidc' }],
    ['ticket', '?ticket=abc', { kind: 'ticket', ticket: 'abc' }],
    ['nothing', '', { kind: 'none' }],
    ['empty values count as missing', '?ticket=&totpChallenge=', { kind: 'none' }],
  ]
  for (const [name, q, want] of cases) it(name, () => expect(readCallback(new URLSearchParams(q))).toEqual(want))
})

function deps(log: string[], over: Partial<CallbackDeps> = {}): CallbackDeps {
  return {
    strip: () => log.push('strip'),
    clearSession: () => log.push('clear'),
    exchange: async (t) => void log.push(`exchange ${t}`),
    completeBind: async (t, p) => void log.push(`complete ${t} ${p}`),
    bound: (p) => log.push(`bound ${p}`),
    go: (to) => log.push(`go ${to}`),
    showError: (c) => log.push(`error ${c}`),
    hasSession: () => false,
    wait: async () => void log.push('wait'),
    ...over,
  }
}

describe('runCallback', () => {
  it('strips the query before the exchange, then goes home', async () => {
    const log: string[] = []
    await runCallback('?ticket=T1', deps(log))
    expect(log).toEqual(['strip', 'exchange T1', 'go /'])
  })
  it('a spent ticket shows its error then returns to the login page', async () => {
    const log: string[] = []
    await runCallback('?ticket=T1', deps(log, { exchange: async () => Promise.reject({ code: 40014 }) }))
    expect(log).toEqual(['strip', 'error 40014', 'wait', 'go /login'])
  })
  it('a reload after success (no query, session present) goes home', async () => {
    const log: string[] = []
    await runCallback('', deps(log, { hasSession: () => true }))
    expect(log).toEqual(['strip', 'go /'])
  })
  it('totp and pending clear any leftover session and go to the login page', async () => {
    const log: string[] = []
    await runCallback('?totpChallenge=C&error=40018', deps(log))
    await runCallback('?pendingLink=P&provider=oidc', deps(log))
    await runCallback('?totpChallenge=D&error=40018&passkey=1', deps(log))
    expect(log).toEqual(['strip', 'clear', 'go /login?totpChallenge=C', 'strip', 'clear', 'go /login?pendingLink=P&provider=oidc',
      'strip', 'clear', 'go /login?totpChallenge=D&passkey=1'])
  })
  it('bind goes to the bindings page', async () => {
    const log: string[] = []
    await runCallback('?bind=oidc', deps(log))
    expect(log).toEqual(['strip', 'go /personal/bindings'])
  })
  it('bindTicket: stripped first, completed with the session, then the bindings page', async () => {
    const log: string[] = []
    await runCallback('?bindTicket=B1&provider=oidc', deps(log, { hasSession: () => true }))
    expect(log).toEqual(['strip', 'complete B1 oidc', 'bound oidc', 'go /personal/bindings'])
  })
  it('bindTicket without a session is refused without a request', async () => {
    const log: string[] = []
    await runCallback('?bindTicket=B1&provider=oidc', deps(log))
    expect(log).toEqual(['strip', 'error 40014', 'wait', 'go /login'])
  })
  it('a refused bindTicket shows its error and returns to the bindings page', async () => {
    const log: string[] = []
    await runCallback('?bindTicket=B1&provider=oidc', deps(log, { hasSession: () => true, completeBind: async () => Promise.reject({ code: 40017 }) }))
    expect(log).toEqual(['strip', 'error 40017', 'wait', 'go /personal/bindings'])
  })
})
