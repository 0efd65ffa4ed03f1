// The shared shape of an administration page (issue 25): a query form, the
// server-paged list, the add/edit dialog (EditDialog), the confirmed
// delete, and the permission flags of the page's codes. A page declares
// only what is its own: its filter, its API calls, how a row becomes a form
// and a form a request body, and its columns and fields in the template.
import { computed, reactive, ref } from 'vue'
import { ElMessage } from 'element-plus'
import type { Paged } from '@/api/admin'
import { errorText } from '@/i18n'
import { useApp } from '@/stores/app'
import { confirmDanger, run, usePaged, type Pager } from './paged'

export interface CrudOptions<Row, Form extends object, Filter extends object, Codes extends Record<string, string>> {
  /** codes are the page's permission codes; can.<name> tells whether the caller holds one. */
  codes: Codes
  /** filter is the blank query form (reset restores it). */
  filter?: () => Filter
  /** page loads one server page with the filter; omit it for a page that lists otherwise (reload). */
  page?: (current: number, size: number, filter: Filter) => Promise<Paged<Row>>
  size?: number
  /** reload refreshes a page without a server-paged list (a tree). */
  reload?: () => Promise<void> | void
  /** blank is the add form. */
  blank: () => Form
  /** toForm turns a row into the edit form (it may read the detail). */
  toForm?: (row: Row) => Partial<Form> | Promise<Partial<Form>>
  /** save creates (editing null) or updates the row. */
  save: (form: Form, editing: Row | null) => Promise<unknown>
  /** remove deletes a row after the confirmation removeText. */
  remove?: (row: Row) => Promise<unknown>
  removeText?: (row: Row) => string
}

export interface Crud<Row, Form extends object, Filter extends object, Codes extends Record<string, string>> {
  filter: Filter
  pager: Pager<Row>
  form: Form
  editing: Row | null
  dialog: boolean
  can: Record<keyof Codes, boolean>
  codes: Codes
  reload: (first?: boolean) => Promise<void>
  search: () => void
  reset: () => void
  openAdd: (extra?: Partial<Form>) => void
  openEdit: (row: Row) => Promise<void>
  submit: () => Promise<unknown>
  saved: () => void
  remove: (row: Row) => Promise<boolean>
}

const noPage = async <Row>(): Promise<Paged<Row>> => ({ current: 1, size: 0, total: 0, pages: 0, items: [] })

export function useCrudPage<Row, Form extends object, Filter extends object = Record<string, never>, Codes extends Record<string, string> = Record<string, string>>(
  o: CrudOptions<Row, Form, Filter, Codes>,
): Crud<Row, Form, Filter, Codes> {
  const app = useApp()
  const blankFilter = o.filter ?? (() => ({}) as Filter)
  const filter = reactive(blankFilter()) as Filter
  const pager = usePaged<Row>((current, size) => (o.page ? o.page(current, size, filter) : noPage<Row>()), o.size)
  const form = reactive(o.blank()) as Form
  const editing = ref<Row | null>(null)
  const dialog = ref(false)
  const can = computed(() => Object.fromEntries(Object.entries(o.codes).map(([k, c]) => [k, app.can(c)])) as Record<keyof Codes, boolean>)

  async function reload(first = false) {
    if (o.page) await pager.reload(first)
    if (o.reload) await o.reload()
  }
  const c = reactive({
    filter,
    pager,
    form,
    editing,
    dialog,
    can,
    codes: o.codes,
    reload,
    search: () => void reload(true),
    reset() {
      Object.assign(filter, blankFilter())
      void reload(true)
    },
    openAdd(extra: Partial<Form> = {}) {
      editing.value = null
      Object.assign(form, o.blank(), extra)
      dialog.value = true
    },
    async openEdit(row: Row) {
      try {
        const values = o.toForm ? await o.toForm(row) : (row as unknown as Partial<Form>)
        editing.value = row
        Object.assign(form, o.blank(), values)
        dialog.value = true
      } catch (e) {
        if (o.page) pager.error = errorText(e)
        else ElMessage.error(errorText(e))
      }
    },
    submit: () => o.save(form, editing.value as Row | null),
    saved: () => void reload(),
    async remove(row: Row) {
      if (!o.remove) return false
      if (!(await confirmDanger(o.removeText ? o.removeText(row) : ''))) return false
      const ok = await run(() => o.remove!(row), 'admin.deleted')
      if (ok) await reload()
      return ok
    },
  })
  return c as unknown as Crud<Row, Form, Filter, Codes>
}
