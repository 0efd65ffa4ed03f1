// The console kit, version KIT_VERSION: what pages shipped by a module
// (module.Console) use of the running console. A page imports it as
// /console-kit/kit.js (a shim re-exporting this module's exports from
// globalThis.__AK_KIT__.kit, generated at build time from this file:
// scripts/kit-shims.mjs), Vue as /console-kit/vue.js and Element Plus as
// /console-kit/element-plus.js: one Vue, one Element Plus, one API client.
// Its surface is documented in docs/developers/frontend.md "Pages shipped
// by a module"; a change of an export's meaning is a new major version.
import { defineAsyncComponent, type Directive } from 'vue'
import { useRoute, useRouter } from 'vue-router'
import { ElMessage } from 'element-plus'
import { api as client, session } from '@/api'
import { errorText as errText, i18n } from '@/i18n'
import { useApp } from '@/stores/app'
import { notices as noticeState, refresh as refreshNotices, onRealtime as hubOn } from '@/components/notice/hub'
import { KIT_VERSION } from '@/pages'

/** version is the kit's version ("1.1": 1.0 plus onRealtime). */
export const version = KIT_VERSION

/** api is the console's API client: the access token, its refresh, the
 * re-authentication dialog and replay (+R routes), the envelope unwrapped
 * (get/post/put/delete resolve data, reject with an ApiError). */
export const api = client

/** user is the signed-in user (id, account, name, isSuperAdmin). */
export function user() {
  return session.user
}

/** hasCode reports whether the user holds a permission code (the
 * super-admin holds all). Hiding is convenience: the API decides. */
export function hasCode(code: string): boolean {
  return useApp().can(code)
}

/** vAuth (v-auth="'GET:/api/v1/…'") hides its element unless the user
 * holds the code (or one of the codes of an array). */
export const vAuth: Directive<HTMLElement, string | string[]> = {
  mounted: (el, b) => authApply(el, b.value),
  updated: (el, b) => authApply(el, b.value),
}
// display: none !important through the CSSOM (the CSP allows it; the
// hidden attribute loses against a component's own display rule, as
// .el-button's inline-flex).
function authApply(el: HTMLElement, v: string | string[]) {
  const codes = Array.isArray(v) ? v : [v]
  if (codes.some((c) => hasCode(c))) {
    if (el.dataset.akAuthHidden) {
      el.style.removeProperty('display')
      delete el.dataset.akAuthHidden
    }
  } else if (!el.dataset.akAuthHidden) {
    el.style.setProperty('display', 'none', 'important')
    el.dataset.akAuthHidden = '1'
  }
}

/** t is the text of key in the current language: the module's Texts
 * (merged at load) and the console's own, {name} placeholders filled. */
export function t(key: string, args: Record<string, unknown> = {}): string {
  return i18n.global.t(key, args)
}

/** useI18n gives a page t and the current locale (a ref: "en-US" | "zh-CN"). */
export function useI18n() {
  return { t, locale: i18n.global.locale }
}

/** errorText is what the user reads for a failed call (the kernel's
 * message of the envelope's msgKey). */
export function errorText(e: unknown): string {
  return errText(e)
}

/** notify shows a message (Element Plus's ElMessage). */
export const notify = ElMessage

/** notices is the shell's unread-notice state (reactive, read-only for
 * pages): unread count, live (the realtime socket is open) and version
 * (grows at every change: reload lists when it does). */
export const notices = noticeState as Readonly<typeof noticeState>

/** refreshNotices re-reads the unread count. */
export const refreshNoticeCount = refreshNotices

/** echarts loads (once, lazily) the console's modular ECharts: init, the
 * registered chart types (bar, line, pie; grid, plain legend, canvas) and
 * the console's palette. */
export function echarts() {
  return import('@/components/c3/echarts')
}

/** EChart is the console's chart component (props option, label), lazily. */
export const EChart = defineAsyncComponent(() => import('@/components/c3/EChart.vue'))

/** loadCss adds a stylesheet of the module (same origin: the CSP allows
 * no other) once. */
export function loadCss(href: string): void {
  const url = new URL(href, location.href)
  if (url.origin !== location.origin) throw new Error(`loadCss: ${href} is not same-origin`)
  if (document.querySelector(`link[rel="stylesheet"][href="${url.pathname}"]`)) return
  const l = document.createElement('link')
  l.rel = 'stylesheet'
  l.href = url.pathname
  document.head.appendChild(l)
}

export { useRoute, useRouter }

/** onRealtime (kit 1.1) calls fn with the data of each realtime message of
 * type — a target the module pushes with module.Deps.Realtime.Push — while
 * the console's socket is open; it returns the function that stops it (call
 * it in onBeforeUnmount). Delivery is at most once: reload from the API for
 * anything the page must not miss. */
export const onRealtime = hubOn
