// The files and notices pages' client logic (issue 25): the incremental
// SHA-256 of the chunked upload against node's, the chunk size bound, the
// notice action rules against host/notice's SitePath and validAction, and
// the packs of admin-content.ts.
import { describe, it, expect } from 'vitest'
import { createHash, randomBytes } from 'node:crypto'
import { Blob as NodeBlob } from 'node:buffer'
import { Sha256, hashFile } from '../src/components/file/sha256'
import { chunkSize } from '../src/components/file/upload'
import { sitePath, validAction, callsApi, needsActionConfirm, actionSummary } from '../src/components/notice/rules'
import { adminContent } from '../src/i18n/admin-content'
import { admin } from '../src/i18n/admin'
import { RECYCLE_TYPES } from '../src/api/content'

const node = (b: Uint8Array) => createHash('sha256').update(b).digest('hex')

describe('sha256', () => {
  it.each([0, 1, 55, 56, 63, 64, 65, 119, 120, 127, 128, 1000, 65537])('%i bytes in one update', (n) => {
    const b = new Uint8Array(randomBytes(n))
    expect(new Sha256().update(b).hex()).toBe(node(b))
  })
  it('the same hash whatever the slices', () => {
    const b = new Uint8Array(randomBytes(300_001))
    for (const step of [1, 7, 63, 64, 65, 4096, 100_000]) {
      const h = new Sha256()
      for (let i = 0; i < b.length; i += step) h.update(b.subarray(i, i + step))
      expect(h.hex(), `step ${step}`).toBe(node(b))
    }
  })
  it('known vectors', () => {
    expect(new Sha256().hex()).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855')
    expect(new Sha256().update(new TextEncoder().encode('abc')).hex()).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  })
  // node's Blob (jsdom's has no arrayBuffer), the browser's API.
  it('hashFile reads a Blob slice by slice with progress', async () => {
    const b = new Uint8Array(randomBytes(1_000_003))
    const seen: number[] = []
    expect(await hashFile(new NodeBlob([b]) as unknown as Blob, (n) => seen.push(n), 300_000)).toBe(node(b))
    expect(seen).toEqual([300_000, 600_000, 900_000, 1_000_003])
  })
})

describe('chunk size', () => {
  it('1 MiB, and never more than 10 000 chunks (the kernel bound)', () => {
    expect(chunkSize(0)).toBe(1 << 20)
    expect(chunkSize(5 << 20)).toBe(1 << 20)
    for (const total of [10240 * (1 << 20), 10 * (1 << 30) + 17, 123_456_789_012]) expect(Math.ceil(total / chunkSize(total))).toBeLessThanOrEqual(10000)
  })
})

describe('notice action rules (host/notice SitePath, validAction)', () => {
  it.each([
    ['/', true],
    ['/system/user?id=1#x', true],
    ['/api/v1/biz/approve/7', true],
    ['', false],
    ['system/user', false],
    ['//evil.example/x', false],
    ['/\\evil.example', false],
    ['https://evil.example/', false],
    ['/a b', false],
    ['/a\tb', false],
    ['/a\\b', false],
    ['/a\u0000', false],
    ['/' + 'x'.repeat(1023), true],
    ['/' + 'x'.repeat(1024), false],
  ])('site path %j -> %s', (u, ok) => expect(sitePath(u)).toBe(ok))
  const ok = { label: 'Open', method: 'GET', url: '/system/user', style: '', confirm: '' }
  it.each([
    [ok, true],
    [{ ...ok, method: 'POST', style: 'danger', confirm: 'Sure?' }, true],
    [{ ...ok, label: ' ' }, false],
    [{ ...ok, label: 'x'.repeat(65) }, false],
    [{ ...ok, label: '按'.repeat(64) }, true],
    [{ ...ok, method: 'DELETE' }, false],
    [{ ...ok, style: 'fancy' }, false],
    [{ ...ok, confirm: 'x'.repeat(257) }, false],
    [{ ...ok, url: 'javascript:alert(1)' }, false],
  ])('action %j -> %s', (a, want) => expect(validAction(a)).toBe(want))
})

describe('admin-content texts', () => {
  it('both languages, the same keys and placeholders, no key shared with admin.ts', () => {
    expect(Object.keys(adminContent['zh-CN']).sort()).toEqual(Object.keys(adminContent['en-US']).sort())
    for (const k of Object.keys(adminContent['en-US'])) expect(admin['en-US'][k], `${k} is also in admin.ts`).toBeUndefined()
  })
  it('every recycle type and notice enum has its text', () => {
    for (const l of ['en-US', 'zh-CN'] as const) {
      for (const k of RECYCLE_TYPES) expect(adminContent[l][`admin.recycle.type.${k}`], `${l} ${k}`).toBeTruthy()
      for (const n of [1, 2, 3]) expect(adminContent[l][`admin.notice.type${n}`]).toBeTruthy()
      for (const n of [0, 1, 2]) expect(adminContent[l][`admin.notice.receiver${n}`]).toBeTruthy()
    }
  })
})

describe('notice actions the reader confirms (host/notice CallsAPI)', () => {
  it.each([
    [{ method: 'GET', url: '/system/user?x=1' }, false, false],
    [{ method: 'GET', url: '/api/v1/sys/notice/page?Title=x' }, true, false],
    [{ method: 'GET', url: '/API/v1/sys/user/page' }, true, false],
    [{ method: 'GET', url: '/api' }, true, false],
    [{ method: 'GET', url: '/apix' }, false, false],
    [{ method: 'POST', url: '/api/v1/sys/recycle/user/5/restore' }, true, true],
    [{ method: 'post', url: '/system/user' }, true, true],
  ])('%j calls the API %s, confirmed %s', (a, api, confirm) => {
    expect(callsApi(a)).toBe(api)
    expect(needsActionConfirm(a)).toBe(confirm)
  })
  it('the confirmation names method, path and publisher', () => {
    expect(actionSummary({ method: 'post', url: '/api/v1/sys/recycle/user/5/restore' }, 'Ann (ann)')).toEqual({
      method: 'POST',
      path: '/api/v1/sys/recycle/user/5/restore',
      publisher: 'Ann (ann)',
    })
    expect(actionSummary({ method: 'POST', url: '/api/x' }, null).publisher).toBe('?')
    for (const pack of Object.values(adminContent)) {
      const text = (pack as Record<string, string>)['admin.notice.actionCallConfirm']
      expect(text).toContain('{method}')
      expect(text).toContain('{path}')
      expect(text).toContain('{publisher}')
    }
  })
})
