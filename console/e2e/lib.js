// Helpers of the console's end-to-end suite: Chromium with the launch flags
// of the browser suite (e2e/browser/lib/browser.js, copied: that package's
// playwright-core is installed separately), the kernel and test-issuer
// processes from e2e/browser/lib/procs.js (node built-ins only: imported),
// and a tiny API client for the setup steps.
import { createRequire } from 'node:module'
import { chromium } from 'playwright-core'

const require = createRequire(import.meta.url)
export const { freePort, startIssuer, startKernel } = require('../../e2e/browser/lib/procs.js')

export function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
}

export async function api(base, method, path, body, token) {
  const headers = { Accept: 'application/json' }
  if (body !== undefined) headers['Content-Type'] = 'application/json'
  if (token) headers.Authorization = 'Bearer ' + token
  const r = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await r.text()
  try {
    return { http: r.status, ...JSON.parse(text) }
  } catch {
    throw new Error(`${method} ${path}: HTTP ${r.status}, not JSON: ${text.slice(0, 200)}`)
  }
}

export async function must(base, method, path, body, token) {
  const r = await api(base, method, path, body, token)
  if (r.code !== 0) throw new Error(`${method} ${path} = HTTP ${r.http} code ${r.code} ${r.msgKey}`)
  return r.data
}

const axeSource = (() => {
  const fs = require('node:fs')
  return fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8') + ';0'
})()

// settle waits (at most 10 s) until no finite animation or transition runs:
// a dialog or message fading in has blended colours, which axe would
// measure as a contrast failure. Infinite ones (spinners) are ignored.
export async function settle(page) {
  await page.waitForFunction(() => document.getAnimations().every((a) => {
    const t = a.effect && a.effect.getTiming ? a.effect.getTiming() : {}
    return a.playState !== 'running' || t.iterations === Infinity
  }), null, { timeout: 10000 }).catch(() => {})
}

// inTransition matches axe's selector of a node inside an element that a
// Vue transition is moving (a message starting to fade out while axe runs).
const inTransition = /-(enter|leave)-(active|from|to)\b/

// axe runs axe-core on the page once it has settled and fails on any
// serious or critical violation; it returns the number of violations. A
// run that caught an element in the middle of a transition (one began after
// settle returned: a message's timed close) is run again once the page has
// settled, at most twice: blended colours are not the page's.
export async function axe(page, what, assert) {
  await settle(page)
  await page.evaluate(axeSource)
  let r
  for (let attempt = 0; ; attempt++) {
    r = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }))
    const moving = r.violations.some((v) => v.nodes.some((n) => inTransition.test(n.target.join(' '))))
    if (!moving || attempt === 2) break
    await settle(page)
  }
  // An axe that applied no rule (nothing rendered, axe not loaded) checked nothing.
  assert.ok(r.passes.length + r.violations.length > 0, `axe on ${what} applied no rule`)
  const bad = r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
  assert.deepEqual(bad.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ') + ' ' + n.html.slice(0, 160)).slice(0, 3).join(', ')}`), [], `axe on ${what}`)
  return r.violations.length
}
