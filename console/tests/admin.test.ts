// The administration pages' client logic (issue 25): both languages
// complete, the form rules agree with the API's checks, the tree builder.
import { describe, it, expect } from 'vitest'
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { ui } from '../src/i18n/ui'
import { LOCALES, i18n } from '../src/i18n'

// Every admin.* text registered in i18n/index.ts: admin.ts and the pages'
// own packs (admin-<helper>.ts), merged as the app merges them.
const admin = Object.fromEntries(
  LOCALES.map((l) => [l, Object.fromEntries(Object.entries(i18n.global.getLocaleMessage(l) as Record<string, string>).filter(([k]) => k.startsWith('admin.')))]),
) as Record<(typeof LOCALES)[number], Record<string, string>>
import { validAccount, validEmail, validPhone } from '../src/components/admin/rules'
import { toTree, usePaged } from '../src/components/admin/paged'
import { query } from '../src/api/admin'

function files(dir: string, out: string[] = []): string[] {
  for (const n of readdirSync(dir)) {
    const p = join(dir, n)
    if (statSync(p).isDirectory()) files(p, out)
    else if (/\.(vue|ts)$/.test(n)) out.push(p)
  }
  return out
}

describe('administration texts', () => {
  it('every admin key has text in both languages, with the same placeholders', () => {
    const keys = new Set([...Object.keys(admin['en-US']), ...Object.keys(admin['zh-CN'])])
    expect(keys.size).toBeGreaterThan(50)
    const ph = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort().join(',')
    for (const k of keys) {
      expect(k.startsWith('admin.'), `${k}: admin keys start with admin.`).toBe(true)
      for (const l of LOCALES) expect(admin[l][k]?.trim(), `${l} ${k}`).toBeTruthy()
      expect(ph(admin['en-US'][k]), k).toBe(ph(admin['zh-CN'][k]))
      expect(/[@|]/.test(admin['en-US'][k] + admin['zh-CN'][k]), `${k}: vue-i18n syntax characters`).toBe(false)
      expect(ui['en-US'][k], `${k} is also a ui.ts key`).toBeUndefined()
    }
  })
  it("every admin key the sources use (t('…'), tr('…')) exists in both languages", () => {
    const used = new Set<string>()
    for (const f of files(join(__dirname, '../src'))) {
      const src = readFileSync(f, 'utf8')
      for (const m of src.matchAll(/\b(?:\$?t|tr)\('(admin\.[\w.]+)'/g)) used.add(m[1])
      for (const m of src.matchAll(/run\([^\n]*?, '(admin\.[\w.]+)'\)/g)) used.add(m[1])
    }
    expect(used.size).toBeGreaterThan(40)
    for (const k of used) for (const l of LOCALES) expect(admin[l][k], `${l} ${k}`).toBeTruthy()
  })
})

describe('form rules match the API (host/user)', () => {
  it.each([
    ['alice', true],
    ['a.b-c_d@x', true],
    ['', false],
    ['with space', false],
    ['tab\tchar', false],
    ['x'.repeat(64), true],
    ['x'.repeat(65), false],
    ['用户'.repeat(32), true],
  ])('account %j -> %s', (a, ok) => expect(validAccount(a)).toBe(ok))
  it.each([
    ['+8613800000000', true],
    ['12345', true],
    ['1234', false],
    ['1'.repeat(21), false],
    ['12-345', false],
    ['1+2345', false],
  ])('phone %j -> %s', (p, ok) => expect(validPhone(p)).toBe(ok))
  it.each([
    ['a@example.com', true],
    ['a@b', true],
    ['A <a@example.com>', false],
    ['a@.example.com', false],
    ['a@example.com.', false],
    ['@example.com', false],
    ['a@', false],
    ['a b@example.com', false],
    [`${'x'.repeat(120)}@example.com`, false],
  ])('email %j -> %s', (e, ok) => expect(validEmail(e)).toBe(ok))
})

describe('helpers', () => {
  it('toTree nests by parentId, sorts by sort then id, keeps orphans as roots', () => {
    const t = toTree(
      [
        { id: 3, parentId: 1, sort: 2, n: 'c' },
        { id: 2, parentId: 1, sort: 1, n: 'b' },
        { id: 1, parentId: 0, sort: 0, n: 'a' },
        { id: 9, parentId: 77, sort: 0, n: 'orphan' },
      ],
      (r) => r.n,
    )
    expect(t.map((n) => n.label)).toEqual(['a', 'orphan'])
    expect(t[0].children.map((n) => n.label)).toEqual(['b', 'c'])
  })
  it('usePaged shows the newest reload even when an older one answers last', async () => {
    const answers: Array<(rows: string[]) => void> = []
    const pager = usePaged<string>(() => new Promise((resolve) => answers.push((rows) => resolve({ items: rows, total: rows.length } as never))))
    const first = pager.reload()
    const search = pager.reload(true)
    answers[1](['filtered'])
    await search
    expect(pager.rows).toEqual(['filtered'])
    expect(pager.loading).toBe(false)
    answers[0](['unfiltered', 'rows'])
    await first
    expect(pager.rows).toEqual(['filtered'])
    expect(pager.total).toBe(1)
    expect(pager.loading).toBe(false)
  })
  it('usePaged: a failure of an older reload does not replace the newer rows', async () => {
    const calls: Array<{ ok: (rows: string[]) => void; fail: (e: unknown) => void }> = []
    const pager = usePaged<string>(
      () => new Promise((resolve, reject) => calls.push({ ok: (rows) => resolve({ items: rows, total: rows.length } as never), fail: reject })),
    )
    const first = pager.reload()
    const second = pager.reload()
    calls[1].ok(['new'])
    await second
    calls[0].fail(new Error('late failure'))
    await first
    expect(pager.rows).toEqual(['new'])
    expect(pager.error).toBe('')
  })
  it('query leaves out empty values and encodes the rest', () => {
    expect(query({ Current: 1, Size: 20, Name: '', OrgId: null, Account: 'a b&c', Enabled: false })).toBe('?Current=1&Size=20&Account=a+b%26c&Enabled=false')
    expect(query({})).toBe('')
  })
})
