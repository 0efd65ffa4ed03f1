// The chunked, resumable upload of the files page (docs/developers/files.md, "Chunked
// uploads"): the file is hashed (SHA-256, slice by slice), chunk/init
// answers an instant upload or the chunks the kernel already holds (an
// upload of the same user, hash, size and chunk count is resumed, also
// after a reload or in another tab), the missing chunks are sent one after
// the other with their progress, and chunk/complete assembles the file.
import { reactive } from 'vue'
import { c2, sendChunk, Aborted, type FileUploadOutput } from '@/api/content'
import { hashFile } from './sha256'
import { errorText } from '@/i18n'

/** chunkSize: 1 MiB, larger for files over 10 000 MiB (the kernel accepts at most 10 000 chunks). */
export function chunkSize(total: number): number {
  return Math.max(1 << 20, Math.ceil(total / 10000))
}

export type Phase = 'hashing' | 'uploading' | 'completing' | 'done' | 'paused' | 'failed'

export interface Task {
  file: File
  phase: Phase
  /** hashed: bytes hashed; sent: bytes the kernel holds (earlier chunks and the current one's progress). */
  hashed: number
  sent: number
  chunks: number
  /** resumed: chunks the kernel already held when this run started; instant: no byte was sent. */
  resumed: number
  instant: boolean
  error: string
  result: FileUploadOutput | null
  hash: string
  ctl: AbortController | null
}

/** PENDING_KEY remembers an unfinished upload (name and size only) so a reloaded page can ask for the same file. */
export const PENDING_KEY = 'ak.upload.pending'

export function newTask(file: File): Task {
  return reactive({ file, phase: 'hashing', hashed: 0, sent: 0, chunks: 0, resumed: 0, instant: false, error: '', result: null, hash: '', ctl: null }) as Task
}

/** percent is the task's progress: hashing counts for a tenth. */
export function percent(t: Task): number {
  const size = t.file.size || 1
  if (t.phase === 'done') return 100
  if (t.phase === 'hashing') return Math.floor((t.hashed / size) * 10)
  return Math.min(99, 10 + Math.floor((t.sent / size) * 90))
}

/** run uploads (or resumes) the task's file; it resolves when done, paused or failed. */
export async function run(t: Task): Promise<void> {
  const ctl = new AbortController()
  t.ctl = ctl
  t.error = ''
  const f = t.file
  try {
    localStorage.setItem(PENDING_KEY, JSON.stringify({ name: f.name, size: f.size }))
    if (!t.hash) {
      t.phase = 'hashing'
      t.hash = await hashFile(f, (n) => (t.hashed = n))
      if (ctl.signal.aborted) throw new Aborted('aborted')
    }
    const size = chunkSize(f.size)
    const count = Math.max(1, Math.ceil(f.size / size))
    t.chunks = count
    t.phase = 'uploading'
    const contentType = f.type || undefined
    const init = await c2.chunkInit({ fileHash: t.hash, fileName: f.name, totalSize: f.size, chunkCount: count, contentType })
    if (init.uploaded && init.file) {
      t.instant = true
      finish(t, init.file)
      return
    }
    const have = new Set(init.receivedIndexes ?? [])
    t.resumed = have.size
    const len = (i: number) => Math.min(size, f.size - i * size)
    let done = 0
    for (const i of have) done += len(i)
    t.sent = done
    for (let i = 0; i < count; i++) {
      if (have.has(i)) continue
      if (ctl.signal.aborted) throw new Aborted('aborted')
      await sendChunk(init.uploadId!, i, f.slice(i * size, i * size + len(i)), ctl.signal, (n) => (t.sent = done + Math.min(n, len(i))))
      done += len(i)
      t.sent = done
    }
    t.phase = 'completing'
    finish(t, await c2.chunkComplete({ uploadId: init.uploadId!, fileHash: t.hash, fileName: f.name, chunkCount: count, contentType }))
  } catch (e) {
    if (e instanceof Aborted || ctl.signal.aborted) t.phase = 'paused'
    else {
      t.phase = 'failed'
      t.error = errorText(e)
    }
  } finally {
    t.ctl = null
  }
}

function finish(t: Task, out: FileUploadOutput) {
  t.result = out
  t.sent = t.file.size
  t.phase = 'done'
  localStorage.removeItem(PENDING_KEY)
}

/** pause stops the task after cancelling the chunk in flight; run resumes it. */
export function pause(t: Task) {
  t.ctl?.abort()
}

export function human(n: number): string {
  if (n < 1024) return `${n} B`
  const u = ['KiB', 'MiB', 'GiB', 'TiB']
  let v = n / 1024
  let i = 0
  while (v >= 1024 && i < u.length - 1) {
    v /= 1024
    i++
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${u[i]}`
}
