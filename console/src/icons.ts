// Offline icons: the generated subset (scripts/icons.mjs) is registered
// with @iconify/vue, which then never calls the Iconify API.
import { addCollection, iconLoaded } from '@iconify/vue'
import type { IconifyJSON } from '@iconify/vue'
import sets from './icons.generated.json'

for (const s of sets as unknown as IconifyJSON[]) addCollection(s)

/**
 * The brand map, by brand key (a provider's `brand`) and by provider code:
 * the contract's brand codes (§3.3) plus the kernel's neutral codes, for
 * providers that declare no drawable icon (plugins built before icons and
 * brands were declared, older kernels). The four vendor brands use the
 * icons the bundled plugins declare.
 */
export const brandIcons: Record<string, string> = {
  github: 'ant-design:github-outlined',
  code_host: 'ant-design:github-outlined',
  wechat: 'ant-design:wechat-outlined',
  social_chat: 'ant-design:wechat-outlined',
  wecom: 'ant-design:wechat-work-outlined',
  enterprise_chat: 'ant-design:wechat-work-outlined',
  dingtalk: 'ant-design:dingtalk-outlined',
  team_chat: 'ant-design:dingtalk-outlined',
  gitee: 'ri:gitee-fill',
  qq: 'ri:qq-fill',
}

const ICONIFY_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*:[a-z0-9]+(?:-[a-z0-9]+)*$/

/** The icon of a provider without a brand or Iconify icon (OpenID Connect and plugins). */
export const genericProviderIcon = 'ri:shield-keyhole-line'

/**
 * providerIcon: the provider's own icon when it is an Iconify name of the
 * bundled subset (never a URL, never asked of the Iconify API), else the
 * brand map by its brand key, else by its code, else the generic
 * identity-provider icon (the contract's first letter of the code looked
 * like a typo on a round button: "O").
 */
export function providerIcon(code: string, icon?: string | null, brand?: string | null): string {
  if (icon && ICONIFY_NAME.test(icon) && iconLoaded(icon)) return icon
  if (brand && Object.hasOwn(brandIcons, brand)) return brandIcons[brand]
  if (Object.hasOwn(brandIcons, code)) return brandIcons[code]
  return genericProviderIcon
}
