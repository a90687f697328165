import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { ownedBy } from './_columns.js'
import { createIndexes, createLinkTable, dropTables, types, withId } from './_helpers.js'

// What a provider bills: an offering's components (each a measured unit, billed by usage, by the
// limit a consumer asks for, at a fixed amount, once, or on a plan switch), and each plan's price
// and amount per component. Plans gain the reference's article code, maximum number of resources
// and backend id, and organization groups of their own. Component usages will refer to
// `offering_components.id`, and their costs read `plan_components`.

/**
 * The components every offering of a type is created with (frozen here: the application's table
 * may change later). Existing offerings of the type get them below.
 */
const BUILTIN: Record<string, { type: string; name: string; measured_unit: string }[]> = {
  'CloudB.Tenant': [
    { type: 'cores', name: 'Cores', measured_unit: 'cores' },
    { type: 'ram', name: 'RAM', measured_unit: 'GB' },
    { type: 'storage', name: 'Storage', measured_unit: 'GB' },
  ],
}

export async function up(db: Kysely<any>): Promise<void> {
  const t = types(db)
  await withId(db, db.schema.createTable('offering_components'))
    .addColumn('uuid', t.uuid, (c) => c.notNull().unique())
    .addColumn('offering_id', 'integer', ownedBy('offerings'))
    .addColumn('type', 'varchar(50)', (c) => c.notNull())
    .addColumn('name', 'varchar(150)', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('measured_unit', 'varchar(30)', (c) => c.notNull().defaultTo(''))
    .addColumn('billing_type', 'varchar(5)', (c) => c.notNull().defaultTo('fixed'))
    .addColumn('unit_factor', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('limit_period', 'varchar(10)')
    .addColumn('limit_amount', 'integer')
    .addColumn('article_code', 'varchar(30)', (c) => c.notNull().defaultTo(''))
    .addColumn('max_value', 'integer')
    .addColumn('min_value', 'integer')
    .addColumn('max_available_limit', 'integer')
    .addColumn('is_boolean', t.flag, (c) => c.notNull().defaultTo(false))
    .addColumn('default_limit', 'integer')
    .addColumn('is_prepaid', t.flag, (c) => c.notNull().defaultTo(false))
    // A prepaid component's usage beyond its prepaid amount is billed on this (usage) component.
    .addColumn('overage_component_id', 'integer', (c) =>
      c.references('offering_components.id').onDelete('set null'),
    )
    .addColumn('min_prepaid_duration', 'integer')
    .addColumn('max_prepaid_duration', 'integer')
    .addColumn('prepaid_duration_step', 'integer')
    .addColumn('min_renewal_duration', 'integer')
    .addColumn('max_renewal_duration', 'integer')
    .addColumn('renewal_duration_step', 'integer')
    .addColumn('created', t.timestamp, (c) => c.notNull())
    .addColumn('modified', t.timestamp, (c) => c.notNull())
    .addUniqueConstraint('offering_components_type_unique', ['offering_id', 'type'])
    .execute()

  // A plan's price (per unit and billing period) and amount (for fixed components) of each
  // component. A new price for a plan that resources use waits in `future_price` until the first
  // day of the next month (`future_price_start_date`), when it becomes the price.
  await withId(db, db.schema.createTable('plan_components'))
    .addColumn('plan_id', 'integer', ownedBy('plans'))
    .addColumn('component_id', 'integer', ownedBy('offering_components'))
    .addColumn('amount', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('price', t.decimal, (c) => c.notNull().defaultTo(0))
    .addColumn('future_price', t.decimal)
    .addColumn('future_price_start_date', 'varchar(10)')
    .addUniqueConstraint('plan_components_unique', ['plan_id', 'component_id'])
    .execute()
  await createIndexes(db, 'plan_components', { plan_components_component_idx: ['component_id'] })

  await db.schema
    .alterTable('plans')
    .addColumn('article_code', 'varchar(30)', (c) => c.notNull().defaultTo(''))
    .execute()
  // At most this many resources (not terminated) may use the plan; null: no limit.
  await db.schema.alterTable('plans').addColumn('max_amount', 'integer').execute()
  await db.schema
    .alterTable('plans')
    .addColumn('backend_id', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .execute()

  // Organization groups a plan is restricted to (none: open to every customer the offering is).
  await createLinkTable(db, 'plan_organization_groups', {
    plan_id: 'plans',
    organization_group_id: 'organization_groups',
  }).execute()

  const now = new Date().toISOString()
  for (const [type, components] of Object.entries(BUILTIN)) {
    const offerings: { id: number }[] = await db
      .selectFrom('offerings')
      .select('id')
      .where('type', '=', type)
      .execute()
    for (const o of offerings) {
      for (const c of components) {
        await db
          .insertInto('offering_components')
          .values({
            uuid: randomUUID(),
            offering_id: o.id,
            ...c,
            billing_type: 'limit',
            limit_period: 'month',
            created: now,
            modified: now,
          })
          .execute()
      }
    }
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await dropTables(db, ['plan_organization_groups', 'plan_components', 'offering_components'])
  for (const column of ['backend_id', 'max_amount', 'article_code']) {
    await db.schema.alterTable('plans').dropColumn(column).execute()
  }
}
