import type { Kysely } from 'kysely'

// Request counts of the rate limits, shared by every process on the database: one row per
// caller and window, `reset_at` in epoch milliseconds (when the window ends).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('rate_limits')
    .addColumn('key', 'varchar(400)', (c) => c.primaryKey())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addColumn('reset_at', 'bigint', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('rate_limits_reset_at_idx').on('rate_limits').column('reset_at').execute()
}
