// The files page (issue 25) in chromium against the kernel binary: a
// chunked upload cut off mid-way (a chunk's connection reset), the page
// reloaded, the same file chosen again: chunk/init answers the chunks the
// kernel holds and only the missing ones are sent (progress shown), the
// stored file has the whole content's SHA-256; the same file again is an
// instant upload; an image previewed through its signed link, a PDF opened
// in a new tab on its signed link, a download, a delete, a batch delete of
// two selected rows; then the permission case (a viewer sees no upload,
// download, delete or batch button nor the selection column, and the API
// refuses the calls).
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import fs from 'node:fs'
import { start, stop, context, done, login, open, axe, shot, confirm, role, user, api, must, userPassword } from './adminlib.js'

let env
const file = 'admin-files'
const MiB = 1 << 20

before(async () => {
  env = await start('admin-files')
})
after(async () => {
  await stop(env, file)
})

const row = (page, text) => page.locator('[data-test=table] .el-table__body tr').filter({ hasText: text })
const sha = (b) => createHash('sha256').update(b).digest('hex')
const pageOf = (name) => must(env.base, 'GET', `/api/v1/sys/file/page?FileName=${encodeURIComponent(name)}`, undefined, env.adminToken)

describe('files page (issue 25)', { concurrency: 1 }, () => {
  it('chunked upload resumed after a cut and a reload, instant upload, preview, download, delete', { timeout: 180000 }, async () => {
    const ctx = await context(env)
    const page = await ctx.newPage()
    await login(env, page, 'superAdmin', env.adminPassword)
    await open(page, 'system/file/index')

    // 5 MiB + 1234 bytes: six chunks of 1 MiB (the last short); a zip by its signature.
    const big = Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), randomBytes(5 * MiB + 1230)])
    const upload = { name: 'e2e-big.zip', mimeType: 'application/zip', buffer: big }
    let phase = 'first'
    const chunks = { first: 0, second: 0, third: 0 }
    let cut
    const wasCut = new Promise((r) => (cut = r))
    await page.route('**/api/v1/sys/file/chunk', async (route) => {
      // Chunks go one after the other in index order: the third request is chunk 2.
      if (phase === 'first' && chunks.first === 2) {
        cut()
        return route.abort('connectionreset')
      }
      chunks[phase]++
      if (phase === 'second') await new Promise((r) => setTimeout(r, 250)) // long enough to see the progress
      return route.continue()
    })
    await page.setInputFiles('[data-test=file-input]', upload)
    await wasCut
    await page.locator('[data-test=upload-resume]').waitFor() // failed: the network error is shown, Resume offered
    assert.equal(chunks.first, 2)

    // The page is reloaded: it remembers the unfinished upload; the same file continues where it stopped.
    await page.reload()
    await page.locator('[data-test=upload-pending]').filter({ hasText: 'e2e-big.zip' }).waitFor()
    phase = 'second'
    const init = page.waitForResponse((r) => r.url().endsWith('/api/v1/sys/file/chunk/init'))
    await page.setInputFiles('[data-test=file-input]', upload)
    const initBody = await (await init).json()
    assert.deepEqual(initBody.data.receivedIndexes, [0, 1], 'the kernel kept the two chunks sent before the cut')
    await page.locator('[data-test=upload-phase]').filter({ hasText: '2 of 6 chunks' }).waitFor()
    const midway = Number(await page.locator('[data-test=upload-progress][role=progressbar]').getAttribute('aria-valuenow'))
    assert.ok(midway > 10 && midway < 100, `progress midway ${midway}`)
    await shot(page, 'admin-files-upload')
    await page.locator('[data-test=upload-phase]').filter({ hasText: 'Uploaded.' }).waitFor({ timeout: 60000 })
    assert.equal(chunks.second, 4, 'only the four missing chunks were sent')
    await page.locator('[data-test=upload-progress][role=progressbar][aria-valuenow="100"]').waitFor()
    const stored = await pageOf('e2e-big')
    assert.equal(stored.total, 1)
    assert.equal(stored.items[0].sizeBytes, big.length)
    assert.equal(stored.items[0].hash, sha(big))
    await row(page, 'e2e-big.zip').waitFor()

    // The same content again: an instant upload, no chunk sent.
    phase = 'third'
    await page.click('[data-test=upload-close]')
    await page.setInputFiles('[data-test=file-input]', { ...upload, name: 'e2e-again.zip' })
    await page.locator('[data-test=upload-phase]').filter({ hasText: 'Uploaded at once' }).waitFor()
    assert.equal(chunks.third, 0)
    assert.equal((await pageOf('e2e-again')).total, 1)
    await page.unroute('**/api/v1/sys/file/chunk')

    // An image: previewed through its signed link.
    const png = await page.screenshot({ clip: { x: 0, y: 0, width: 64, height: 40 } })
    await page.click('[data-test=upload-close]')
    await page.setInputFiles('[data-test=file-input]', { name: 'e2e-shot.png', mimeType: 'image/png', buffer: png })
    await row(page, 'e2e-shot.png').waitFor()
    await page.click('[data-test="preview-e2e-shot.png"]')
    const img = page.locator('[data-test=preview-img]')
    await img.waitFor()
    assert.match(await img.getAttribute('src'), /^\/api\/v1\/sys\/file\/\d+\/view\?exp=\d+&sig=/)
    await page.waitForFunction(() => {
      const i = document.querySelector('[data-test=preview-img]')
      return i && i.complete && i.naturalWidth === 64
    })
    await shot(page, 'admin-files-preview')
    await axe(page, 'the image preview')
    await page.keyboard.press('Escape')
    await page.locator('[data-test=preview-dialog]').waitFor({ state: 'hidden' })

    // A PDF: its signed link opens in a new tab (a file answer may not be framed: frame-ancestors 'none').
    const pdf = Buffer.from('%PDF-1.4\n1 0 obj <</Type /Catalog /Pages 2 0 R>> endobj\n2 0 obj <</Type /Pages /Kids [] /Count 0>> endobj\ntrailer <</Root 1 0 R>>\n%%EOF\n', 'latin1')
    await page.click('[data-test=upload-close]')
    await page.setInputFiles('[data-test=file-input]', { name: 'e2e-doc.pdf', mimeType: 'application/pdf', buffer: pdf })
    await row(page, 'e2e-doc.pdf').waitFor()
    const link = page.locator('[data-test="preview-e2e-doc.pdf"]')
    const href = await link.getAttribute('href')
    assert.match(href, /^\/api\/v1\/sys\/file\/\d+\/view\?exp=\d+&sig=/)
    assert.equal(await link.getAttribute('target'), '_blank')
    const [tab] = await Promise.all([ctx.waitForEvent('page'), link.click()])
    await tab.waitForLoadState('domcontentloaded').catch(() => {})
    assert.ok(tab.url().endsWith(href), `the new tab opened ${tab.url()}`)
    await tab.close()
    const viewed = await fetch(env.base + href)
    assert.equal(viewed.status, 200)
    assert.equal(viewed.headers.get('content-type'), 'application/pdf')
    assert.match(viewed.headers.get('content-disposition'), /^inline;/)
    assert.deepEqual(Buffer.from(await viewed.arrayBuffer()), pdf)

    // Download with the session.
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click('[data-test="download-e2e-doc.pdf"]')])
    assert.equal(dl.suggestedFilename(), 'e2e-doc.pdf')
    assert.deepEqual(fs.readFileSync(await dl.path()), pdf)

    await shot(page, 'admin-files')
    await axe(page, 'the files page')

    // Delete (confirmed).
    await page.click('[data-test="delete-e2e-doc.pdf"]')
    await confirm(page)
    await row(page, 'e2e-doc.pdf').waitFor({ state: 'detached' })
    assert.equal((await pageOf('e2e-doc')).total, 0)

    // Batch delete: two rows selected, one confirmation, one call with both ids, the list refreshed.
    const selectedButton = page.locator('[data-test=delete-selected]')
    assert.equal(await selectedButton.isDisabled(), true, 'nothing selected: the batch button is disabled')
    const ids = [(await pageOf('e2e-again')).items[0].id, (await pageOf('e2e-shot')).items[0].id]
    await row(page, 'e2e-again.zip').locator('.el-table-column--selection .el-checkbox').click()
    await row(page, 'e2e-shot.png').locator('.el-table-column--selection .el-checkbox').click()
    await selectedButton.filter({ hasText: 'Delete selected (2)' }).waitFor()
    await axe(page, 'the files page with a selection')
    const batch = page.waitForRequest((r) => r.url().endsWith('/api/v1/sys/file/batch-delete'))
    await shot(page, 'admin-files-batch')
    await selectedButton.click()
    assert.match(await page.locator('.el-message-box').textContent(), /Delete the 2 selected files\?/)
    await confirm(page)
    assert.deepEqual([...JSON.parse((await batch).postData()).ids].sort((a, b) => a - b), [...ids].sort((a, b) => a - b))
    await row(page, 'e2e-again.zip').waitFor({ state: 'detached' })
    await row(page, 'e2e-shot.png').waitFor({ state: 'detached' })
    await row(page, 'e2e-big.zip').waitFor()
    assert.equal((await pageOf('e2e-again')).total, 0)
    assert.equal((await pageOf('e2e-shot')).total, 0)
    await selectedButton.filter({ hasText: 'Delete selected (0)' }).waitFor()
    await done(ctx)
  })

  it('a viewer sees no upload, download or delete button and the API refuses the calls', { timeout: 60000 }, async () => {
    const viewer = await role(env, 'e2e-file-viewer', [600, 610, 611], { dataScope: 1 })
    const token = await user(env, 'e2e.fileviewer', [viewer])
    const ctx = await context(env, 'zh-CN')
    const page = await ctx.newPage()
    await login(env, page, 'e2e.fileviewer', userPassword)
    await open(page, 'system/file/index')
    for (const sel of ['[data-test=upload]', '[data-test=file-input]', '[data-test^=download-]', '[data-test^=delete-]', '[data-test=delete-selected]', '.el-table-column--selection']) {
      assert.equal(await page.locator(sel).count(), 0, `${sel} is shown without its code`)
    }
    await shot(page, 'admin-files-viewer')
    await axe(page, 'the files page (viewer, zh-CN)')
    const id = (await pageOf('e2e-big')).items[0].id
    for (const [method, path, body] of [
      ['POST', '/api/v1/sys/file/chunk/init', { fileHash: 'a'.repeat(64), fileName: 'x.zip', totalSize: 10, chunkCount: 1 }],
      ['DELETE', `/api/v1/sys/file/${id}`, undefined],
      ['POST', '/api/v1/sys/file/batch-delete', { ids: [id] }],
    ]) {
      const r = await api(env.base, method, path, body, token)
      assert.equal(r.http, 403, `${method} ${path} answered ${r.http} ${r.code}`)
    }
    const dl = await fetch(`${env.base}/api/v1/sys/file/${id}/download`, { headers: { Authorization: 'Bearer ' + token } })
    assert.equal(dl.status, 403)
    await done(ctx)
  })
})
