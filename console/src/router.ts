import { createRouter, createWebHistory, type RouteLocationNormalized, type RouteRecordRaw } from 'vue-router'
import { session } from '@/api'
import { useApp } from '@/stores/app'
import { extensionRoutes, loadExtensions, pageRoutes } from '@/pages'
import LoginPage from '@/views/LoginPage.vue'

const routes: RouteRecordRaw[] = [
  { path: '/login', name: 'login', component: LoginPage, meta: { public: true } },
  { path: '/oauth/callback', name: 'oauth-callback', component: () => import('@/views/OAuthCallback.vue'), meta: { public: true } },
  { path: '/mfa/bind', name: 'mfa-bind', component: () => import('@/views/MfaBind.vue'), meta: { public: true } },
  { path: '/boot-error', name: 'boot-error', component: () => import('@/views/BootError.vue'), meta: { public: true } },
  // The forced password change (40028): signed in, outside the shell, whose
  // calls the kernel refuses until the password is changed.
  { path: '/password-change', name: 'password-change', component: () => import('@/views/PasswordChange.vue'), meta: { forced: true } },
  {
    path: '/',
    name: 'shell',
    component: () => import('@/views/ShellLayout.vue'),
    children: [
      { path: '', name: 'home', component: () => import('@/views/HomePage.vue') },
      { path: 'personal/:tab(profile|password|sessions|bindings|totp|passkeys)?', name: 'personal', component: () => import('@/views/PersonalPage.vue') },
      ...Object.values(pageRoutes).map((r) => ({ ...r, path: r.path.replace(/^\//, '') }) as RouteRecordRaw),
    ],
  },
  // Any other path: a page a module ships once its route is added (after
  // the boot, syncExtensionRoutes), else home (the guard decides).
  { path: '/:rest(.*)*', name: 'not-found', component: { render: () => null } },
]

export const router = createRouter({ history: createWebHistory(), routes })

/** safePath is v when it is a path of this site ('/' otherwise): a redirect
 * query never leads elsewhere. */
export function safePath(v: unknown): string {
  return typeof v === 'string' && v.startsWith('/') && !v.startsWith('//') && !v.startsWith('/\\') ? v : '/'
}

/** syncExtensionRoutes adds the routes of the modules' pages the current
 * menu holds (under the shell); it reports whether it added any. */
export function syncExtensionRoutes(menu: Parameters<typeof extensionRoutes>[0]): boolean {
  let added = false
  for (const r of extensionRoutes(menu)) {
    if (r.name && !router.hasRoute(r.name)) {
      router.addRoute('shell', { ...r, path: r.path.replace(/^\//, '') } as RouteRecordRaw)
      added = true
    }
  }
  return added
}

/** passwordChange is the forced change form, remembering where to go next. */
function passwordChange(to: RouteLocationNormalized) {
  const next = safePath(to.name === 'password-change' ? to.query.redirect : to.fullPath)
  return { name: 'password-change', query: next !== '/' ? { redirect: next } : {} }
}

router.beforeEach(async (to) => {
  if (to.meta.public) return true
  if (!session.active) return { name: 'login', query: to.fullPath !== '/' ? { redirect: to.fullPath } : {} }
  // A user who must change the password sees the form and nothing else:
  // the kernel answers 40028 to every other call until the change.
  if (session.user?.mustChangePassword) return to.name === 'password-change' ? true : passwordChange(to)
  if (to.meta.forced) return safePath(to.query.redirect)
  const app = useApp()
  if (!app.booted) {
    const r = await app.boot()
    if (r === 'dead') {
      session.clear()
      app.reset()
      return { name: 'login' }
    }
    if (r === 'password') return passwordChange(to)
    if (r === 'retry') return { name: 'boot-error', query: { to: to.fullPath } }
  }
  await loadExtensions()
  syncExtensionRoutes(app.menu)
  // An unknown path: a module's page whose route was just added, else home.
  if (to.name === 'not-found') return router.resolve(to.fullPath).name !== 'not-found' ? to.fullPath : '/'
  return true
})
