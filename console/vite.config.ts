import { defineConfig } from 'vite'
import vue from '@vitejs/plugin-vue'
import { fileURLToPath } from 'node:url'
import type { Plugin } from 'vite'
// @ts-ignore: a plain ES module of the build scripts, without types
import { facades, shims } from './scripts/kit-shims.mjs'

// The console kit's shims (/console-kit/vue.js, element-plus.js, kit.js),
// their export lists generated at each build from the installed packages
// and src/kit/kit.ts (scripts/kit-shims.mjs); served by the dev server too.
function consoleKit(): Plugin {
  let files: Record<string, string> | null = null
  let virtual: Record<string, string> | null = null
  const get = () => (files ??= shims() as Record<string, string>)
  const facade = (id: string) => (virtual ??= facades() as Record<string, string>)[id]
  return {
    name: 'adminkernel-console-kit',
    // virtual:ak-kit/vue and virtual:ak-kit/element-plus (src/kit/runtime.ts).
    resolveId: (id) => (id.startsWith('virtual:ak-kit/') ? '\0' + id : null),
    load: (id) => (id.startsWith('\0virtual:ak-kit/') ? facade(id.slice(1)) : null),
    generateBundle() {
      for (const [name, source] of Object.entries(get())) this.emitFile({ type: 'asset', fileName: `console-kit/${name}`, source })
    },
    configureServer(server) {
      server.middlewares.use((req, res, next) => {
        const m = /^\/console-kit\/([\w.-]+\.js)$/.exec(req.url ?? '')
        const body = m ? get()[m[1]] : undefined
        if (!body) return next()
        res.setHeader('Content-Type', 'text/javascript; charset=utf-8')
        res.end(body)
      })
    },
  }
}

const kernel = process.env.AK_API ?? 'http://localhost:5100'

// The build is reproducible (same sources and lockfile -> same bytes in
// dist/): no timestamps, content-hashed names, no inline module preload
// polyfill script (CSP: script-src 'self').
export default defineConfig({
  plugins: [vue(), consoleKit()],
  resolve: {
    alias: {
      '@': fileURLToPath(new URL('./src', import.meta.url)),
      '@kernel-locales': fileURLToPath(new URL('../host/errcode/locales', import.meta.url)),
    },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
    chunkSizeWarningLimit: 1024,
  },
  server: {
    fs: { allow: ['..'] },
    // npm run dev: the API, the health probes and the SSO redirects go to
    // the kernel (AK_API, default http://localhost:5100).
    proxy: {
      '/api': { target: kernel, changeOrigin: false },
      '/health': { target: kernel },
      '/console-ext': { target: kernel },
    },
  },
  test: {
    environment: 'jsdom',
    include: ['tests/**/*.test.ts'],
  },
})
