import type { Kysely } from 'kysely'
import { createIndexes } from './_helpers.js'

// Site agent service lists are ordered by (created, id). With `modified` in the same index, a
// filtered page (`stale`, `modified_before/after`) walks the index in list order and checks the
// filter on the index entry, instead of sorting every matching row.
export async function up(db: Kysely<any>): Promise<void> {
  await createIndexes(db, 'site_agent_services', {
    site_agent_services_order_idx: ['created', 'id', 'modified'],
  })
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('site_agent_services_order_idx').execute()
}
