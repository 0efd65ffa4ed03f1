import { describe, it, expect } from 'vitest'
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { kernelPacks, LOCALES, msgText, errorText } from '../src/i18n'
import { ui } from '../src/i18n/ui'
import { admin } from '../src/i18n/admin'
import { doctor } from '../src/i18n/doctor'
import { ApiError } from '../src/api/client'
import codes from '../src/codes.generated.json'

function files(dir: string, out: string[] = []): string[] {
  for (const n of readdirSync(dir)) {
    const p = join(dir, n)
    if (statSync(p).isDirectory()) files(p, out)
    else if (/\.(vue|ts)$/.test(n)) out.push(p)
  }
  return out
}

describe('language packs: one source of truth, no missing text', () => {
  it('every msgKey of the kernel packs has text in both languages', () => {
    const keys = new Set([...Object.keys(kernelPacks['en-US']), ...Object.keys(kernelPacks['zh-CN'])])
    expect(keys.size).toBeGreaterThan(50)
    for (const l of LOCALES) for (const k of keys) expect(kernelPacks[l][k]?.trim(), `${l} ${k}`).toBeTruthy()
  })
  it("every code of the kernel's catalog has its msgKey in both packs", () => {
    for (const [code, key] of Object.entries(codes as Record<string, string>)) {
      for (const l of LOCALES) expect(kernelPacks[l][key], `${code} ${key} (${l})`).toBeTruthy()
    }
  })
  it('every UI key has text in both languages, with the same placeholders', () => {
    const keys = new Set([...Object.keys(ui['en-US']), ...Object.keys(ui['zh-CN'])])
    const ph = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort().join(',')
    for (const k of keys) {
      for (const l of LOCALES) expect(ui[l][k]?.trim(), `${l} ${k}`).toBeTruthy()
      expect(ph(ui['en-US'][k]), k).toBe(ph(ui['zh-CN'][k]))
      expect(/[@|]/.test(ui['en-US'][k] + ui['zh-CN'][k]), `${k}: vue-i18n syntax characters`).toBe(false)
    }
  })
  it("every t('…') key the sources use exists", () => {
    const used = new Set<string>()
    for (const f of files(join(__dirname, '../src'))) {
      for (const m of readFileSync(f, 'utf8').matchAll(/\$?\bt\('([\w.]+)'/g)) used.add(m[1])
    }
    expect(used.size).toBeGreaterThan(30)
    for (const k of used) expect(ui['en-US'][k] ?? admin['en-US'][k] ?? doctor['en-US'][k], k).toBeTruthy()
  })
})

describe('error texts', () => {
  it('fills the args of a msgKey and follows the locale', () => {
    const e = new ApiError(40004, 'error.auth.accountLocked', { lockMinutes: 10 })
    expect(msgText(e.msgKey, e.args, 'en-US')).toContain('10')
    expect(msgText(e.msgKey, e.args, 'zh-CN')).toContain('10')
    expect(msgText(e.msgKey, e.args, 'zh-CN')).not.toBe(msgText(e.msgKey, e.args, 'en-US'))
    expect(errorText(e)).not.toContain('{lockMinutes}')
  })
  it('an unknown code falls back to the generic text; a network failure has its own', () => {
    expect(errorText(new ApiError(49999, 'error.code.49999'))).toBe(kernelPacks['en-US']['error._fallback'])
    expect(errorText(new TypeError('fetch failed'))).toBe(ui['en-US']['error.network'])
  })
})
