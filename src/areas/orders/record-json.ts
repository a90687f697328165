// The order record as JSON text, rendered by the database: the joins of everything the record
// shows, the JSON object's SQL and the statements that read one record or a page's records.
import { sql, type Kysely, type Transaction } from 'kysely'
import type { DB } from '../../db/tables.js'
import { isPostgres, jsonSql } from '../../db/sql.js'
import { reusable, slot } from '../../db/compiled.js'
import { joined } from '../../db/joins.js'
import { CATEGORY_OF_OFFERING } from '../../db/relations.js'
import { OFFERING_TYPE_RULES } from '../catalog/offering-types.js'
import { PATH } from './schema.js'

export type Db = Kysely<DB> | Transaction<DB>

/** An order's offering, project, customer and resource, as the queries of orders join them. */
export const ORDER_JOINS = {
  offering: ['inner', 'offerings', 'orders.offering_id'],
  project: ['inner', 'projects', 'orders.project_id'],
  customer: ['inner', 'customers', 'orders.customer_id'],
  resource: ['left', 'resources', 'orders.resource_id'],
} as const

/**
 * An order joined with everything its record shows (offering, provider, category, plans, project,
 * customer, resource, users).
 */
function recordJoins(db: Db) {
  return joined(db, 'orders', [
    ORDER_JOINS.offering,
    ['inner', 'customers as provider', 'orders.provider_customer_id'],
    CATEGORY_OF_OFFERING,
    ['left', 'plans', 'orders.plan_id'],
    ['left', 'plans as old_plan', 'orders.old_plan_id'],
    ORDER_JOINS.project,
    ORDER_JOINS.customer,
    ORDER_JOINS.resource,
    ['left', 'users as consumer_reviewer', 'orders.consumer_reviewed_by_id'],
    ['left', 'users as provider_reviewer', 'orders.provider_reviewed_by_id'],
    ['left', 'users as creator', 'orders.created_by_id'],
    ['left', 'service_providers', 'orders.provider_customer_id', 'customer_id'],
  ])
}

/**
 * The order record as JSON text, rendered by the database from `recordJoins` (a 10-order page is
 * then one string instead of 750 row properties, 800 record properties and their serialization).
 * It holds every field of the record except the decimal ones, which are computed from the raw
 * columns alongside (`toOrderJson` in the service), and it lacks the closing brace.
 * `p.base` is the base URL escaped for a JSON string; `p.traceback` is '1' when the caller may
 * see error tracebacks.
 */
function recordJson(pg: boolean): string {
  const j = jsonSql(pg)
  const base = 'p.base'
  const isUpdate = `orders.type = 'Update' and orders.old_plan_id is not null`
  const ifUpdate = (expr: string) => j.text(`case when ${isUpdate} then ${expr} end`)
  const cancellable = Object.entries(OFFERING_TYPE_RULES)
    .filter(([, rules]) => rules.cancel)
    .map(([type]) => `'${type.replace(/'/g, "''")}'`)
  const fields: [string, string][] = [
    ['offering', j.link(base, 'marketplace-provider-offerings', 'offerings.uuid')],
    ['offering_name', j.textOrEmpty('offerings.name')],
    ['offering_uuid', j.text('offerings.uuid')],
    ['offering_description', j.textOrEmpty('offerings.description')],
    ['offering_image', j.text('offerings.image')],
    ['offering_thumbnail', j.text('offerings.thumbnail')],
    ['offering_type', j.textOrEmpty('offerings.type')],
    ['offering_shared', j.bool('offerings.shared')],
    ['offering_billable', j.bool('offerings.billable')],
    ['offering_plugin_options', j.json('offerings.plugin_options', '{}')],
    ['provider_name', j.textOrEmpty('provider.name')],
    ['provider_uuid', j.text('provider.uuid')],
    ['provider_slug', j.textOrEmpty('provider.slug')],
    ['category_title', j.text('categories.title')],
    ['category_uuid', j.text('categories.uuid')],
    ['category_icon', j.text('categories.icon')],
    ['plan', j.link(base, 'marketplace-plans', 'plans.uuid')],
    ['plan_unit', j.text('plans.unit')],
    ['plan_name', j.text('plans.name')],
    ['plan_uuid', j.text('plans.uuid')],
    ['plan_description', j.text('plans.description')],
    ['old_plan_name', ifUpdate('old_plan.name')],
    ['new_plan_name', ifUpdate('plans.name')],
    ['old_plan_uuid', ifUpdate('old_plan.uuid')],
    ['new_plan_uuid', ifUpdate('plans.uuid')],
    ['attributes', j.json('orders.attributes', '{}')],
    ['limits', j.json('orders.limits', '{}')],
    ['uuid', j.text('orders.uuid')],
    ['created', j.time('orders.created')],
    ['modified', j.time('orders.modified')],
    ['state', j.text('orders.state')],
    ['type', j.text('orders.type')],
    ['order_subtype', `'null'`],
    ['output', j.textOrEmpty('orders.output')],
    ['error_message', j.textOrEmpty('orders.error_message')],
    ['error_traceback', j.textOrEmpty(`case when p.traceback = '1' then orders.error_traceback end`)],
    ['callback_url', j.text('orders.callback_url')],
    ['completed_at', j.time('orders.completed_at')],
    ['request_comment', j.text('orders.request_comment')],
    [
      'attachment',
      j.link(base, PATH, `case when orders.attachment <> '' then orders.uuid end`, 'attachment/'),
    ],
    ['start_date', j.text('orders.start_date')],
    ['slug', j.textOrEmpty('orders.slug')],
    ['url', j.link(base, PATH, 'orders.uuid')],
    [
      'can_terminate',
      j.check(
        `offerings.type in (${cancellable.join(', ') || 'null'}) and orders.state in ('pending-consumer', 'pending-provider', 'executing')`,
      ),
    ],
    ['termination_comment', j.text('orders.termination_comment')],
    ['backend_id', j.textOrEmpty('orders.backend_id')],
    ['issue', `'null'`],
    ['resource_uuid', j.text('resources.uuid')],
    ['resource_type', j.text(`coalesce(nullif(resources.resource_type, ''), offerings.type)`)],
    ['resource_name', j.text('resources.name')],
    ['marketplace_resource_uuid', j.text('resources.uuid')],
    ['consumer_reviewed_by', j.text('consumer_reviewer.username')],
    ['consumer_reviewed_by_full_name', j.text('consumer_reviewer.full_name')],
    ['consumer_reviewed_by_username', j.text('consumer_reviewer.username')],
    ['consumer_reviewed_at', j.time('orders.consumer_reviewed_at')],
    ['provider_reviewed_by', j.text('provider_reviewer.username')],
    ['provider_reviewed_by_full_name', j.text('provider_reviewer.full_name')],
    ['provider_reviewed_by_username', j.text('provider_reviewer.username')],
    ['provider_reviewed_at', j.time('orders.provider_reviewed_at')],
    ['created_by_username', j.text('creator.username')],
    ['created_by_full_name', j.text('creator.full_name')],
    ['created_by_civil_number', j.text('creator.civil_number')],
    ['created_by_email', j.text(`nullif(creator.email, '')`)],
    // Users carry no organization in this product.
    ['created_by_organization', `'null'`],
    ['created_by_organization_registry_code', `'null'`],
    ['consumer_rejection_comment', j.textOrEmpty('orders.consumer_rejection_comment')],
    ['provider_rejection_comment', j.textOrEmpty('orders.provider_rejection_comment')],
    ['auto_approved', j.bool('orders.auto_approved')],
    // Consumer review is skipped by fixed rules, not by stored rules with a cost limit.
    ['auto_approved_by_rule_uuid', `'null'`],
    ['auto_approved_cost_limit_snapshot', `'null'`],
    ['provider_description', j.text('service_providers.description')],
    ['output_updated_at', j.time('orders.output_updated_at')],
    ['error_updated_at', j.time('orders.error_updated_at')],
    // Orders carry no consumer or provider message texts in this product.
    ['provider_message_updated_at', `'null'`],
    ['consumer_message_updated_at', `'null'`],
    ['customer_name', j.textOrEmpty('customers.name')],
    ['customer_uuid', j.text('customers.uuid')],
    ['customer_slug', j.textOrEmpty('customers.slug')],
    ['project_name', j.textOrEmpty('projects.name')],
    ['project_uuid', j.text('projects.uuid')],
    ['project_description', j.textOrEmpty('projects.description')],
    ['project_slug', j.textOrEmpty('projects.slug')],
  ]
  return j.object(fields)
}

/**
 * The JSON record with the raw columns its decimal fields and visibility check are made from;
 * `from` is where `orders` is read (a query with an `orders` CTE: the order it inserts).
 */
function detailJson(db: Db, base: unknown, traceback: unknown, from: Db = db) {
  return recordJoins(from)
    .innerJoin(
      sql<{
        base: string
        traceback: string
      }>`(select cast(${base} as text) as base, cast(${traceback} as text) as traceback)`.as('p'),
      (join) => join.onTrue(),
    )
    .select([
      'orders.id',
      'orders.project_id',
      'orders.customer_id',
      'orders.provider_customer_id',
      'orders.offering_id',
      'orders.type',
      'orders.old_plan_id',
      'orders.cost',
      'plans.unit_price as plan_unit_price',
      'plans.fixed_price as plan_fixed_price',
      'plans.activation_price as plan_activation_price',
      'old_plan.unit_price as old_plan_unit_price',
      'old_plan.fixed_price as old_plan_fixed_price',
      sql<string>`${sql.raw(recordJson(isPostgres(db)))}`.as('json'),
    ])
}

export type OrderJsonRow = Awaited<ReturnType<ReturnType<typeof detailJson>['executeTakeFirstOrThrow']>>

// Parameters: 0 base, 1 traceback, then the id or the ids.
export const jsonById = reusable((db: Db) =>
  detailJson(db, slot(0), slot(1)).where('orders.id', '=', slot(2)),
)
/**
 * PostgreSQL: the record of the order `insert` writes (a query creator whose `orders` CTE is the
 * insert, returning every column), in the insert's statement. Parameters: those of the insert,
 * then base and traceback at `at` and `at + 1`.
 */
export function insertedJson(db: Db, insert: Db, at: number) {
  return detailJson(db, slot(at), slot(at + 1), insert)
}
export const jsonByIds = reusable((db: Db, n: number) =>
  detailJson(db, slot(0), slot(1)).where(
    'orders.id',
    'in',
    Array.from({ length: n }, (_, i) => slot<number>(i + 2)),
  ),
)

/** How the database renders a record: the base URL escaped for JSON, and tracebacks or not. */
export interface JsonRender {
  base: string
  traceback: boolean
}

/** The first two parameters of every record query (`p.base`, `p.traceback`). */
export function renderParams(render: JsonRender): [string, string] {
  return [render.base, render.traceback ? '1' : '0']
}
