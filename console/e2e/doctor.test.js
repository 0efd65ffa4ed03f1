// The provider setup doctor in Chromium (issue 29 item 6): the super-admin
// opens the providers page, presses "Check setup" on a good OIDC provider
// (every check passes; the redirect URI and trusted domain to register are
// shown) and on one whose Authority names the issuer by another host name
// (the issuer check fails with its hint); axe finds nothing serious in the
// dialog and the client secret appears nowhere on the page.
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'
import { launch, startIssuer, startKernel, freePort, settle } from './lib.js'

const require = createRequire(import.meta.url)
const axeSource = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8') + ';0'

const here = path.dirname(fileURLToPath(import.meta.url))
const repo = path.join(here, '..', '..')
const kernelBin = process.env.AK_KERNEL_BIN || path.join(repo, 'bin', 'adminkernel')
const issuerBin = process.env.AK_ISSUER_BIN || path.join(repo, 'bin', 'testissuer')

let issuer, kernel, base, browser, adminPassword, tmpRoot

before(async () => {
  for (const [what, p] of [['kernel binary', kernelBin], ['testissuer binary', issuerBin]]) {
    if (!fs.existsSync(p)) throw new Error(`${what} ${p} is missing: run make test-console (it builds both)`)
  }
  tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'ak-doctor-'))
  issuer = await startIssuer(issuerBin)
  const port = await freePort()
  base = 'http://127.0.0.1:' + port
  ;[kernel, browser] = await Promise.all([
    startKernel({
      bin: kernelBin, tmpRoot, name: 'doctor', port,
      settings: {
        Service: {
          Http: { ListenAddress: base },
          Security: { Password: { Pbkdf2Iterations: 100000 } },
          ExternalAuth: {
            CallbackBaseUrl: base,
            Oidc: [
              { Code: 'oidc', DisplayName: 'Test SSO', Authority: issuer.url, ClientId: issuer.clientId, ClientSecret: issuer.clientSecret },
              { Code: 'wrong_iss', DisplayName: 'Wrong issuer', Authority: issuer.url.replace('127.0.0.1', 'localhost'), ClientId: issuer.clientId, ClientSecret: issuer.clientSecret },
            ],
          },
        },
      },
    }),
    launch(),
  ])
  const m = fs.readFileSync(kernel.logFile, 'utf8').match(/password: (\S+)/)
  if (!m) throw new Error('no generated password in the kernel log:\n' + kernel.logTail())
  adminPassword = m[1]
})

after(async () => {
  if (browser) await browser.close()
  if (kernel) kernel.stop()
  if (issuer) issuer.stop()
  if (tmpRoot) fs.rmSync(tmpRoot, { recursive: true, force: true })
})

describe('provider setup doctor (issue 29)', { concurrency: 1 }, () => {
  it('Check setup shows every check, the values to register, and a failing issuer with its hint', { timeout: 60000 }, async () => {
    const ctx = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 800 } })
    ctx.setDefaultTimeout(15000)
    const problems = []
    const page = await ctx.newPage()
    page.on('pageerror', (e) => problems.push('page error: ' + e.message))
    page.on('console', (m) => { if (/Content Security Policy|Refused to/i.test(m.text())) problems.push('CSP: ' + m.text()) })
    await page.goto(base + '/login')
    await page.fill('#login-account', 'superAdmin')
    await page.fill('#login-password', adminPassword)
    await page.click('[data-test=submit]')
    await page.locator('[data-test=home]').waitFor()
    await page.click('[data-test="menu-system/config/index"]')
    // The providers are the config center's "External login" tab.
    await page.click('#tab-externalauth')
    await page.locator('[data-test=doctor-oidc]').waitFor()

    await page.click('[data-test=doctor-oidc]')
    const dialog = page.locator('[data-test=doctor-dialog]')
    await dialog.locator('[data-test=doctor-summary]').waitFor()
    assert.match(await dialog.locator('[data-test=doctor-summary]').textContent(), /Every check passed/)
    assert.equal(await dialog.locator('[data-test=doctor-redirect]').textContent(), base + '/api/v1/auth/external/oidc/callback')
    assert.equal(await dialog.locator('[data-test=doctor-domain]').textContent(), base.replace('http://', ''))
    for (const name of ['status', 'settings', 'discovery', 'issuer', 'jwks', 'redirect']) {
      assert.match(await dialog.locator(`[data-test=doctor-result-${name}]`).textContent(), /OK/, name)
    }
    assert.match(await dialog.locator('[data-test=doctor-message-jwks]').textContent(), /holds 1 key/)
    // axe on the dialog itself (the page behind it is dimmed by the modal
    // mask, which axe measures as low contrast).
    await settle(page)
    await page.evaluate(axeSource)
    const bad = await page.evaluate(async () => {
      const r = await window.axe.run(document.querySelector('[data-test=doctor-dialog]').closest('.el-overlay-dialog') ?? document, { resultTypes: ['violations'] })
      return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.map((n) => n.html.slice(0, 120)).join(', ')}`)
    })
    assert.deepEqual(bad, [], 'axe on the doctor dialog')
    assert.ok(!(await page.content()).includes(issuer.clientSecret), 'the page shows the client secret')
    await page.screenshot({ path: path.join(here, 'output', 'doctor.png') }).catch(() => {})
    await dialog.getByRole('button', { name: 'Close', exact: true }).click()
    await dialog.waitFor({ state: 'hidden' })

    await page.click('[data-test=doctor-wrong_iss]')
    const d2 = page.locator('[data-test=doctor-dialog]')
    await d2.locator('[data-test=doctor-summary]').waitFor()
    assert.match(await d2.locator('[data-test=doctor-summary]').textContent(), /Some checks failed/)
    assert.match(await d2.locator('[data-test=doctor-result-issuer]').textContent(), /Failed/)
    const msg = await d2.locator('[data-test=doctor-message-issuer]').textContent()
    assert.match(msg, new RegExp('names the issuer ' + issuer.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    assert.match(await d2.textContent(), /Set Authority to exactly the issuer/, 'the hint is shown')
    assert.ok(!(await page.content()).includes(issuer.clientSecret), 'the page shows the client secret')
    await ctx.close()
    assert.deepEqual(problems, [])
  })
})
