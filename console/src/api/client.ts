// The HTTP client (wire contract §1.5): the envelope, one shared refresh on
// concurrent 401s, re-authentication on 403/40024 with one replay, the
// CSRF header of cookie mode.
import { Session, type LoginOutput } from './session'

export const REFRESH_PATH = '/api/v1/auth/refresh'
export const LOGIN_PATH = '/api/v1/auth/login'
export const REAUTH_PATH = '/api/v1/auth/reauth'
export const REAUTH_RETRIED = 'X-Smart-Reauth-Retried'

/** ApiError is any failure: an envelope's code, or an HTTP status. */
export class ApiError extends Error {
  constructor(
    public code: number,
    public msgKey: string,
    public args: Record<string, unknown> = {},
    public detail = '',
    public status = 200,
  ) {
    super(msgKey || `error.code.${code}`)
  }

  /** sessionDead: only 401, 40006 and 40007 end the session. */
  get sessionDead(): boolean {
    return this.status === 401 || this.code === 40006 || this.code === 40007
  }

  /** passwordChangeRequired: 40028, the session may only change the
   * password (and read the profile and the policy, and log out). */
  get passwordChangeRequired(): boolean {
    return this.code === PASSWORD_CHANGE_REQUIRED
  }
}

/** PASSWORD_CHANGE_REQUIRED is the kernel's 40028 (HTTP 403). */
export const PASSWORD_CHANGE_REQUIRED = 40028

export interface ClientOptions {
  session: Session
  /** reauth asks the user to re-authenticate (the dialog); true when done. */
  reauth?: () => Promise<boolean>
  /** sessionEnded runs once the session is dead (refresh refused). */
  sessionEnded?: () => void
  /** passwordChangeRequired runs on every 40028 answer, after the session
   * has recorded that the user must change the password. */
  passwordChangeRequired?: () => void
  fetch?: typeof fetch
  base?: string
  cookies?: () => string
  timeoutMs?: number
}

interface Req {
  method: string
  path: string
  body?: unknown
  headers?: Record<string, string>
}

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

function readCookie(all: string, name: string): string {
  for (const part of all.split(';')) {
    const [k, ...v] = part.trim().split('=')
    if (k === name) return decodeURIComponent(v.join('='))
  }
  return ''
}

async function parse(res: Response): Promise<unknown> {
  const text = await res.text()
  if (!text) return null
  try {
    return JSON.parse(text)
  } catch {
    return { __raw: text }
  }
}

interface Envelope {
  code: number
  msgKey?: string | null
  args?: Record<string, unknown> | null
  message?: string | null
  data?: unknown
}

function isEnvelope(v: unknown): v is Envelope {
  return !!v && typeof v === 'object' && typeof (v as Envelope).code === 'number'
}

/** unwrap turns an answer into its data or an ApiError (contract §1.5). */
export function unwrap<T>(status: number, body: unknown): T {
  if (isEnvelope(body)) {
    if (body.code === 0 && status >= 200 && status < 300) return (body.data ?? null) as T
    const key = body.msgKey || `error.code.${body.code}`
    const detail = body.message && body.message !== key ? body.message : ''
    throw new ApiError(body.code, key, body.args ?? {}, detail, status)
  }
  if (status >= 200 && status < 300) return body as T // an empty 200 (MFA actions)
  const pd = (body ?? {}) as { title?: string; detail?: string }
  throw new ApiError(status, `error.http.${status}`, {}, pd.detail || pd.title || '', status)
}

export class Client {
  readonly session: Session
  private opts: ClientOptions
  private refreshing: Promise<boolean> | null = null
  private reauthing: Promise<boolean> | null = null
  private ended = false

  constructor(opts: ClientOptions) {
    this.opts = opts
    this.session = opts.session
  }

  get<T>(path: string) {
    return this.request<T>({ method: 'GET', path })
  }
  post<T>(path: string, body?: unknown) {
    return this.request<T>({ method: 'POST', path, body })
  }
  put<T>(path: string, body?: unknown) {
    return this.request<T>({ method: 'PUT', path, body })
  }
  del<T>(path: string) {
    return this.request<T>({ method: 'DELETE', path })
  }

  url(path: string): string {
    return (this.opts.base ?? '') + path
  }

  private async send(r: Req, extra: Record<string, string> = {}): Promise<Response> {
    const headers: Record<string, string> = { Accept: 'application/json', ...r.headers, ...extra }
    let body: string | undefined
    if (r.body !== undefined) {
      headers['Content-Type'] = 'application/json'
      body = JSON.stringify(r.body)
    }
    if (this.session.accessToken) headers.Authorization = `Bearer ${this.session.accessToken}`
    if (MUTATING.has(r.method)) {
      const csrf = readCookie(this.opts.cookies ? this.opts.cookies() : typeof document === 'undefined' ? '' : document.cookie, 'smart_csrf')
      if (csrf) headers['X-Smart-CSRF'] = csrf
    }
    const f = this.opts.fetch ?? fetch
    const ctl = typeof AbortController === 'undefined' ? null : new AbortController()
    const timer = ctl ? setTimeout(() => ctl.abort(), this.opts.timeoutMs ?? 30_000) : null
    try {
      return await f(this.url(r.path), { method: r.method, headers, body, credentials: 'include', signal: ctl?.signal })
    } finally {
      if (timer) clearTimeout(timer)
    }
  }

  async request<T>(r: Req): Promise<T> {
    let res = await this.send(r)
    if (res.status === 401 && r.path !== REFRESH_PATH && r.path !== LOGIN_PATH) {
      if (await this.refresh()) {
        res = await this.send(r)
      }
      if (res.status === 401) {
        this.end()
        unwrap<T>(401, await parse(res))
      }
    }
    let body = await parse(res)
    if (res.status === 403 && isEnvelope(body) && body.code === 40024 && !r.headers?.[REAUTH_RETRIED] && this.opts.reauth) {
      if (await this.reauthOnce()) {
        res = await this.send(r, { [REAUTH_RETRIED]: '1' })
        body = await parse(res)
      }
    }
    try {
      const data = unwrap<T>(res.status, body)
      this.ended = false
      return data
    } catch (e) {
      if (e instanceof ApiError && e.sessionDead && r.path !== LOGIN_PATH && r.path !== REFRESH_PATH && this.session.active) this.end()
      if (e instanceof ApiError && e.passwordChangeRequired && this.session.active) {
        this.session.setMustChangePassword(true)
        this.opts.passwordChangeRequired?.()
      }
      throw e
    }
  }

  /** refresh runs ONE refresh for all concurrent callers; true on success. */
  refresh(): Promise<boolean> {
    if (!this.refreshing) {
      this.refreshing = this.doRefresh().finally(() => {
        this.refreshing = null
      })
    }
    return this.refreshing
  }

  private async doRefresh(): Promise<boolean> {
    if (!this.session.refreshToken && !this.session.cookieMode) return false
    try {
      const res = await this.send({ method: 'POST', path: REFRESH_PATH, body: { refreshToken: this.session.cookieMode ? '' : this.session.refreshToken } })
      const body = await parse(res)
      if (res.status === 200 && isEnvelope(body) && body.code === 0 && body.data) {
        this.session.set(body.data as LoginOutput)
        return true
      }
    } catch {
      /* a network failure is no new session */
    }
    return false
  }

  private reauthOnce(): Promise<boolean> {
    if (!this.reauthing) {
      this.reauthing = (this.opts.reauth ? this.opts.reauth() : Promise.resolve(false)).finally(() => {
        this.reauthing = null
      })
    }
    return this.reauthing
  }

  private end() {
    this.session.clear()
    if (!this.ended) {
      this.ended = true
      this.opts.sessionEnded?.()
    }
  }
}
