'use strict';
// Passkeys in real Chromium (issue 19 item 4): a kernel whose relying party
// is localhost (a secure context over http), the test app served from
// http://localhost:P with /api proxied to the kernel, and Chromium's
// virtual authenticators (CDP WebAuthn.enable + addVirtualAuthenticator
// through playwright-core's CDP session) answering navigator.credentials.
// The scenarios run in order on one kernel and one user: register, second
// factor, passwordless login, a cloned authenticator (an exported copy of
// the credential with the old sign counter, re-added to a second
// authenticator in another context) refused, a removed passkey refused.
const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { api, userPassword } = require('./lib/deploy');
const { launch, Recorder } = require('./lib/browser');
const { freePort, startKernel } = require('./lib/procs');
const { startAppServer } = require('./lib/appserver');

const repo = path.join(__dirname, '..', '..');
const kernelBin = process.env.AK_KERNEL_BIN || path.join(repo, 'bin', 'adminkernel');
const adminPassword = 'Seed#Admin2026!';
const initialPassword = 'Init#Pass123';
const account = 'pk_ann';

let browser;
let kernel;
let app;
let tmpRoot;
let origin;
let adminToken;
// The first context: its virtual authenticator holds the passkey.
let first;
// exported is the credential as WebAuthn.getCredentials gave it right
// after the registration (its sign counter before any login).
let exported;
let passkeyId;

async function must(method, p, body, token) {
  const r = await api(kernel, method, p, body, token);
  if (r.code !== 0) throw new Error(`${method} ${p} = HTTP ${r.http} code ${r.code} ${r.msgKey}: ${JSON.stringify(r.args || r.data)}`);
  return r.data;
}

// settings writes sys_config values as the super-admin (re-authenticated
// first: with TOTP on, config writes are +R).
async function settings(pairs) {
  await must('POST', '/api/v1/auth/reauth', { method: 'password', password: adminPassword }, adminToken);
  await must('PUT', '/api/v1/sys/config/batch',
    Object.entries(pairs).map(([configKey, configValue]) => ({ configKey, configValue })), adminToken);
}

before(async () => {
  if (!fs.existsSync(kernelBin)) throw new Error(`kernel binary ${kernelBin} is missing: run make test-browser`);
  tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'ak-passkey-'));
  const [kernelPort, appPort] = [await freePort(), await freePort()];
  origin = `http://localhost:${appPort}`;
  kernel = await startKernel({
    bin: kernelBin, tmpRoot, name: 'passkey', port: kernelPort,
    settings: {
      Service: {
        Http: { ListenAddress: 'http://127.0.0.1:' + kernelPort },
        Seed: { AdminPassword: adminPassword },
        Security: {
          Password: { Pbkdf2Iterations: 100000 },
          Passkey: { RpId: 'localhost', RpDisplayName: 'Passkey suite', Origins: [origin] },
        },
      },
    },
  });
  app = await startAppServer({ port: appPort, config: { apiBase: '', challenge: false, provider: 'oidc' }, proxyTo: kernel.base });
  browser = await launch();
  adminToken = (await must('POST', '/api/v1/auth/login', { account: 'superAdmin', password: adminPassword })).accessToken;
  await settings({
    'sys.security.rateLimit.authPermitPerWindow': '100000',
    'sys.security.rateLimit.passwordPermitPerWindow': '100000',
    'sys.security.rateLimit.permitPerWindow': '1000000',
  });
  await must('POST', '/api/v1/sys/user', { account, name: account, password: initialPassword }, adminToken);
  const t = await must('POST', '/api/v1/auth/login', { account, password: initialPassword });
  await must('PUT', '/api/v1/personal/password', { oldPassword: initialPassword, newPassword: userPassword }, t.accessToken);
});

after(async () => {
  if (first) await first.ctx.close().catch(() => {});
  if (browser) await browser.close();
  if (app) app.close();
  if (kernel) kernel.stop();
  if (tmpRoot && !process.env.AK_BROWSER_KEEP) fs.rmSync(tmpRoot, { recursive: true, force: true });
});

// device opens a context and page on the app with a virtual platform
// authenticator (resident keys, user verification, presence simulated).
async function device() {
  const ctx = await browser.newContext();
  ctx.setDefaultTimeout(15000);
  const rec = new Recorder(ctx);
  const page = await ctx.newPage();
  await page.goto(origin + '/');
  const cdp = await ctx.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true,
      isUserVerified: true, automaticPresenceSimulation: true,
    },
  });
  return { ctx, rec, page, cdp, authenticatorId };
}

// call is fetch from the page (same origin: the proxy forwards /api).
function call(page, method, p, body, token) {
  return page.evaluate(async ({ method, p, body, token }) => {
    const headers = { Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (token) headers.Authorization = 'Bearer ' + token;
    const r = await fetch(p, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await r.text();
    let env = {};
    try { env = JSON.parse(text); } catch { env = { code: -r.status, raw: text }; }
    return { http: r.status, ...env };
  }, { method, p, body, token });
}

async function pageMust(page, method, p, body, token) {
  const r = await call(page, method, p, body, token);
  if (r.code !== 0) throw new Error(`${method} ${p} = HTTP ${r.http} code ${r.code} ${r.msgKey}: ${JSON.stringify(r.args || r.data)}`);
  return r.data;
}

// create and get run the WebAuthn ceremony in the page with the options
// the kernel handed out (their JSON form) and return the credential JSON.
function create(page, options) {
  return page.evaluate(async (o) => {
    const publicKey = PublicKeyCredential.parseCreationOptionsFromJSON(o);
    const c = await navigator.credentials.create({ publicKey });
    return c.toJSON();
  }, options);
}
function get(page, options) {
  return page.evaluate(async (o) => {
    const publicKey = PublicKeyCredential.parseRequestOptionsFromJSON(o);
    const c = await navigator.credentials.get({ publicKey });
    return c.toJSON();
  }, options);
}

async function passwordless(page) {
  const b = await pageMust(page, 'POST', '/api/v1/auth/passkey/passwordless/begin');
  assert.deepEqual(b.options.allowCredentials || [], [], 'passwordless options name no credential');
  const credential = await get(page, b.options);
  return call(page, 'POST', '/api/v1/auth/passkey/passwordless/finish', { ceremonyId: b.ceremonyId, credential });
}

// step runs one scenario with the first device's recording on failure.
function step(name, fn) {
  it(name, { timeout: 60000 }, async () => {
    try {
      await fn();
    } catch (err) {
      err.message += `\n--- ${name} (${origin})\n${first ? await first.rec.report() : ''}\nkernel log (last lines):\n${kernel.logTail(20)}`;
      throw err;
    }
  });
}

describe('passkeys in Chromium (issue 19)', { concurrency: 1 }, () => {
  step('register a passkey from the personal page', async () => {
    first = await device();
    const { page, cdp, authenticatorId } = first;
    const login = await pageMust(page, 'POST', '/api/v1/auth/login', { account, password: userPassword });
    // Adding a factor needs an open re-authentication window.
    await pageMust(page, 'POST', '/api/v1/auth/reauth', { method: 'password', password: userPassword }, login.accessToken);
    const b = await pageMust(page, 'POST', '/api/v1/personal/passkeys/register/begin', undefined, login.accessToken);
    assert.equal(b.options.rp.id, 'localhost');
    assert.equal(b.options.authenticatorSelection.residentKey, 'required');
    assert.equal(b.options.authenticatorSelection.userVerification, 'required');
    const credential = await create(page, b.options);
    const item = await pageMust(page, 'POST', '/api/v1/personal/passkeys/register/finish',
      { ceremonyId: b.ceremonyId, name: 'Chromium', credential }, login.accessToken);
    assert.equal(item.name, 'Chromium');
    passkeyId = item.id;
    const again = await call(page, 'POST', '/api/v1/personal/passkeys/register/finish',
      { ceremonyId: b.ceremonyId, name: 'Chromium', credential }, login.accessToken);
    assert.equal(again.code, 40032, 'a ceremony finishes once');
    const list = await pageMust(page, 'GET', '/api/v1/personal/passkeys', undefined, login.accessToken);
    assert.deepEqual(list.map((p) => p.id), [passkeyId]);
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    assert.equal(credentials.length, 1);
    assert.equal(credentials[0].isResidentCredential, true, 'a discoverable credential');
    exported = credentials[0];
  });

  step('second factor: a password login completed with the passkey', async () => {
    const { page } = first;
    await settings({ 'sys.security.totp.enabled': 'true' });
    const pw = await call(page, 'POST', '/api/v1/auth/login', { account, password: userPassword });
    assert.equal(pw.code, 40018, 'the password alone is refused with the second-factor signal');
    assert.equal(pw.args.passkey, true);
    const b = await pageMust(page, 'POST', '/api/v1/auth/passkey/login/begin', { challengeId: pw.args.challengeId });
    assert.equal(b.options.allowCredentials.length, 1);
    assert.equal(b.options.userVerification, 'required');
    const credential = await get(page, b.options);
    const out = await pageMust(page, 'POST', '/api/v1/auth/passkey/login/finish', { ceremonyId: b.ceremonyId, credential });
    assert.equal(out.account, account);
    assert.ok(out.accessToken);
    const spent = await call(page, 'POST', '/api/v1/auth/passkey/login/begin', { challengeId: pw.args.challengeId });
    assert.equal(spent.code, 40032, 'the login challenge is spent');
  });

  step('passwordless login (discoverable credential, no account typed)', async () => {
    const { page } = first;
    const off = await call(page, 'POST', '/api/v1/auth/passkey/passwordless/begin');
    assert.equal(off.code, 40031, 'the switch is off by default');
    await settings({ 'sys.security.passkey.passwordless': 'true' });
    const r = await passwordless(page);
    assert.equal(r.code, 0, JSON.stringify(r));
    assert.equal(r.data.account, account);
  });

  step('a cloned authenticator (sign counter going back) is refused', async () => {
    // The first device has logged in twice since the export: the copy's
    // counter is behind what the kernel stored.
    const { credentials } = await first.cdp.send('WebAuthn.getCredentials', { authenticatorId: first.authenticatorId });
    assert.ok(credentials[0].signCount > exported.signCount, `counter ${credentials[0].signCount} after ${exported.signCount}`);
    const clone = await device();
    try {
      await clone.cdp.send('WebAuthn.addCredential', { authenticatorId: clone.authenticatorId, credential: exported });
      const r = await passwordless(clone.page);
      assert.equal(r.code, 40030, 'the clone is refused: ' + JSON.stringify(r));
      assert.equal(r.args.reason, 'counter');
    } finally {
      await clone.ctx.close();
    }
    const ok = await passwordless(first.page);
    assert.equal(ok.code, 0, 'the original still logs in: ' + JSON.stringify(ok));
  });

  step('a removed passkey is refused', async () => {
    const { page } = first;
    const r = await passwordless(page);
    assert.equal(r.code, 0);
    const token = r.data.accessToken;
    const refused = await call(page, 'DELETE', '/api/v1/personal/passkeys/' + passkeyId, undefined, token);
    assert.equal(refused.code, 40024, 'removing a factor needs a re-authentication window: ' + JSON.stringify(refused));
    await pageMust(page, 'POST', '/api/v1/auth/reauth', { method: 'password', password: userPassword }, token);
    const del = await page.evaluate(async ({ p, token }) => {
      const res = await fetch(p, { method: 'DELETE', headers: { Authorization: 'Bearer ' + token } });
      return { status: res.status, body: await res.text() };
    }, { p: '/api/v1/personal/passkeys/' + passkeyId, token });
    assert.deepEqual(del, { status: 200, body: '' });
    const after = await passwordless(page);
    assert.equal(after.code, 40030, 'the removed passkey logs in no more: ' + JSON.stringify(after));
    const pw = await call(page, 'POST', '/api/v1/auth/login', { account, password: userPassword });
    assert.equal(pw.code, 0, 'without a passkey (and without TOTP) the password alone logs in again');
  });
});
