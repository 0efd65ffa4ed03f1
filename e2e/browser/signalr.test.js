'use strict';
// The realtime hub's SignalR protocol (wire contract §6 item 4) with the
// OFFICIAL @microsoft/signalr client, as the original admin UI builds it:
// HubConnectionBuilder().withUrl(base + '/hub/realtime', {accessTokenFactory})
// .withAutomaticReconnect(). Two kernel processes A and B on one PostgreSQL
// database (created for this run, dropped at the end) and one Redis (a key
// prefix of this run), as realtime.test.js. The client runs in Node (the
// client negotiates with the Authorization header and, in Node, sends the
// token as a header on the WebSocket too; browsers use access_token, which
// host/hub's Go tests cover).
//
// Needs psql and a PostgreSQL at ADMINKERNEL_TEST_POSTGRES (default
// postgres://postgres@127.0.0.1:5432/test) and a Redis at
// ADMINKERNEL_TEST_REDIS (default 127.0.0.1:6379).
const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const { once } = require('node:events');
const crypto = require('node:crypto');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const signalR = require('@microsoft/signalr');
const { api } = require('./lib/deploy');
const { freePort, startKernel } = require('./lib/procs');

const repo = path.join(__dirname, '..', '..');
const kernelBin = process.env.AK_KERNEL_BIN || path.join(repo, 'bin', 'adminkernel');
const adminPassword = 'Seed#Admin2026!';
const pgAdmin = process.env.ADMINKERNEL_TEST_POSTGRES || 'postgres://postgres@127.0.0.1:5432/test?sslmode=disable';
const redisAddr = process.env.ADMINKERNEL_TEST_REDIS || '127.0.0.1:6379';
const runID = crypto.randomBytes(6).toString('hex');
const dbName = 'ak_browser_sr_' + runID;
const redisPrefix = `ak:browser-sr:${runID}:`;

let A;
let B;
let tmpRoot;
let admin;
let dbCreated = false;
const open = new Set();

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

function settings(port) {
  return {
    Service: {
      Http: { ListenAddress: 'http://127.0.0.1:' + port },
      Database: { DbType: 'PostgreSQL', ConnectionString: dbURL() },
      Cache: { Provider: 'Redis', Redis: { Address: redisAddr, KeyPrefix: redisPrefix } },
      Seed: { AdminPassword: adminPassword },
      Security: {
        Jwt: { SigningKey: 'browser-signalr-signing-key-' + 'k'.repeat(32) },
        Password: { Pbkdf2Iterations: 100000 },
      },
    },
  };
}

async function login(kernel) {
  return (await must(kernel, 'POST', '/api/v1/auth/login', { account: 'superAdmin', password: adminPassword })).accessToken;
}

// connect builds the connection as the original UI does and records every
// invocation and state change with the test's clock.
async function connect(kernel, token) {
  const events = [];
  const conn = new signalR.HubConnectionBuilder()
    .withUrl(kernel.base + '/hub/realtime', { accessTokenFactory: () => token })
    .withAutomaticReconnect()
    .configureLogging(signalR.LogLevel.Warning)
    .build();
  for (const target of ['notice-changed', 'force-logout']) {
    conn.on(target, (...args) => { events.push({ t: Date.now(), target, args }); });
  }
  conn.onreconnecting((e) => events.push({ t: Date.now(), state: 'reconnecting', error: e && e.message }));
  conn.onreconnected(() => events.push({ t: Date.now(), state: 'reconnected' }));
  conn.onclose((e) => events.push({ t: Date.now(), state: 'closed', error: e && e.message }));
  await conn.start();
  open.add(conn);
  return { conn, events };
}

async function waitFor(events, what, match, ms) {
  const deadline = Date.now() + ms;
  for (;;) {
    const hit = events.find(match);
    if (hit) return hit;
    if (Date.now() > deadline) throw new Error(`no ${what} within ${ms} ms; the connection saw: ${JSON.stringify(events)}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function publish(kernel, title) {
  await must(kernel, 'POST', '/api/v1/sys/notice', { title, type: 2, receiverType: 0 }, admin);
}

const published = (title) => (e) => e.target === 'notice-changed' && e.args[0] && e.args[0].notice && e.args[0].notice.title === title;

before(async () => {
  if (!fs.existsSync(kernelBin)) throw new Error(`kernel binary ${kernelBin} is missing: run make test-browser`);
  await redisReachable();
  psql(`CREATE DATABASE ${dbName}`);
  dbCreated = true;
  tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'ak-signalr-'));
  const [pa, pb] = [await freePort(), await freePort()];
  A = await startKernel({ bin: kernelBin, tmpRoot, name: 'A', port: pa, settings: settings(pa) });
  B = await startKernel({ bin: kernelBin, tmpRoot, name: 'B', port: pb, settings: settings(pb) });
  admin = await login(A);
  await must(A, 'PUT', '/api/v1/sys/config/batch', [{ configKey: 'sys.security.rateLimit.enabled', configValue: 'false' }], admin);
});

after(async () => {
  for (const c of open) await c.stop().catch(() => {});
  for (const k of [A, B]) if (k) k.stop();
  await new Promise((r) => setTimeout(r, 1500));
  if (dbCreated) psql(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  try {
    const [h, p] = redisAddr.split(':');
    const keys = execFileSync('redis-cli', ['-h', h, '-p', p, '--scan', '--pattern', redisPrefix + '*']).toString().split('\n').filter(Boolean);
    for (let i = 0; i < keys.length; i += 500) execFileSync('redis-cli', ['-h', h, '-p', p, 'DEL', ...keys.slice(i, i + 500)]);
  } catch {
    // redis-cli missing: the keys of this run stay under its prefix
  }
  if (tmpRoot) fs.rmSync(tmpRoot, { recursive: true, force: true });
});

describe('SignalR hub with @microsoft/signalr across two replicas (PostgreSQL + Redis)', () => {
  it('a connection on B receives notice-changed for a notice published through A', async (t) => {
    const { conn, events } = await connect(B, await login(B));
    try {
      assert.equal(conn.state, signalR.HubConnectionState.Connected);
      const title = 'signalr from A ' + runID;
      const t0 = Date.now();
      await publish(A, title);
      const got = await waitFor(events, 'notice-changed', published(title), 3000);
      t.diagnostic(`notice published through A reached the connection on B after ${got.t - t0} ms`);
      assert.ok(got.t - t0 < 1000, `notice-changed after ${got.t - t0} ms, want < 1000`);
      assert.equal(got.args[0].reason, 'published');
    } finally {
      await conn.stop();
    }
  });

  it('a logout through A gives force-logout on B and a close without reconnecting', async (t) => {
    const token = await login(A);
    const { events } = await connect(B, token);
    const t0 = Date.now();
    await must(A, 'POST', '/api/v1/auth/logout', undefined, token);
    const fl = await waitFor(events, 'force-logout', (e) => e.target === 'force-logout', 3000);
    const closed = await waitFor(events, 'close', (e) => e.state === 'closed', 6000);
    t.diagnostic(`force-logout after ${fl.t - t0} ms, closed after ${closed.t - t0} ms (${closed.error})`);
    assert.ok(fl.t - t0 < 1000, `force-logout after ${fl.t - t0} ms, want < 1000`);
    assert.ok(closed.t >= fl.t, 'the close follows the force-logout');
    assert.ok(!events.some((e) => e.state === 'reconnecting'), `no reconnect after force-logout: ${JSON.stringify(events)}`);
  });

  it('an idle connection survives 35 s (server pings within the client timeout)', async (t) => {
    const { conn, events } = await connect(B, await login(B));
    try {
      await new Promise((r) => setTimeout(r, 35000));
      assert.equal(conn.state, signalR.HubConnectionState.Connected);
      assert.deepEqual(events.filter((e) => e.state), [], 'no reconnect or close while idle');
      const title = 'after idle ' + runID;
      await publish(A, title);
      await waitFor(events, 'notice-changed after 35 s idle', published(title), 3000);
      t.diagnostic('connected after 35 s idle and still receiving');
    } finally {
      await conn.stop();
    }
  });

  it('reconnects after the replica it is connected to restarts', async (t) => {
    const { conn, events } = await connect(B, await login(B));
    try {
      const t0 = Date.now();
      B.stop();
      if (B.child.exitCode === null) await once(B.child, 'exit');
      await waitFor(events, 'reconnecting', (e) => e.state === 'reconnecting', 5000);
      B = await startKernel({ bin: kernelBin, tmpRoot, name: 'B', port: B.port, settings: settings(B.port) });
      const back = await waitFor(events, 'reconnected', (e) => e.state === 'reconnected', 45000);
      t.diagnostic(`B restarted; reconnected after ${back.t - t0} ms`);
      assert.equal(conn.state, signalR.HubConnectionState.Connected);
      const title = 'after restart ' + runID;
      await publish(A, title);
      await waitFor(events, 'notice-changed after the restart', published(title), 3000);
    } finally {
      await conn.stop();
    }
  });
});
