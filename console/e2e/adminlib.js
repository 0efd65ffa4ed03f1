// Helpers of the administration pages' end-to-end files (admin-*.test.js,
// issue 25): one kernel and one browser per file, the super-admin's session
// from the startup banner, a UI login, axe, screenshots, and API setup
// steps (users, roles with menu grants).
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { launch, startKernel, freePort, api, must } from './lib.js'
import { axe as axeCheck } from './lib.js'

export { api, must }
const here = path.dirname(fileURLToPath(import.meta.url))
const repo = path.join(here, '..', '..')
export const out = path.join(here, 'output')
fs.mkdirSync(out, { recursive: true })

export const userPassword = 'Chosen#Pass456'
const initialPassword = 'Init#Pass123'

/** start brings up a kernel and chromium; env.adminToken/adminPassword are the super-admin's. service: extra Service settings. */
export async function start(name, service = {}, { app = false } = {}) {
  // app: the example business application (examples/inventory: the kernel plus its module) instead of the bare kernel.
  const kernelBin = app ? process.env.AK_INVENTORY_BIN || path.join(repo, 'bin', 'inventory') : process.env.AK_KERNEL_BIN || path.join(repo, 'bin', 'adminkernel')
  if (!fs.existsSync(kernelBin)) throw new Error(`kernel binary ${kernelBin} is missing: run make test-console (it builds it)`)
  const env = { t0: Date.now(), tmpRoot: fs.mkdtempSync(path.join(os.tmpdir(), 'ak-admin-')) }
  const port = await freePort()
  env.base = 'http://127.0.0.1:' + port
  ;[env.kernel, env.browser] = await Promise.all([
    startKernel({
      bin: kernelBin, tmpRoot: env.tmpRoot, name, port,
      settings: { Service: { ...service, Http: { ListenAddress: env.base }, Security: { Password: { Pbkdf2Iterations: 100000 } } } },
    }),
    launch(),
  ])
  const log = fs.readFileSync(env.kernel.logFile, 'utf8')
  const m = log.match(/password: (\S+)/)
  if (!m) throw new Error('no generated password in the kernel log:\n' + env.kernel.logTail())
  env.adminPassword = m[1]
  let s = await must(env.base, 'POST', '/api/v1/auth/login', { account: 'superAdmin', password: env.adminPassword })
  if (s.mustChangePassword) {
    const next = 'Admin#Changed2026'
    await must(env.base, 'PUT', '/api/v1/personal/password', { oldPassword: env.adminPassword, newPassword: next }, s.accessToken)
    env.adminPassword = next
    s = await must(env.base, 'POST', '/api/v1/auth/login', { account: 'superAdmin', password: next })
  }
  env.adminToken = s.accessToken
  // Every login of the file comes from 127.0.0.1: lift the password bucket (default 60 per minute).
  await must(env.base, 'PUT', '/api/v1/sys/config/batch', [
    { configKey: 'sys.security.rateLimit.passwordPermitPerWindow', configValue: '100000' },
  ], env.adminToken)
  return env
}

export async function stop(env, file) {
  if (!env) return
  const ms = Date.now() - env.t0
  console.log(`${file}: ${ms} ms`)
  fs.writeFileSync(path.join(out, `${file}.timing.json`), JSON.stringify({ file, ms }) + '\n')
  if (env.browser) await env.browser.close()
  if (env.kernel) env.kernel.stop()
  if (env.tmpRoot && !process.env.AK_CONSOLE_KEEP) fs.rmSync(env.tmpRoot, { recursive: true, force: true })
}

/** context opens a 1280x720 browser context that fails on a CSP report or a page error. */
export async function context(env, locale = 'en-US') {
  const ctx = await env.browser.newContext({ locale, viewport: { width: 1280, height: 720 } })
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
export async function done(ctx) {
  const p = ctx.problems
  await ctx.close()
  assert.deepEqual(p, [], 'the pages reported problems')
}

/** login signs in through the login page and waits for the shell. */
export async function login(env, page, account, password) {
  await page.goto(env.base + '/login')
  await page.fill('#login-account', account)
  await page.fill('#login-password', password)
  await page.click('[data-test=submit]')
  await page.locator('[data-test=home]').waitFor()
}

/** open follows the menu entry of a seeded component to its page. */
export async function open(page, component) {
  await page.locator(`[data-test="menu-${component}"]`).click()
  await page.locator('[data-test=table]').waitFor()
  await page.locator('.el-loading-mask').waitFor({ state: 'detached' }).catch(() => {})
}

export const axe = (page, what) => axeCheck(page, what, assert)

export const shot = (page, name) => page.screenshot({ path: path.join(out, name + '.png') })

/** pick chooses an option of the open Element Plus select/tree-select dropdown. */
export async function pick(page, trigger, text) {
  await page.locator(trigger).first().click()
  const item = page.locator('.el-select-dropdown:visible').locator('.el-select-dropdown__item, .el-tree-node__content').filter({ hasText: text }).first()
  await item.click()
}

/** confirm accepts the open confirmation box. */
export async function confirm(page) {
  await page.locator('.el-message-box').getByRole('button', { name: /Confirm|确定/ }).click()
  await page.locator('.el-message-box').waitFor({ state: 'hidden' })
}

/** role adds a role granted menuIds; returns its id. */
export async function role(env, code, menuIds, extra = {}) {
  const id = await must(env.base, 'POST', '/api/v1/sys/role/add', { name: code, code, isDelegatable: true, ...extra }, env.adminToken)
  if (menuIds.length) await must(env.base, 'PUT', '/api/v1/sys/role/menu', { roleId: id, menuIds }, env.adminToken)
  return Number(id)
}

/** user adds a user with roleIds and sets their own password; returns their API token. */
export async function user(env, account, roleIds = [], extra = {}) {
  await must(env.base, 'POST', '/api/v1/sys/user', { account, name: account, password: initialPassword, roleIds, ...extra }, env.adminToken)
  const first = await must(env.base, 'POST', '/api/v1/auth/login', { account, password: initialPassword })
  await must(env.base, 'PUT', '/api/v1/personal/password', { oldPassword: initialPassword, newPassword: userPassword }, first.accessToken)
  return (await must(env.base, 'POST', '/api/v1/auth/login', { account, password: userPassword })).accessToken
}
