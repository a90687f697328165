// One row: found by a column, inserted, or updated and deleted by its `id` (the same for every
// table), so that no repository spells out these statements again.
import type { Kysely, SelectQueryBuilder, Transaction } from 'kysely'
import type { DB } from './tables.js'

type Db = Kysely<DB> | Transaction<DB>

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
