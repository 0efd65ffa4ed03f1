import { createRouter, createWebHistory, type RouteRecordRaw } from 'vue-router'
import { session } from '@/api'
import { useApp } from '@/stores/app'
import { pageRoutes } from '@/pages'
import LoginPage from '@/views/LoginPage.vue'

const routes: RouteRecordRaw[] = [
  { path: '/login', name: 'login', component: LoginPage, meta: { public: true } },
  { path: '/oauth/callback', name: 'oauth-callback', component: () => import('@/views/OAuthCallback.vue'), meta: { public: true } },
  { path: '/mfa/bind', name: 'mfa-bind', component: () => import('@/views/MfaBind.vue'), meta: { public: true } },
  { path: '/boot-error', name: 'boot-error', component: () => import('@/views/BootError.vue'), meta: { public: true } },
  {
    path: '/',
    component: () => import('@/views/ShellLayout.vue'),
    children: [
      { path: '', name: 'home', component: () => import('@/views/HomePage.vue') },
      { path: 'personal/:tab(profile|password|sessions|bindings|passkeys)?', name: 'personal', component: () => import('@/views/PersonalPage.vue') },
      ...Object.values(pageRoutes).map((r) => ({ ...r, path: r.path.replace(/^\//, '') }) as RouteRecordRaw),
    ],
  },
  { path: '/:rest(.*)*', redirect: '/' },
]

export const router = createRouter({ history: createWebHistory(), routes })

router.beforeEach(async (to) => {
  if (to.meta.public) return true
  if (!session.active) return { name: 'login', query: to.fullPath !== '/' ? { redirect: to.fullPath } : {} }
  const app = useApp()
  if (!app.booted) {
    const r = await app.boot()
    if (r === 'dead') {
      session.clear()
      app.reset()
      return { name: 'login' }
    }
    if (r === 'retry') return { name: 'boot-error', query: { to: to.fullPath } }
  }
  if (session.user?.mustChangePassword && !(to.name === 'personal' && to.params.tab === 'password')) {
    return { name: 'personal', params: { tab: 'password' } }
  }
  return true
})
