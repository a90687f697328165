// A service's reads of one table's records, declared once: the page of the rows a caller sees, the
// visible row a path's uuid names (or its 404), and the record of a row a write has just stored.
import type { AppContext } from '../context.js'
import type { Listing } from '../db/listing.js'
import type { Actor } from './permissions.js'
import { pageOfRows, type Pager, type ScopedRows } from './resource-calls.js'
import { foundByUuid } from './uuid.js'

/** What a repository gives (see `tableRecords` in src/db/rows.ts): the scoped rows, by uuid and by id. */
export interface VisibleRows<S, Row> extends ScopedRows<S, Row> {
  findVisibleByUuid(scope: S, uuid: string): Promise<Row | undefined>
  findById(id: number): Promise<Row | undefined>
}

export interface VisibleRecordsSpec<S, Row, T> {
  /** The repository of the table, on a database handle. */
  readonly rows: (db: AppContext['db']) => VisibleRows<S, Row>
  /** What a caller may see (the resource's visibility). */
  readonly visibility: (actor: Actor) => S
  /** The model a 404 names: `No <model> matches the given query.` */
  readonly model: string
  /** The records of rows (several at once, so that what they share is read once). */
  readonly render: (ctx: AppContext, base: string, rows: Row[]) => Promise<T[]> | T[]
}

/**
 * `list` (the kit's list, given its scope), `get` (retrieve by the caller), `find` (the visible row
 * by uuid, for a write to check and change) and `record` (the record of the row `id`, as a write
 * answers it).
 */
export function visibleRecords<S, Row, T>(spec: VisibleRecordsSpec<S, Row, T>) {
  const { rows, visibility, model, render } = spec
  const one = async (ctx: AppContext, base: string, row: Row): Promise<T> =>
    (await render(ctx, base, [row]))[0]!
  const find = (ctx: AppContext, actor: Actor, uuid: string): Promise<Row> =>
    foundByUuid(uuid, (u) => rows(ctx.db).findVisibleByUuid(visibility(actor), u), model)
  return {
    find,
    list: (ctx: AppContext, scope: S, listing: Listing, base: string, page: Pager<T>): Promise<T[]> =>
      pageOfRows(page, rows(ctx.db), scope, listing, (page) => render(ctx, base, page)),
    get: async (ctx: AppContext, actor: Actor, uuid: string, base: string): Promise<T> =>
      one(ctx, base, await find(ctx, actor, uuid)),
    record: async (ctx: AppContext, id: number, base: string): Promise<T> =>
      one(ctx, base, (await rows(ctx.db).findById(id))!),
  }
}

/** A `render` of rows one at a time. */
export function eachRow<Row, T>(render: (base: string, row: Row) => T) {
  return (_ctx: AppContext, base: string, rows: Row[]): T[] => rows.map((r) => render(base, r))
}
