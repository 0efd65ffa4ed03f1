import { defineConfig } from 'vite'
import vue from '@vitejs/plugin-vue'
import { fileURLToPath } from 'node:url'

const kernel = process.env.AK_API ?? 'http://localhost:5100'

// The build is reproducible (same sources and lockfile -> same bytes in
// dist/): no timestamps, content-hashed names, no inline module preload
// polyfill script (CSP: script-src 'self').
export default defineConfig({
  plugins: [vue()],
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
    },
  },
  test: {
    environment: 'jsdom',
    include: ['tests/**/*.test.ts'],
  },
})
