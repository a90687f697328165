// Row inserts for the benchmark's seed: on SQLite, INSERTs of BATCH rows through Kysely (the
// caller's transaction makes them fast); on PostgreSQL, thousands of rows per statement as one
// array per column (bench/pg-load.ts).
import type { Kysely, Transaction } from 'kysely'
import type { DB } from '../src/db/tables.js'
import { isPostgres } from '../src/db/sql.js'
import { loadRows } from './pg-load.js'

export type Row = Record<string, unknown>
export type Ref = { id: number; uuid: string }

export const BATCH = 400

export async function insertMany(
  db: Kysely<DB> | Transaction<DB>,
  table: keyof DB,
  rows: Row[],
): Promise<void> {
  if (isPostgres(db)) return loadRows(db, table, rows)
  for (let i = 0; i < rows.length; i += BATCH) {
    await db
      .insertInto(table)
      .values(rows.slice(i, i + BATCH))
      .execute()
  }
}
