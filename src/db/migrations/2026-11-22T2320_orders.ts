import type { Kysely } from 'kysely'
import { clearedWith, errorTexts, ownedBy, timestamps } from './_columns.js'
import { createIndexes, createRecordTable, decimalType, jsonType } from './_helpers.js'

export async function up(db: Kysely<any>): Promise<void> {
  const json = jsonType(db)
  // Visibility and filter columns are denormalized (customer, provider customer) so a caller's
  // list is served by an index, never by per-row joins.
  await createRecordTable(db, 'orders')
    .addColumn('slug', 'varchar(150)', (c) => c.notNull().defaultTo(''))
    .addColumn('type', 'varchar(20)', (c) => c.notNull())
    .addColumn('state', 'varchar(30)', (c) => c.notNull())
    .addColumn('offering_id', 'integer', ownedBy('offerings'))
    .addColumn('provider_customer_id', 'integer', (c) => c.notNull())
    .addColumn('plan_id', 'integer', clearedWith('plans'))
    .addColumn('old_plan_id', 'integer', clearedWith('plans'))
    .addColumn('project_id', 'integer', ownedBy('projects'))
    .addColumn('customer_id', 'integer', (c) => c.notNull())
    .addColumn('resource_id', 'integer', clearedWith('resources'))
    .addColumn('attributes', json, (c) => c.notNull())
    .addColumn('limits', json, (c) => c.notNull())
    .addColumn('cost', decimalType(db))
    .addColumn('callback_url', 'varchar(2000)')
    .addColumn('request_comment', 'text')
    .addColumn('start_date', 'varchar(10)')
    .addColumn('output', 'text', (c) => c.notNull().defaultTo(''))
    .$call(errorTexts)
    .addColumn('backend_id', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .addColumn('attachment', 'varchar(500)')
    .addColumn('termination_comment', 'text')
    .addColumn('consumer_reviewed_by_id', 'integer', clearedWith('users'))
    .addColumn('consumer_reviewed_at', 'varchar(32)')
    .addColumn('provider_reviewed_by_id', 'integer', clearedWith('users'))
    .addColumn('provider_reviewed_at', 'varchar(32)')
    .addColumn('created_by_id', 'integer', clearedWith('users'))
    .addColumn('completed_at', 'varchar(32)')
    .$call(timestamps)
    .execute()
  await createIndexes(db, 'orders', {
    orders_created_idx: ['created', 'id'],
    orders_project_idx: ['project_id', 'created'],
    orders_customer_idx: ['customer_id', 'created'],
    orders_provider_idx: ['provider_customer_id', 'created'],
    orders_offering_idx: ['offering_id', 'created'],
    orders_resource_idx: ['resource_id'],
    orders_state_idx: ['state', 'created'],
    orders_project_state_idx: ['project_id', 'state', 'created'],
    orders_modified_idx: ['modified'],
  })
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('orders').ifExists().execute()
}
