// The job pages and the workbench (issue 25, c3): both languages complete,
// every jobs./wb. key the sources use exists, the editor's client checks
// agree with host/job's, and ECharts is imported modularly.
import { describe, it, expect } from 'vitest'
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { adminJobs } from '../src/i18n/admin-jobs'
import { admin } from '../src/i18n/admin'
import { ui } from '../src/i18n/ui'
import { LOCALES } from '../src/i18n'
import { parseLocal, validHeaders, validHttpUrl, validJobCode, validJSON } from '../src/components/c3/jobRules'

function files(dir: string, out: string[] = []): string[] {
  for (const n of readdirSync(dir)) {
    const p = join(dir, n)
    if (statSync(p).isDirectory()) files(p, out)
    else if (/\.(vue|ts)$/.test(n)) out.push(p)
  }
  return out
}

describe('job and workbench texts', () => {
  it('every key has text in both languages, with the same placeholders', () => {
    const keys = new Set([...Object.keys(adminJobs['en-US']), ...Object.keys(adminJobs['zh-CN'])])
    expect(keys.size).toBeGreaterThan(100)
    const ph = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort().join(',')
    for (const k of keys) {
      expect(/^(jobs|wb)\./.test(k), `${k}: keys start with jobs. or wb.`).toBe(true)
      for (const l of LOCALES) expect(adminJobs[l][k]?.trim(), `${l} ${k}`).toBeTruthy()
      expect(ph(adminJobs['en-US'][k]), k).toBe(ph(adminJobs['zh-CN'][k]))
      expect(/[@|]/.test(adminJobs['en-US'][k] + adminJobs['zh-CN'][k]), `${k}: vue-i18n syntax characters`).toBe(false)
      expect(ui['en-US'][k] ?? admin['en-US'][k], `${k} is also a ui/admin key`).toBeUndefined()
    }
  })
  it('every jobs./wb. key the sources use exists in both languages', () => {
    const used = new Set<string>()
    for (const f of files(join(__dirname, '../src'))) {
      const src = readFileSync(f, 'utf8')
      for (const m of src.matchAll(/\b(?:\$?t|tr)\('((?:jobs|wb)\.[\w.]+)'/g)) used.add(m[1])
      for (const m of src.matchAll(/run\([^\n]*?, '(jobs\.[\w.]+)'\)/g)) used.add(m[1])
      // Keys built from an enum value: t(`jobs.statusN`), t(`jobs.log.runN`), ...
      for (const m of src.matchAll(/t\(`((?:jobs|wb)\.[\w.]*?)\$\{/g)) used.add(m[1] + '*')
    }
    expect(used.size).toBeGreaterThan(60)
    for (const k of used) {
      for (const l of LOCALES) {
        if (k.endsWith('*')) expect(Object.keys(adminJobs[l]).some((x) => x.startsWith(k.slice(0, -1))), `${l} ${k}`).toBe(true)
        else expect(adminJobs[l][k], `${l} ${k}`).toBeTruthy()
      }
    }
    for (const l of LOCALES) {
      for (const n of [1, 2, 3, 4]) expect(adminJobs[l][`jobs.status${n}`]).toBeTruthy()
      for (const n of [1, 2, 3, 4, 5, 6]) expect(adminJobs[l][`jobs.log.run${n}`]).toBeTruthy()
      for (const n of [1, 2, 3]) expect(adminJobs[l][`jobs.kind${n}`] && adminJobs[l][`jobs.trigger${n}`]).toBeTruthy()
    }
  })
})

describe('job editor checks match host/job', () => {
  it.each([
    ['nightly', true],
    ['a.b_c:d-e', true],
    ['9x', true],
    ['-lead', false],
    ['.lead', false],
    ['with space', false],
    ['x'.repeat(64), true],
    ['x'.repeat(65), false],
    ['', false],
    ['日报', false],
  ])('code %j -> %s', (c, ok) => expect(validJobCode(c)).toBe(ok))
  it.each([
    ['', true],
    ['{"days":3}', true],
    ['[1,2]', true],
    ['{days:3}', false],
    ['{"a":', false],
  ])('handlerParam %j -> %s', (s, ok) => expect(validJSON(s)).toBe(ok))
  it.each([
    ['', true],
    ['{"X-Token":"abc"}', true],
    ['{"X-Token":1}', false],
    ['["a"]', false],
    ['"a"', false],
    ['{"Host":"evil"}', false],
    ['{"host":"evil"}', false],
    ['{"a:b":"c"}', false],
    ['{"A":"b\\r\\nX: y"}', false],
    ['{"":"x"}', false],
  ])('httpHeaders %j -> %s', (s, ok) => expect(validHeaders(s)).toBe(ok))
  it.each([
    ['https://example.com/hook', true],
    ['http://10.0.0.1:8080/x', true],
    ['ftp://example.com/', false],
    ['example.com/hook', false],
    ['', false],
    [`https://example.com/${'x'.repeat(2030)}`, false],
  ])('httpUrl %j -> %s', (s, ok) => expect(validHttpUrl(s)).toBe(ok))
  it('parseLocal reads the editor value as local time', () => {
    expect(parseLocal('2030-01-02 03:04:05')?.getTime()).toBe(new Date(2030, 0, 2, 3, 4, 5).getTime())
    expect(parseLocal('')).toBeNull()
    expect(parseLocal('tomorrow')).toBeNull()
  })
})

describe('chart module', () => {
  it('imports ECharts modularly (never the whole library)', () => {
    for (const f of files(join(__dirname, '../src'))) {
      const src = readFileSync(f, 'utf8')
      expect(/from 'echarts'/.test(src), `${f} imports the whole of echarts`).toBe(false)
    }
    const mod = readFileSync(join(__dirname, '../src/components/c3/echarts.ts'), 'utf8')
    expect(mod).toMatch(/from 'echarts\/core'/)
    expect(mod).toMatch(/CanvasRenderer/)
  })
})
