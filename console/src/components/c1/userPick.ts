// The user picker of the config center's "Clear a user's second factors"
// (SecurityOps.vue): a remote search over GET /sys/user/page, whose
// Account and Name filters are both fuzzy and combine with AND, so one
// text is searched twice (by account, by name) and the answers merged.
import type { Paged, UserItem } from '@/api/admin'

export type PickedUser = Pick<UserItem, 'id' | 'account' | 'name'>

/** mergeUsers: the users of both answers, each once (by id), account matches first, at most limit. */
export function mergeUsers(byAccount: readonly PickedUser[], byName: readonly PickedUser[], limit = 20): PickedUser[] {
  const seen = new Set<number>()
  const out: PickedUser[] = []
  for (const u of [...byAccount, ...byName]) {
    if (!u || seen.has(u.id)) continue
    seen.add(u.id)
    out.push({ id: u.id, account: u.account, name: u.name })
    if (out.length >= limit) break
  }
  return out
}

/** userLabel: "Name (account)", or the account alone when the name is empty or the same. */
export function userLabel(u: PickedUser): string {
  const name = (u.name ?? '').trim()
  return name && name !== u.account ? `${name} (${u.account})` : u.account
}

/** searchUsers asks the page endpoint by account and by name (size each) and merges; an empty text asks once, unfiltered. */
export async function searchUsers(
  text: string,
  page: (p: { Current: number; Size: number; Account?: string; Name?: string }) => Promise<Paged<UserItem>>,
  size = 20,
): Promise<PickedUser[]> {
  const q = text.trim()
  if (!q) return mergeUsers((await page({ Current: 1, Size: size })).items ?? [], [], size)
  const [a, n] = await Promise.all([page({ Current: 1, Size: size, Account: q }), page({ Current: 1, Size: size, Name: q })])
  return mergeUsers(a.items ?? [], n.items ?? [], size)
}
