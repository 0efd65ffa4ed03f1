// The session: tokens and the signed-in user (wire contract §1.5 setSession,
// §1.6 cookie mode). The access token lives in memory only in cookie mode;
// the refresh token is then an HttpOnly cookie and never reaches
// JavaScript. In body mode (the kernel's default) both tokens are kept in
// localStorage so a reload keeps the session, as the contract's client does.

export interface LoginOutput {
  accessToken: string
  expiresAt?: string
  refreshToken: string
  refreshExpiresAt?: string
  userId: number | string
  account: string
  name: string
  mustChangePassword: boolean
  sessionMode?: 'body' | 'cookie' | null
  csrfRequired?: boolean | null
  isSuperAdmin: boolean
}

export interface UserInfo {
  userId: number
  account: string
  name: string
  mustChangePassword: boolean
  isSuperAdmin: boolean
}

const K_ACCESS = 'ak.accessToken'
const K_REFRESH = 'ak.refreshToken'
const K_USER = 'ak.user'
const K_COOKIE = 'ak.cookieSession'

type Listener = () => void

export class Session {
  accessToken = ''
  refreshToken = ''
  cookieMode = false
  user: UserInfo | null = null
  private listeners = new Set<Listener>()

  constructor(private storage: Storage | null = typeof localStorage === 'undefined' ? null : localStorage) {
    this.load()
  }

  /** cookieSessionDetected applies the contract's detection rule. */
  static cookieSessionDetected(o: LoginOutput): boolean {
    if (o.sessionMode === 'cookie' || o.csrfRequired === true) return true
    if (o.sessionMode == null && o.csrfRequired == null) return !o.refreshToken && !!o.accessToken
    return false
  }

  set(o: LoginOutput): void {
    this.cookieMode = Session.cookieSessionDetected(o)
    this.accessToken = o.accessToken
    this.refreshToken = this.cookieMode ? '' : o.refreshToken
    this.user = {
      userId: Number(o.userId),
      account: o.account,
      name: o.name,
      mustChangePassword: !!o.mustChangePassword,
      isSuperAdmin: !!o.isSuperAdmin,
    }
    this.save()
    this.emit()
  }

  /** setMustChangePassword records what the kernel says of the signed-in
   * user (40028, or a successful change), kept across a reload. */
  setMustChangePassword(v: boolean): void {
    if (!this.user || this.user.mustChangePassword === v) return
    this.user = { ...this.user, mustChangePassword: v }
    this.save()
    this.emit()
  }

  clear(): void {
    this.accessToken = ''
    this.refreshToken = ''
    this.cookieMode = false
    this.user = null
    if (this.storage) for (const k of [K_ACCESS, K_REFRESH, K_USER, K_COOKIE]) this.storage.removeItem(k)
    this.emit()
  }

  /** active: something to resume (a token, or a cookie session to refresh). */
  get active(): boolean {
    return !!this.user && (!!this.accessToken || !!this.refreshToken || this.cookieMode)
  }

  onChange(fn: Listener): () => void {
    this.listeners.add(fn)
    return () => this.listeners.delete(fn)
  }

  private emit() {
    for (const fn of this.listeners) fn()
  }

  private save() {
    const s = this.storage
    if (!s) return
    s.setItem(K_USER, JSON.stringify(this.user))
    if (this.cookieMode) {
      s.setItem(K_COOKIE, '1')
      s.removeItem(K_ACCESS)
      s.removeItem(K_REFRESH)
    } else {
      s.removeItem(K_COOKIE)
      s.setItem(K_ACCESS, this.accessToken)
      s.setItem(K_REFRESH, this.refreshToken)
    }
  }

  private load() {
    const s = this.storage
    if (!s) return
    try {
      this.user = JSON.parse(s.getItem(K_USER) ?? 'null')
    } catch {
      this.user = null
    }
    this.cookieMode = s.getItem(K_COOKIE) === '1'
    if (!this.cookieMode) {
      this.accessToken = s.getItem(K_ACCESS) ?? ''
      this.refreshToken = s.getItem(K_REFRESH) ?? ''
    }
  }
}
