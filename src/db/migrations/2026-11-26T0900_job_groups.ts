import type { Kysely } from 'kysely'

// The group of a job in a lane with a limit per group (a callback delivery's target host), so a
// worker can claim the oldest job of a group that has room without reading every payload.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('jobs').addColumn('group_key', 'varchar(300)').execute()
}
