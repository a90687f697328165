import type { Kysely } from 'kysely'
import { decimalType, jsonType, withId } from './_helpers.js'

export async function up(db: Kysely<any>): Promise<void> {
  const json = jsonType(db)
  const decimal = decimalType(db)

  // Cloud service settings (the scope of cloud offerings); managed by the cloud areas.
  await withId(db, db.schema.createTable('service_settings'))
    .addColumn('uuid', 'varchar(36)', (c) => c.notNull().unique())
    .addColumn('name', 'varchar(150)', (c) => c.notNull())
    .addColumn('type', 'varchar(20)', (c) => c.notNull())
    .addColumn('shared', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('customer_id', 'integer', (c) => c.references('customers.id').onDelete('set null'))
    .addColumn('state', 'varchar(30)', (c) => c.notNull().defaultTo('OK'))
    .addColumn('error_message', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('options', json, (c) => c.notNull())
    .addColumn('created', 'varchar(32)', (c) => c.notNull())
    .addColumn('modified', 'varchar(32)', (c) => c.notNull())
    .execute()

  await withId(db, db.schema.createTable('service_providers'))
    .addColumn('uuid', 'varchar(36)', (c) => c.notNull().unique())
    .addColumn('customer_id', 'integer', (c) =>
      c.notNull().unique().references('customers.id').onDelete('cascade'),
    )
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('image', 'varchar(500)')
    .addColumn('created', 'varchar(32)', (c) => c.notNull())
    .addColumn('modified', 'varchar(32)', (c) => c.notNull())
    .execute()

  await withId(db, db.schema.createTable('categories'))
    .addColumn('uuid', 'varchar(36)', (c) => c.notNull().unique())
    .addColumn('title', 'varchar(255)', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('icon', 'varchar(500)')
    .addColumn('created', 'varchar(32)', (c) => c.notNull())
    .addColumn('modified', 'varchar(32)', (c) => c.notNull())
    .execute()

  await withId(db, db.schema.createTable('offerings'))
    .addColumn('uuid', 'varchar(36)', (c) => c.notNull().unique())
    .addColumn('name', 'varchar(150)', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('slug', 'varchar(150)', (c) => c.notNull())
    .addColumn('category_id', 'integer', (c) => c.references('categories.id').onDelete('set null'))
    .addColumn('customer_id', 'integer', (c) => c.notNull().references('customers.id').onDelete('cascade'))
    .addColumn('parent_id', 'integer', (c) => c.references('offerings.id').onDelete('set null'))
    .addColumn('type', 'varchar(100)', (c) => c.notNull())
    .addColumn('state', 'varchar(20)', (c) => c.notNull().defaultTo('Draft'))
    .addColumn('shared', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('billable', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('plugin_options', json, (c) => c.notNull())
    .addColumn('terms_of_service', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('image', 'varchar(500)')
    .addColumn('thumbnail', 'varchar(500)')
    .addColumn('service_settings_id', 'integer', (c) =>
      c.references('service_settings.id').onDelete('set null'),
    )
    .addColumn('project_id', 'integer', (c) => c.references('projects.id').onDelete('set null'))
    .addColumn('created', 'varchar(32)', (c) => c.notNull())
    .addColumn('modified', 'varchar(32)', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('offerings_customer_idx').on('offerings').column('customer_id').execute()
  await db.schema.createIndex('offerings_slug_idx').on('offerings').column('slug').execute()

  // Organization groups a shared offering is restricted to (none: open to all).
  await db.schema
    .createTable('offering_organization_groups')
    .addColumn('offering_id', 'integer', (c) => c.notNull().references('offerings.id').onDelete('cascade'))
    .addColumn('organization_group_id', 'integer', (c) =>
      c.notNull().references('organization_groups.id').onDelete('cascade'),
    )
    .addPrimaryKeyConstraint('offering_organization_groups_pk', ['offering_id', 'organization_group_id'])
    .execute()

  await withId(db, db.schema.createTable('plans'))
    .addColumn('uuid', 'varchar(36)', (c) => c.notNull().unique())
    .addColumn('offering_id', 'integer', (c) => c.notNull().references('offerings.id').onDelete('cascade'))
    .addColumn('name', 'varchar(150)', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('unit', 'varchar(30)', (c) => c.notNull().defaultTo('month'))
    .addColumn('unit_price', decimal, (c) => c.notNull().defaultTo(0))
    .addColumn('fixed_price', decimal, (c) => c.notNull().defaultTo(0))
    .addColumn('activation_price', decimal, (c) => c.notNull().defaultTo(0))
    .addColumn('archived', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created', 'varchar(32)', (c) => c.notNull())
    .addColumn('modified', 'varchar(32)', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('plans_offering_idx').on('plans').column('offering_id').execute()

  // Marketplace resources: created by orders; scope_type/scope_id link the backend object
  // (for example a cloudB tenant) when the offering type has one.
  await withId(db, db.schema.createTable('resources'))
    .addColumn('uuid', 'varchar(36)', (c) => c.notNull().unique())
    .addColumn('name', 'varchar(150)', (c) => c.notNull().defaultTo(''))
    .addColumn('offering_id', 'integer', (c) => c.notNull().references('offerings.id').onDelete('cascade'))
    .addColumn('plan_id', 'integer', (c) => c.references('plans.id').onDelete('set null'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('customer_id', 'integer', (c) => c.notNull().references('customers.id').onDelete('cascade'))
    .addColumn('state', 'varchar(20)', (c) => c.notNull().defaultTo('Creating'))
    .addColumn('attributes', json, (c) => c.notNull())
    .addColumn('limits', json, (c) => c.notNull())
    .addColumn('backend_id', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .addColumn('resource_type', 'varchar(100)', (c) => c.notNull().defaultTo(''))
    .addColumn('scope_type', 'varchar(50)')
    .addColumn('scope_id', 'integer')
    .addColumn('end_date', 'varchar(10)')
    .addColumn('created', 'varchar(32)', (c) => c.notNull())
    .addColumn('modified', 'varchar(32)', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('resources_project_idx').on('resources').column('project_id').execute()
  await db.schema
    .createIndex('resources_offering_idx')
    .on('resources')
    .columns(['offering_id', 'state'])
    .execute()
  await db.schema.createIndex('resources_customer_idx').on('resources').column('customer_id').execute()
  await db.schema
    .createIndex('resources_scope_idx')
    .on('resources')
    .columns(['scope_type', 'scope_id'])
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of [
    'resources',
    'plans',
    'offering_organization_groups',
    'offerings',
    'categories',
    'service_providers',
    'service_settings',
  ]) {
    await db.schema.dropTable(t).ifExists().execute()
  }
}
