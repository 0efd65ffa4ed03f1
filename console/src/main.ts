import { createApp } from 'vue'
import { createPinia } from 'pinia'
import 'element-plus/dist/index.css'
import './style.css'
import './components/admin/theme'
import App from './App.vue'
import { router } from './router'
import { i18n, msgText } from './i18n'
import { onPasswordChangeRequired, onSessionEnded, session } from './api'
import { useApp } from './stores/app'
import { ElMessage } from 'element-plus'

const app = createApp(App)
const pinia = createPinia()
app.use(pinia).use(i18n).use(router)
document.documentElement.lang = i18n.global.locale.value

// Session-expired handling: the client refused a refresh (401/40006/40007).
onSessionEnded(() => {
  useApp(pinia).reset()
  if (!router.currentRoute.value.meta.public) {
    ElMessage.warning(msgText('shell.sessionExpired'))
    void router.push({ name: 'login' })
  }
})
// 40028 in the shell (the kernel requires a password change): to the form.
// During the boot the router's guard leads there itself.
onPasswordChangeRequired(() => {
  const app = useApp(pinia)
  if (!app.booted) return
  app.booted = false
  const here = router.currentRoute.value
  if (here.name !== 'password-change' && !here.meta.public) {
    void router.push({ name: 'password-change', query: here.fullPath !== '/' ? { redirect: here.fullPath } : {} })
  }
})
session.onChange(() => {
  useApp(pinia).user = session.user
})
app.mount('#app')
