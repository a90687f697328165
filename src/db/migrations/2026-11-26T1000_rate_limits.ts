import type { Kysely } from 'kysely'
import { createIndexes } from './_helpers.js'

// Request counts of the rate limits, shared by every process on the database: one row per
// caller and window, `window_end_ms` in epoch milliseconds (when the window ends).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('rate_limits')
    .addColumn('key', 'varchar(400)', (c) => c.primaryKey())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addColumn('window_end_ms', 'bigint', (c) => c.notNull())
    .execute()
  await createIndexes(db, 'rate_limits', { rate_limits_window_end_ms_idx: ['window_end_ms'] })
}
