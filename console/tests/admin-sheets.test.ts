// The spreadsheet, theme and phone-shell pieces: their texts complete in both
// languages, the file-name parsing of binary answers, and the shared page
// composable (query form, server paging, edit dialog state, permission flags).
import { describe, it, expect, beforeEach } from 'vitest'
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { createPinia, setActivePinia } from 'pinia'
import { adminSheets } from '../src/i18n/admin-sheets'
import { fileName, bytes } from '../src/components/admin/transfer'
import { useCrudPage } from '../src/components/admin/useCrudPage'
import { useApp } from '../src/stores/app'

function files(dir: string, out: string[] = []): string[] {
  for (const n of readdirSync(dir)) {
    const p = join(dir, n)
    if (statSync(p).isDirectory()) files(p, out)
    else if (/\.(vue|ts)$/.test(n)) out.push(p)
  }
  return out
}

describe('sheet, theme and shell texts', () => {
  it('every key has text in both languages with the same placeholders', () => {
    const ph = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort().join(',')
    const keys = new Set([...Object.keys(adminSheets['en-US']), ...Object.keys(adminSheets['zh-CN'])])
    for (const k of keys) {
      for (const l of ['en-US', 'zh-CN'] as const) expect(adminSheets[l][k]?.trim(), `${l} ${k}`).toBeTruthy()
      expect(ph(adminSheets['en-US'][k]), k).toBe(ph(adminSheets['zh-CN'][k]))
      expect(/[@|]/.test(adminSheets['en-US'][k] + adminSheets['zh-CN'][k]), `${k}: vue-i18n syntax`).toBe(false)
    }
  })
  it('every key of this pack the sources name exists, the built ones included', () => {
    const used = new Set<string>()
    for (const f of files(join(__dirname, '../src'))) for (const m of readFileSync(f, 'utf8').matchAll(/\bt\('(sheet\.[\w.]+|theme\.to(?:Dark|Light)|shell\.menu)'/g)) used.add(m[1])
    expect(used.size).toBeGreaterThan(20)
    for (const s of ['template', 'preview', 'validate', 'report', 'commit']) used.add(`sheet.import.busy.${s}`)
    for (const c of ['Account', 'Name', 'Nickname', 'Phone', 'Email', 'Gender', 'OrgName', 'PositionName', 'DirectorName', 'Enabled', 'IsSuperAdmin', 'CreateTime', 'Title', 'HttpMethod', 'Path', 'ResultCode', 'Success', 'OperatorName', 'Ip', 'ElapsedMs', 'ExceptionMessage'])
      used.add(`sheet.cols.${c}`)
    for (const k of used) expect(adminSheets['en-US'][k], k).toBeTruthy()
  })
})

describe('binary answers', () => {
  it.each([
    [null, 'x.xlsx'],
    ['attachment; filename="users.xlsx"', 'users.xlsx'],
    ["attachment; filename=\"a.xlsx\"; filename*=UTF-8''%E7%94%A8%E6%88%B7.xlsx", '用户.xlsx'],
    ["attachment; filename*=UTF-8''%E0%A4%A", 'x.xlsx'],
    ['attachment', 'x.xlsx'],
  ])('fileName(%s) = %s', (cd, want) => {
    expect(fileName(cd, 'x.xlsx')).toBe(want)
  })
  it('bytes', () => {
    expect(bytes(10)).toBe('10 B')
    expect(bytes(2048)).toBe('2.0 KB')
    expect(bytes(3 * 1024 * 1024)).toBe('3.0 MB')
  })
})

describe('useCrudPage', () => {
  beforeEach(() => setActivePinia(createPinia()))
  interface Row { id: number; name: string }
  interface Form { name: string; sort: number }
  function page() {
    const calls: string[] = []
    const rows: Row[] = [{ id: 1, name: 'a' }, { id: 2, name: 'b' }, { id: 3, name: 'ab' }]
    const crud = useCrudPage<Row, Form, { Name: string }>({
      codes: { add: 'POST:/x', del: 'DELETE:/x/{id}' },
      filter: () => ({ Name: '' }),
      size: 2,
      page: async (current, size, f) => {
        calls.push(`page ${current} ${size} ${f.Name}`)
        const hit = rows.filter((r) => r.name.includes(f.Name))
        return { current, size, total: hit.length, pages: Math.ceil(hit.length / size), items: hit.slice((current - 1) * size, current * size) }
      },
      blank: () => ({ name: '', sort: 0 }),
      toForm: (r) => ({ name: r.name }),
      save: async (f, editing) => void calls.push(`save ${editing?.id ?? 'new'} ${f.name} ${f.sort}`),
    })
    return { crud, calls }
  }
  it('pages with the filter, resets to the blank filter on page 1', async () => {
    const { crud, calls } = page()
    await crud.reload()
    expect(crud.pager.total).toBe(3)
    expect(crud.pager.rows.map((r) => r.id)).toEqual([1, 2])
    crud.pager.current = 2
    crud.filter.Name = 'a'
    crud.search()
    await new Promise((r) => setTimeout(r))
    expect(crud.pager.current).toBe(1)
    expect(crud.pager.total).toBe(2)
    crud.reset()
    await new Promise((r) => setTimeout(r))
    expect(crud.filter.Name).toBe('')
    expect(calls).toEqual(['page 1 2 ', 'page 1 2 a', 'page 1 2 '])
  })
  it('opens add with a blank form (plus extras) and edit with the row, and saves through save', async () => {
    const { crud, calls } = page()
    crud.openAdd({ sort: 5 })
    expect(crud.dialog).toBe(true)
    expect(crud.editing).toBe(null)
    expect(crud.form).toEqual({ name: '', sort: 5 })
    crud.form.name = 'new'
    await crud.submit()
    crud.dialog = false
    await crud.openEdit({ id: 2, name: 'b' })
    expect(crud.dialog).toBe(true)
    expect(crud.editing?.id).toBe(2)
    expect(crud.form).toEqual({ name: 'b', sort: 0 })
    await crud.submit()
    expect(calls).toEqual(['save new new 5', 'save 2 b 0'])
  })
  it('permission flags follow the caller’s codes', () => {
    const { crud } = page()
    const app = useApp()
    expect(crud.can).toEqual({ add: false, del: false })
    app.permissions = new Set(['POST:/x'])
    expect(crud.can).toEqual({ add: true, del: false })
  })
})
