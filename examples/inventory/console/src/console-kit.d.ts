// The console kit's surface (version 1.0) as this module uses it; the
// authoritative one is console/src/kit/kit.ts (docs/developers/frontend.md
// "Pages shipped by a module").
declare module '@adminkernel/console-kit' {
  import type { Component, Directive, Ref } from 'vue'
  export const version: string
  export const api: { get<T>(path: string): Promise<T>; post<T>(path: string, body?: unknown): Promise<T>; put<T>(path: string, body?: unknown): Promise<T>; del<T>(path: string): Promise<T> }
  export function hasCode(code: string): boolean
  export const vAuth: Directive<HTMLElement, string | string[]>
  export function t(key: string, args?: Record<string, unknown>): string
  export function useI18n(): { t: typeof t; locale: Ref<string> }
  export function errorText(e: unknown): string
  export const notify: { success(m: string): void; error(m: string): void; warning(m: string): void }
  export function echarts(): Promise<unknown>
  export const EChart: Component
  export function loadCss(href: string): void
}
declare module '*.vue' {
  import type { DefineComponent } from 'vue'
  const c: DefineComponent
  export default c
}
