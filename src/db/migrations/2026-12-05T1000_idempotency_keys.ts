import type { Kysely } from 'kysely'
import { createIndexes, types } from './_helpers.js'

// The answers of POSTs sent with an Idempotency-Key (src/http/idempotency.ts): one row per user
// and key, written in the same transaction as the request's own writes, kept 24 hours.
export async function up(db: Kysely<any>): Promise<void> {
  const t = types(db)
  await db.schema
    .createTable('idempotency_keys')
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('idempotency_key', 'varchar(255)', (c) => c.notNull())
    .addColumn('request_hash', 'varchar(64)', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('headers', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created', t.timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['user_id', 'idempotency_key'])
    .execute()
  await createIndexes(db, 'idempotency_keys', { idempotency_keys_created_idx: ['created'] })
}
