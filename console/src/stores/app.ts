// The app state: site info, the portal (modules, menu, permissions,
// profile) and the boot triage of the wire contract (§1.5, §6).
import { defineStore } from 'pinia'
import { api, endpoints, session, type MenuNode, type MyModule, type Profile, type Site } from '@/api'
import { ApiError } from '@/api/client'

const MODULE_KEY = 'ak.moduleId'

/** BootResult: 'password' when the user must change the password first
 * (the kernel refuses the portal with 40028 until then). */
export type BootResult = 'ok' | 'dead' | 'retry' | 'password'

export const useApp = defineStore('app', {
  state: () => ({
    site: { captchaEnabled: false, smsLoginEnabled: false } as Site,
    siteLoaded: false,
    booted: false,
    modules: [] as MyModule[],
    moduleId: 0,
    menu: [] as MenuNode[],
    permissions: new Set<string>(),
    profile: null as Profile | null,
    user: session.user,
  }),
  getters: {
    // The super-admin's permission list is empty: it holds every code.
    can: (s) => (code: string) => !!s.profile?.isSuperAdmin || !!s.user?.isSuperAdmin || s.permissions.has(code),
  },
  actions: {
    async loadSite() {
      try {
        this.site = await endpoints.site()
      } catch {
        /* the built-in defaults stay */
      }
      this.siteLoaded = true
      document.title = this.site.title || 'Admin Kernel'
    },
    /** boot loads the portal after a login or on reload. A session that
     * must change the password gets 40028 for the portal: 'password', not
     * a network failure. */
    async boot(): Promise<BootResult> {
      try {
        if (!session.accessToken) {
          if (!(await api.refresh())) return 'dead'
        }
        // The refresh answers the flag too: no portal call to be refused.
        if (session.user?.mustChangePassword) return 'password'
        const [mods, perms, profile] = await Promise.all([
          endpoints.modules(),
          endpoints.permissions().catch(() => [] as string[]), // fail closed: no buttons
          endpoints.profile(),
        ])
        this.modules = mods.modules ?? []
        this.permissions = new Set(perms)
        this.profile = profile
        const remembered = Number(localStorage.getItem(MODULE_KEY) || 0)
        const pick =
          this.modules.find((m) => m.id === remembered) ??
          (this.modules.length === 1 ? this.modules[0] : undefined) ??
          this.modules.find((m) => m.id === mods.defaultModuleId) ??
          this.modules[0]
        if (pick) await this.selectModule(pick.id)
        this.booted = true
        this.user = session.user
        return 'ok'
      } catch (e) {
        if (e instanceof ApiError && e.sessionDead) return 'dead'
        if (e instanceof ApiError && e.passwordChangeRequired) {
          session.setMustChangePassword(true)
          return 'password'
        }
        return 'retry'
      }
    },
    async selectModule(id: number) {
      this.menu = await endpoints.menu(id)
      this.moduleId = id
      localStorage.setItem(MODULE_KEY, String(id))
    },
    reset() {
      this.booted = false
      this.modules = []
      this.menu = []
      this.permissions = new Set()
      this.profile = null
      this.user = null
    },
  },
})
