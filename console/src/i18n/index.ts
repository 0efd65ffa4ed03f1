// vue-i18n for the console's UI strings; the kernel's msgKey texts come
// from its own packs (one source of truth) and are formatted here, with
// {name} placeholders filled from the envelope's args.
import { createI18n } from 'vue-i18n'
import kernelEn from '@kernel-locales/en-US.json'
import kernelZh from '@kernel-locales/zh-CN.json'
import { ui } from './ui'
import { admin } from './admin'
import { adminSheets } from './admin-sheets'
import { adminJobs } from './admin-jobs'
import { adminContent } from './admin-content'
import { adminSetup } from './admin-setup'
import { doctor } from './doctor'
import { biz } from './biz'
import { resource } from './resource'
import { ApiError } from '@/api/client'

export type Locale = 'en-US' | 'zh-CN'
export const LOCALES: Locale[] = ['en-US', 'zh-CN']
export const kernelPacks: Record<Locale, Record<string, string>> = { 'en-US': kernelEn, 'zh-CN': kernelZh }

const LOCALE_KEY = 'ak.locale'

export function initialLocale(): Locale {
  const saved = typeof localStorage === 'undefined' ? null : localStorage.getItem(LOCALE_KEY)
  if (saved === 'en-US' || saved === 'zh-CN') return saved
  const nav = typeof navigator === 'undefined' ? '' : navigator.language
  return nav.toLowerCase().startsWith('zh') ? 'zh-CN' : 'en-US'
}

// The console's own text packs (ui.ts, admin.ts and one file per area),
// merged per language for vue-i18n.
const textPacks: Record<Locale, Record<string, string>>[] = [ui, admin, adminSheets, adminJobs, adminContent, adminSetup, doctor, biz, resource]
function merged(): Record<Locale, Record<string, string>> {
  const out = {} as Record<Locale, Record<string, string>>
  for (const l of LOCALES) out[l] = Object.assign({}, ...textPacks.map((p) => p[l]))
  return out
}

export const i18n = createI18n({
  legacy: false,
  locale: initialLocale(),
  fallbackLocale: 'en-US',
  messages: merged(),
})

export function setLocale(l: Locale) {
  i18n.global.locale.value = l
  localStorage.setItem(LOCALE_KEY, l)
  document.documentElement.lang = l
}

export function fill(tpl: string, args: Record<string, unknown> = {}): string {
  return tpl.replace(/\{(\w+)\}/g, (m, k) => (args[k] === undefined || args[k] === null ? m : String(args[k])))
}

/** msgText is the kernel's text for a msgKey (its fallback when unknown). */
export function msgText(msgKey: string, args: Record<string, unknown> = {}, locale: Locale = i18n.global.locale.value as Locale): string {
  const pack = kernelPacks[locale]
  const tpl = pack[msgKey] ?? ui[locale][msgKey] ?? pack['error._fallback']
  return fill(tpl, args)
}

/** errorText is what the user reads for any failure. */
export function errorText(e: unknown): string {
  if (e instanceof ApiError) {
    if (e.msgKey.startsWith('error.http.')) {
      const key = ui['en-US'][e.msgKey] ? e.msgKey : e.status >= 500 ? 'error.http.500' : 'error.http.400'
      return msgText(key) + (e.detail ? ` (${e.detail})` : '')
    }
    return msgText(e.msgKey, e.args)
  }
  return msgText('error.network')
}
