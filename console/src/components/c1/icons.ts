// The names of the offline icon subset the console ships: the only icons a
// menu or module may name (anything else draws nothing).
import sets from '@/icons.generated.json'

export const shippedIcons: Set<string> = new Set(
  (sets as unknown as { prefix: string; icons: Record<string, unknown> }[]).flatMap((s) => Object.keys(s.icons).map((n) => `${s.prefix}:${n}`)),
)
