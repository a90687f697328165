import type { Kysely } from 'kysely'
import { clearedWith, ownedBy, timestamps } from './_columns.js'
import {
  createIndexes,
  createLinkTable,
  createRecordTable,
  decimalType,
  dropTables,
  jsonType,
} from './_helpers.js'

export async function up(db: Kysely<any>): Promise<void> {
  const json = jsonType(db)
  const decimal = decimalType(db)

  // Cloud service settings (the scope of cloud offerings); managed by the cloud areas.
  await createRecordTable(db, 'service_settings')
    .addColumn('name', 'varchar(150)', (c) => c.notNull())
    .addColumn('type', 'varchar(20)', (c) => c.notNull())
    .addColumn('shared', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('customer_id', 'integer', clearedWith('customers'))
    .addColumn('state', 'varchar(30)', (c) => c.notNull().defaultTo('OK'))
    .addColumn('error_message', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('options', json, (c) => c.notNull())
    .$call(timestamps)
    .execute()

  await createRecordTable(db, 'service_providers')
    .addColumn('customer_id', 'integer', (c) =>
      c.notNull().unique().references('customers.id').onDelete('cascade'),
    )
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('image', 'varchar(500)')
    .$call(timestamps)
    .execute()

  await createRecordTable(db, 'categories')
    .addColumn('title', 'varchar(255)', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('icon', 'varchar(500)')
    .$call(timestamps)
    .execute()

  await createRecordTable(db, 'offerings')
    .addColumn('name', 'varchar(150)', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('slug', 'varchar(150)', (c) => c.notNull())
    .addColumn('category_id', 'integer', clearedWith('categories'))
    .addColumn('customer_id', 'integer', ownedBy('customers'))
    .addColumn('parent_id', 'integer', clearedWith('offerings'))
    .addColumn('type', 'varchar(100)', (c) => c.notNull())
    .addColumn('state', 'varchar(20)', (c) => c.notNull().defaultTo('Draft'))
    .addColumn('shared', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('billable', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('plugin_options', json, (c) => c.notNull())
    .addColumn('terms_of_service', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('image', 'varchar(500)')
    .addColumn('thumbnail', 'varchar(500)')
    .addColumn('service_settings_id', 'integer', clearedWith('service_settings'))
    .addColumn('project_id', 'integer', clearedWith('projects'))
    .$call(timestamps)
    .execute()
  await createIndexes(db, 'offerings', {
    offerings_customer_idx: ['customer_id'],
    offerings_slug_idx: ['slug'],
  })

  // Organization groups a shared offering is restricted to (none: open to all).
  await createLinkTable(db, 'offering_organization_groups', {
    offering_id: 'offerings',
    organization_group_id: 'organization_groups',
  }).execute()

  await createRecordTable(db, 'plans')
    .addColumn('offering_id', 'integer', ownedBy('offerings'))
    .addColumn('name', 'varchar(150)', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('unit', 'varchar(30)', (c) => c.notNull().defaultTo('month'))
    .addColumn('unit_price', decimal, (c) => c.notNull().defaultTo(0))
    .addColumn('fixed_price', decimal, (c) => c.notNull().defaultTo(0))
    .addColumn('activation_price', decimal, (c) => c.notNull().defaultTo(0))
    .addColumn('archived', 'integer', (c) => c.notNull().defaultTo(0))
    .$call(timestamps)
    .execute()
  await createIndexes(db, 'plans', { plans_offering_idx: ['offering_id'] })

  // Marketplace resources: created by orders; scope_type/scope_id link the backend object
  // (for example a cloudB tenant) when the offering type has one.
  await createRecordTable(db, 'resources')
    .addColumn('name', 'varchar(150)', (c) => c.notNull().defaultTo(''))
    .addColumn('offering_id', 'integer', ownedBy('offerings'))
    .addColumn('plan_id', 'integer', clearedWith('plans'))
    .addColumn('project_id', 'integer', ownedBy('projects'))
    .addColumn('customer_id', 'integer', ownedBy('customers'))
    .addColumn('state', 'varchar(20)', (c) => c.notNull().defaultTo('Creating'))
    .addColumn('attributes', json, (c) => c.notNull())
    .addColumn('limits', json, (c) => c.notNull())
    .addColumn('backend_id', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .addColumn('resource_type', 'varchar(100)', (c) => c.notNull().defaultTo(''))
    .addColumn('scope_type', 'varchar(50)')
    .addColumn('scope_id', 'integer')
    .addColumn('end_date', 'varchar(10)')
    .$call(timestamps)
    .execute()
  await createIndexes(db, 'resources', {
    resources_project_idx: ['project_id'],
    resources_offering_idx: ['offering_id', 'state'],
    resources_customer_idx: ['customer_id'],
    resources_scope_idx: ['scope_type', 'scope_id'],
  })
}

export async function down(db: Kysely<any>): Promise<void> {
  await dropTables(db, [
    'resources',
    'plans',
    'offering_organization_groups',
    'offerings',
    'categories',
    'service_providers',
    'service_settings',
  ])
}
