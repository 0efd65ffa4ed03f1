// Batch delete on the files and jobs pages and the user picker of the
// config center's "Clear a user's second factors" (console leftovers):
// the ids sent, the confirmation and the refresh, the merged remote search.
import { describe, it, expect, vi } from 'vitest'
import { idsOf, batchDelete } from '../src/components/admin/batch'
import { mergeUsers, searchUsers, userLabel } from '../src/components/c1/userPick'
import type { Paged, UserItem } from '../src/api/admin'

describe('idsOf', () => {
  it.each([
    ['nothing selected', [], []],
    ['in order', [{ id: 3 }, { id: 1 }, { id: 2 }], [3, 1, 2]],
    ['each id once', [{ id: 5 }, { id: 5 }, { id: 7 }], [5, 7]],
    ['no zero, negative or unsafe id', [{ id: 0 }, { id: -4 }, { id: Number.MAX_SAFE_INTEGER + 2 }, { id: 1.5 }, { id: 9 }], [9]],
  ])('%s', (_name, rows, want) => {
    expect(idsOf(rows as { id: number }[])).toEqual(want)
  })
})

describe('batchDelete', () => {
  const setup = (confirmed: boolean, succeeds: boolean) => {
    const ask = vi.fn(async () => confirmed)
    const remove = vi.fn(async () => true)
    const act = vi.fn(async (action: () => Promise<unknown>) => {
      await action()
      return succeeds
    })
    const reload = vi.fn()
    return { ask, remove, act, reload }
  }
  it.each([
    { name: 'confirmed and deleted: the list refreshes', confirmed: true, succeeds: true, want: true, removed: 1, reloaded: 1 },
    { name: 'cancelled: nothing sent', confirmed: false, succeeds: true, want: false, removed: 0, reloaded: 0 },
    { name: 'refused by the API: no refresh', confirmed: true, succeeds: false, want: false, removed: 1, reloaded: 0 },
  ])('$name', async ({ confirmed, succeeds, want, removed, reloaded }) => {
    const s = setup(confirmed, succeeds)
    const got = await batchDelete([{ id: 4 }, { id: 2 }, { id: 4 }], (n) => `delete ${n}?`, s.remove, s.reload, s.ask, s.act)
    expect(got).toBe(want)
    expect(s.ask).toHaveBeenCalledWith('delete 2?')
    expect(s.remove).toHaveBeenCalledTimes(removed)
    if (removed) expect(s.remove).toHaveBeenCalledWith([4, 2])
    expect(s.reload).toHaveBeenCalledTimes(reloaded)
  })
  it('nothing selected: no question, no call', async () => {
    const s = setup(true, true)
    expect(await batchDelete([], () => 'x', s.remove, s.reload, s.ask, s.act)).toBe(false)
    expect(s.ask).not.toHaveBeenCalled()
    expect(s.remove).not.toHaveBeenCalled()
  })
})

const u = (id: number, account: string, name: string) => ({ id, account, name }) as UserItem
const paged = (items: UserItem[]): Paged<UserItem> => ({ current: 1, size: 20, total: items.length, pages: 1, items })

describe('user picker', () => {
  it('merges the account and name answers, account matches first, each user once, at most the limit', () => {
    const a = [u(1, 'ann', 'Ann Lee'), u(2, 'annika', 'Annika')]
    const n = [u(2, 'annika', 'Annika'), u(3, 'bob', 'Hannah')]
    expect(mergeUsers(a, n).map((x) => x.id)).toEqual([1, 2, 3])
    expect(mergeUsers(a, n, 2).map((x) => x.id)).toEqual([1, 2])
    expect(mergeUsers([], [])).toEqual([])
  })
  it('labels: name and account, the account alone when the name is empty or the same', () => {
    expect(userLabel(u(1, 'ann', 'Ann Lee'))).toBe('Ann Lee (ann)')
    expect(userLabel(u(1, 'ann', ''))).toBe('ann')
    expect(userLabel(u(1, 'ann', 'ann'))).toBe('ann')
  })
  it('searches by account and by name with the trimmed text; an empty text asks once, unfiltered', async () => {
    const page = vi.fn(async (p: { Account?: string; Name?: string }) => (p.Account ? paged([u(1, 'ann', 'Ann')]) : p.Name ? paged([u(3, 'bob', 'Hannah'), u(1, 'ann', 'Ann')]) : paged([u(9, 'superAdmin', 'Super')])))
    expect((await searchUsers('  ann ', page)).map((x) => x.id)).toEqual([1, 3])
    expect(page.mock.calls.map((c) => c[0])).toEqual([
      { Current: 1, Size: 20, Account: 'ann' },
      { Current: 1, Size: 20, Name: 'ann' },
    ])
    page.mockClear()
    expect((await searchUsers('   ', page)).map((x) => x.id)).toEqual([9])
    expect(page.mock.calls.map((c) => c[0])).toEqual([{ Current: 1, Size: 20 }])
  })
  it('a refused search fails (the page shows the text)', async () => {
    const page = vi.fn(async () => {
      throw new Error('denied')
    })
    await expect(searchUsers('x', page)).rejects.toThrow('denied')
  })
})
