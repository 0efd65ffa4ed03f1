'use strict';
// The realtime hub across two replicas in real Chromium (issue 23): two
// kernel processes A and B on one PostgreSQL database (created for this
// run, dropped at the end) and one Redis (a key prefix of this run). A
// page served by A opens `new WebSocket('/hub/realtime?access_token=…')`;
// a notice published on B and the session ended on B (logout, then a kick
// by the admin) must reach the socket on A within 1 s, the force-logout
// followed by the close (4001).
//
// Needs psql, PostgreSQL and Redis (lib/replicas.js says which variables
// point at them); an unreachable server fails the suite and says which.
const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { launch } = require('./lib/browser');
const { startReplicas, must, adminPassword } = require('./lib/replicas');

const kernelBin = process.env.AK_KERNEL_BIN || path.join(__dirname, '..', '..', 'bin', 'adminkernel');

let R; // the two replicas (lib/replicas.js)
let A;
let B;
let runID;
let admin;
let browser;

// sid reads the session id claim of an access token (the test holds it).
function sid(token) {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).sid;
}

// openSocket opens a page on A and, in it, a WebSocket to the hub with the
// token in the query parameter (as the console does). Every message and
// the close are recorded with the page's clock (Date.now, the same clock
// as the test's).
async function openSocket(token) {
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  await page.goto(A.base + '/health');
  await page.evaluate((tok) => {
    window.hubEvents = [];
    const ws = new WebSocket('/hub/realtime?access_token=' + encodeURIComponent(tok));
    ws.onmessage = (e) => window.hubEvents.push({ t: Date.now(), msg: JSON.parse(e.data) });
    ws.onclose = (e) => window.hubEvents.push({ t: Date.now(), close: e.code });
    window.hubSocket = ws;
  }, token);
  return { ctx, page };
}

// waitFor polls the page's events until one matches, within ms.
async function waitFor(page, what, match, ms) {
  const deadline = Date.now() + ms;
  for (;;) {
    const events = await page.evaluate(() => window.hubEvents);
    const hit = events.find(match);
    if (hit) return hit;
    if (Date.now() > deadline) throw new Error(`no ${what} within ${ms} ms; the socket saw: ${JSON.stringify(events)}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

before(async () => {
  R = await startReplicas({ kernelBin, tag: 'rt' });
  ({ runID, admin } = R);
  ({ A, B } = R.kernels);
  browser = await launch();
});

after(async () => {
  if (browser) await browser.close();
  if (R) await R.stop();
});

describe('realtime hub across two replicas (Chromium, PostgreSQL + Redis)', () => {
  it('a socket on A receives a notice published on B within 1 s', async (t) => {
    const token = (await must(A, 'POST', '/api/v1/auth/login', { account: 'superAdmin', password: adminPassword })).accessToken;
    const { ctx, page } = await openSocket(token);
    try {
      await waitFor(page, 'unread-count', (e) => e.msg && e.msg.type === 'unread-count', 10000);
      const title = 'from B ' + runID;
      const t0 = Date.now();
      await must(B, 'POST', '/api/v1/sys/notice', { title, type: 2, receiverType: 0 }, admin);
      const got = await waitFor(page, 'notice', (e) => e.msg && e.msg.type === 'notice' && e.msg.data.title === title, 3000);
      const took = got.t - t0;
      t.diagnostic(`notice published on B reached the page on A after ${took} ms`);
      assert.ok(took < 1000, `notice after ${took} ms, want < 1000`);
    } finally {
      await ctx.close();
    }
  });

  for (const how of ['logout', 'kick']) {
    it(`a session ended on B (${how}) gets force-logout within 1 s on A, then the socket closes`, async (t) => {
      const token = (await must(A, 'POST', '/api/v1/auth/login', { account: 'superAdmin', password: adminPassword })).accessToken;
      const { ctx, page } = await openSocket(token);
      try {
        await waitFor(page, 'unread-count', (e) => e.msg && e.msg.type === 'unread-count', 10000);
        const t0 = Date.now();
        if (how === 'logout') await must(B, 'POST', '/api/v1/auth/logout', undefined, token);
        else await must(B, 'DELETE', '/api/v1/sys/session/' + sid(token), undefined, admin);
        const fl = await waitFor(page, 'force-logout', (e) => e.msg && e.msg.type === 'force-logout', 3000);
        const closed = await waitFor(page, 'close', (e) => e.close !== undefined, 6000);
        t.diagnostic(`${how} on B: force-logout on A after ${fl.t - t0} ms, socket closed (${closed.close}) after ${closed.t - t0} ms`);
        assert.ok(fl.t - t0 < 1000, `force-logout after ${fl.t - t0} ms, want < 1000`);
        assert.equal(closed.close, 4001, 'close code');
        assert.ok(closed.t >= fl.t, 'the close follows the force-logout');
        const events = await page.evaluate(() => window.hubEvents);
        assert.equal(events[events.length - 1].close, 4001, 'nothing after the close');
      } finally {
        await ctx.close();
      }
    });
  }
});
