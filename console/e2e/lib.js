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
