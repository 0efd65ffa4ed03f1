// The console's second end-to-end file (issue 20, console1): a kernel in
// cookie session mode with a passkey relying party (localhost) and five
// OpenID providers, driven by Debian chromium through playwright-core.
// Scenarios: cookie session (no refresh token in JavaScript storage, a
// reload keeps the session), the "…" overflow of the brand buttons, a
// challenged bind (?bindTicket=), passkeys (register on the personal page
// with a CDP virtual authenticator, log out, log in with it; the passkey as
// second factor), the re-authentication dialog with its one replay, the
// TOTP bind page (/mfa/bind) and the TOTP and SMS second-factor steps.
// Screenshots go to e2e/output/.
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { launch, startIssuer, startKernel, freePort, api, must } from './lib.js'
import { axe as axeCheck } from './lib.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const repo = path.join(here, '..', '..')
const kernelBin = process.env.AK_KERNEL_BIN || path.join(repo, 'bin', 'adminkernel')
const issuerBin = process.env.AK_ISSUER_BIN || path.join(repo, 'bin', 'testissuer')
const out = path.join(here, 'output')
fs.mkdirSync(out, { recursive: true })

const adminPassword = 'Seed#Admin2026!'
const userPassword = 'Chosen#Pass456'
const initialPassword = 'Init#Pass123'
// Five providers: four brand buttons, then "…".
const codes = ['oidc', 'corp', 'partner', 'lab', 'guest']

let issuer, kernel, base, origin, browser, adminToken, tmpRoot

before(async () => {
  for (const [what, p] of [['kernel binary', kernelBin], ['testissuer binary', issuerBin]]) {
    if (!fs.existsSync(p)) throw new Error(`${what} ${p} is missing: run make test-console (it builds both)`)
  }
  tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'ak-console-factors-'))
  issuer = await startIssuer(issuerBin)
  const port = await freePort()
  base = 'http://127.0.0.1:' + port
  // WebAuthn needs a domain: the passkey scenarios use localhost (a
  // secure context over http), the same listener.
  origin = 'http://localhost:' + port
  ;[kernel, browser] = await Promise.all([
    startKernel({
      bin: kernelBin, tmpRoot, name: 'factors', port,
      settings: {
        Service: {
          Http: { ListenAddress: base },
          Seed: { AdminPassword: adminPassword },
          Security: {
            Password: { Pbkdf2Iterations: 100000 },
            Session: { CookieMode: true },
            Passkey: { RpId: 'localhost', RpDisplayName: 'Console suite', Origins: [origin] },
          },
          ExternalAuth: {
            CallbackBaseUrl: base,
            Oidc: codes.map((Code, i) => ({
              Code, DisplayName: i === 0 ? 'Test SSO' : `SSO ${Code}`, Authority: issuer.url, ClientId: issuer.clientId, ClientSecret: issuer.clientSecret, AccountClaim: 'preferred_username',
            })),
          },
        },
      },
    }),
    launch(),
  ])
  adminToken = (await must(base, 'POST', '/api/v1/auth/login', { account: 'superAdmin', password: adminPassword })).accessToken
  await settings({
    'sys.security.rateLimit.authPermitPerWindow': '100000',
    'sys.security.rateLimit.passwordPermitPerWindow': '100000',
    'sys.security.rateLimit.permitPerWindow': '1000000',
    'sys.security.passkey.passwordless': 'true',
  })
  // Users whose first (password-changing) login must happen before the
  // factors they meet are switched on.
  await createUser('tf_fay', { forceTotp: true })
  await createUser('sms_gus', { phone: '13812345678' })
})

after(async () => {
  if (browser) await browser.close()
  if (kernel) kernel.stop()
  if (issuer) issuer.stop()
  if (tmpRoot && !process.env.AK_CONSOLE_KEEP) fs.rmSync(tmpRoot, { recursive: true, force: true })
})

// settings writes config values as the super-admin (re-authenticated
// first: with TOTP on, config writes are +R).
async function settings(pairs) {
  await must(base, 'POST', '/api/v1/auth/reauth', { method: 'password', password: adminPassword }, adminToken)
  await must(base, 'PUT', '/api/v1/sys/config/batch', Object.entries(pairs).map(([configKey, configValue]) => ({ configKey, configValue })), adminToken)
}

async function createUser(account, extra = {}) {
  await must(base, 'POST', '/api/v1/sys/user', { account, name: account, password: initialPassword, ...extra }, adminToken)
  const first = await must(base, 'POST', '/api/v1/auth/login', { account, password: initialPassword })
  await must(base, 'PUT', '/api/v1/personal/password', { oldPassword: initialPassword, newPassword: userPassword }, first.accessToken)
  return account
}

async function context() {
  const ctx = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 800 } })
  ctx.setDefaultTimeout(15000)
  ctx.problems = []
  ctx.on('page', (page) => {
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) ctx.problems.push('CSP: ' + m.text())
    })
    page.on('pageerror', (e) => ctx.problems.push('page error: ' + e.message))
  })
  return ctx
}
async function done(ctx) {
  const p = ctx.problems
  await ctx.close()
  assert.deepEqual(p, [], 'the pages reported problems')
}

async function login(page, account, at = base) {
  await page.goto(at + '/login')
  await page.fill('#login-account', account)
  await page.fill('#login-password', userPassword)
  await page.click('[data-test=submit]')
}

async function logout(page) {
  await page.click('[data-test=user-menu]')
  await page.click('[data-test=logout]')
  await page.waitForURL(/\/login/)
}

const axe = (page, what) => axeCheck(page, what, assert)

// settled waits (at most 10 s) until a list filled by an asynchronous
// response listener (bodies are read after the page went on) has n items.
async function settled(list, n) {
  const end = Date.now() + 10000
  while (list.length < n && Date.now() < end) await new Promise((r) => setTimeout(r, 50))
  return list
}

const shot = (page, name) => page.screenshot({ path: path.join(out, name + '.png') })

// totp is RFC 6238 (SHA-1, 6 digits, 30 s) of a base32 seed at a step.
function totp(seed, step) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'
  let bits = ''
  for (const c of seed.replace(/=+$/, '').toUpperCase()) bits += alphabet.indexOf(c).toString(2).padStart(5, '0')
  const key = Buffer.from(bits.match(/.{8}/g).map((b) => parseInt(b, 2)))
  const msg = Buffer.alloc(8)
  msg.writeBigUInt64BE(BigInt(step))
  const h = crypto.createHmac('sha1', key).update(msg).digest()
  const o = h[h.length - 1] & 15
  return String((h.readUInt32BE(o) & 0x7fffffff) % 1000000).padStart(6, '0')
}
const nowStep = () => Math.floor(Date.now() / 30000)

// smsCode reads the newest code the development SMS sender wrote to the
// kernel's log for a masked phone number.
function smsCode(maskedPhone) {
  const lines = fs.readFileSync(kernel.logFile, 'utf8').split('\n').filter((l) => l.includes('development SMS sender') && l.includes(maskedPhone))
  const m = lines.length ? lines[lines.length - 1].match(/code=(\d{4,8})/) : null
  if (!m) throw new Error(`no SMS code for ${maskedPhone} in the kernel log:\n${kernel.logTail(20)}`)
  return m[1]
}

// device opens a context on the localhost origin with a CDP virtual
// platform authenticator (resident keys, user verification, presence
// simulated), the technique of e2e/browser/passkey.test.js.
async function device() {
  const ctx = await context()
  const page = await ctx.newPage()
  await page.goto(origin + '/login')
  const cdp = await ctx.newCDPSession(page)
  await cdp.send('WebAuthn.enable')
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  })
  return { ctx, page, cdp, authenticatorId }
}

describe('console: session mode, providers and factors (issue 20)', { concurrency: 1 }, () => {
  it('cookie session: the refresh token never reaches JavaScript storage; a reload keeps the session', { timeout: 30000 }, async () => {
    const user = await createUser('ck_ann')
    const ctx = await context()
    const page = await ctx.newPage()
    const answers = []
    page.on('response', (r) => {
      if (r.url().endsWith('/api/v1/auth/login') || r.url().endsWith('/api/v1/auth/refresh')) answers.push(r.json().catch(() => null))
    })
    await login(page, user)
    await page.locator('[data-test=home]').waitFor()
    const rt = (await ctx.cookies(base)).find((c) => c.name === 'smart_rt')
    assert.ok(rt && rt.value && rt.httpOnly, 'the refresh token is an HttpOnly cookie')
    const storage = () => page.evaluate(() => {
      const dump = (s) => Object.fromEntries(Array.from({ length: s.length }, (_, i) => s.key(i)).map((k) => [k, s.getItem(k)]))
      return { local: dump(localStorage), session: dump(sessionStorage), cookie: document.cookie }
    })
    const check = async (when) => {
      const s = await storage()
      const all = JSON.stringify(s)
      assert.ok(!all.includes(rt.value), `${when}: the refresh token is readable by JavaScript: ${all}`)
      for (const [k, v] of Object.entries({ ...s.local, ...s.session })) {
        assert.ok(!/refresh|access/i.test(k) || !v, `${when}: storage key ${k} holds a token`)
      }
      assert.ok(!s.cookie.includes('smart_rt'), `${when}: smart_rt is visible to document.cookie`)
    }
    await check('after the login')
    await page.reload()
    await page.locator('[data-test=home]').waitFor()
    assert.match(await page.locator('[data-test=home]').textContent(), /ck_ann/)
    await check('after the reload')
    const bodies = (await Promise.all(answers)).filter(Boolean)
    assert.ok(bodies.length >= 2, 'the login and the silent refresh of the reload answered')
    for (const b of bodies) assert.ok(!b.data?.refreshToken, 'a token answer carried the refresh token in its body')
    await shot(page, 'cookie-session')
    await done(ctx)
  })

  it('more than four brand providers: four buttons, then "…"; every button has an icon and its name', { timeout: 30000 }, async () => {
    const ctx = await context()
    const page = await ctx.newPage()
    await page.goto(base + '/login')
    await page.locator('[data-test=sso-more]').waitFor()
    const shown = await page.locator('.ak-brands > a.ak-brand-item').evaluateAll((as) => as.map((a) => ({
      code: a.dataset.test, label: a.getAttribute('aria-label'), svg: !!a.querySelector('svg'), letter: !!a.querySelector('.ak-letter'),
    })))
    assert.deepEqual(shown.map((s) => s.code), codes.slice(0, 4).map((c) => 'sso-' + c))
    assert.deepEqual(shown.map((s) => s.label), ['Test SSO', 'SSO corp', 'SSO partner', 'SSO lab'])
    for (const s of shown) assert.ok(s.svg && !s.letter, `${s.code} is drawn as a letter, not an icon`)
    await axe(page, 'the login page with five providers')
    await page.click('[data-test=sso-more]')
    const fifth = page.locator('.el-dropdown-menu [data-test=sso-guest]')
    await fifth.waitFor()
    assert.match(await fifth.textContent(), /SSO guest/)
    assert.equal(await fifth.getAttribute('href'), '/api/v1/auth/external/guest/authorize')
    await shot(page, 'login-overflow')
    await done(ctx)
  })

  it('bind from the personal page with a binding challenge: ?bindTicket= is completed', { timeout: 40000 }, async () => {
    const user = await createUser('bt_dan')
    const ctx = await context()
    await ctx.addCookies([{ name: 'oidctest_login', value: 'idp_dan', url: issuer.url }])
    const page = await ctx.newPage()
    const seen = []
    page.on('request', (r) => {
      if (/\/oauth\/callback\?/.test(r.url()) && r.isNavigationRequest()) seen.push(new URL(r.url()).searchParams.get('bindTicket') ? 'callback ?bindTicket' : r.url())
    })
    page.on('response', async (r) => {
      // In cookie mode the access token lives in memory: the callback
      // page's first call answers 401, the client refreshes and replays.
      if (r.url().endsWith('/api/v1/auth/external/bind/complete') && r.status() !== 401) {
        seen.push(`complete ${Object.keys(r.request().postDataJSON()).sort().join(',')} → ${(await r.json().catch(() => ({}))).code}`)
      }
    })
    await login(page, user)
    await page.locator('[data-test=home]').waitFor()
    await page.goto(base + '/personal/bindings')
    await page.click('[data-test=bind-oidc]')
    await page.locator('[data-test=unbind-oidc]').waitFor()
    assert.equal(new URL(page.url()).pathname, '/personal/bindings')
    assert.equal(new URL(page.url()).search, '', 'the bind ticket stayed in the address')
    assert.deepEqual(await settled(seen, 2), ['callback ?bindTicket', 'complete bindTicket,bindingVerifier → 0'])
    const tok = (await must(base, 'POST', '/api/v1/auth/login', { account: user, password: userPassword })).accessToken
    const bindings = await must(base, 'GET', '/api/v1/auth/external/bindings', undefined, tok)
    assert.deepEqual(bindings.map((b) => b.provider), ['oidc'])
    assert.equal(await page.evaluate(() => sessionStorage.getItem('ak.bindVerifier')), null, 'the verifier is kept after use')
    await axe(page, 'the bindings page after a bind')
    await shot(page, 'bind-ticket')
    await done(ctx)
  })

  let pk // the passkey user's device (context, page, authenticator)
  it('passkeys: register on the personal page, log out, log in with it (passwordless)', { timeout: 60000 }, async () => {
    const user = await createUser('pk_eve')
    pk = await device()
    const { page, cdp, authenticatorId } = pk
    await login(page, user, origin)
    await page.locator('[data-test=home]').waitFor()
    await page.goto(origin + '/personal/passkeys')
    await page.fill('#pk-name', 'Chromium key')
    await page.click('[data-test=passkey-add]')
    // Adding a factor needs a re-authentication window whatever the TOTP
    // switch says: the dialog asks for the password, then the ceremony runs.
    await page.locator('.el-dialog', { hasText: 'Confirm it is you' }).waitFor()
    await page.fill('#reauth-password', userPassword)
    await page.click('[data-test=reauth-confirm]')
    await page.locator('[data-test=passkeys] .el-table__row', { hasText: 'Chromium key' }).waitFor()
    await page.locator('[data-test=passkey-add]:not(.is-loading)').waitFor()
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId })
    assert.equal(credentials.length, 1)
    assert.equal(credentials[0].isResidentCredential, true, 'a discoverable credential')
    await axe(page, 'the passkeys page')
    await shot(page, 'passkeys')
    await logout(page)
    await page.click('[data-test=passkey-signin]')
    await page.locator('[data-test=home]').waitFor()
    assert.match(await page.locator('[data-test=home]').textContent(), /pk_eve/)
    assert.deepEqual(pk.ctx.problems, [], 'the pages reported problems')
  })

  it('passkey as the second factor of a password login (TOTP on)', { timeout: 40000 }, async () => {
    await settings({ 'sys.security.totp.enabled': 'true' })
    const { page } = pk
    await logout(page)
    await login(page, 'pk_eve', origin)
    await page.locator('[data-test=passkey-step]').waitFor()
    assert.match(await page.locator('[data-test=step-hint]').textContent(), /passkey/i)
    await axe(page, 'the second-factor step with a passkey')
    await shot(page, 'login-passkey-step')
    await page.click('[data-test=passkey-step]')
    await page.locator('[data-test=home]').waitFor()
  })

  it('reauth dialog: a +R action answers 40024, the dialog opens, the action is replayed once with X-Smart-Reauth-Retried: 1', { timeout: 60000 }, async () => {
    // This session (the passkey login of the step before) has no
    // re-authentication window: removing the passkey answers 40024, the
    // dialog opens and the removal is replayed once; adding the next one
    // runs in the window that opened.
    const { page } = pk
    const removals = []
    page.on('response', async (r) => {
      if (r.request().method() === 'DELETE' && r.url().includes('/api/v1/personal/passkeys/')) {
        removals.push({ retried: r.request().headers()['x-smart-reauth-retried'] || '', status: r.status(), code: (await r.json().catch(() => ({}))).code ?? 0 })
      }
    })
    await page.goto(origin + '/personal/passkeys')
    await page.locator('[data-test=passkeys] .el-table__row', { hasText: 'Chromium key' }).locator('button').click()
    await page.locator('.el-message-box').getByRole('button', { name: 'Remove' }).click()
    const dialog = page.locator('.el-dialog', { hasText: 'Confirm it is you' })
    await dialog.waitFor()
    await axe(page, 'the re-authentication dialog')
    await shot(page, 'reauth-dialog')
    await page.fill('#reauth-password', userPassword)
    await page.click('[data-test=reauth-confirm]')
    await page.locator('[data-test=passkeys] .el-table__row').waitFor({ state: 'detached' })
    assert.deepEqual(await settled(removals, 2), [{ retried: '', status: 403, code: 40024 }, { retried: '1', status: 200, code: 0 }])
    await pk.cdp.send('WebAuthn.clearCredentials', { authenticatorId: pk.authenticatorId })
    await page.fill('#pk-name', 'Second key')
    await page.click('[data-test=passkey-add]')
    await page.locator('[data-test=passkeys] .el-table__row', { hasText: 'Second key' }).waitFor()

    // With the window still open, the signed-in user binds an
    // authenticator app beside the passkey from the personal page (the
    // password-only /mfa/bind refuses an account with a passkey, 40035).
    await page.goto(origin + '/personal/totp')
    assert.match(await page.locator('[data-test=totp-state]').textContent(), /No authenticator app/)
    await page.click('[data-test=totp-bind]')
    const seed = (await page.locator('[data-test=totp-seed]').textContent()).trim()
    await axe(page, 'the personal authenticator-app binding')
    await page.fill('#totp-code', totp(seed, nowStep()))
    await page.click('[data-test=totp-complete]')
    await page.locator('[data-test=totp-recovery-codes]').waitFor()
    assert.ok((await page.locator('[data-test=totp-recovery-codes] span').count()) >= 5, 'recovery codes shown')
    await shot(page, 'personal-totp-recovery')
    // The tab at phone width in Chinese, bound.
    await page.setViewportSize({ width: 390, height: 844 })
    await page.evaluate(() => localStorage.setItem('ak.locale', 'zh-CN'))
    await page.goto(origin + '/personal/totp')
    assert.match(await page.locator('[data-test=totp-state]').textContent(), /已绑定身份验证器/)
    await axe(page, 'the authenticator-app tab (zh-CN, 390 px)')
    await shot(page, 'personal-totp-zh-390')
    await page.evaluate(() => localStorage.setItem('ak.locale', 'en-US'))
    await page.setViewportSize({ width: 1280, height: 800 })
    // Each factor change left a security notice, unread in the header's
    // bell: passkey added, removed, added again, the app bound.
    await page.locator('[data-test=notice-badge][data-unread="4"]').waitFor()
    await done(pk.ctx)
  })

  it('/mfa/bind from the 40020 guidance, then the TOTP second-factor step', { timeout: 60000 }, async () => {
    const user = 'tf_fay' // forceTotp, created before TOTP was switched on
    const ctx = await context()
    const page = await ctx.newPage()
    await login(page, user)
    await page.locator('[data-test=mfa-bind-now]').click()
    await page.waitForURL(/\/mfa\/bind\?account=tf_fay/)
    await page.fill('#mfa-password', userPassword)
    await page.click('[data-test=mfa-start]')
    const seed = (await page.locator('[data-test=mfa-seed]').textContent()).trim()
    await axe(page, '/mfa/bind')
    await shot(page, 'mfa-bind')
    const step = nowStep()
    await page.fill('#mfa-code', totp(seed, step))
    await page.click('[data-test=mfa-complete]')
    await page.locator('[data-test=recovery-codes]').waitFor()
    assert.ok((await page.locator('[data-test=recovery-codes] span').count()) >= 5, 'recovery codes shown')
    await shot(page, 'mfa-recovery')
    // The bind spent this step's code: the login takes the next step's
    // (within the accepted skew).
    await login(page, user)
    await page.locator('#login-code').waitFor()
    assert.equal(await page.locator('[data-test=passkey-step]').count(), 0, 'no passkey offered to a user without one')
    await page.fill('#login-code', '000000')
    await page.click('[data-test=verify]')
    await page.locator('[data-test=step-error]').waitFor()
    await page.fill('#login-code', totp(seed, step + 1))
    await page.click('[data-test=verify]')
    await page.locator('[data-test=home]').waitFor()
    assert.match(await page.locator('[data-test=home]').textContent(), /tf_fay/)
    await done(ctx)
  })

  it('SMS second factor: the code from the development sender completes the login', { timeout: 40000 }, async () => {
    await settings({ 'sys.security.totp.enabled': 'false', 'sys.security.mfa.enabled': 'true' })
    const user = 'sms_gus' // with a phone, created before the SMS factor was switched on
    const ctx = await context()
    const page = await ctx.newPage()
    await login(page, user)
    await page.locator('[data-test=resend]').waitFor()
    assert.match(await page.locator('[data-test=step-hint]').textContent(), /138\*+5678/)
    await axe(page, 'the SMS step')
    await shot(page, 'login-sms-step')
    await page.fill('#login-code', smsCode('138****5678'))
    await page.click('[data-test=verify]')
    await page.locator('[data-test=home]').waitFor()
    assert.match(await page.locator('[data-test=home]').textContent(), /sms_gus/)
    await settings({ 'sys.security.mfa.enabled': 'false' })
    await done(ctx)
  })
})
