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
// Needs psql, PostgreSQL and Redis (lib/replicas.js says which variables
// point at them).
const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const signalR = require('@microsoft/signalr');
const { startReplicas, must, adminPassword } = require('./lib/replicas');

const kernelBin = process.env.AK_KERNEL_BIN || path.join(__dirname, '..', '..', 'bin', 'adminkernel');

let R; // the two replicas (lib/replicas.js)
let runID;
let admin;
const open = new Set();

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
  R = await startReplicas({ kernelBin, tag: 'sr' });
  ({ runID, admin } = R);
});

after(async () => {
  for (const c of open) await c.stop().catch(() => {});
  if (R) await R.stop();
});

describe('SignalR hub with @microsoft/signalr across two replicas (PostgreSQL + Redis)', () => {
  it('a connection on B receives notice-changed for a notice published through A', async (t) => {
    const { conn, events } = await connect(R.kernels.B, await login(R.kernels.B));
    try {
      assert.equal(conn.state, signalR.HubConnectionState.Connected);
      const title = 'signalr from A ' + runID;
      const t0 = Date.now();
      await publish(R.kernels.A, title);
      const got = await waitFor(events, 'notice-changed', published(title), 3000);
      t.diagnostic(`notice published through A reached the connection on B after ${got.t - t0} ms`);
      assert.ok(got.t - t0 < 1000, `notice-changed after ${got.t - t0} ms, want < 1000`);
      assert.equal(got.args[0].reason, 'published');
    } finally {
      await conn.stop();
    }
  });

  it('a logout through A gives force-logout on B and a close without reconnecting', async (t) => {
    const token = await login(R.kernels.A);
    const { events } = await connect(R.kernels.B, token);
    const t0 = Date.now();
    await must(R.kernels.A, 'POST', '/api/v1/auth/logout', undefined, token);
    const fl = await waitFor(events, 'force-logout', (e) => e.target === 'force-logout', 3000);
    const closed = await waitFor(events, 'close', (e) => e.state === 'closed', 6000);
    t.diagnostic(`force-logout after ${fl.t - t0} ms, closed after ${closed.t - t0} ms (${closed.error})`);
    assert.ok(fl.t - t0 < 1000, `force-logout after ${fl.t - t0} ms, want < 1000`);
    assert.ok(closed.t >= fl.t, 'the close follows the force-logout');
    assert.ok(!events.some((e) => e.state === 'reconnecting'), `no reconnect after force-logout: ${JSON.stringify(events)}`);
  });

  it('an idle connection survives 35 s (server pings within the client timeout)', async (t) => {
    const { conn, events } = await connect(R.kernels.B, await login(R.kernels.B));
    try {
      await new Promise((r) => setTimeout(r, 35000));
      assert.equal(conn.state, signalR.HubConnectionState.Connected);
      assert.deepEqual(events.filter((e) => e.state), [], 'no reconnect or close while idle');
      const title = 'after idle ' + runID;
      await publish(R.kernels.A, title);
      await waitFor(events, 'notice-changed after 35 s idle', published(title), 3000);
      t.diagnostic('connected after 35 s idle and still receiving');
    } finally {
      await conn.stop();
    }
  });

  it('reconnects after the replica it is connected to restarts', async (t) => {
    const { conn, events } = await connect(R.kernels.B, await login(R.kernels.B));
    try {
      const t0 = Date.now();
      await R.restart('B', () => waitFor(events, 'reconnecting', (e) => e.state === 'reconnecting', 5000));
      const back = await waitFor(events, 'reconnected', (e) => e.state === 'reconnected', 45000);
      t.diagnostic(`B restarted; reconnected after ${back.t - t0} ms`);
      assert.equal(conn.state, signalR.HubConnectionState.Connected);
      const title = 'after restart ' + runID;
      await publish(R.kernels.A, title);
      await waitFor(events, 'notice-changed after the restart', published(title), 3000);
    } finally {
      await conn.stop();
    }
  });
});
