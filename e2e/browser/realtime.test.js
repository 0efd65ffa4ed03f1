'use strict';
// The realtime hub across two replicas in real Chromium (issue 23): two
// kernel processes A and B on one PostgreSQL database (created for this
// run, dropped at the end) and one Redis (a key prefix of this run). A
// page served by A opens `new WebSocket('/hub/realtime?access_token=…')`;
// a notice published on B and the session ended on B (logout, then a kick
// by the admin) must reach the socket on A within 1 s, the force-logout
// followed by the close (4001).
//
// Needs psql (to create and drop the database) and a PostgreSQL at
// ADMINKERNEL_TEST_POSTGRES (default postgres://postgres@127.0.0.1:5432/test)
// and a Redis at ADMINKERNEL_TEST_REDIS (default 127.0.0.1:6379); an
// unreachable server fails the suite and says which.
const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { api } = require('./lib/deploy');
const { launch } = require('./lib/browser');
const { freePort, startKernel } = require('./lib/procs');

const repo = path.join(__dirname, '..', '..');
const kernelBin = process.env.AK_KERNEL_BIN || path.join(repo, 'bin', 'adminkernel');
const adminPassword = 'Seed#Admin2026!';
const pgAdmin = process.env.ADMINKERNEL_TEST_POSTGRES || 'postgres://postgres@127.0.0.1:5432/test?sslmode=disable';
const redisAddr = process.env.ADMINKERNEL_TEST_REDIS || '127.0.0.1:6379';
const runID = crypto.randomBytes(6).toString('hex');
const dbName = 'ak_browser_rt_' + runID;
const redisPrefix = `ak:browser-rt:${runID}:`;

let browser;
let A;
let B;
let tmpRoot;
let admin;
let dbCreated = false;

function psql(sql) {
  try {
    execFileSync('psql', [pgAdmin, '-v', 'ON_ERROR_STOP=1', '-qc', sql], { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    throw new Error(`PostgreSQL at ${pgAdmin.replace(/\/\/[^@]*@/, '//…@')} (ADMINKERNEL_TEST_POSTGRES): ${sql}: ${e.stderr || e.message}`);
  }
}

function dbURL() {
  const u = new URL(pgAdmin);
  u.pathname = '/' + dbName;
  return u.toString();
}

// redisReachable fails with a clear message when no Redis answers.
function redisReachable() {
  const [host, port] = redisAddr.split(':');
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(port), host, () => { s.end(); resolve(); });
    s.once('error', (e) => reject(new Error(`Redis at ${redisAddr} (ADMINKERNEL_TEST_REDIS) is needed: ${e.message}`)));
  });
}

async function must(kernel, method, p, body, token) {
  const r = await api(kernel, method, p, body, token);
  if (r.code !== 0) throw new Error(`${kernel.name}: ${method} ${p} = HTTP ${r.http} code ${r.code} ${r.msgKey}: ${JSON.stringify(r.data)}`);
  return r.data;
}

// sid reads the session id claim of an access token (the test holds it).
function sid(token) {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).sid;
}

function settings(port) {
  return {
    Service: {
      Http: { ListenAddress: 'http://127.0.0.1:' + port },
      Database: { DbType: 'PostgreSQL', ConnectionString: dbURL() },
      Cache: { Provider: 'Redis', Redis: { Address: redisAddr, KeyPrefix: redisPrefix } },
      Seed: { AdminPassword: adminPassword },
      Security: {
        Jwt: { SigningKey: 'browser-realtime-signing-key-' + 'k'.repeat(32) },
        Password: { Pbkdf2Iterations: 100000 },
      },
    },
  };
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
  if (!fs.existsSync(kernelBin)) throw new Error(`kernel binary ${kernelBin} is missing: run make test-browser`);
  await redisReachable();
  psql(`CREATE DATABASE ${dbName}`);
  dbCreated = true;
  tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'ak-realtime-'));
  const [pa, pb] = [await freePort(), await freePort()];
  // A first: it creates the schema; B starts on the migrated database.
  A = await startKernel({ bin: kernelBin, tmpRoot, name: 'A', port: pa, settings: settings(pa) });
  B = await startKernel({ bin: kernelBin, tmpRoot, name: 'B', port: pb, settings: settings(pb) });
  browser = await launch();
  admin = (await must(B, 'POST', '/api/v1/auth/login', { account: 'superAdmin', password: adminPassword })).accessToken;
  await must(B, 'PUT', '/api/v1/sys/config/batch', [{ configKey: 'sys.security.rateLimit.enabled', configValue: 'false' }], admin);
});

after(async () => {
  if (browser) await browser.close();
  for (const k of [A, B]) if (k) k.stop();
  // Give the processes their graceful stop before the database goes.
  await new Promise((r) => setTimeout(r, 1500));
  if (dbCreated) psql(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  try {
    const keys = execFileSync('redis-cli', ['-h', redisAddr.split(':')[0], '-p', redisAddr.split(':')[1], '--scan', '--pattern', redisPrefix + '*']).toString().split('\n').filter(Boolean);
    for (let i = 0; i < keys.length; i += 500) {
      execFileSync('redis-cli', ['-h', redisAddr.split(':')[0], '-p', redisAddr.split(':')[1], 'DEL', ...keys.slice(i, i + 500)]);
    }
  } catch {
    // redis-cli missing: the keys of this run expire or stay under its prefix
  }
  if (tmpRoot) fs.rmSync(tmpRoot, { recursive: true, force: true });
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
