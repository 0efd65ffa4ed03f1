// The menus, modules, config-center and error-catalog pages' client logic
// (issue 25): both languages complete, the config value rules agree with
// the kernel's registry rules (host/sysconfig Entry.Valid), family keys
// resolve, the icon subset is what the picker offers.
import { describe, it, expect } from 'vitest'
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { adminSetup } from '../src/i18n/admin-setup'
import { admin } from '../src/i18n/admin'
import { ui } from '../src/i18n/ui'
import { LOCALES } from '../src/i18n'
import { entryOf, validValue, hint, allRows } from '../src/components/c1/configkinds'
import { shippedIcons } from '../src/components/c1/icons'
import type { SchemaEntry } from '../src/api/system'

function files(dir: string, out: string[] = []): string[] {
  for (const n of readdirSync(dir)) {
    const p = join(dir, n)
    if (statSync(p).isDirectory()) files(p, out)
    else if (/\.(vue|ts)$/.test(n)) out.push(p)
  }
  return out
}

describe('c1 texts', () => {
  it('every c1 key has text in both languages, with the same placeholders', () => {
    const keys = new Set([...Object.keys(adminSetup['en-US']), ...Object.keys(adminSetup['zh-CN'])])
    const ph = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort().join(',')
    for (const k of keys) {
      expect(k.startsWith('c1.'), k).toBe(true)
      for (const l of LOCALES) expect(adminSetup[l][k]?.trim(), `${l} ${k}`).toBeTruthy()
      expect(ph(adminSetup['en-US'][k]), k).toBe(ph(adminSetup['zh-CN'][k]))
      expect(/[@|]/.test(adminSetup['en-US'][k] + adminSetup['zh-CN'][k]), `${k}: vue-i18n syntax characters`).toBe(false)
      expect(ui['en-US'][k] ?? admin['en-US'][k], `${k} is also another pack's key`).toBeUndefined()
    }
  })
  it("every c1 key the sources use exists in both languages", () => {
    const used = new Set<string>()
    for (const f of files(join(__dirname, '../src'))) {
      const src = readFileSync(f, 'utf8')
      for (const m of src.matchAll(/'(c1\.[\w.]+)'/g)) used.add(m[1])
    }
    expect(used.size).toBeGreaterThan(40)
    for (const k of used) for (const l of LOCALES) expect(adminSetup[l][k], `${l} ${k}`).toBeTruthy()
  })
})

const e = (p: Partial<SchemaEntry>): SchemaEntry => ({ key: 'k', kind: 'string', maxLen: 0, optional: false, default: '', group: 'g', expected: '', description: '', ...p })

describe('config value rules (host/sysconfig Entry.Valid)', () => {
  const cases: [string, SchemaEntry, string, boolean][] = [
    ['bool true', e({ kind: 'bool' }), 'true', true],
    ['bool TRUE is not strict', e({ kind: 'bool' }), 'TRUE', false],
    ['bool 1', e({ kind: 'bool' }), '1', false],
    ['int in range', e({ kind: 'int', min: 1, max: 1440 }), '120', true],
    ['int above', e({ kind: 'int', min: 1, max: 1440 }), '99999999999', false],
    ['int below', e({ kind: 'int', min: 1, max: 1440 }), '0', false],
    ['int not a number', e({ kind: 'int', min: 1, max: 1440 }), '1.5', false],
    ['int blank', e({ kind: 'int', min: 1, max: 9 }), '', false],
    ['optional int blank', e({ kind: 'int', min: 1, max: 9, optional: true }), ' ', true],
    ['enum value', e({ kind: 'enum', values: ['deny', 'provision'] }), 'provision', true],
    ['enum other case', e({ kind: 'enum', values: ['deny', 'provision'] }), 'Deny', false],
    ['url blank', e({ kind: 'url', maxLen: 2048 }), '', true],
    ['url path', e({ kind: 'url', maxLen: 2048 }), '/logo.png', true],
    ['url protocol-relative', e({ kind: 'url', maxLen: 2048 }), '//evil.example/x', false],
    ['url https', e({ kind: 'url', maxLen: 2048 }), 'https://example.com/a', true],
    ['url javascript', e({ kind: 'url', maxLen: 2048 }), 'javascript:alert(1)', false],
    ['url with a space', e({ kind: 'url', maxLen: 2048 }), '/a b', false],
    ['url too long', e({ kind: 'url', maxLen: 10 }), '/0123456789', false],
    ['ids', e({ kind: 'idList' }), '1, 2,3', true],
    ['ids blank', e({ kind: 'idList' }), '', true],
    ['ids zero', e({ kind: 'idList' }), '1,0', false],
    ['ids empty part', e({ kind: 'idList' }), '1,,2', false],
    ['string fits (runes)', e({ kind: 'string', maxLen: 3 }), '中文字', true],
    ['string too long', e({ kind: 'string', maxLen: 3 }), 'abcd', false],
  ]
  for (const [name, entry, v, ok] of cases) it(name, () => expect(validValue(entry, v)).toBe(ok))

  it('resolves exact keys before family patterns, and family codes by the kernel pattern', () => {
    const schema = [e({ key: 'sys.externalauth.*.enabled', kind: 'bool' }), e({ key: 'sys.site.title', maxLen: 128 })]
    expect(entryOf(schema, 'sys.site.title')?.maxLen).toBe(128)
    expect(entryOf(schema, 'sys.externalauth.github.enabled')?.kind).toBe('bool')
    expect(entryOf(schema, 'sys.externalauth.a.b.enabled')).toBeUndefined()
    expect(entryOf(schema, 'sys.externalauthXgithubXenabled')).toBeUndefined()
    expect(entryOf(schema, 'biz.free')).toBeUndefined()
  })
  it('describes every kind with a text of both languages', () => {
    for (const kind of ['string', 'bool', 'int', 'enum', 'url', 'idList'] as const) {
      const [k] = hint(e({ kind, maxLen: kind === 'string' ? 5 : 0 }))
      for (const l of LOCALES) expect(adminSetup[l][k], `${l} ${k}`).toBeTruthy()
    }
  })
  it('reads every page of a group', async () => {
    const rows = Array.from({ length: 230 }, (_, i) => i)
    const got = await allRows(async (current) => ({ items: rows.slice((current - 1) * 100, current * 100), total: rows.length }))
    expect(got).toEqual(rows)
  })
})

describe('icon picker', () => {
  it('offers the shipped subset, menu seed icons included', () => {
    expect(shippedIcons.has('ph:list-dashes-duotone')).toBe(true)
    expect(shippedIcons.has('ph:warning-octagon-duotone')).toBe(true)
    expect(shippedIcons.has('mdi:not-shipped')).toBe(false)
  })
})
