'use strict';
// The deployment shapes of the suite. Each shape is its own kernel (own
// SQLite database) with the app served from its own origin:
//   same   — the app and the API on one origin: a proxy at
//            http://app.example.test:P serves the app and forwards /api.
//   site   — another origin on the same site: the app at
//            http://app.example.test:P, the API at http://api.example.test:Q
//            (CORS; the SameSite=Lax binding cookies still flow).
//   cross  — another site: the app at http://app.other.test:P, the API at
//            http://api.example.test:Q; the app uses the binding challenge.
//   cookie — like same, with Service:Security:Session:CookieMode on and
//            Mode=Single.
// Chromium maps *.example.test and *.other.test to 127.0.0.1
// (--host-resolver-rules); every server listens on 127.0.0.1.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { freePort, startIssuer, startKernel } = require('./procs');
const { startAppServer } = require('./appserver');

const adminPassword = 'Seed#Admin2026!';
const initialPassword = 'Init#Pass123';
// userPassword is the password of every user a scenario creates.
const userPassword = 'Chosen#Pass456';
const provider = 'oidc';

const shapeNames = ['same', 'site', 'cross', 'cookie'];

// kernelSettings is the appsettings.json of one shape.
function kernelSettings({ port, issuer, callbackBase, resultPath, origins, cookieMode }) {
  // Scenarios run concurrently from 127.0.0.1: lift the per-address share of
  // the hashing pool (Service:Security:Password:HashPerClient, default 2).
  const security = { Password: { Pbkdf2Iterations: 100000, HashPerClient: 1000, HashPerAccount: 1000 } };
  if (cookieMode) security.Session = { CookieMode: true, Mode: 'Single' };
  const s = {
    Service: {
      Http: { ListenAddress: 'http://127.0.0.1:' + port },
      Seed: { AdminPassword: adminPassword },
      Security: security,
      ExternalAuth: {
        CallbackBaseUrl: callbackBase,
        FrontendResultPath: resultPath,
        Oidc: [{
          Code: provider, DisplayName: 'Test SSO', Authority: issuer.url,
          ClientId: issuer.clientId, ClientSecret: issuer.clientSecret, AccountClaim: 'preferred_username',
        }],
      },
    },
  };
  if (origins) s.Api = { Cors: { AllowedOrigins: origins } };
  return s;
}

// api calls the kernel directly (not through the browser) and returns the
// envelope; a transport failure or a non-JSON answer throws.
async function api(kernel, method, p, body, token) {
  const headers = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (token) headers.Authorization = 'Bearer ' + token;
  const r = await fetch(kernel.base + p, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  try {
    return { http: r.status, ...JSON.parse(text) };
  } catch {
    throw new Error(`${method} ${p}: HTTP ${r.status}, not JSON: ${text.slice(0, 200)}`);
  }
}

async function must(kernel, method, p, body, token) {
  const r = await api(kernel, method, p, body, token);
  if (r.code !== 0) throw new Error(`${kernel.name}: ${method} ${p} = HTTP ${r.http} code ${r.code} ${r.msgKey}: ${JSON.stringify(r.data)}`);
  return r.data;
}

// Shape is one running deployment.
class Shape {
  constructor(fields) {
    Object.assign(this, fields);
  }

  // createUser adds a local account with userPassword (its forced change
  // done, so the account is usable everywhere) and returns its name.
  async createUser(account) {
    const k = this.kernel;
    await must(k, 'POST', '/api/v1/sys/user', { account, name: account, password: initialPassword }, this.adminToken);
    const first = await must(k, 'POST', '/api/v1/auth/login', { account, password: initialPassword });
    await must(k, 'PUT', '/api/v1/personal/password', { oldPassword: initialPassword, newPassword: userPassword }, first.accessToken);
    return account;
  }
}

// startShape starts the kernel and the app server of one shape.
async function startShape(name, { kernelBin, issuer, tmpRoot }) {
  const appPort = await freePort();
  const kernelPort = await freePort();
  const appHost = name === 'cross' ? 'app.other.test' : 'app.example.test';
  const appOrigin = `http://${appHost}:${appPort}`;
  const sameOrigin = name === 'same' || name === 'cookie';
  const apiBase = sameOrigin ? '' : `http://api.example.test:${kernelPort}`;
  const settings = kernelSettings({
    port: kernelPort,
    issuer,
    callbackBase: sameOrigin ? appOrigin : apiBase,
    resultPath: sameOrigin ? '/oauth/callback' : appOrigin + '/oauth/callback',
    origins: sameOrigin ? null : [appOrigin],
    cookieMode: name === 'cookie',
  });
  const kernel = await startKernel({ bin: kernelBin, tmpRoot, name, port: kernelPort, settings });
  const app = await startAppServer({
    port: appPort,
    config: { apiBase, challenge: name === 'cross', provider },
    proxyTo: sameOrigin ? kernel.base : null,
  });
  const admin = await must(kernel, 'POST', '/api/v1/auth/login', { account: 'superAdmin', password: adminPassword });
  await must(kernel, 'PUT', '/api/v1/sys/config/batch', [
    { configKey: `sys.externalauth.${provider}.linkByAccount`, configValue: 'true' },
    // Every scenario logs in from 127.0.0.1: lift the per-client limits.
    { configKey: 'sys.security.rateLimit.authPermitPerWindow', configValue: '100000' },
    { configKey: 'sys.security.rateLimit.passwordPermitPerWindow', configValue: '100000' },
    { configKey: 'sys.security.rateLimit.permitPerWindow', configValue: '1000000' },
  ], admin.accessToken);
  return new Shape({
    name, appOrigin, apiBase: apiBase || appOrigin, kernel, app, adminToken: admin.accessToken, issuer, provider,
  });
}

// deploy starts the provider and every shape. Shapes start concurrently and
// independently: a shape whose kernel refuses its settings fails only the
// scenarios that use it (shapes[name] is a promise).
async function deploy({ kernelBin, issuerBin }) {
  for (const [what, p] of [['kernel binary', kernelBin], ['testissuer binary', issuerBin]]) {
    if (!fs.existsSync(p)) throw new Error(`${what} ${p} is missing: run make test-browser (it builds both)`);
  }
  const tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'ak-browser-'));
  const issuer = await startIssuer(issuerBin);
  const shapes = {};
  for (const n of shapeNames) {
    shapes[n] = startShape(n, { kernelBin, issuer, tmpRoot });
    shapes[n].catch(() => {}); // reported by the scenarios that await it
  }
  const close = async () => {
    await Promise.all(shapeNames.map(async (n) => {
      const s = await shapes[n].catch(() => null);
      if (!s) return;
      s.app.close();
      s.kernel.stop();
    }));
    issuer.stop();
    if (!process.env.AK_BROWSER_KEEP) fs.rmSync(tmpRoot, { recursive: true, force: true });
  };
  return { issuer, shapes, tmpRoot, close };
}

module.exports = { deploy, api, userPassword, provider };
