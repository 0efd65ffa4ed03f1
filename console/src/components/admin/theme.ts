// Light or dark (issue 25): the console follows the system's
// prefers-color-scheme until the user picks one with the header's toggle
// (ThemeToggle.vue); the choice is kept in localStorage. Dark mode is
// Element Plus's dark CSS variables (html.dark) plus the console's own
// surfaces (dark.css): static stylesheets, as CSP style-src 'self' wants.
import { reactive } from 'vue'
import 'element-plus/theme-chalk/dark/css-vars.css'
import './dark.css'
import './phone.css'

export type Theme = 'light' | 'dark'
const KEY = 'ak.theme'

function stored(): Theme | null {
  try {
    const v = localStorage.getItem(KEY)
    return v === 'light' || v === 'dark' ? v : null
  } catch {
    return null
  }
}
const media = typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : null
const system = (): Theme => (media?.matches ? 'dark' : 'light')

export const theme = reactive({ current: stored() ?? system(), chosen: stored() !== null })

function apply() {
  if (typeof document !== 'undefined') document.documentElement.classList.toggle('dark', theme.current === 'dark')
}

/** setTheme applies and keeps the user's choice. */
export function setTheme(t: Theme) {
  theme.current = t
  theme.chosen = true
  try {
    localStorage.setItem(KEY, t)
  } catch {
    /* private mode: the choice lasts for this page */
  }
  apply()
}

// Until the user chooses, the system's setting is followed live.
media?.addEventListener?.('change', () => {
  if (theme.chosen) return
  theme.current = system()
  apply()
})
apply()

/** shellNav is the phone shell's menu drawer (ShellMenuButton.vue, phone.css). */
export const shellNav = reactive({ open: false })
