// Files to and from the kernel (issue 25): the binary answers of the
// spreadsheet endpoints (template, export, error report) and the multipart
// upload of an import. The JSON client (api/client.ts) speaks only JSON, so
// these calls are made here with the same session: the bearer token or the
// cookie with its CSRF header, one refresh on 401 (the client's shared
// refresh), and the failure rules of the wire contract §1.1 (a non-2xx
// status, a JSON/text answer, or a body starting with "{" is an envelope).
import { api, session } from '@/api'
import { ApiError, unwrap } from '@/api/client'

/** Progress is what a streaming download reports: bytes so far, and the total when the server says it. */
export interface Progress {
  received: number
  total: number
}

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])
// Uploads, imports and exports get 10 minutes (wire contract §1.5).
const TIMEOUT_MS = 10 * 60_000

function csrf(): string {
  for (const part of (typeof document === 'undefined' ? '' : document.cookie).split(';')) {
    const [k, ...v] = part.trim().split('=')
    if (k === 'smart_csrf') return decodeURIComponent(v.join('='))
  }
  return ''
}

async function send(method: string, path: string, body?: BodyInit, json = false, accept = '*/*'): Promise<Response> {
  const once = async () => {
    const headers: Record<string, string> = { Accept: accept }
    if (json) headers['Content-Type'] = 'application/json'
    if (session.accessToken) headers.Authorization = `Bearer ${session.accessToken}`
    if (MUTATING.has(method)) {
      const c = csrf()
      if (c) headers['X-Smart-CSRF'] = c
    }
    const ctl = new AbortController()
    const timer = setTimeout(() => ctl.abort(), TIMEOUT_MS)
    try {
      return await fetch(api.url(path), { method, headers, body, credentials: 'include', signal: ctl.signal })
    } finally {
      clearTimeout(timer)
    }
  }
  let res = await once()
  if (res.status === 401 && (await api.refresh())) res = await once()
  return res
}

async function failure(res: Response): Promise<never> {
  const text = await res.text()
  let body: unknown = null
  try {
    body = text ? JSON.parse(text) : null
  } catch {
    body = { detail: text.slice(0, 200) }
  }
  unwrap(res.status >= 200 && res.status < 300 ? 500 : res.status, body)
  throw new ApiError(res.status, `error.http.${res.status}`, {}, '', res.status)
}

/** isBinary tells a file answer from an envelope (contract §1.1). */
function isBinary(res: Response): boolean {
  if (!res.ok) return false
  const ct = (res.headers.get('Content-Type') ?? '').toLowerCase()
  return !(ct.includes('json') || ct.startsWith('text/'))
}

/** fileName is the Content-Disposition file name, or the fallback. */
export function fileName(cd: string | null, fallback: string): string {
  if (!cd) return fallback
  const star = /filename\*=UTF-8''([^;]+)/i.exec(cd)
  if (star) {
    try {
      return decodeURIComponent(star[1].trim())
    } catch {
      /* a malformed name: the plain one or the fallback */
    }
  }
  const plain = /filename="?([^";]+)"?/i.exec(cd)
  return plain ? plain[1].trim() : fallback
}

/**
 * fetchFile performs a call answering a file and reads it as it streams,
 * reporting progress; a failure (before the first byte) is thrown as the
 * envelope's ApiError.
 */
export async function fetchFile(method: 'GET' | 'POST', path: string, body?: unknown, onProgress?: (p: Progress) => void, fallback = 'download.xlsx'): Promise<{ blob: Blob; name: string }> {
  const res = await send(method, path, body === undefined ? undefined : JSON.stringify(body), body !== undefined)
  if (!isBinary(res)) return failure(res)
  const total = Number(res.headers.get('Content-Length') ?? 0) || 0
  const type = res.headers.get('Content-Type') ?? 'application/octet-stream'
  const parts: BlobPart[] = []
  let received = 0
  const reader = res.body?.getReader()
  if (reader) {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      parts.push(value as Uint8Array<ArrayBuffer>)
      received += value.byteLength
      onProgress?.({ received, total })
    }
  } else {
    const b = await res.arrayBuffer()
    parts.push(b)
    received = b.byteLength
    onProgress?.({ received, total })
  }
  // Contract §1.1 rule 3: no content type and a body starting with "{" is an envelope.
  if (!res.headers.get('Content-Type')) {
    const head = new Uint8Array(await new Blob(parts.slice(0, 1)).arrayBuffer())
    if (head[0] === 0x7b) return failure(new Response(new Blob(parts), { status: 500 }))
  }
  return { blob: new Blob(parts, { type }), name: fileName(res.headers.get('Content-Disposition'), fallback) }
}

/** save hands a blob to the browser as a download. */
export function save(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob)
  const a = document.createElement('a')
  a.href = url
  a.download = name
  a.rel = 'noopener'
  document.body.appendChild(a)
  a.click()
  a.remove()
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
}

/** download fetches a file answer and saves it; the number of bytes is returned. */
export async function download(method: 'GET' | 'POST', path: string, body?: unknown, onProgress?: (p: Progress) => void, fallback = 'download.xlsx'): Promise<number> {
  const { blob, name } = await fetchFile(method, path, body, onProgress, fallback)
  save(blob, name)
  return blob.size
}

/** upload posts a multipart form and unwraps the envelope of the answer. */
export async function upload<T>(path: string, form: FormData): Promise<T> {
  const res = await send('POST', path, form, false, 'application/json')
  const text = await res.text()
  let body: unknown = null
  try {
    body = text ? JSON.parse(text) : null
  } catch {
    body = { detail: text.slice(0, 200) }
  }
  return unwrap<T>(res.status, body)
}

/** bytes is a human size: 1.2 MB. */
export function bytes(n: number): string {
  if (n < 1024) return `${n} B`
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`
  return `${(n / 1024 / 1024).toFixed(1)} MB`
}
