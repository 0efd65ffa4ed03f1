// The app's client and the endpoints the console calls.
import { reactive } from 'vue'
import { Client } from './client'
import { Session, type LoginOutput } from './session'

export const session = new Session()

/** reauthPrompt drives the re-authentication dialog (ReauthDialog.vue). */
export const reauthPrompt = reactive({ open: false, resolve: null as null | ((ok: boolean) => void) })

let sessionEndedHandler: () => void = () => {}
export function onSessionEnded(fn: () => void) {
  sessionEndedHandler = fn
}

let passwordChangeHandler: () => void = () => {}
/** onPasswordChangeRequired runs on a 40028 answer (main.ts: to the form). */
export function onPasswordChangeRequired(fn: () => void) {
  passwordChangeHandler = fn
}

export const api = new Client({
  session,
  sessionEnded: () => sessionEndedHandler(),
  passwordChangeRequired: () => passwordChangeHandler(),
  reauth: () =>
    new Promise<boolean>((resolve) => {
      reauthPrompt.resolve = resolve
      reauthPrompt.open = true
    }),
})

export interface Site {
  title?: string | null
  subtitle?: string | null
  copyright?: string | null
  copyrightUrl?: string | null
  logo?: string | null
  captchaEnabled: boolean
  smsLoginEnabled: boolean
  /** passkeyPasswordless: sys.security.passkey.passwordless (a kernel extension of the site info). */
  passkeyPasswordless?: boolean
}
export interface Passkey {
  id: number
  name: string
  createdAt: string
  lastUsedAt?: string | null
  backedUp: boolean
}
/** PasskeyBegin is a started WebAuthn ceremony: options in their JSON form. */
export interface PasskeyBegin {
  ceremonyId: string
  options: unknown
}
export interface Provider {
  code: string
  displayName: string
  /** An Iconify name "prefix:name", or null. */
  icon?: string | null
  /** A brand key ("github", "wecom"), or null (kernels before it: absent). */
  brand?: string | null
}
export interface ProviderAdmin extends Provider {
  enabled: boolean
  linkByAccount: boolean
  status: string
  statusReason: string
}
export interface MyModule {
  id: number
  code: string
  title: string
  icon?: string | null
  defaultRoute?: string | null
}
export interface MenuNode {
  id: number
  title: string
  path?: string | null
  component?: string | null
  icon?: string | null
  type?: number
  children?: MenuNode[] | null
}
export interface Profile {
  id: number
  account: string
  name: string
  nickname?: string | null
  phone?: string | null
  email?: string | null
  gender?: string | null
  avatar?: string | null
  orgName?: string | null
  positionName?: string | null
  isSuperAdmin: boolean
  /** totpEnabled: an authenticator app is bound (a kernel addition). */
  totpEnabled?: boolean
}
export interface MySession {
  sessionId: string
  isCurrent: boolean
  ip?: string | null
  userAgent?: string | null
  loginTime: string
  expiresAt: string
}
export interface Binding {
  provider: string
  displayName?: string | null
  boundAt: string
}
export interface PasswordPolicy {
  minLength: number
  requireUpper: boolean
  requireLower: boolean
  requireDigit: boolean
  requireSpecial: boolean
}
export interface ConfigRow {
  id: number | string
  configKey: string
  configValue?: string | null
  groupCode?: string | null
}

export const endpoints = {
  site: () => api.get<Site>('/api/v1/sys/config/site'),
  captcha: () => api.get<{ captchaId: string; svg: string }>('/api/v1/auth/captcha'),
  login: (b: { account: string; password: string; captchaId?: string; captchaCode?: string }) => api.post<LoginOutput>('/api/v1/auth/login', b),
  loginSms: (challengeId: string, code: string) => api.post<LoginOutput>('/api/v1/auth/login/sms', { challengeId, code }),
  loginSmsResend: (challengeId: string) => api.post<{ expiresSeconds: number; resendSeconds: number }>('/api/v1/auth/login/sms/resend', { challengeId }),
  loginTotp: (challengeId: string, code: string) => api.post<LoginOutput>('/api/v1/auth/login/totp', { challengeId, code }),
  smsSend: (b: { phone: string; captchaId?: string; captchaCode?: string }) => api.post<{ expiresSeconds: number; resendSeconds: number }>('/api/v1/auth/sms/send', b),
  smsLogin: (phone: string, code: string) => api.post<LoginOutput>('/api/v1/auth/sms/login', { phone, code }),
  logout: () => api.post<boolean>('/api/v1/auth/logout'),
  reauth: (b: { method: 'password' | 'totp'; password?: string; totpCode?: string }) => api.post<boolean>('/api/v1/auth/reauth', b),
  providers: () => api.get<Provider[]>('/api/v1/auth/external/providers'),
  providersAll: () => api.get<ProviderAdmin[]>('/api/v1/auth/external/providers/all'),
  exchange: (ticket: string) => api.post<LoginOutput>('/api/v1/auth/external/exchange', { ticket }),
  claim: (pendingLink: string) => api.post<boolean>('/api/v1/auth/external/pending-link/claim', { pendingLink }),
  bindings: () => api.get<Binding[]>('/api/v1/auth/external/bindings'),
  bind: (code: string) => api.post<{ authorizeUrl: string }>(`/api/v1/auth/external/${encodeURIComponent(code)}/bind`),
  unbind: (code: string) => api.del<boolean>(`/api/v1/auth/external/${encodeURIComponent(code)}/binding`),
  modules: () => api.get<{ modules: MyModule[]; defaultModuleId: number | null }>('/api/v1/personal/modules'),
  menu: (moduleId: number) => api.get<MenuNode[]>(`/api/v1/personal/menu?moduleId=${moduleId}`),
  permissions: () => api.get<string[]>('/api/v1/personal/permissions'),
  profile: () => api.get<Profile>('/api/v1/personal/profile'),
  saveProfile: (b: Partial<Profile>) => api.put<boolean>('/api/v1/personal/profile', b),
  changePassword: (oldPassword: string, newPassword: string) => api.put<boolean>('/api/v1/personal/password', { oldPassword, newPassword }),
  passwordPolicy: () => api.get<PasswordPolicy>('/api/v1/sys/config/password-policy'),
  mySessions: () => api.get<MySession[]>('/api/v1/personal/sessions'),
  endSession: (id: string) => api.del<boolean>(`/api/v1/personal/sessions/${encodeURIComponent(id)}`),
  configPage: (group: string) => api.get<{ items: ConfigRow[]; total: number }>(`/api/v1/sys/config/page?GroupCode=${encodeURIComponent(group)}&Current=1&Size=100`),
  configBatch: (items: { configKey: string; configValue: string }[]) => api.put<boolean>('/api/v1/sys/config/batch', items),
  configAdd: (b: { configKey: string; configValue: string; name: string; groupCode: string }) => api.post<number>('/api/v1/sys/config', b),
  passkeyLoginBegin: (challengeId: string) => api.post<PasskeyBegin>('/api/v1/auth/passkey/login/begin', { challengeId }),
  passkeyLoginFinish: (ceremonyId: string, credential: unknown) => api.post<LoginOutput>('/api/v1/auth/passkey/login/finish', { ceremonyId, credential }),
  passwordlessBegin: () => api.post<PasskeyBegin>('/api/v1/auth/passkey/passwordless/begin'),
  passwordlessFinish: (ceremonyId: string, credential: unknown) => api.post<LoginOutput>('/api/v1/auth/passkey/passwordless/finish', { ceremonyId, credential }),
  myPasskeys: () => api.get<Passkey[]>('/api/v1/personal/passkeys'),
  passkeyRegisterBegin: () => api.post<PasskeyBegin>('/api/v1/personal/passkeys/register/begin'),
  passkeyRegisterFinish: (ceremonyId: string, name: string, credential: unknown) => api.post<Passkey>('/api/v1/personal/passkeys/register/finish', { ceremonyId, name, credential }),
  deletePasskey: (id: number) => api.del<null>(`/api/v1/personal/passkeys/${encodeURIComponent(String(id))}`),
  bindStart: (code: string, bindingChallenge: string) => api.post<{ authorizeUrl: string }>(`/api/v1/auth/external/${encodeURIComponent(code)}/bind`, { bindingChallenge }),
  bindComplete: (bindTicket: string, bindingVerifier: string) => api.post<boolean>('/api/v1/auth/external/bind/complete', { bindTicket, bindingVerifier }),
  mfaBindStart: (account: string, currentPassword: string) =>
    api.post<{ bindChallengeId: string; otpauthUri: string; seed: string; expiresSeconds: number }>('/api/v1/auth/mfa/bind/start', { account, currentPassword }),
  /** mfaBindStartSession: TOTP binding from a signed-in session (+R). */
  mfaBindStartSession: () =>
    api.post<{ bindChallengeId: string; otpauthUri: string; seed: string; expiresSeconds: number }>('/api/v1/personal/mfa/bind/start'),
  mfaBindComplete: (bindChallengeId: string, totpCode: string) => api.post<{ recoveryCodes: string[] }>('/api/v1/auth/mfa/bind/complete', { bindChallengeId, totpCode }),
}
