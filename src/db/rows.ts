// One row: found by a column, inserted, or updated and deleted by its `id` (the same for every
// table), and one table's records read and written from one declaration (`tableRecords`), so that
// no repository spells out these statements again.
import type { Insertable, Kysely, Selectable, SelectQueryBuilder, Transaction } from 'kysely'
import type { DB } from './tables.js'
import { scopedList } from './listing.js'
import { insertReturningId } from './compiled.js'

type Db = Kysely<DB> | Transaction<DB>
type AnySelect = SelectQueryBuilder<any, any, any>

/** Sets the given columns of the row `id` of `table`. */
export async function updateRow(db: Db, table: keyof DB, id: number, values: Record<string, unknown>) {
  await db
    .updateTable(table)
    .set(values as any)
    .where('id' as any, '=', id)
    .execute()
}

/** Deletes the row `id` of `table`. */
export async function deleteRow(db: Db, table: keyof DB, id: number): Promise<void> {
  await db
    .deleteFrom(table)
    .where('id' as any, '=', id)
    .execute()
}

/** Inserts one row (no id wanted back). */
export async function insertRow(db: Db, table: keyof DB, values: object): Promise<void> {
  await db.insertInto(table).values(values).execute()
}

/** The first row the query selects whose `column` equals `value`, or undefined. */
export function firstWhere<O>(
  query: SelectQueryBuilder<any, any, O>,
  column: string,
  value: unknown,
): Promise<O | undefined> {
  return query.where(column, '=', value).executeTakeFirst()
}

/** The `column` of every row of `table` whose `key` equals `value`. */
export async function columnWhere<T extends keyof DB, C extends keyof Selectable<DB[T]> & string>(
  db: Db,
  table: T,
  column: C,
  key: string,
  value: unknown,
): Promise<Selectable<DB[T]>[C][]> {
  const rows: Record<string, any>[] = await (db as Kysely<any>)
    .selectFrom(table as string)
    .select(column)
    .where(key, '=', value)
    .execute()
  return rows.map((r) => r[column])
}

/** The first row the query selects whose `column` equals `value`; throws when there is none. */
export function onlyWhere<O>(
  query: SelectQueryBuilder<any, any, O>,
  column: string,
  value: unknown,
): Promise<O> {
  return query.where(column, '=', value).executeTakeFirstOrThrow()
}

/**
 * The reads and writes of one table's records, declared once: `base()` joins what a record shows,
 * `visible(scope)` narrows it to the rows a caller may see, `select` picks a record's columns. Gives
 * the list and its count, the visible record by uuid, the record by id, and insert (its id back),
 * update and delete by id. A repository spreads these and adds the queries of its own.
 */
export function tableRecords<T extends keyof DB, S, Q extends AnySelect, O>(
  db: Db,
  spec: {
    readonly table: T
    readonly base: () => Q
    readonly visible: (scope: S) => Q
    readonly select: (query: Q) => SelectQueryBuilder<any, any, O>
  },
) {
  const { table, base, visible, select } = spec
  const id = `${table}.id`
  return {
    ...scopedList(visible, select, id),
    findVisibleByUuid(scope: S, uuid: string): Promise<O | undefined> {
      return select(visible(scope))
        .where(`${table}.uuid` as any, '=', uuid)
        .executeTakeFirst()
    },
    findById(rowId: number): Promise<O | undefined> {
      return select(base())
        .where(id as any, '=', rowId)
        .executeTakeFirst()
    },
    insert(values: Insertable<DB[T]>): Promise<number> {
      return insertReturningId(db, table, values as Record<string, unknown>)
    },
    update(rowId: number, values: Record<string, unknown>): Promise<void> {
      return updateRow(db, table, rowId, values)
    },
    delete(rowId: number): Promise<void> {
      return deleteRow(db, table, rowId)
    },
  }
}

/**
 * The organization groups of one table's rows, linked through `table` (its columns `owner`, the
 * row's id, and `organization_group_id`): `uuidsOf` answers the groups' uuids of each row, in one
 * query, ordered by the groups' `order` column; `set` replaces one row's groups (repeats dropped).
 */
export function organizationGroupLinks(db: Db, table: keyof DB, owner: string, order: 'id' | 'name') {
  const link = db as Kysely<any>
  return {
    uuidsOf: async (ids: readonly number[]): Promise<Map<number, string[]>> => {
      const out = new Map<number, string[]>()
      if (!ids.length) return out
      const rows: { owner_id: number; uuid: string }[] = await link
        .selectFrom(`${table} as link`)
        .innerJoin('organization_groups', 'organization_groups.id', 'link.organization_group_id')
        .select([`link.${owner} as owner_id`, 'organization_groups.uuid'])
        .where(`link.${owner}`, 'in', ids)
        .orderBy(`organization_groups.${order}`)
        .execute()
      for (const r of rows) out.set(r.owner_id, [...(out.get(r.owner_id) ?? []), r.uuid])
      return out
    },
    set: async (id: number, groupIds: readonly number[]): Promise<void> => {
      await link.deleteFrom(table).where(owner, '=', id).execute()
      const unique = [...new Set(groupIds)]
      if (unique.length) {
        await link
          .insertInto(table)
          .values(unique.map((g) => ({ [owner]: id, organization_group_id: g })))
          .execute()
      }
    },
  }
}
