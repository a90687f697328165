import type { Kysely } from 'kysely'

// Secrets this install generated for itself (e.g. the signing key used when SECRET_KEY is unset),
// kept so that every process and every restart on the database uses the same one.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('install_secrets')
    .addColumn('name', 'varchar(100)', (c) => c.primaryKey())
    .addColumn('value', 'varchar(200)', (c) => c.notNull())
    .execute()
}
