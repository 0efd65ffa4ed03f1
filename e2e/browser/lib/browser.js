'use strict';
// Chromium (Debian's /usr/bin/chromium) through playwright-core, and what a
// scenario records to explain a failure: every document and fetch answer
// (status, method, URL, Location) and the cookies with their attributes.
const { chromium } = require('playwright-core');

const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';

// launch starts a headless Chromium. Playwright gives each launch a fresh
// temporary profile (user-data dir), deleted on close; the flags keep it
// off the closed network (no component updates, sync or background calls)
// and map the test names to 127.0.0.1.
function launch() {
  return chromium.launch({
    executablePath,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--host-resolver-rules=MAP *.example.test 127.0.0.1, MAP *.other.test 127.0.0.1',
    ],
  });
}

// Recorder keeps the hops of one browser context.
class Recorder {
  constructor(ctx) {
    this.ctx = ctx;
    this.hops = [];
    const t0 = Date.now();
    ctx.on('response', (r) => {
      const req = r.request();
      const type = req.resourceType();
      if (type !== 'document' && type !== 'fetch' && type !== 'xhr') return;
      const loc = r.headers().location;
      this.hops.push(`+${Date.now() - t0}ms ${r.status()} ${req.method()} ${r.url()}${loc ? ' -> ' + loc : ''}`);
    });
    ctx.on('requestfailed', (req) => {
      this.hops.push(`+${Date.now() - t0}ms FAILED ${req.method()} ${req.url()}: ${req.failure() && req.failure().errorText}`);
    });
  }

  // redirects returns the Location headers seen so far.
  locations() {
    return this.hops.map((h) => h.split(' -> ')[1]).filter(Boolean);
  }

  async report() {
    let cookies = [];
    try {
      cookies = await this.ctx.cookies();
    } catch (e) {
      cookies = [{ name: '(cookies unavailable: ' + e.message + ')' }];
    }
    const c = cookies.map((k) => `  ${k.name}=${String(k.value || '').slice(0, 16)}${(k.value || '').length > 16 ? '…' : ''}` +
      ` domain=${k.domain} path=${k.path} httpOnly=${k.httpOnly} secure=${k.secure} sameSite=${k.sameSite}` +
      ` expires=${k.expires === -1 ? 'session' : new Date(k.expires * 1000).toISOString()}`);
    return ['redirect hops and calls:', ...this.hops.map((h) => '  ' + h), 'cookies:', ...(c.length ? c : ['  (none)'])].join('\n');
  }
}

module.exports = { launch, Recorder };
