/// <reference types="vite/client" />
declare module '*.vue' {
  import type { DefineComponent } from 'vue'
  const component: DefineComponent<object, object, unknown>
  export default component
}
declare module 'element-plus/es/locale/lang/en'
declare module 'element-plus/es/locale/lang/zh-cn'

// The console kit's facades (vite.config.ts, scripts/kit-shims.mjs).
declare module 'virtual:ak-kit/vue' {
  export * from 'vue'
}
declare module 'virtual:ak-kit/element-plus' {
  export * from 'element-plus'
}
