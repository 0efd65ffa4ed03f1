import { describe, it, expect } from 'vitest'
import { iconLoaded } from '@iconify/vue'
import { brandIcons, genericProviderIcon, providerIcon } from '../src/icons'

describe('providerIcon: every provider code gets a drawable icon', () => {
  const cases: [string, string, string | null, string | null, string][] = [
    ['the built-in OpenID Connect provider: the generic icon, not the letter O', 'oidc', null, null, genericProviderIcon],
    ['another OIDC code without an icon', 'corp_sso', null, null, genericProviderIcon],
    ['an Iconify name of the bundled subset', 'corp', 'ri:github-fill', null, 'ri:github-fill'],
    ['an Iconify name not bundled (never asked of the Iconify API)', 'corp', 'mdi:account', null, genericProviderIcon],
    ['a URL is never an icon', 'corp', 'https://evil.example/x.svg', null, genericProviderIcon],
    ['a drawable icon wins over the brand map', 'github', 'ri:qq-fill', 'github', 'ri:qq-fill'],
    ['the bundled plugins: their declared icons', 'enterprise_chat', 'ant-design:wechat-work-outlined', 'wecom', 'ant-design:wechat-work-outlined'],
    ['an icon not bundled: the brand key', 'corp', 'mdi:github', 'github', 'ant-design:github-outlined'],
    ['an unknown brand key: the code', 'team_chat', null, 'acme', 'ant-design:dingtalk-outlined'],
    ['a plugin without icon or brand (an older SDK): the code', 'social_chat', null, null, 'ant-design:wechat-outlined'],
    ['a brand key is not an object property', 'corp', null, 'constructor', genericProviderIcon],
  ]
  for (const [name, code, icon, brand, want] of cases) it(name, () => expect(providerIcon(code, icon, brand)).toBe(want))

  it('every brand code and the generic icon are in the bundled subset', () => {
    for (const [code, name] of Object.entries(brandIcons)) expect(iconLoaded(name), `${code} → ${name}`).toBe(true)
    expect(iconLoaded(genericProviderIcon)).toBe(true)
  })
})
