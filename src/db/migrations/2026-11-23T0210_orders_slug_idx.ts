import type { Kysely } from 'kysely'

// The order `query` filter is an OR of slug, project name, resource name (and uuid). Every branch
// must have an index for the database to answer it as a union of index look-ups; without one on
// slug, SQLite scanned the whole orders table for every search.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('orders_slug_idx').on('orders').column('slug').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('orders_slug_idx').execute()
}
