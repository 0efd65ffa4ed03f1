// The inventory module's console pages: a Vite library build (ES module per
// page) whose Vue, Element Plus and console kit are the running console's:
// they stay external, mapped to the kit's URLs (docs/developers/frontend.md
// "Pages shipped by a module"). Build: npm run build (it reuses the main
// console's node_modules: no install here). The output, dist/, is committed
// and embedded into the module (console.go: Console.Assets).
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

// Vite and the Vue plugin of the main console's node_modules.
const require = createRequire(new URL('../../../console/package.json', import.meta.url))
const { default: vue } = await import(require.resolve('@vitejs/plugin-vue'))

const kit = {
  vue: '/console-kit/vue.js',
  'element-plus': '/console-kit/element-plus.js',
  '@adminkernel/console-kit': '/console-kit/kit.js',
}

export default {
  root: fileURLToPath(new URL('.', import.meta.url)),
  plugins: [vue()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    reportCompressedSize: false,
    lib: {
      // One entry per page: Console.Pages maps the menu component to it.
      entry: { dashboard: fileURLToPath(new URL('./src/dashboard.ts', import.meta.url)) },
      formats: ['es'],
      fileName: (_format, name) => `${name}.js`,
      cssFileName: 'dashboard',
    },
    rollupOptions: {
      external: Object.keys(kit),
      output: { paths: kit },
    },
  },
}
