// Installs the console kit for pages shipped by modules: the running
// console's Vue, Element Plus and kit as globalThis.__AK_KIT__, which the
// /console-kit/*.js shims re-export. Loaded lazily (pages.ts, before the
// first module page is imported) so the first load does not carry it.
// The namespaces are taken of the kit's facades (vite.config.ts: named
// re-exports of every export), not of 'vue' or 'element-plus': a namespace
// of those would pull all of Element Plus into the first load.
import * as vue from 'virtual:ak-kit/vue'
import * as elementPlus from 'virtual:ak-kit/element-plus'
import * as kit from './kit'

declare global {
  var __AK_KIT__: { version: string; vue: typeof vue; elementPlus: typeof elementPlus; kit: typeof kit } | undefined
}

globalThis.__AK_KIT__ ??= { version: kit.version, vue, elementPlus, kit }
