'use strict';
// The real-browser suite of issue 18: Debian chromium (playwright-core)
// against the kernel binary and the test OpenID provider process, in the
// deployment shapes of lib/deploy.js. Run it with `make test-browser`
// (AK_KERNEL_BIN and AK_ISSUER_BIN name the binaries; default bin/).
// Every scenario runs in its own browser context (cookies and storage of
// its own) and, when it fails, prints its redirect hops, its cookies with
// their attributes and the end of its kernel's log.
const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { deploy, userPassword } = require('./lib/deploy');
const { launch, Recorder } = require('./lib/browser');

const repo = path.join(__dirname, '..', '..');
const kernelBin = process.env.AK_KERNEL_BIN || path.join(repo, 'bin', 'adminkernel');
const issuerBin = process.env.AK_ISSUER_BIN || path.join(repo, 'bin', 'testissuer');

// scenarioTimeout bounds one scenario; past it the scenario fails with
// its recording (node's own test timeout would cancel it silently).
const scenarioTimeout = 40000;

let env;
let browser;

before(async () => {
  [env, browser] = await Promise.all([deploy({ kernelBin, issuerBin }), launch()]);
});

after(async () => {
  if (browser) await browser.close();
  if (env) await env.close();
});

// scenario runs fn with a fresh context and page on one shape; on failure
// the error carries the recording.
function scenario(name, shapeName, fn) {
  it(`${name} [${shapeName}]`, { timeout: scenarioTimeout + 15000 }, async () => {
    const shape = await env.shapes[shapeName];
    const ctx = await browser.newContext();
    ctx.setDefaultTimeout(15000);
    const rec = new Recorder(ctx);
    try {
      const page = await ctx.newPage();
      let timer;
      const expired = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`scenario still running after ${scenarioTimeout} ms`)), scenarioTimeout);
      });
      try {
        await Promise.race([fn({ shape, ctx, rec, page }), expired]);
      } finally {
        clearTimeout(timer);
      }
    } catch (err) {
      err.message += `\n--- ${name} [${shapeName}]: ${shape.appOrigin}, API ${shape.apiBase}\n${await rec.report()}` +
        `\nkernel log (last lines):\n${shape.kernel.logTail(15)}`;
      throw err;
    } finally {
      await ctx.close();
    }
  });
}

// waitStatus polls the app's #status until it reads want (a string, or a
// RegExp it matches) and returns it; an error status (other than the one
// wanted) fails at once.
async function waitStatus(page, want, timeout = 20000) {
  const deadline = Date.now() + timeout;
  let last = '';
  for (;;) {
    try {
      last = await page.locator('#status').textContent({ timeout: 2000 });
    } catch (e) {
      last = `(no status: ${e.message.split('\n')[0]})`;
    }
    if (want instanceof RegExp ? want.test(last) : last === want) return last;
    if (last.startsWith('error:')) throw new Error(`status ${last}, want ${want} (at ${page.url()})`);
    if (Date.now() > deadline) throw new Error(`status still ${last} after ${timeout} ms, want ${want} (at ${page.url()})`);
    await page.waitForTimeout(100);
  }
}

// asIdpUser makes the provider sign this context in as login.
async function asIdpUser(ctx, login) {
  await ctx.addCookies([{ name: 'oidctest_login', value: login, url: env.issuer.url }]);
}

// stopAtProvider makes the provider show its page (a #continue button)
// before it redirects back; atProvider waits until page is there.
async function stopAtProvider(ctx) {
  await ctx.addCookies([{ name: 'oidctest_consent', value: '1', url: env.issuer.url }]);
}
async function atProvider(page) {
  await page.waitForURL((u) => u.href.startsWith(env.issuer.url + '/authorize'));
  await page.locator('#continue').waitFor();
}

async function cookieMap(ctx) {
  return Object.fromEntries((await ctx.cookies()).map((c) => [c.name, c]));
}

async function passwordLogin(page, account) {
  await page.fill('#account', account);
  await page.fill('#password', userPassword);
  await page.click('#login-button');
}

// ssoLogin opens the app's login page and logs in through the provider.
async function ssoLogin(page, shape, account) {
  await page.goto(shape.appOrigin + '/');
  await waitStatus(page, 'anonymous');
  await page.click('#sso-button');
  await waitStatus(page, 'logged-in:' + account);
}

// resultURL is the page's address once the app is done: the one-time
// values must be gone from it.
function assertStripped(page, shape) {
  assert.equal(page.url(), shape.appOrigin + '/oauth/callback', 'the result page keeps a one-time value in its address');
}

describe('browser login (issue 18)', { concurrency: 6 }, () => {
  scenario('same origin: SSO login and ticket exchange', 'same', async ({ shape, ctx, page }) => {
    const user = await shape.createUser('so_ann');
    await asIdpUser(ctx, user);
    let ticketURL = '';
    page.on('request', (r) => {
      if (r.isNavigationRequest() && r.url().includes('/oauth/callback?ticket=')) ticketURL = r.url();
    });
    await ssoLogin(page, shape, user);
    assertStripped(page, shape);
    // The spent ticket is refused even with this browser's binder cookie
    // (docs/developers/frontend.md §3.1: the cookie outlives the exchange).
    assert.ok(ticketURL, 'no result page with a ticket');
    await page.goto(ticketURL);
    await waitStatus(page, 'error:40014');
  });

  scenario('other origin on the same site: password and SSO login through CORS', 'site', async ({ shape, ctx, page }) => {
    const user = await shape.createUser('st_bob');
    await page.goto(shape.appOrigin + '/');
    await waitStatus(page, 'anonymous');
    await passwordLogin(page, user);
    await waitStatus(page, 'logged-in:' + user);
    await page.click('#logout-button');
    await waitStatus(page, 'anonymous');
    // An error answer carries the CORS headers too: the app reads its code.
    const denied = await page.evaluate(async (api) => {
      const r = await fetch(api + '/api/v1/personal/profile', { credentials: 'include', headers: { Authorization: 'Bearer not-a-token' } });
      return { http: r.status, code: (await r.json()).code, requestId: r.headers.get('X-Request-ID') !== null };
    }, shape.apiBase);
    assert.deepEqual(denied, { http: 401, code: 40006, requestId: true });
    await asIdpUser(ctx, user);
    await page.click('#sso-button');
    await waitStatus(page, 'logged-in:' + user);
    assertStripped(page, shape);
  });

  scenario('another site with the binding challenge', 'cross', async ({ shape, ctx, rec, page }) => {
    const user = await shape.createUser('cs_cat');
    await asIdpUser(ctx, user);
    await ssoLogin(page, shape, user);
    assertStripped(page, shape);
    const authorize = rec.hops.find((h) => h.includes('/authorize?'));
    assert.match(authorize || '', /bindingChallenge=[A-Za-z0-9_-]{43}\b/, 'authorize was not called with a binding challenge');
    const binding = Object.keys(await cookieMap(ctx)).filter((n) => n.startsWith('tn_oauth_'));
    assert.deepEqual(binding, [], 'a challenged login needs no binding cookie');
    assert.equal(await page.evaluate(() => sessionStorage.getItem('bindingVerifier')), null, 'the verifier outlives the exchange');
  });

  scenario('pending link, then password login and claim', 'cross', async ({ shape, ctx, page }) => {
    const user = await shape.createUser('pl_dan');
    await asIdpUser(ctx, 'pl_dan_idp'); // no account of that name: a pending link
    await page.goto(shape.appOrigin + '/');
    await waitStatus(page, 'anonymous');
    await page.click('#sso-button');
    await waitStatus(page, 'pending-link:oidc');
    assertStripped(page, shape);
    await passwordLogin(page, user);
    await waitStatus(page, 'claimed:oidc');
    // The claimed identity now logs in as the user.
    await page.goto(shape.appOrigin + '/');
    await waitStatus(page, 'logged-in:' + user);
    await page.click('#logout-button');
    await waitStatus(page, 'anonymous');
    await page.click('#sso-button');
    await waitStatus(page, 'logged-in:' + user);
  });

  for (const shapeName of ['same', 'cross']) {
    scenario('bind from the personal page', shapeName, async ({ shape, ctx, rec, page }) => {
      const user = await shape.createUser('bd_eve');
      await page.goto(shape.appOrigin + '/');
      await waitStatus(page, 'anonymous');
      await passwordLogin(page, user);
      await waitStatus(page, 'logged-in:' + user);
      assert.equal(await page.textContent('#bindings'), '');
      await asIdpUser(ctx, 'bd_eve_idp');
      await page.click('#bind-button');
      await waitStatus(page, 'bound:oidc');
      assertStripped(page, shape);
      const start = rec.hops.find((h) => h.includes('/bind/start?start='));
      assert.ok(start, 'bind did not start with the one-time start URL');
      // The start URL is one-time: opened again it ends in 40014.
      await page.goto(start.split(' ')[3]);
      await waitStatus(page, 'error:40014');
      await page.goto(shape.appOrigin + '/');
      await waitStatus(page, 'logged-in:' + user);
      assert.equal(await page.textContent('#bindings'), 'oidc');
      await page.click('#logout-button');
      await waitStatus(page, 'anonymous');
      await page.click('#sso-button');
      await waitStatus(page, 'logged-in:' + user);
    });
  }

  for (const shapeName of ['same', 'cross']) {
    scenario('a ticket URL opened in another browser is refused', shapeName, async ({ shape, ctx, page }) => {
      const user = await shape.createUser('tk_jon');
      await asIdpUser(ctx, user);
      // This browser never exchanges its ticket: the call is dropped.
      let ticketURL = '';
      await ctx.route((u) => u.pathname.endsWith('/api/v1/auth/external/exchange'), (route) => route.abort());
      page.on('request', (r) => {
        if (r.isNavigationRequest() && r.url().includes('/oauth/callback?ticket=')) ticketURL = r.url();
      });
      await page.goto(shape.appOrigin + '/');
      await waitStatus(page, 'anonymous');
      await page.click('#sso-button');
      await waitStatus(page, 'error:js TypeError: Failed to fetch');
      assert.ok(ticketURL, 'no result page with a ticket');
      // Another browser (no binding cookie, no verifier) opens the URL.
      const other = await browser.newContext();
      try {
        const thief = await other.newPage();
        await thief.goto(ticketURL);
        await waitStatus(thief, 'error:40014');
      } finally {
        await other.close();
      }
    });
  }

  scenario('an origin not listed in Api:Cors:AllowedOrigins cannot call the API', 'site', async ({ shape, page }) => {
    const user = await shape.createUser('uo_kim');
    // The same app, served from an origin the kernel does not list.
    await page.goto(shape.appOrigin.replace('app.example.test', 'rogue.other.test') + '/');
    await waitStatus(page, 'anonymous');
    await passwordLogin(page, user);
    await waitStatus(page, 'error:js TypeError: Failed to fetch');
  });

  scenario('two tabs start SSO in one browser, both complete', 'same', async ({ shape, ctx, page }) => {
    const user = await shape.createUser('tt_fay');
    await asIdpUser(ctx, user);
    await stopAtProvider(ctx);
    const tabB = await ctx.newPage();
    for (const p of [page, tabB]) {
      await p.goto(shape.appOrigin + '/');
      await waitStatus(p, 'anonymous');
    }
    // Both tabs start before either returns; the first tab's callback
    // runs first, then the second's.
    await page.click('#sso-button');
    await atProvider(page);
    await tabB.click('#sso-button');
    await atProvider(tabB);
    await page.click('#continue');
    await waitStatus(page, 'logged-in:' + user);
    await tabB.click('#continue');
    await waitStatus(tabB, 'logged-in:' + user);
  });

  scenario('two tabs: both callbacks run before either exchange, both complete', 'same', async ({ shape, ctx, page }) => {
    const user = await shape.createUser('tt_gil');
    await asIdpUser(ctx, user);
    await stopAtProvider(ctx);
    // Hold every exchange call until both tabs have their ticket.
    const held = [];
    let bothHeld;
    const ready = new Promise((resolve) => { bothHeld = resolve; });
    await ctx.route((u) => u.pathname.endsWith('/api/v1/auth/external/exchange'), (route) => {
      held.push(route);
      if (held.length === 2) bothHeld();
    });
    const tabB = await ctx.newPage();
    for (const p of [page, tabB]) {
      await p.goto(shape.appOrigin + '/');
      await waitStatus(p, 'anonymous');
      await p.click('#sso-button');
      await atProvider(p);
    }
    await page.click('#continue');
    await tabB.click('#continue');
    await ready;
    for (const r of held) await r.continue();
    await waitStatus(page, 'logged-in:' + user);
    await waitStatus(tabB, 'logged-in:' + user);
  });

  scenario('lost state cookie: 40014, then a fresh login works', 'same', async ({ shape, ctx, page }) => {
    const user = await shape.createUser('lc_gus');
    await asIdpUser(ctx, user);
    await stopAtProvider(ctx);
    await page.goto(shape.appOrigin + '/');
    await waitStatus(page, 'anonymous');
    await page.click('#sso-button');
    await atProvider(page);
    assert.ok((await cookieMap(ctx)).tn_oauth_state, 'authorize set no state cookie');
    await ctx.clearCookies({ name: 'tn_oauth_state' });
    await page.click('#continue');
    await waitStatus(page, 'error:40014');
    assertStripped(page, shape);
    await page.click('#sso-button');
    await atProvider(page);
    await page.click('#continue');
    await waitStatus(page, 'logged-in:' + user);
  });

  scenario('reload after success stays logged in', 'site', async ({ shape, ctx, page }) => {
    const user = await shape.createUser('rl_hal');
    await asIdpUser(ctx, user);
    await ssoLogin(page, shape, user);
    assertStripped(page, shape);
    await page.reload();
    await waitStatus(page, 'logged-in:' + user);
    assertStripped(page, shape);
  });

  scenario('cookie session mode with CSRF', 'cookie', async ({ shape, ctx, page }) => {
    const user = await shape.createUser('ck_ivy');
    await page.goto(shape.appOrigin + '/');
    await waitStatus(page, 'anonymous');
    await passwordLogin(page, user);
    await waitStatus(page, 'logged-in:' + user);
    let jar = await cookieMap(ctx);
    assert.ok(jar.smart_rt, 'login set no smart_rt cookie');
    assert.ok(jar.smart_csrf, 'login set no smart_csrf cookie');
    assert.equal(jar.smart_rt.httpOnly, true, 'smart_rt must be HttpOnly');
    assert.equal(jar.smart_csrf.httpOnly, false, 'smart_csrf must be readable');
    assert.equal(jar.smart_rt.path, '/');
    assert.equal(jar.smart_rt.sameSite, 'Lax');
    assert.equal(jar.smart_rt.secure, false, 'over plain http the Secure flag is dropped (documented)');
    assert.ok(jar.smart_rt.expires * 1000 > Date.now() + 24 * 3600 * 1000, 'smart_rt must expire with the refresh token, not the browser session');
    assert.equal(await page.evaluate(() => sessionStorage.getItem('refreshToken')), null, 'a refresh token reached the page');

    // A reload keeps the session: the app refreshes from the cookie.
    await page.reload();
    await waitStatus(page, 'logged-in:' + user);
    const csrfBefore = (await cookieMap(ctx)).smart_csrf.value;
    await page.click('#refresh-button');
    await waitStatus(page, 'refreshed:' + user);
    jar = await cookieMap(ctx);
    assert.notEqual(jar.smart_csrf.value, csrfBefore, 'refresh did not rotate smart_csrf');

    // A state-changing call with smart_rt and without X-Smart-CSRF: 403 / 40023.
    const bare = await page.evaluate(async () => {
      const r = await fetch('/api/v1/auth/refresh', {
        method: 'POST', credentials: 'include', headers: { 'Content-Type': 'application/json' }, body: '{}',
      });
      return { http: r.status, code: (await r.json()).code };
    });
    assert.deepEqual(bare, { http: 403, code: 40023 });
    const wrong = await page.evaluate(async () => {
      const r = await fetch('/api/v1/auth/refresh', {
        method: 'POST', credentials: 'include', headers: { 'Content-Type': 'application/json', 'X-Smart-CSRF': 'not-the-cookie' }, body: '{}',
      });
      return { http: r.status, code: (await r.json()).code };
    });
    assert.deepEqual(wrong, { http: 403, code: 40023 });
    // With the header: the refresh (from the cookie) succeeds.
    const ok = await page.evaluate(async () => {
      const r = await window.testApp.call('POST', '/api/v1/auth/refresh', {});
      return { http: r.http, code: r.code, mode: r.data && r.data.sessionMode, rt: r.data && r.data.refreshToken };
    });
    assert.deepEqual(ok, { http: 200, code: 0, mode: 'cookie', rt: '' });

    // SSO exchange in cookie mode sets the cookies too; logout clears them.
    await page.click('#logout-button');
    await waitStatus(page, 'anonymous');
    assert.equal((await cookieMap(ctx)).smart_rt, undefined, 'logout left smart_rt');
    await asIdpUser(ctx, user);
    await page.click('#sso-button');
    await waitStatus(page, 'logged-in:' + user);
    assert.ok((await cookieMap(ctx)).smart_rt, 'the exchange set no smart_rt cookie');
  });

  scenario('Single mode: a login elsewhere ends this session, no refresh revives it', 'cookie', async ({ shape, page }) => {
    const user = await shape.createUser('sg_lee');
    await page.goto(shape.appOrigin + '/');
    await waitStatus(page, 'anonymous');
    await passwordLogin(page, user);
    await waitStatus(page, 'logged-in:' + user);
    const other = await browser.newContext();
    try {
      const p2 = await other.newPage();
      await p2.goto(shape.appOrigin + '/');
      await waitStatus(p2, 'anonymous');
      await passwordLogin(p2, user);
      await waitStatus(p2, 'logged-in:' + user);
    } finally {
      await other.close();
    }
    // The next request of the first browser is refused (its refresh
    // attempt from the smart_rt cookie fails too), and so is a reload.
    const next = await page.evaluate(() => window.testApp.call('GET', '/api/v1/personal/profile'));
    assert.deepEqual({ http: next.http, code: next.code }, { http: 401, code: 40006 });
    await page.reload();
    await waitStatus(page, /^error:400\d\d$/);
  });
});
