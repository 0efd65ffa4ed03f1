'use strict';
// Two kernel replicas on one PostgreSQL database (created for the run,
// dropped at the end) and one Redis (a key prefix of the run): the shared
// setup of realtime.test.js and signalr.test.js.
//
// Needs psql and a PostgreSQL at ADMINKERNEL_TEST_POSTGRES (default
// postgres://postgres@127.0.0.1:5432/test) and a Redis at
// ADMINKERNEL_TEST_REDIS (default 127.0.0.1:6379); an unreachable server
// fails the suite and says which.
const { execFileSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { api } = require('./deploy');
const { freePort, startKernel } = require('./procs');

const adminPassword = 'Seed#Admin2026!';
const pgAdmin = process.env.ADMINKERNEL_TEST_POSTGRES || 'postgres://postgres@127.0.0.1:5432/test?sslmode=disable';
const redisAddr = process.env.ADMINKERNEL_TEST_REDIS || '127.0.0.1:6379';

function psql(sql) {
  try {
    execFileSync('psql', [pgAdmin, '-v', 'ON_ERROR_STOP=1', '-qc', sql], { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    throw new Error(`PostgreSQL at ${pgAdmin.replace(/\/\/[^@]*@/, '//…@')} (ADMINKERNEL_TEST_POSTGRES): ${sql}: ${e.stderr || e.message}`);
  }
}

// redisReachable fails with a clear message when no Redis answers.
function redisReachable() {
  const [host, port] = redisAddr.split(':');
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(port), host, () => { s.end(); resolve(); });
    s.once('error', (e) => reject(new Error(`Redis at ${redisAddr} (ADMINKERNEL_TEST_REDIS) is needed: ${e.message}`)));
  });
}

// must calls the API of a replica and fails on any code but 0.
async function must(kernel, method, p, body, token) {
  const r = await api(kernel, method, p, body, token);
  if (r.code !== 0) throw new Error(`${kernel.name}: ${method} ${p} = HTTP ${r.http} code ${r.code} ${r.msgKey}: ${JSON.stringify(r.data)}`);
  return r.data;
}

// startReplicas starts A (which migrates the new database) then B, logs
// the super-admin in and switches the rate limit off. tag names the run's
// database, Redis prefix and signing key. The answer holds kernels.A and
// kernels.B, the admin token and runID; restart(name) starts a replica
// again on its port; stop() ends both and removes the database, the Redis
// keys and the temporary directory.
async function startReplicas({ kernelBin, tag }) {
  if (!fs.existsSync(kernelBin)) throw new Error(`kernel binary ${kernelBin} is missing: run make test-browser`);
  await redisReachable();
  const runID = crypto.randomBytes(6).toString('hex');
  const dbName = `ak_browser_${tag}_${runID}`;
  const redisPrefix = `ak:browser-${tag}:${runID}:`;
  const u = new URL(pgAdmin);
  u.pathname = '/' + dbName;
  const settings = (port) => ({
    Service: {
      Http: { ListenAddress: 'http://127.0.0.1:' + port },
      Database: { DbType: 'PostgreSQL', ConnectionString: u.toString() },
      Cache: { Provider: 'Redis', Redis: { Address: redisAddr, KeyPrefix: redisPrefix } },
      Seed: { AdminPassword: adminPassword },
      Security: {
        Jwt: { SigningKey: `browser-${tag}-signing-key-` + 'k'.repeat(32) },
        Password: { Pbkdf2Iterations: 100000 },
      },
    },
  });
  psql(`CREATE DATABASE ${dbName}`);
  const tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), `ak-${tag}-`));
  const r = { runID, adminPassword, kernels: {}, admin: '' };
  const start = (name, port) => startKernel({ bin: kernelBin, tmpRoot, name, port, settings: settings(port) });
  r.stop = async () => {
    for (const k of Object.values(r.kernels)) if (k) k.stop();
    // Give the processes their graceful stop before the database goes.
    await new Promise((res) => setTimeout(res, 1500));
    psql(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    try {
      const [h, p] = redisAddr.split(':');
      const keys = execFileSync('redis-cli', ['-h', h, '-p', p, '--scan', '--pattern', redisPrefix + '*']).toString().split('\n').filter(Boolean);
      for (let i = 0; i < keys.length; i += 500) execFileSync('redis-cli', ['-h', h, '-p', p, 'DEL', ...keys.slice(i, i + 500)]);
    } catch {
      // redis-cli missing: the keys of this run stay under its prefix
    }
    fs.rmSync(tmpRoot, { recursive: true, force: true });
  };
  try {
    const [pa, pb] = [await freePort(), await freePort()];
    r.kernels.A = await start('A', pa);
    r.kernels.B = await start('B', pb);
    r.admin = (await must(r.kernels.A, 'POST', '/api/v1/auth/login', { account: 'superAdmin', password: adminPassword })).accessToken;
    await must(r.kernels.A, 'PUT', '/api/v1/sys/config/batch', [{ configKey: 'sys.security.rateLimit.enabled', configValue: 'false' }], r.admin);
  } catch (e) {
    await r.stop().catch(() => {});
    throw e;
  }
  // restart stops the replica, awaits between() (what the test checks
  // while it is down) and starts it again on the same port.
  r.restart = async (name, between = async () => {}) => {
    const old = r.kernels[name];
    old.stop();
    if (old.child.exitCode === null) await new Promise((res) => old.child.once('exit', res));
    await between();
    r.kernels[name] = await start(name, old.port);
    return r.kernels[name];
  };
  return r;
}

module.exports = { startReplicas, must, adminPassword };
