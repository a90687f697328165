import type { Kysely } from 'kysely'
import { clearedWith, ownedBy } from './_columns.js'
import { createIndexes, dropTables, types, withId } from './_helpers.js'

// What a provider reports its resources used: one usage per resource, offering component and
// billing period (the first day of a calendar month, YYYY-MM-DD), replaced when reported again in
// the same period; and under a usage, how much of it each account of the offering used (one row
// per username). The offering's cost estimate reads the usages of its usage-billed components.

export async function up(db: Kysely<any>): Promise<void> {
  const t = types(db)
  await withId(db, db.schema.createTable('component_usages'))
    .addColumn('uuid', t.uuid, (c) => c.notNull().unique())
    .addColumn('resource_id', 'integer', ownedBy('resources'))
    .addColumn('component_id', 'integer', ownedBy('offering_components'))
    .addColumn('billing_period', 'varchar(10)', (c) => c.notNull())
    .addColumn('usage', t.decimal, (c) => c.notNull().defaultTo(0))
    .addColumn('date', t.timestamp, (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    // none | reuse | zero: what a period without a report takes (reuse: `recurring`).
    .addColumn('missing_usage_policy', 'varchar(5)', (c) => c.notNull().defaultTo('none'))
    .addColumn('modified_by_id', 'integer', clearedWith('users'))
    .addColumn('created', t.timestamp, (c) => c.notNull())
    .addColumn('modified', t.timestamp, (c) => c.notNull())
    .addUniqueConstraint('component_usages_period_key', ['resource_id', 'component_id', 'billing_period'])
    .execute()
  await createIndexes(db, 'component_usages', {
    component_usages_component_idx: ['component_id'],
    component_usages_period_idx: ['billing_period'],
  })

  await withId(db, db.schema.createTable('component_user_usages'))
    .addColumn('uuid', t.uuid, (c) => c.notNull().unique())
    .addColumn('component_usage_id', 'integer', ownedBy('component_usages'))
    .addColumn('username', 'varchar(100)', (c) => c.notNull())
    .addColumn('offering_user_id', 'integer', clearedWith('offering_users'))
    .addColumn('usage', t.decimal, (c) => c.notNull().defaultTo(0))
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('backend_id', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .addColumn('created', t.timestamp, (c) => c.notNull())
    .addColumn('modified', t.timestamp, (c) => c.notNull())
    .addUniqueConstraint('component_user_usages_username_key', ['component_usage_id', 'username'])
    .execute()
  await createIndexes(db, 'component_user_usages', {
    component_user_usages_offering_user_idx: ['offering_user_id'],
  })
}

export async function down(db: Kysely<any>): Promise<void> {
  await dropTables(db, ['component_user_usages', 'component_usages'])
}
