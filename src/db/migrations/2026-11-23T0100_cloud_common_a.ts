// Cloud resources: the common record every cloud kind shares, the emulator's durable state, and
// the cloudA objects (locations, resource groups, public IPs).
import type { Kysely } from 'kysely'
import { errorTexts, ownedBy, timestamps } from './_columns.js'
import { createIndexes, createRecordTable, dropTables, jsonType, withId } from './_helpers.js'

export async function up(db: Kysely<any>): Promise<void> {
  const json = jsonType(db)

  // One row per cloud resource of any kind; kind-specific columns live in extension tables
  // keyed by resource_id. `resource_type` is also the marketplace resources' scope_type.
  await createRecordTable(db, 'cloud_resources')
    .addColumn('resource_type', 'varchar(50)', (c) => c.notNull())
    .addColumn('name', 'varchar(150)', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('service_settings_id', 'integer', (c) => c.notNull().references('service_settings.id'))
    .addColumn('project_id', 'integer', ownedBy('projects'))
    .addColumn('state', 'varchar(30)', (c) => c.notNull().defaultTo('CREATION_SCHEDULED'))
    .$call(errorTexts)
    .addColumn('backend_id', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .addColumn('access_url', 'varchar(500)')
    .addColumn('runtime_state', 'varchar(150)', (c) => c.notNull().defaultTo(''))
    .$call(timestamps)
    .execute()
  await createIndexes(db, 'cloud_resources', {
    cloud_resources_type_name_idx: ['resource_type', 'name'],
    cloud_resources_project_idx: ['project_id'],
    cloud_resources_settings_idx: ['service_settings_id'],
  })

  // The emulator driver's own backend state: objects it "provisioned" and id counters, per
  // service settings, so it survives restarts and is shared by every process.
  await withId(db, db.schema.createTable('cloud_emulator_objects'))
    .addColumn('service_settings_id', 'integer', ownedBy('service_settings'))
    .addColumn('kind', 'varchar(50)', (c) => c.notNull())
    .addColumn('backend_id', 'varchar(255)', (c) => c.notNull())
    .addColumn('data', json, (c) => c.notNull())
    .$call(timestamps)
    .addUniqueConstraint('cloud_emulator_objects_key', ['service_settings_id', 'kind', 'backend_id'])
    .execute()
  await db.schema
    .createTable('cloud_emulator_counters')
    .addColumn('service_settings_id', 'integer', ownedBy('service_settings'))
    .addColumn('name', 'varchar(50)', (c) => c.notNull())
    .addColumn('value', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('cloud_emulator_counters_pk', ['service_settings_id', 'name'])
    .execute()

  // ---- cloudA ----
  await createRecordTable(db, 'cloud_a_locations')
    .addColumn('name', 'varchar(150)', (c) => c.notNull())
    .addColumn('service_settings_id', 'integer', ownedBy('service_settings'))
    .addColumn('backend_id', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .$call(timestamps)
    .execute()
  await createRecordTable(db, 'cloud_a_resource_groups')
    .addColumn('name', 'varchar(150)', (c) => c.notNull())
    .addColumn('location_id', 'integer', (c) => c.notNull().references('cloud_a_locations.id'))
    .addColumn('service_settings_id', 'integer', ownedBy('service_settings'))
    .addColumn('project_id', 'integer', ownedBy('projects'))
    .$call(timestamps)
    .execute()
  await db.schema
    .createTable('cloud_a_public_ips')
    .addColumn('resource_id', 'integer', (c) =>
      c.primaryKey().references('cloud_resources.id').onDelete('cascade'),
    )
    .addColumn('location_id', 'integer', (c) => c.notNull().references('cloud_a_locations.id'))
    .addColumn('resource_group_id', 'integer', (c) => c.notNull().references('cloud_a_resource_groups.id'))
    .addColumn('ip_address', 'varchar(64)', (c) => c.notNull().defaultTo(''))
    .execute()
  await createIndexes(db, 'cloud_a_public_ips', { cloud_a_public_ips_group_idx: ['resource_group_id'] })
}

export async function down(db: Kysely<any>): Promise<void> {
  await dropTables(db, [
    'cloud_a_public_ips',
    'cloud_a_resource_groups',
    'cloud_a_locations',
    'cloud_emulator_counters',
    'cloud_emulator_objects',
    'cloud_resources',
  ])
}
