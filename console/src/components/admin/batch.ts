// Batch delete on a paged table (files, jobs): the selected rows' ids, the
// confirmation, the call, the list refreshed. The shared client replays a
// +R call once after the re-authentication dialog (403/40024), so the
// pages only call the endpoint.
import { confirmDanger, run } from './paged'

/** idsOf: the distinct positive ids of the selected rows, in their order. */
export function idsOf(rows: readonly { id: number }[]): number[] {
  const seen = new Set<number>()
  const out: number[] = []
  for (const r of rows) {
    const id = Number(r?.id)
    if (Number.isSafeInteger(id) && id > 0 && !seen.has(id)) {
      seen.add(id)
      out.push(id)
    }
  }
  return out
}

/**
 * batchDelete asks (question(n)), calls remove(ids) and reloads on success;
 * true when the rows were deleted. Nothing selected: nothing asked, false.
 */
export async function batchDelete(
  rows: readonly { id: number }[],
  question: (n: number) => string,
  remove: (ids: number[]) => Promise<unknown>,
  reload: () => unknown,
  ask: (message: string) => Promise<boolean> = confirmDanger,
  act: (action: () => Promise<unknown>, done?: string) => Promise<boolean> = run,
): Promise<boolean> {
  const ids = idsOf(rows)
  if (!ids.length) return false
  if (!(await ask(question(ids.length)))) return false
  if (!(await act(() => remove(ids), 'admin.deleted'))) return false
  await reload()
  return true
}
