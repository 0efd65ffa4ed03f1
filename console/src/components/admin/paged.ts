// The server-paged list pattern of the administration pages: the page and
// size live here, the rows come from the API (PagedList), failures are shown
// through their msgKey text.
import { reactive } from 'vue'
import { ElMessage, ElMessageBox } from 'element-plus'
import type { Paged } from '@/api/admin'
import './admin.css'
import { errorText, i18n } from '@/i18n'

/** tr is the UI text of a key outside a component (i18n/admin.ts). */
export const tr = (key: string, args: Record<string, unknown> = {}): string => i18n.global.t(key, args)

export interface Pager<T> {
  rows: T[]
  total: number
  current: number
  size: number
  loading: boolean
  error: string
  reload: (first?: boolean) => Promise<void>
}

export function usePaged<T>(load: (current: number, size: number) => Promise<Paged<T>>, size = 20): Pager<T> {
  // Only the newest reload may fill the table: an older one (the first
  // load, slow, answering after a search) is dropped when it arrives.
  let latest = 0
  const p = reactive({
    rows: [] as T[],
    total: 0,
    current: 1,
    size,
    loading: false,
    error: '',
    async reload(first = false) {
      const mine = ++latest
      if (first) p.current = 1
      p.loading = true
      p.error = ''
      try {
        const page = await load(p.current, p.size)
        if (mine !== latest) return
        p.rows = (page?.items ?? []) as never
        p.total = page?.total ?? 0
        // The last row of the last page was deleted: show the page before.
        if (!p.rows.length && p.total > 0 && p.current > 1) {
          p.current = Math.max(1, Math.ceil(p.total / p.size))
          const again = await load(p.current, p.size)
          if (mine !== latest) return
          p.rows = (again?.items ?? []) as never
        }
      } catch (e) {
        if (mine !== latest) return
        p.rows = []
        p.total = 0
        p.error = errorText(e)
      } finally {
        if (mine === latest) p.loading = false
      }
    },
  })
  return p as Pager<T>
}

/** confirmDanger asks before a destructive action; true when confirmed. */
export async function confirmDanger(message: string): Promise<boolean> {
  try {
    await ElMessageBox.confirm(message, tr('admin.confirm.title'), {
      type: 'warning',
      confirmButtonText: tr('admin.confirm.ok'),
      cancelButtonText: tr('admin.cancel'),
      confirmButtonClass: 'el-button--danger',
      customClass: 'ak-confirm',
    })
    return true
  } catch {
    return false
  }
}

/** run performs an action, shows success or the error's msgKey text; true on success. */
export async function run(action: () => Promise<unknown>, done = 'admin.done'): Promise<boolean> {
  try {
    await action()
    ElMessage.success(tr(done))
    return true
  } catch (e) {
    ElMessage.error(errorText(e))
    return false
  }
}

export interface TreeNode<T> {
  id: number
  label: string
  item: T
  children: TreeNode<T>[]
}

/** toTree builds a tree of rows with parentId (0 or unknown parent = root), sorted by sort then id. */
export function toTree<T extends { id: number; parentId: number; sort?: number }>(rows: T[], label: (r: T) => string): TreeNode<T>[] {
  const nodes = new Map<number, TreeNode<T>>()
  for (const r of rows) nodes.set(r.id, { id: r.id, label: label(r), item: r, children: [] })
  const roots: TreeNode<T>[] = []
  for (const r of rows) {
    const n = nodes.get(r.id)!
    const parent = r.parentId ? nodes.get(r.parentId) : undefined
    if (parent && parent !== n) parent.children.push(n)
    else roots.push(n)
  }
  const order = (a: TreeNode<T>, b: TreeNode<T>) => (a.item.sort ?? 0) - (b.item.sort ?? 0) || a.id - b.id
  const sort = (list: TreeNode<T>[]) => {
    list.sort(order)
    for (const n of list) sort(n.children)
  }
  sort(roots)
  return roots
}
