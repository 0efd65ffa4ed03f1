'use strict';
// The test app's web server: serves app/ (every unknown path is the
// single-page app's index.html), /config.js with the deployment's
// APP_CONFIG, and, for the same-origin shape, proxies /api and /health to
// the kernel the way a reverse proxy in front of both would.
const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');

const appDir = path.join(__dirname, '..', 'app');
const types = { '.js': 'text/javascript; charset=utf-8', '.html': 'text/html; charset=utf-8' };

// startAppServer listens on 127.0.0.1:port. opts.config is APP_CONFIG;
// opts.proxyTo ("http://127.0.0.1:<kernel port>") turns the proxy on.
function startAppServer({ port, config, proxyTo }) {
  const files = {};
  for (const f of ['index.html', 'app.js', 'sha256.js']) {
    files['/' + f] = fs.readFileSync(path.join(appDir, f));
  }
  files['/config.js'] = Buffer.from('window.APP_CONFIG = ' + JSON.stringify(config) + ';\n');
  const upstream = proxyTo ? new URL(proxyTo) : null;
  const server = http.createServer((req, res) => {
    const p = new URL(req.url, 'http://x').pathname;
    if (upstream && (p.startsWith('/api/') || p.startsWith('/health'))) {
      return proxy(req, res, upstream);
    }
    const body = files[p] || files['/index.html'];
    const type = types[path.extname(files[p] ? p : '/index.html')];
    res.writeHead(200, {
      'Content-Type': type,
      'Cache-Control': 'no-store',
      // docs/developers/frontend.md: the result page never leaks its query in a Referer.
      'Referrer-Policy': 'no-referrer',
    });
    res.end(body);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

// proxy forwards the request unchanged (Host included: the kernel's
// CallbackBaseUrl names the proxy) and streams the answer back.
function proxy(req, res, upstream) {
  const out = http.request({
    hostname: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers,
  }, (up) => {
    res.writeHead(up.statusCode, up.headers);
    up.pipe(res);
  });
  out.on('error', (err) => {
    res.writeHead(502, { 'Content-Type': 'text/plain' });
    res.end('proxy: ' + err.message);
  });
  req.pipe(out);
}

module.exports = { startAppServer };
