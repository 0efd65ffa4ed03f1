'use strict';
// The processes under test: the test OpenID provider (testissuer) and the
// kernel binary, one per deployment shape, each with its own content root
// (appsettings.json, SQLite database) in a temporary directory.
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const readline = require('node:readline');

const children = new Set();
function killAll() {
  for (const c of children) {
    try {
      c.kill('SIGTERM');
    } catch {
      // already gone
    }
  }
}
process.on('exit', killAll);

// freePort asks the system for a free TCP port on 127.0.0.1.
function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// startIssuer runs testissuer and resolves with its first output line
// ({url, clientId, clientSecret}). Closing its stdin (at exit) stops it.
function startIssuer(bin) {
  const child = spawn(bin, ['-addr', '127.0.0.1:0'], { stdio: ['pipe', 'pipe', 'pipe'] });
  children.add(child);
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  return new Promise((resolve, reject) => {
    const rl = readline.createInterface({ input: child.stdout });
    rl.once('line', (line) => {
      try {
        resolve({ ...JSON.parse(line), stop: () => child.stdin.end() });
      } catch (e) {
        reject(new Error('testissuer printed ' + line + ': ' + e.message));
      }
    });
    child.once('exit', (code) => reject(new Error('testissuer exited with ' + code + ': ' + stderr)));
  });
}

// Kernel is one kernel process with its log file.
class Kernel {
  constructor(name, dir, port) {
    this.name = name;
    this.dir = dir;
    this.port = port;
    this.base = 'http://127.0.0.1:' + port;
    this.logFile = path.join(dir, 'kernel.log');
  }

  // logTail returns the last lines of the kernel's log.
  logTail(lines = 40) {
    try {
      return fs.readFileSync(this.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch (e) {
      return '(no log: ' + e.message + ')';
    }
  }

  stop() {
    if (this.child && this.child.exitCode === null) this.child.kill('SIGTERM');
  }
}

// startKernel writes appsettings.json into a fresh content root under
// tmpRoot, starts `adminkernel serve --environment Development` there and
// resolves once /health/ready answers 200. It rejects with the log when
// the process exits first (a settings error, for example) or after 30 s.
async function startKernel({ bin, tmpRoot, name, port, settings }) {
  const dir = fs.mkdtempSync(path.join(tmpRoot, name + '-'));
  fs.writeFileSync(path.join(dir, 'appsettings.json'), JSON.stringify(settings, null, 2));
  const k = new Kernel(name, dir, port);
  const log = fs.openSync(k.logFile, 'a');
  const env = { ...process.env };
  for (const key of Object.keys(env)) {
    if (/^(Service|Api|Logging)__/i.test(key) || key === 'ADMINKERNEL_ENVIRONMENT') delete env[key];
  }
  k.child = spawn(bin, ['serve', '--environment', 'Development', '--content-root', dir], {
    cwd: dir, env, stdio: ['ignore', log, log],
  });
  fs.closeSync(log);
  children.add(k.child);
  let exited = null;
  k.child.once('exit', (code, signal) => { exited = { code, signal }; });
  const deadline = Date.now() + 30000;
  for (;;) {
    if (exited) {
      throw new Error(`kernel ${name} exited (${exited.code ?? exited.signal}) before it was ready; its log:\n${k.logTail()}`);
    }
    try {
      const r = await fetch(k.base + '/health/ready');
      if (r.status === 200) return k;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      k.stop();
      throw new Error(`kernel ${name} not ready after 30 s; its log:\n${k.logTail()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

module.exports = { freePort, startIssuer, startKernel };
