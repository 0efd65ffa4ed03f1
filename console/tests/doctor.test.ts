// The setup doctor dialog's texts (issue 29 item 6): both languages
// complete, the same placeholders, no vue-i18n syntax, no key shared with
// the other packs or with the kernel's check messages (those are msgKeys of
// the kernel's packs, host/errcode/locales; host/idp/doctor's
// TestEveryDoctorKeyHasTexts checks them); every doctor key the sources use
// exists.
import { describe, it, expect } from 'vitest'
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { doctor } from '../src/i18n/doctor'
import { ui } from '../src/i18n/ui'
import { admin } from '../src/i18n/admin'
import { LOCALES, kernelPacks } from '../src/i18n'

function files(dir: string, out: string[] = []): string[] {
  for (const n of readdirSync(dir)) {
    const p = join(dir, n)
    if (statSync(p).isDirectory()) files(p, out)
    else if (/\.(vue|ts)$/.test(n)) out.push(p)
  }
  return out
}

describe('doctor texts', () => {
  it('every key has text in both languages, with the same placeholders', () => {
    const keys = new Set([...Object.keys(doctor['en-US']), ...Object.keys(doctor['zh-CN'])])
    expect(keys.size).toBeGreaterThan(10)
    const ph = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort().join(',')
    for (const k of keys) {
      expect(k.startsWith('doctor.'), k).toBe(true)
      for (const l of LOCALES) expect(doctor[l][k]?.trim(), `${l} ${k}`).toBeTruthy()
      expect(ph(doctor['en-US'][k]), k).toBe(ph(doctor['zh-CN'][k]))
      expect(/[@|]/.test(doctor['en-US'][k] + doctor['zh-CN'][k]), `${k}: vue-i18n syntax characters`).toBe(false)
      expect(ui['en-US'][k] ?? admin['en-US'][k], `${k} is also a ui/admin key`).toBeUndefined()
      expect(kernelPacks['en-US'][k], `${k} is also a kernel msgKey`).toBeUndefined()
    }
  })
  it("the kernel's packs hold the check messages the dialog shows by key", () => {
    const kernelKeys = Object.keys(kernelPacks['en-US']).filter((k) => k.startsWith('doctor.'))
    expect(kernelKeys).toContain('doctor.dns.fail')
    expect(kernelKeys.length).toBeGreaterThan(30)
    for (const k of kernelKeys) expect(kernelPacks['zh-CN'][k]?.trim(), `zh-CN ${k}`).toBeTruthy()
  })
  it("every doctor key the sources use exists", () => {
    const used = new Set<string>()
    for (const f of files(join(__dirname, '../src'))) {
      for (const m of readFileSync(f, 'utf8').matchAll(/\$?\bt\('(doctor\.[\w.]+)'/g)) used.add(m[1])
    }
    expect(used.size).toBeGreaterThan(5)
    for (const k of used) for (const l of LOCALES) expect(doctor[l][k], `${l} ${k}`).toBeTruthy()
  })
})
