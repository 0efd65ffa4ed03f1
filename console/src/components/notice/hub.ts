// The unread-notice count of the shell header, kept current by the
// kernel's realtime hub (docs/developers/realtime.md: a WebSocket at /hub/realtime,
// the access token in the access_token parameter) with the contract's
// polling fallback (GET /sys/notice/unread-count every 30 s while no socket
// is open). The socket is reopened with a growing delay; a socket replaced
// by a newer tab (4029) is not, so two tabs never take turns.
import { reactive } from 'vue'
import { session, endpoints } from '@/api'
import { c2 } from '@/api/content'
import { useApp } from '@/stores/app'

export const POLL_MS = 30_000
const RETRY_MS = [2_000, 5_000, 15_000, 30_000, 60_000]

/** notices: unread is the count; live is true while the socket is open; version grows at every change (lists reload). */
export const notices = reactive({ unread: 0, live: false, version: 0 })

let ws: WebSocket | null = null
let poll: ReturnType<typeof setInterval> | null = null
let retry: ReturnType<typeof setTimeout> | null = null
let attempts = 0
let users = 0

/** refresh reads the count from the API (a 401 there ends a dead session through the client). */
export async function refresh(): Promise<void> {
  if (session.user?.mustChangePassword) return
  try {
    const n = await c2.unread()
    if (typeof n === 'number' && n !== notices.unread) {
      notices.unread = n
      notices.version++
    }
  } catch {
    /* the next poll or push tries again */
  }
}

function hubUrl(token: string): string {
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:'
  return `${proto}//${location.host}/hub/realtime?access_token=${encodeURIComponent(token)}`
}

async function permissionsChanged() {
  const app = useApp()
  try {
    app.permissions = new Set(await endpoints.permissions())
    if (app.moduleId) await app.selectModule(app.moduleId)
  } catch {
    /* fail closed: the old set stays until the next boot; the API decides anyway */
  }
}

// Handlers of the messages modules push (module.Deps.Realtime.Push), by
// type: registered by module pages through the kit's onRealtime.
const handlers = new Map<string, Set<(data: unknown) => void>>()

/** onRealtime calls fn with the data of every realtime message of type
 * (a module's push target; the kernel's own types are not delivered) while
 * the socket is open; it returns the function that stops it. */
export function onRealtime(type: string, fn: (data: unknown) => void): () => void {
  let set = handlers.get(type)
  if (!set) handlers.set(type, (set = new Set()))
  set.add(fn)
  return () => {
    set.delete(fn)
    if (!set.size) handlers.delete(type)
  }
}

function onMessage(raw: string) {
  let m: { type?: string; data?: unknown }
  try {
    m = JSON.parse(raw)
  } catch {
    return
  }
  switch (m.type) {
    case 'unread-count':
      if (typeof m.data === 'number') {
        notices.unread = m.data
        notices.version++
      }
      break
    case 'notice':
      notices.version++
      void refresh()
      break
    case 'permissions-changed':
      void permissionsChanged()
      break
    case 'force-logout':
      // The session ended: the next call answers 401 and the client ends it here too.
      void refresh()
      break
    default:
      for (const fn of handlers.get(m.type ?? '') ?? []) {
        try {
          fn(m.data)
        } catch (e) {
          console.error('realtime handler', m.type, e)
        }
      }
  }
}

/** deliver hands a raw socket message to the dispatcher (tests). */
export const deliver = onMessage

function connect() {
  // A session restricted to the forced password change gets no socket (the hub refuses it) and no count (40028).
  if (!users || ws || !session.accessToken || session.user?.mustChangePassword || typeof WebSocket === 'undefined') return
  let s: WebSocket
  try {
    s = new WebSocket(hubUrl(session.accessToken))
  } catch {
    schedule()
    return
  }
  ws = s
  s.onopen = () => {
    notices.live = true
    attempts = 0
  }
  s.onmessage = (e) => onMessage(String(e.data))
  s.onclose = (e) => {
    if (ws === s) ws = null
    notices.live = false
    if (!users) return
    if (e.code === 4001) void refresh()
    if (e.code !== 4029 && e.code !== 4001) schedule()
  }
}

function schedule() {
  if (retry || !users) return
  const delay = RETRY_MS[Math.min(attempts, RETRY_MS.length - 1)]
  attempts++
  retry = setTimeout(() => {
    retry = null
    connect()
  }, delay)
}

/** start begins watching (one watcher per shell); stop ends it. */
export function start() {
  users++
  if (users > 1) return
  void refresh()
  connect()
  poll = setInterval(() => {
    if (!notices.live) void refresh()
  }, POLL_MS)
}

export function stop() {
  users = Math.max(0, users - 1)
  if (users) return
  if (poll) clearInterval(poll)
  if (retry) clearTimeout(retry)
  poll = retry = null
  attempts = 0
  const s = ws
  ws = null
  notices.live = false
  notices.unread = 0
  s?.close(1000)
}
