// The forced password change in the console: a user the administrator
// created (or whose password the administrator reset) must change the
// password before anything else, and the kernel answers 403 / 40028 to
// every call but the change, the profile, the password policy and the
// logout. The console must show the change form right after the sign-in
// (not "The server cannot be reached"), then the shell once changed, in
// both languages and at 390 px, axe clean.
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { start, stop, context, done, axe, shot, must, api } from './adminlib.js'

let env
const temp = 'Temp#Start2026'
const chosen = 'Chosen#Pass2027'

before(async () => {
  env = await start('password-change')
  await must(env.base, 'PUT', '/api/v1/sys/config/batch', [
    { configKey: 'sys.security.rateLimit.authPermitPerWindow', configValue: '100000' },
    { configKey: 'sys.security.rateLimit.passwordPermitPerWindow', configValue: '100000' },
    { configKey: 'sys.security.rateLimit.permitPerWindow', configValue: '1000000' },
  ], env.adminToken)
})
after(() => stop(env, 'password-change'))

/** created adds a user through the API as the super-admin; returns its id. */
async function created(account) {
  const out = await must(env.base, 'POST', '/api/v1/sys/user', { account, name: account, password: temp, roleIds: [] }, env.adminToken)
  assert.equal(out.initialPassword, temp)
  return Number(out.id)
}

/** signIn signs in on the login page (no wait for the shell). */
async function signIn(page, account, password) {
  await page.goto(env.base + '/login')
  await page.fill('#login-account', account)
  await page.fill('#login-password', password)
  await page.click('[data-test=submit]')
}

/** bootErrors counts the boot-error pages the page went through. */
function watchBootError(page) {
  const seen = { bootError: 0 }
  page.on('framenavigated', (f) => {
    if (f === page.mainFrame() && new URL(f.url()).pathname === '/boot-error') seen.bootError++
  })
  return seen
}

/** changeForm waits for the forced change form and checks what it shows. */
async function changeForm(page, { policy, title }) {
  // The form, or the boot error the console showed before it tolerated 40028.
  await page.locator('[data-test=pw-change-form], [data-test=boot-error], .el-result').first().waitFor()
  assert.notEqual(new URL(page.url()).pathname, '/boot-error', 'the console shows "The server cannot be reached" instead of the change form')
  await page.locator('[data-test=pw-change-form]').waitFor()
  assert.match(await page.locator('[data-test=pw-change-title]').textContent(), title)
  assert.match(await page.locator('[data-test=pw-policy]').textContent(), policy)
}

async function change(page, old, next) {
  await page.fill('#pwc-old', old)
  await page.fill('#pwc-new', next)
  await page.fill('#pwc-again', next)
  await page.click('[data-test=pwc-submit]')
}

describe('forced password change (40028)', { concurrency: 1 }, () => {
  it('an admin-created user: the change form after sign-in, then the shell, and after a reload', { timeout: 90000 }, async () => {
    const account = 'newcomer'
    await created(account)
    // The kernel's side: such a session may only change the password.
    const s = await must(env.base, 'POST', '/api/v1/auth/login', { account, password: temp })
    assert.equal(s.mustChangePassword, true)
    const refused = await api(env.base, 'GET', '/api/v1/personal/modules', undefined, s.accessToken)
    assert.equal(refused.http, 403)
    assert.equal(refused.code, 40028)
    await must(env.base, 'POST', '/api/v1/auth/logout', undefined, s.accessToken)

    const ctx = await context(env, 'en-US')
    const page = await ctx.newPage()
    const seen = watchBootError(page)
    await signIn(page, account, temp)
    await changeForm(page, { title: /change your password/i, policy: /At least 8 characters.*upper-case.*lower-case.*digit/ })
    await shot(page, 'password-change')
    await axe(page, 'the forced password change form')

    // A reload keeps the form (the boot tolerates 40028).
    await page.reload()
    await changeForm(page, { title: /change your password/i, policy: /At least 8 characters/ })
    // Any other page leads back to the form.
    await page.goto(env.base + '/system/user')
    await changeForm(page, { title: /change your password/i, policy: /At least 8 characters/ })

    // The kernel's 42019 text (the policy's figures) for a weak password.
    await change(page, temp, 'weakpass')
    await page.locator('[data-test=pwc-error]').waitFor()
    assert.match(await page.locator('[data-test=pwc-error]').textContent(), /too weak.*8/i)
    // Two different new passwords are refused before any call.
    await page.fill('#pwc-old', temp)
    await page.fill('#pwc-new', chosen)
    await page.fill('#pwc-again', chosen + 'x')
    await page.click('[data-test=pwc-submit]')
    await page.locator('[data-test=pwc-error]', { hasText: /differ/ }).waitFor()
    // A wrong current password: the kernel's text.
    await change(page, 'Wrong#Pass0000', chosen)
    await page.locator('[data-test=pwc-error]', { hasText: /password/i }).waitFor()
    await axe(page, 'the change form showing an error')

    await change(page, temp, chosen)
    // The shell, on the page asked for before the form.
    await page.locator('[data-test=user-menu]').waitFor()
    assert.equal(new URL(page.url()).pathname, '/system/user')
    await page.locator('.ak-aside').getByText('Home').click()
    await page.locator('[data-test=home]').waitFor()
    assert.match(await page.locator('[data-test=home]').textContent(), new RegExp(account))
    await page.reload()
    await page.locator('[data-test=home]').waitFor()
    assert.equal(await page.locator('[data-test=pw-change-form]').count(), 0)
    await shot(page, 'password-change-done')
    assert.equal(seen.bootError, 0, 'the console went through /boot-error')

    // The kernel's side: the new password holds, without the flag.
    const after = await must(env.base, 'POST', '/api/v1/auth/login', { account, password: chosen })
    assert.equal(after.mustChangePassword, false)
    await done(ctx)
  })

  it('an admin reset: the session ends, the next sign-in shows the form, then the shell', { timeout: 90000 }, async () => {
    const account = 'resetme'
    const id = await created(account)
    const first = await must(env.base, 'POST', '/api/v1/auth/login', { account, password: temp })
    await must(env.base, 'PUT', '/api/v1/personal/password', { oldPassword: temp, newPassword: chosen }, first.accessToken)

    const ctx = await context(env, 'en-US')
    const page = await ctx.newPage()
    const seen = watchBootError(page)
    await signIn(page, account, chosen)
    await page.locator('[data-test=home]').waitFor()

    const reset = 'Reset#ByAdmin2028'
    assert.equal(await must(env.base, 'PUT', `/api/v1/sys/user/${id}/password`, { newPassword: reset }, env.adminToken), reset)
    // The reset ended the browser's session: back to the sign-in.
    await page.reload()
    await page.waitForURL(/\/login/)
    await signIn(page, account, reset)
    await changeForm(page, { title: /change your password/i, policy: /At least 8 characters/ })
    // With a password history the kernel refuses the same password (42025): its text.
    await must(env.base, 'PUT', '/api/v1/sys/config/batch', [{ configKey: 'sys.security.password.historyCount', configValue: '1' }], env.adminToken)
    await change(page, reset, reset)
    await page.locator('[data-test=pwc-error]', { hasText: /must not be the same/ }).waitFor()
    await change(page, reset, 'Again#Chosen2029')
    await page.locator('[data-test=home]').waitFor()
    await page.reload()
    await page.locator('[data-test=home]').waitFor()
    assert.equal(seen.bootError, 0, 'the console went through /boot-error')
    await done(ctx)
  })

  it('in Chinese at 390 px: the form fits, axe clean; sign out from the form', { timeout: 90000 }, async () => {
    const account = 'xiaoming'
    await created(account)
    const ctx = await env.browser.newContext({ locale: 'zh-CN', viewport: { width: 390, height: 844 } })
    ctx.setDefaultTimeout(15000)
    ctx.problems = []
    const page = await ctx.newPage()
    page.on('pageerror', (e) => ctx.problems.push('page error: ' + e.message))
    await signIn(page, account, temp)
    await changeForm(page, { title: /修改密码/, policy: /至少 8 个字符.*大写字母.*小写字母.*数字/ })
    // Nothing wider than the screen.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)
    assert.ok(overflow <= 0, `the page is ${overflow} px wider than the 390 px screen`)
    const box = await page.locator('[data-test=pwc-submit]').boundingBox()
    assert.ok(box && box.x >= 0 && box.x + box.width <= 390, `the submit button is off screen: ${JSON.stringify(box)}`)
    await shot(page, 'password-change-zh-390')
    await axe(page, 'the forced password change form in Chinese at 390 px')
    await change(page, temp, 'weakpass')
    await page.locator('[data-test=pwc-error]').waitFor()
    assert.match(await page.locator('[data-test=pwc-error]').textContent(), /[\u4e00-\u9fff]/)
    await shot(page, 'password-change-zh-390-error')

    // Sign out instead: back to the sign-in page, the session gone.
    await page.click('[data-test=pwc-logout]')
    await page.waitForURL(/\/login/)
    await page.goto(env.base + '/')
    await page.waitForURL(/\/login/)
    await done(ctx)
  })
})
