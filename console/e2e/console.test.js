// The console's end-to-end suite (issue 20): Debian chromium driven by
// playwright-core against the kernel binary (which serves the embedded
// console itself) and the test OpenID provider process. `make
// test-console` builds both binaries and runs it. Screenshots go to
// e2e/output/ (CI artifacts); the budgets measured are printed and written
// to e2e/output/budgets.json.
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import zlib from 'node:zlib'
import { fileURLToPath } from 'node:url'
import { launch, startIssuer, startKernel, freePort, api, must } from './lib.js'
import { axe as axeCheck } from './lib.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const repo = path.join(here, '..', '..')
const kernelBin = process.env.AK_KERNEL_BIN || path.join(repo, 'bin', 'adminkernel')
const issuerBin = process.env.AK_ISSUER_BIN || path.join(repo, 'bin', 'testissuer')
const out = path.join(here, 'output')
fs.mkdirSync(out, { recursive: true })

const userPassword = 'Chosen#Pass456'
const initialPassword = 'Init#Pass123'
const provider = 'oidc'

let issuer, kernel, base, browser, adminToken, adminPassword, tmpRoot
const budgets = {}

// generatedPassword reads the super-admin's password from the kernel's
// startup banner (its log), as an operator does.
function generatedPassword(k) {
  const log = fs.readFileSync(k.logFile, 'utf8')
  const m = log.match(/password: (\S+)/)
  if (!m) throw new Error('no generated password in the kernel log:\n' + k.logTail())
  return m[1]
}

before(async () => {
  for (const [what, p] of [['kernel binary', kernelBin], ['testissuer binary', issuerBin]]) {
    if (!fs.existsSync(p)) throw new Error(`${what} ${p} is missing: run make test-console (it builds both)`)
  }
  tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'ak-console-'))
  issuer = await startIssuer(issuerBin)
  const port = await freePort()
  base = 'http://127.0.0.1:' + port
  ;[kernel, browser] = await Promise.all([
    startKernel({
      bin: kernelBin, tmpRoot, name: 'console', port,
      settings: {
        Service: {
          Http: { ListenAddress: base },
          Security: { Password: { Pbkdf2Iterations: 100000 } },
          ExternalAuth: {
            CallbackBaseUrl: base,
            Oidc: [{ Code: provider, DisplayName: 'Test SSO', Authority: issuer.url, ClientId: issuer.clientId, ClientSecret: issuer.clientSecret, AccountClaim: 'preferred_username' }],
          },
        },
      },
    }),
    launch(),
  ])
  adminPassword = generatedPassword(kernel)
})

after(async () => {
  fs.writeFileSync(path.join(out, 'budgets.json'), JSON.stringify(budgets, null, 2) + '\n')
  console.log('budgets', JSON.stringify(budgets))
  if (browser) await browser.close()
  if (kernel) kernel.stop()
  if (issuer) issuer.stop()
  if (tmpRoot && !process.env.AK_CONSOLE_KEEP) fs.rmSync(tmpRoot, { recursive: true, force: true })
})

// context opens a browser context that fails the scenario on a CSP
// violation or an uncaught page error.
async function context() {
  const ctx = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 800 } })
  ctx.setDefaultTimeout(15000)
  ctx.problems = []
  ctx.on('page', (p) => watch(ctx, p))
  return ctx
}
function watch(ctx, page) {
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) ctx.problems.push('CSP: ' + m.text())
  })
  page.on('pageerror', (e) => ctx.problems.push('page error: ' + e.message))
}
async function done(ctx) {
  const p = ctx.problems
  await ctx.close()
  assert.deepEqual(p, [], 'the pages reported problems')
}

async function createUser(account, password = userPassword) {
  await must(base, 'POST', '/api/v1/sys/user', { account, name: account, password: initialPassword }, adminToken)
  const first = await must(base, 'POST', '/api/v1/auth/login', { account, password: initialPassword })
  await must(base, 'PUT', '/api/v1/personal/password', { oldPassword: initialPassword, newPassword: password }, first.accessToken)
  return account
}

async function login(page, account, password = userPassword) {
  await page.goto(base + '/login')
  await page.fill('#login-account', account)
  await page.fill('#login-password', password)
  await page.click('[data-test=submit]')
}

const axe = (page, what) => axeCheck(page, what, assert)

const shot = (page, name) => page.screenshot({ path: path.join(out, name + '.png') })

describe('console (issue 20)', { concurrency: 1 }, () => {
  it('first login with the generated password; budgets, axe and the shell', { timeout: 60000 }, async () => {
    const ctx = await context()
    const page = await ctx.newPage()
    watch(ctx, page)
    const scripts = []
    page.on('response', async (r) => {
      if (r.request().resourceType() === 'script') scripts.push(r.body().then((b) => zlib.gzipSync(b, { level: 9 }).length))
    })
    const t0 = Date.now()
    await page.goto(base + '/')
    await page.waitForURL(/\/login$/)
    await page.locator('[data-test=submit]').waitFor({ state: 'visible' })
    await page.locator('#login-account').fill('x') // interactive: it takes input
    budgets.loginInteractiveMs = await page.evaluate(() => Math.round(performance.getEntriesByName('ak-login-interactive')[0].startTime))
    budgets.loginInteractiveSeenByTestMs = Date.now() - t0
    budgets.loginInitialJsGzipBytes = (await Promise.all(scripts)).reduce((a, b) => a + b, 0)
    page.removeAllListeners('response')
    await page.reload()
    await page.locator('#login-account').fill('x')
    budgets.loginInteractiveCachedMs = await page.evaluate(() => Math.round(performance.getEntriesByName('ak-login-interactive')[0].startTime))
    budgets.distBytes = fs.readdirSync(path.join(here, '..', 'dist', 'assets')).reduce((a, f) => a + fs.statSync(path.join(here, '..', 'dist', 'assets', f)).size, 0)
    assert.ok(budgets.loginInitialJsGzipBytes <= 250 * 1024, `login page JS ${budgets.loginInitialJsGzipBytes} B gzip > 250 KB`)
    // the time is measured and written to budgets.json, not asserted: a wall-clock
    // limit in a test fails on a loaded machine (the target lives in docs/design/benchmarks.md)
    assert.ok(budgets.loginInteractiveMs > 0, 'the login page recorded its interactive mark')
    await page.locator('#login-account').fill('')
    await page.locator('.ak-sso [data-test=sso-oidc]').waitFor()
    await shot(page, 'login')
    budgets.axeLoginOther = await axe(page, 'the login page')

    // A wrong password shows the kernel's text for its msgKey.
    await login(page, 'superAdmin', 'wrong-password')
    await page.locator('[data-test=login-error]').waitFor()
    assert.match(await page.locator('[data-test=login-error]').textContent(), /password/i)

    await login(page, 'superAdmin', adminPassword)
    await page.waitForURL((u) => !u.pathname.startsWith('/login'))
    if (page.url().includes('/personal/password')) {
      // Forced change: the kernel asks for a new password first.
      adminPassword = 'Admin#Changed2026'
      await page.fill('#pw-old', generatedPassword(kernel))
      await page.fill('#pw-new', adminPassword)
      await page.fill('#pw-again', adminPassword)
      await page.click('[data-test=pw-submit]')
      await page.waitForURL(/\/login/)
      await login(page, 'superAdmin', adminPassword)
    }
    await page.locator('[data-test=home]').waitFor()
    assert.match(await page.locator('[data-test=home]').textContent(), /superAdmin/)
    // The dynamic menu shows only pages the console has: the config page.
    await page.locator('[data-test="menu-system/config/index"]').waitFor()
    // Every menu entry shown names a component pages.ts maps (no placeholder).
    const mapped = new Set([...fs.readFileSync(path.join(here, '..', 'src', 'pages.ts'), 'utf8').matchAll(/^\s*'([\w/-]+)': \{ path:/gm)].map((m) => m[1]))
    const shown = await page.locator('[data-test^="menu-"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-test').slice(5)))
    assert.deepEqual(shown.filter((c) => c !== 'personal' && !mapped.has(c)), [], 'a menu page without a console page is shown')
    await shot(page, 'shell')
    budgets.axeShellOther = await axe(page, 'the shell')

    const admin = await must(base, 'POST', '/api/v1/auth/login', { account: 'superAdmin', password: adminPassword })
    adminToken = admin.accessToken
    await must(base, 'PUT', '/api/v1/sys/config/batch', [
      { configKey: 'sys.security.rateLimit.authPermitPerWindow', configValue: '100000' },
      { configKey: 'sys.security.rateLimit.passwordPermitPerWindow', configValue: '100000' },
      { configKey: 'sys.security.rateLimit.permitPerWindow', configValue: '1000000' },
    ], adminToken)
    await done(ctx)
  })

  it('language switch: the login page in Chinese, kept across a reload', { timeout: 30000 }, async () => {
    const ctx = await context()
    const page = await ctx.newPage()
    await page.goto(base + '/login')
    assert.equal((await page.locator('#login-title').textContent()).trim().length > 0, true)
    await page.click('[data-test=lang]')
    await page.click('[data-test="lang-zh-CN"]')
    await page.locator('[data-test=submit]', { hasText: '登录' }).waitFor()
    await page.reload()
    await page.locator('[data-test=submit]', { hasText: '登录' }).waitFor()
    assert.equal(await page.evaluate(() => document.documentElement.lang), 'zh-CN')
    // Error texts follow: the kernel's zh-CN pack.
    await page.fill('#login-account', 'nobody')
    await page.fill('#login-password', 'nothing-at-all')
    await page.click('[data-test=submit]')
    await page.locator('[data-test=login-error]').waitFor()
    assert.match(await page.locator('[data-test=login-error]').textContent(), /[\u4e00-\u9fff]/)
    await shot(page, 'login-zh')
    await done(ctx)
  })

  it('SSO login through the test issuer ends in the shell', { timeout: 30000 }, async () => {
    const user = await createUser('sso_ann')
    await must(base, 'PUT', '/api/v1/sys/config/batch', [{ configKey: `sys.externalauth.${provider}.linkByAccount`, configValue: 'true' }], adminToken).catch(async () => {
      await must(base, 'POST', '/api/v1/sys/config', { configKey: `sys.externalauth.${provider}.linkByAccount`, configValue: 'true', name: 'link', groupCode: 'externalauth' }, adminToken)
    })
    const ctx = await context()
    await ctx.addCookies([{ name: 'oidctest_login', value: user, url: issuer.url }])
    const page = await ctx.newPage()
    await page.goto(base + '/login')
    await page.click('[data-test=sso-oidc]')
    await page.locator('[data-test=home]').waitFor()
    assert.equal(new URL(page.url()).search, '', 'a one-time value stayed in the address')
    assert.match(await page.locator('[data-test=home]').textContent(), /sso_ann/)
    await done(ctx)
  })

  it('pending link: the notice, a password login, then Bind', { timeout: 30000 }, async () => {
    await must(base, 'PUT', '/api/v1/sys/config/batch', [{ configKey: `sys.externalauth.${provider}.linkByAccount`, configValue: 'false' }], adminToken)
    const user = await createUser('pl_bob')
    const ctx = await context()
    await ctx.addCookies([{ name: 'oidctest_login', value: 'idp_bob', url: issuer.url }])
    const page = await ctx.newPage()
    await page.goto(base + '/login')
    await page.click('[data-test=sso-oidc]')
    await page.locator('[data-test=pending-notice]').waitFor()
    assert.equal(await page.inputValue('#login-password'), '', 'the password is prefilled')
    await shot(page, 'pending-link')
    await page.fill('#login-account', user)
    await page.fill('#login-password', userPassword)
    await page.click('[data-test=submit]')
    await page.locator('.el-message-box').getByRole('button', { name: 'Bind' }).click()
    await page.locator('[data-test=home]').waitFor()
    const tok = (await must(base, 'POST', '/api/v1/auth/login', { account: user, password: userPassword })).accessToken
    const bindings = await must(base, 'GET', '/api/v1/auth/external/bindings', undefined, tok)
    assert.deepEqual(bindings.map((b) => b.provider), [provider])
    // The bindings page shows it; the next SSO login as idp_bob is pl_bob.
    await page.goto(base + '/personal/bindings')
    await page.locator(`[data-test=unbind-${provider}]`).waitFor()
    await shot(page, 'bindings')
    await done(ctx)
  })

  it('end a session from the personal page: the other context is logged out', { timeout: 40000 }, async () => {
    const user = await createUser('ses_cy')
    const a = await context()
    const b = await context()
    const pa = await a.newPage()
    const pb = await b.newPage()
    await login(pb, user)
    await pb.locator('[data-test=home]').waitFor()
    await login(pa, user)
    await pa.locator('[data-test=home]').waitFor()
    await pa.goto(base + '/personal/sessions')
    await pa.locator('[data-test=end-session]').first().waitFor()
    // The other sessions: context b's, and the API login of createUser.
    const others = await pa.locator('[data-test=end-session]').count()
    assert.ok(others >= 1, 'no other session listed')
    await shot(pa, 'sessions')
    for (let n = others; n > 0; n--) {
      await pa.locator('[data-test=end-session]').first().click()
      await pa.waitForFunction((want) => document.querySelectorAll('[data-test=end-session]').length === want, n - 1)
    }
    await pb.goto(base + '/personal/profile')
    await pb.waitForURL(/\/login/)
    await pa.goto(base + '/')
    await pa.locator('[data-test=home]').waitFor() // this one lives on
    await done(a)
    await done(b)
  })

  it('a provider switched off on the providers page is gone from the login page on the next load', { timeout: 40000 }, async () => {
    const ctx = await context()
    const page = await ctx.newPage()
    await login(page, 'superAdmin', adminPassword)
    await page.locator('[data-test=home]').waitFor()
    await page.click('[data-test="menu-system/config/index"]')
    // The providers page is the config center's "External login" tab.
    await page.click('#tab-externalauth')
    await page.locator(`[data-test=provider-${provider}]`).waitFor()
    assert.match(await page.locator(`[data-test=status-${provider}]`).textContent(), /Ready/)
    await shot(page, 'providers')
    await page.click(`[data-test=enabled-${provider}]`)
    await page.click(`[data-test=save-${provider}]`)
    await page.locator('.el-message--success').waitFor()
    const anon = await context()
    const login2 = await anon.newPage()
    await login2.goto(base + '/login')
    await login2.locator('[data-test=submit]').waitFor()
    await login2.waitForLoadState('networkidle')
    assert.equal(await login2.locator('[data-test=sso-oidc]').count(), 0, 'the switched-off provider is still offered')
    assert.equal((await api(base, 'GET', '/api/v1/auth/external/providers')).data.length, 0)
    await done(anon)
    await done(ctx)
  })
})
