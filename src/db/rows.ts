// Writes of one row by its id, the same for every table with an `id` primary key, so that no
// repository spells out the update and delete statements again.
import type { Kysely, Transaction } from 'kysely'
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
