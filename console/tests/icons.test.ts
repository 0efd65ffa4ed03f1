import { describe, it, expect } from 'vitest'
import { iconLoaded } from '@iconify/vue'
import { brandIcons, genericProviderIcon, providerIcon } from '../src/icons'

describe('providerIcon: every provider code gets a drawable icon', () => {
  const cases: [string, string, string | null, string][] = [
    ['the built-in OpenID Connect provider: the generic icon, not the letter O', 'oidc', null, genericProviderIcon],
    ['another OIDC code without an icon', 'corp_sso', null, genericProviderIcon],
    ['an Iconify name of the bundled subset', 'corp', 'ri:github-fill', 'ri:github-fill'],
    ['an Iconify name not bundled (never asked of the Iconify API)', 'corp', 'mdi:account', genericProviderIcon],
    ['a URL is never an icon', 'corp', 'https://evil.example/x.svg', genericProviderIcon],
    ['a brand code wins over its icon', 'github', 'ri:qq-fill', 'ri:github-fill'],
  ]
  for (const [name, code, icon, want] of cases) it(name, () => expect(providerIcon(code, icon)).toBe(want))

  it('every brand code and the generic icon are in the bundled subset', () => {
    for (const [code, name] of Object.entries(brandIcons)) expect(iconLoaded(name), `${code} → ${name}`).toBe(true)
    expect(iconLoaded(genericProviderIcon)).toBe(true)
  })
})
