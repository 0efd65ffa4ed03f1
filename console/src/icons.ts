// Offline icons: the generated subset (scripts/icons.mjs) is registered
// with @iconify/vue, which then never calls the Iconify API.
import { addCollection, iconLoaded } from '@iconify/vue'
import type { IconifyJSON } from '@iconify/vue'
import sets from './icons.generated.json'

for (const s of sets as unknown as IconifyJSON[]) addCollection(s)

/** The brand map of the contract (§3.3) plus the kernel's neutral codes. */
export const brandIcons: Record<string, string> = {
  github: 'ri:github-fill',
  code_host: 'ri:github-fill',
  wechat: 'ri:wechat-fill',
  social_chat: 'ri:wechat-fill',
  wecom: 'ri:wechat-2-fill',
  enterprise_chat: 'ri:wechat-2-fill',
  dingtalk: 'ri:dingding-fill',
  team_chat: 'ri:dingding-fill',
  gitee: 'ri:gitee-fill',
  qq: 'ri:qq-fill',
}

const ICONIFY_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*:[a-z0-9]+(?:-[a-z0-9]+)*$/

/** The icon of a provider without a brand or Iconify icon (OpenID Connect and plugins). */
export const genericProviderIcon = 'ri:shield-keyhole-line'

/**
 * providerIcon: brand map, else an Iconify name of the bundled subset (never
 * a URL), else the generic identity-provider icon (the contract's first
 * letter of the code looked like a typo on a round button: "O").
 */
export function providerIcon(code: string, icon?: string | null): string {
  if (brandIcons[code]) return brandIcons[code]
  if (icon && ICONIFY_NAME.test(icon) && iconLoaded(icon)) return icon
  return genericProviderIcon
}
