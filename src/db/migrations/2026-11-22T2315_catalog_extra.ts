import type { Kysely } from 'kysely'

// Indexes for the catalog's filters and foreign keys that 2026-11-22T2310_catalog did not index.
const INDEXES: [name: string, table: string, columns: string[]][] = [
  ['offerings_category_idx', 'offerings', ['category_id']],
  ['offerings_state_idx', 'offerings', ['state', 'shared']],
  ['offerings_type_idx', 'offerings', ['type']],
  ['offerings_parent_idx', 'offerings', ['parent_id']],
  ['offerings_project_idx', 'offerings', ['project_id']],
  ['offerings_service_settings_idx', 'offerings', ['service_settings_id']],
  ['offering_organization_groups_group_idx', 'offering_organization_groups', ['organization_group_id']],
  ['resources_plan_idx', 'resources', ['plan_id']],
  ['resources_backend_id_idx', 'resources', ['backend_id']],
]

export async function up(db: Kysely<any>): Promise<void> {
  for (const [name, table, columns] of INDEXES) {
    await db.schema.createIndex(name).on(table).columns(columns).execute()
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const [name] of INDEXES) await db.schema.dropIndex(name).ifExists().execute()
}
