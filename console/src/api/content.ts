// The endpoints of the files, notices and recycle-bin pages (issue 25):
// JSON calls through the shared client (401 refresh, 403/40024
// re-authentication, envelope errors), and the two calls the JSON client
// cannot make: the multipart chunk upload (XMLHttpRequest, for its upload
// progress) and the authenticated download (a Blob saved under the file's
// name). Both refresh the access token once on a 401, as the client does.
import { api, session } from '@/api'
import { ApiError, unwrap } from '@/api/client'
import { query, type Paged } from '@/api/admin'

export interface SysFile {
  id: number
  originalName: string
  extension: string
  contentType?: string | null
  sizeBytes: number
  hash?: string | null
  createTime: string
  /** viewUrl: the signed view link (a kernel addition to SysFile). */
  viewUrl?: string | null
}
export interface FileUploadOutput {
  id: number
  originalName: string
  storagePath: string
  sizeBytes: number
  viewUrl?: string | null
}
export interface ChunkInit {
  uploaded: boolean
  file?: FileUploadOutput | null
  uploadId?: number | null
  receivedIndexes: number[]
}
export interface NoticeAction {
  label: string
  method: 'GET' | 'POST'
  url: string
  style?: string | null
  /** A text (this console), or the original UI's flag: true asks before running. */
  confirm?: string | boolean | null
  /** A text shown as the button's tooltip, or the original UI's flag (not offered here). */
  comment?: string | boolean | null
}
export interface SysNotice {
  id: number
  title: string
  content?: string | null
  type: number
  receiverType: number
  actionsJson?: string | null
  createTime: string
}
export interface NoticeInput {
  title: string
  content?: string | null
  type: number
  receiverType: number
  receiverIds?: number[]
  actions?: NoticeAction[]
}
export interface MineItem {
  id: number
  title: string
  content?: string | null
  type: number
  publishTime: string
  isRead: boolean
  actions?: NoticeAction[] | null
  /** publisherName: "name (account)" of the publisher (a kernel addition), shown before an action runs. */
  publisherName?: string | null
}
export interface RecycleItem {
  id: number
  name: string
  code?: string | null
  deletedAt?: string | null
  deletedBy?: number | null
  deletedByName?: string | null
}

/** RECYCLE_TYPES: every type GET /sys/recycle/{type}/page serves (docs/developers/recycle.md). */
export const RECYCLE_TYPES = ['user', 'role', 'org', 'position', 'menu', 'module', 'config', 'dict', 'dictItem', 'job', 'file'] as const
export type RecycleType = (typeof RECYCLE_TYPES)[number]

export const c2 = {
  files: (p: { Current: number; Size: number; FileName?: string }) => api.get<Paged<SysFile>>(`/api/v1/sys/file/page${query(p)}`),
  deleteFile: (id: number) => api.del<boolean>(`/api/v1/sys/file/${id}`),
  deleteFiles: (ids: number[]) => api.post<boolean>('/api/v1/sys/file/batch-delete', { ids }),
  chunkInit: (b: { fileHash: string; fileName: string; totalSize: number; chunkCount: number; contentType?: string }) => api.post<ChunkInit>('/api/v1/sys/file/chunk/init', b),
  chunkComplete: (b: { uploadId: number; fileHash: string; fileName: string; chunkCount: number; contentType?: string }) =>
    api.post<FileUploadOutput>('/api/v1/sys/file/chunk/complete', b),

  notices: (p: { Current: number; Size: number; Title?: string; Type?: number | '' }) => api.get<Paged<SysNotice>>(`/api/v1/sys/notice/page${query(p)}`),
  publish: (b: NoticeInput) => api.post<number>('/api/v1/sys/notice', b),
  deleteNotice: (id: number) => api.del<boolean>(`/api/v1/sys/notice/${id}`),
  mine: (p: { Current: number; Size: number; Title?: string; Type?: number | ''; OnlyUnread?: boolean | '' }) => api.get<Paged<MineItem>>(`/api/v1/sys/notice/mine${query(p)}`),
  unread: () => api.get<number>('/api/v1/sys/notice/unread-count'),
  read: (id: number) => api.put<boolean>(`/api/v1/sys/notice/${id}/read`),
  readAll: () => api.put<boolean>('/api/v1/sys/notice/read-all'),

  recycle: (type: RecycleType, p: { Current: number; Size: number }) => api.get<Paged<RecycleItem>>(`/api/v1/sys/recycle/${type}/page${query(p)}`),
  restore: (type: RecycleType, id: number) => api.post<boolean>(`/api/v1/sys/recycle/${type}/${id}/restore`),
  purge: (type: RecycleType, id: number) => api.del<boolean>(`/api/v1/sys/recycle/${type}/${id}`),
}

function csrf(): string {
  for (const part of (typeof document === 'undefined' ? '' : document.cookie).split(';')) {
    const [k, ...v] = part.trim().split('=')
    if (k === 'smart_csrf') return decodeURIComponent(v.join('='))
  }
  return ''
}

/** Aborted is the error of a chunk whose request was cancelled. */
export class Aborted extends Error {}

function xhrOnce(path: string, form: FormData, signal: AbortSignal | undefined, progress: (loaded: number) => void): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const x = new XMLHttpRequest()
    x.open('POST', path)
    x.setRequestHeader('Accept', 'application/json')
    if (session.accessToken) x.setRequestHeader('Authorization', `Bearer ${session.accessToken}`)
    const c = csrf()
    if (c) x.setRequestHeader('X-Smart-CSRF', c)
    x.withCredentials = true
    x.upload.onprogress = (e) => progress(e.loaded)
    x.onload = () => {
      let body: unknown = null
      try {
        body = x.responseText ? JSON.parse(x.responseText) : null
      } catch {
        body = null
      }
      resolve({ status: x.status, body })
    }
    x.onerror = () => reject(new ApiError(0, 'error.network'))
    x.onabort = () => reject(new Aborted('aborted'))
    if (signal) {
      if (signal.aborted) return reject(new Aborted('aborted'))
      signal.addEventListener('abort', () => x.abort(), { once: true })
    }
    x.send(form)
  })
}

/** sendChunk posts one chunk (multipart uploadId, index, then chunk: the kernel streams it in that order). */
export async function sendChunk(uploadId: number, index: number, chunk: Blob, signal?: AbortSignal, progress: (loaded: number) => void = () => {}): Promise<void> {
  const form = () => {
    const f = new FormData()
    f.append('uploadId', String(uploadId))
    f.append('index', String(index))
    f.append('chunk', chunk, 'chunk')
    return f
  }
  let r = await xhrOnce('/api/v1/sys/file/chunk', form(), signal, progress)
  if (r.status === 401 && (await api.refresh())) r = await xhrOnce('/api/v1/sys/file/chunk', form(), signal, progress)
  unwrap<boolean>(r.status, r.body)
}

/** download fetches a file with the session and saves it under its name. */
export async function download(id: number, name: string): Promise<void> {
  const get = () => fetch(`/api/v1/sys/file/${id}/download`, { headers: session.accessToken ? { Authorization: `Bearer ${session.accessToken}` } : {}, credentials: 'include' })
  let res = await get()
  if (res.status === 401 && (await api.refresh())) res = await get()
  if (!res.ok) {
    let body: unknown = null
    try {
      body = await res.json()
    } catch {
      /* not an envelope */
    }
    unwrap(res.status, body)
    throw new ApiError(res.status, `error.http.${res.status}`, {}, '', res.status)
  }
  const url = URL.createObjectURL(await res.blob())
  try {
    const a = document.createElement('a')
    a.href = url
    a.download = name
    document.body.appendChild(a)
    a.click()
    a.remove()
  } finally {
    setTimeout(() => URL.revokeObjectURL(url), 10_000)
  }
}
