// All SQL of the orders area. A list page is the page's ids and versions, picked on the orders table
// alone, then the records of those orders not already rendered at that version (the service keeps
// them): joined with everything the record shows (offering, provider, category, plans, project,
// customer, resource, users), each rendered as JSON by the database. A total over projects and
// states only is read from order_counts. The use cases decide on the order row alone (`orderRow`).
import {
  sql,
  type Expression,
  type ExpressionBuilder,
  type Kysely,
  type SelectQueryBuilder,
  type SqlBool,
  type Transaction,
} from 'kysely'
import type { DB } from '../../db/tables.js'
import { EpochCache } from '../../db/epochs.js'
import { containsPattern, ilike, isPostgres, jsonSql } from '../../db/sql.js'
import {
  anyOf,
  applyConditions,
  formOf,
  insertReturningId,
  reusable,
  reusableByForm,
  slot,
  type Condition,
} from '../../db/compiled.js'
import type { OrderTerm } from '../../http/query.js'
import { OFFERING_TYPE_RULES } from '../catalog/offering-types.js'
import type { OrderState } from './state-machine.js'
import { PATH } from './schema.js'

type Db = Kysely<DB> | Transaction<DB>

/** What a caller may see: everything, or orders tied to these scopes. */
export type OrderVisibility =
  { all: true } | { all: false; projectIds: number[]; customerIds: number[]; offeringIds: number[] }

export interface OrderFilters {
  canApproveAsConsumer?: { projectIds: number[]; customerIds: number[] } | 'all' | 'state-only'
  canApproveAsProvider?: { customerIds: number[]; offeringIds: number[] } | 'all' | 'state-only'
  category_uuid?: string
  created?: string
  customer_uuid?: string
  modified?: string
  offering_uuids?: string[]
  offering_slugs?: string[]
  offering_types?: string[]
  parent_offering_uuid?: string
  project_uuid?: string
  provider_uuid?: string
  /** `matches`: what the text matches, found beforehand (`matchQuery`); without it, sub-selects. */
  query?: { text: string; uuid: string | null; matches?: QueryMatches }
  resource_uuid?: string
  resource_name?: string
  service_manager_uuid?: string
  states?: string[]
  types?: string[]
  /** A filter that can match nothing (a URL filter of the wrong kind). */
  none?: boolean
}

/**
 * Resources whose name contains `text` (case-insensitive): the value to bind and the `id IN`
 * sub-select given its slot. On SQLite a text of three or more characters is looked up in the
 * trigram index (a phrase of trigrams is a substring match); PostgreSQL's trigram index serves the
 * LIKE itself.
 */
function resourcesNamed(db: Db, text: string) {
  const form = !isPostgres(db) && [...text].length >= 3 ? 'fts' : 'like'
  return {
    form,
    value: form === 'fts' ? `"${text.replace(/"/g, '""')}"` : containsPattern(text),
    ids: (s: unknown) => resourceIdsNamed(db, form, s),
  }
}

/** The ids of the resources a `resourcesNamed` value matches, given its form and slot. */
function resourceIdsNamed(db: Db, form: string, s: unknown): SelectQueryBuilder<DB, any, { id: number }> {
  if (form === 'fts') {
    return db
      .selectFrom(sql<{ id: number }>`resources_name_fts`.as('f'))
      .select(sql<number>`rowid`.as('id'))
      .where(sql<boolean>`resources_name_fts match ${s}`)
  }
  return db.selectFrom('resources').select('resources.id as id').where(ilike('resources.name', s))
}

/** Orders whose slug is the text, or (given a uuid) whose uuid is that uuid. */
function slugOrUuid(eb: ExpressionBuilder<DB, 'orders'>, slug: unknown, uuid: unknown): Expression<SqlBool> {
  return eb.or([
    eb('orders.slug', '=', slug as string),
    ...(uuid === null ? [] : [eb('orders.uuid', '=', uuid as string)]),
  ])
}

/** The ids of the projects whose names match a `containsPattern` (a value or a slot). */
function projectIdsNamed(db: Db, pattern: unknown) {
  return db.selectFrom('projects').select('projects.id as id').where(ilike('projects.name', pattern))
}

function base(db: Db) {
  return db.selectFrom('orders')
}

type OrdersQuery = SelectQueryBuilder<DB, 'orders', object>

/**
 * A condition of a list. `counted`: it reads only the order's project and state, so it also
 * applies to `order_counts` (aliased `orders`), and a list of such conditions is counted there.
 */
type OrderCondition = Condition<OrdersQuery> & { counted?: boolean }

/**
 * What a `query` text matches, found before the list is counted and paged: the orders with that
 * uuid or slug, the projects and the resources whose names contain it. A list is null when more
 * than `MATCHES_MAX` matched (the list query then keeps a sub-select for that branch).
 */
export interface QueryMatches {
  orderIds: number[] | null
  projectIds: number[] | null
  resourceIds: number[] | null
}

const MATCHES_MAX = 1000

/** What texts matched (see matchQuery), for the last few hundred texts searched. */
const queryMatches = new EpochCache<QueryMatches>(['project_names', 'resource_names', 'order_slugs'], 256)

/** Ids padded with -1 to a power of two: compiled forms for a few lengths, not for each. */
function padded(ids: readonly number[]): number[] {
  let n = 1
  while (n < ids.length) n *= 2
  return [...ids, ...Array<number>(n - ids.length).fill(-1)]
}

type Where = (eb: ExpressionBuilder<DB, 'orders'>, s: readonly unknown[]) => Expression<SqlBool>

/**
 * The `query` condition: the order's uuid (when the text is one), its slug, its project's name or
 * its resource's name. Branches found beforehand (`matches`) are id lists, those that matched
 * nothing are left out; so a text that names only projects is one range of the (project_id,
 * created) index, counted from order_counts.
 */
function queryCondition(db: Db, query: NonNullable<OrderFilters['query']>): OrderCondition {
  const { text, uuid, matches } = query
  const branches: { form: string; values: unknown[]; where: Where; counted?: boolean }[] = []
  const ids = (
    form: string,
    column: 'orders.id' | 'orders.project_id' | 'orders.resource_id',
    found: number[],
  ) => {
    const values = padded(found)
    branches.push({
      form: `${form}:${values.length}`,
      values,
      where: (eb, s) => eb(column, 'in', s as number[]),
      counted: column === 'orders.project_id',
    })
  }
  if (!matches || !matches.orderIds) {
    branches.push({
      form: uuid ? 'slug-uuid' : 'slug',
      values: uuid ? [text, uuid] : [text],
      where: (eb, [slug, u]) => slugOrUuid(eb, slug, uuid ? u : null),
    })
  } else if (matches.orderIds.length) ids('orders', 'orders.id', matches.orderIds)
  if (!matches || !matches.projectIds) {
    branches.push({
      form: 'projects-named',
      values: [containsPattern(text)],
      where: (eb, [pattern]) => eb('orders.project_id', 'in', projectIdsNamed(db, pattern)),
    })
  } else if (matches.projectIds.length) ids('projects', 'orders.project_id', matches.projectIds)
  if (!matches || !matches.resourceIds) {
    const named = resourcesNamed(db, text)
    branches.push({
      form: `resources-named-${named.form}`,
      values: [named.value],
      where: (eb, [value]) => eb('orders.resource_id', 'in', named.ids(value)),
    })
  } else if (matches.resourceIds.length) ids('resources', 'orders.resource_id', matches.resourceIds)
  return {
    form: `query:${branches.map((b) => b.form).join('+')}`,
    values: branches.flatMap((b) => b.values),
    counted: branches.every((b) => b.counted),
    apply: (q, s) => {
      let next = 0
      const slotted = branches.map((b) => {
        const mine = s.slice(next, (next += b.values.length))
        return (eb: ExpressionBuilder<DB, 'orders'>) => b.where(eb, mine)
      })
      return q.where((eb) => (slotted.length ? eb.or(slotted.map((w) => w(eb))) : sql<boolean>`1 = 0`))
    },
  }
}

/** The conditions of a list, in a fixed order. */
function conditions(db: Db, vis: OrderVisibility, f: OrderFilters): OrderCondition[] {
  if (f.none) return [{ form: 'none', values: [], apply: (q) => q.where(sql<boolean>`1 = 0`) }]
  const out: OrderCondition[] = []
  const add = (form: string, values: readonly unknown[], apply: OrderCondition['apply'], counted = false) =>
    out.push({ form, values, apply, counted })
  if (!vis.all) {
    // Only the scopes the caller has: a project member's orders are then one range of the
    // (project_id, created) index, already in list order, instead of a union to sort.
    out.push({
      ...anyOf('visible', [
        ['orders.project_id', vis.projectIds],
        ['orders.customer_id', vis.customerIds],
        ['orders.provider_customer_id', vis.customerIds],
        ['orders.offering_id', vis.offeringIds],
      ]),
      counted: !vis.customerIds.length && !vis.offeringIds.length,
    })
  }
  const c = f.canApproveAsConsumer
  if (c) {
    add('consumer-approvable', [], (q) => q.where('orders.state', '=', 'pending-consumer'), true)
    if (typeof c === 'object') {
      out.push({
        ...anyOf('consumer-approver', [
          ['orders.project_id', c.projectIds],
          ['orders.customer_id', c.customerIds],
        ]),
        counted: !c.customerIds.length,
      })
    }
  }
  const p = f.canApproveAsProvider
  if (p) {
    add('provider-approvable', [], (q) => q.where('orders.state', '=', 'pending-provider'), true)
    if (typeof p === 'object') {
      out.push(
        anyOf('provider-approver', [
          ['orders.provider_customer_id', p.customerIds],
          ['orders.offering_id', p.offeringIds],
        ]),
      )
    }
  }
  const sub = (table: 'projects' | 'customers' | 'offerings' | 'categories' | 'resources', uuid: unknown) =>
    sql<number>`(select id from ${sql.table(table)} where uuid = ${uuid})`
  if (f.project_uuid) {
    add('project', [f.project_uuid], (q, [s]) => q.where('orders.project_id', '=', sub('projects', s)), true)
  }
  if (f.customer_uuid) {
    add('customer', [f.customer_uuid], (q, [s]) => q.where('orders.customer_id', '=', sub('customers', s)))
  }
  if (f.provider_uuid) {
    add('provider', [f.provider_uuid], (q, [s]) =>
      q.where('orders.provider_customer_id', '=', sub('customers', s)),
    )
  }
  const offeringsWhere = (name: string, column: 'uuid' | 'slug' | 'type', values?: string[]) => {
    if (!values?.length) return
    add(`${name}:${values.length}`, values, (q, s) =>
      q.where('orders.offering_id', 'in', (eb) =>
        eb.selectFrom('offerings').select('id').where(column, 'in', s),
      ),
    )
  }
  offeringsWhere('offerings', 'uuid', f.offering_uuids)
  offeringsWhere('offering-slugs', 'slug', f.offering_slugs)
  offeringsWhere('offering-types', 'type', f.offering_types)
  if (f.category_uuid) {
    add('category', [f.category_uuid], (q, [s]) =>
      q.where('orders.offering_id', 'in', (eb) =>
        eb
          .selectFrom('offerings')
          .select('offerings.id')
          .where('offerings.category_id', '=', sub('categories', s)),
      ),
    )
  }
  if (f.parent_offering_uuid) {
    add('parent-offering', [f.parent_offering_uuid], (q, [s]) =>
      q.where('orders.offering_id', 'in', (eb) =>
        eb
          .selectFrom('offerings')
          .select('offerings.id')
          .where('offerings.parent_id', '=', sub('offerings', s)),
      ),
    )
  }
  if (f.service_manager_uuid) {
    // Orders of offerings whose provider organization the user manages (CUSTOMER.MANAGER) or
    // that the user manages directly (OFFERING.MANAGER).
    add('service-manager', [f.service_manager_uuid], (q, [user]) =>
      q.where((eb) => {
        const scopesAs = (role: string) =>
          eb
            .selectFrom('user_roles')
            .innerJoin('roles', 'roles.id', 'user_roles.role_id')
            .innerJoin('users', 'users.id', 'user_roles.user_id')
            .select('user_roles.scope_id')
            .where('users.uuid', '=', user)
            .where('roles.name', '=', role)
            .where('user_roles.is_active', '=', 1)
        return eb.or([
          eb('orders.provider_customer_id', 'in', scopesAs('CUSTOMER.MANAGER')),
          eb('orders.offering_id', 'in', scopesAs('OFFERING.MANAGER')),
        ])
      }),
    )
  }
  if (f.resource_uuid) {
    add('resource', [f.resource_uuid], (q, [s]) => q.where('orders.resource_id', '=', sub('resources', s)))
  }
  if (f.resource_name) {
    const named = resourcesNamed(db, f.resource_name)
    add(`resource-name:${named.form}`, [named.value], (q, [s]) =>
      q.where('orders.resource_id', 'in', named.ids(s)),
    )
  }
  if (f.query) out.push(queryCondition(db, f.query))
  if (f.states?.length) {
    add(`states:${f.states.length}`, f.states, (q, s) => q.where('orders.state', 'in', s), true)
  }
  if (f.types?.length) add(`types:${f.types.length}`, f.types, (q, s) => q.where('orders.type', 'in', s))
  if (f.created) add('created', [f.created], (q, [s]) => q.where('orders.created', '>=', s))
  if (f.modified) add('modified', [f.modified], (q, [s]) => q.where('orders.modified', '>=', s))
  return out
}

/**
 * An order joined with everything its record shows (offering, provider, category, plans, project,
 * customer, resource, users).
 */
function recordJoins(db: Db) {
  return db
    .selectFrom('orders')
    .innerJoin('offerings', 'offerings.id', 'orders.offering_id')
    .innerJoin('customers as provider', 'provider.id', 'orders.provider_customer_id')
    .leftJoin('categories', 'categories.id', 'offerings.category_id')
    .leftJoin('plans', 'plans.id', 'orders.plan_id')
    .leftJoin('plans as old_plan', 'old_plan.id', 'orders.old_plan_id')
    .innerJoin('projects', 'projects.id', 'orders.project_id')
    .innerJoin('customers', 'customers.id', 'orders.customer_id')
    .leftJoin('resources', 'resources.id', 'orders.resource_id')
    .leftJoin('users as consumer_reviewer', 'consumer_reviewer.id', 'orders.consumer_reviewed_by_id')
    .leftJoin('users as provider_reviewer', 'provider_reviewer.id', 'orders.provider_reviewed_by_id')
    .leftJoin('users as creator', 'creator.id', 'orders.created_by_id')
    .leftJoin('service_providers', 'service_providers.customer_id', 'orders.provider_customer_id')
}

/** The order row the use cases decide on: its own columns and its offering's type. */
function orderRow(db: Db) {
  return db
    .selectFrom('orders')
    .innerJoin('offerings', 'offerings.id', 'orders.offering_id')
    .selectAll('orders')
    .select('offerings.type as offering_type')
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

/** The JSON record with the raw columns its decimal fields and visibility check are made from. */
function detailJson(db: Db, base: unknown, traceback: unknown) {
  return recordJoins(db)
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
const jsonById = reusable((db: Db) => detailJson(db, slot(0), slot(1)).where('orders.id', '=', slot(2)))
const jsonByIds = reusable((db: Db, n: number) =>
  detailJson(db, slot(0), slot(1)).where(
    'orders.id',
    'in',
    Array.from({ length: n }, (_, i) => slot<number>(i + 2)),
  ),
)

export type OrderRow = Awaited<ReturnType<ReturnType<typeof orderRow>['executeTakeFirstOrThrow']>>

const rowByUuid = reusable((db: Db) => orderRow(db).where('orders.uuid', '=', slot(0)))
const rowById = reusable((db: Db) => orderRow(db).where('orders.id', '=', slot(0)))

/** How the database renders a record: the base URL escaped for JSON, and tracebacks or not. */
export interface JsonRender {
  base: string
  traceback: boolean
}

/** The first two parameters of every record query (`p.base`, `p.traceback`). */
function renderParams(render: JsonRender): [string, string] {
  return [render.base, render.traceback ? '1' : '0']
}

interface Scoped {
  project_id: number
  customer_id: number
  provider_customer_id: number
  offering_id: number
}

function isVisible(vis: OrderVisibility, row: Scoped): boolean {
  return (
    vis.all ||
    vis.projectIds.includes(row.project_id) ||
    vis.customerIds.includes(row.customer_id) ||
    vis.customerIds.includes(row.provider_customer_id) ||
    vis.offeringIds.includes(row.offering_id)
  )
}

/** The id and version of an order (see record-cache.ts): its own version and the records' epoch. */
export interface OrderVersion {
  id: number
  version: string
}

const epoch = sql<number>`(select n from record_epochs where name = 'orders')`

const versionOf = (r: { id: number; version: number | string; epoch: number | string }): OrderVersion => ({
  id: r.id,
  version: `${r.version}.${r.epoch}`,
})

const pageVersionsOf = reusableByForm()
const versionByUuid = reusable((db: Db) =>
  db
    .selectFrom('orders')
    .select([
      'id',
      'project_id',
      'customer_id',
      'provider_customer_id',
      'offering_id',
      'version',
      epoch.as('epoch'),
    ])
    .where('uuid', '=', slot(0)),
)
const countOf = reusableByForm()

/** The ids and versions of one page, picked on the orders table alone. */
async function pageVersions(
  db: Db,
  vis: OrderVisibility,
  f: OrderFilters,
  order: OrderTerm[],
  limit: number,
  offset: number,
): Promise<OrderVersion[]> {
  const all = conditions(db, vis, f)
  const { form, values } = formOf(all)
  const last = order[order.length - 1]
  const idDirection = last?.desc ? 'desc' : 'asc'
  const by = [...order.map((t) => `${t.column} ${t.desc ? 'desc' : 'asc'}`), `id ${idDirection}`]
  const build = () => {
    let q = applyConditions(base(db), all).select(['orders.id', 'orders.version', epoch.as('epoch')])
    for (const t of order) q = q.orderBy(t.column as any, t.desc ? 'desc' : 'asc')
    return q
      .orderBy('orders.id', idDirection)
      .limit(slot<number>(values.length))
      .offset(slot<number>(values.length + 1))
  }
  const { rows } = await pageVersionsOf(db, `${form}/${by.join(',')}`, build, [...values, limit, offset])
  return rows.map(versionOf)
}

/** The rows in the order of `ids` (a row gone since the ids were picked is left out). */
function inOrder<R extends { id: number }>(ids: number[], rows: R[]): R[] {
  const byId = new Map(rows.map((r) => [r.id, r]))
  return ids.map((id) => byId.get(id)).filter((r): r is R => !!r)
}

const ordersTotal = reusable((db: Db) => db.selectFrom('row_counts').select('n').where('name', '=', 'orders'))

// The statements of a state transition, compiled once: a transition holds SQLite's one writer,
// and building each statement anew was a large part of the time it held it.
const updateStateIf = reusable((db: Db, columns: string, from: number) => {
  const names = columns.split(',')
  return db
    .updateTable('orders')
    .set(Object.fromEntries(names.map((c, i) => [c, slot(i)])) as any)
    .where('id', '=', slot(names.length))
    .where(
      'state',
      'in',
      Array.from({ length: from }, (_, i) => slot(names.length + 1 + i)),
    )
})
const transitionRowById = reusable((db: Db) =>
  orderRow(db)
    .leftJoin('resources', 'resources.id', 'orders.resource_id')
    .select('resources.uuid as resource_uuid')
    .where('orders.id', '=', slot(0)),
)
const projectStartDateById = reusable((db: Db) =>
  db.selectFrom('projects').select('start_date').where('id', '=', slot(0)),
)
// What a `query` text matches (see QueryMatches), at most one more than MATCHES_MAX of each.
const ordersMatching = reusable((db: Db, withUuid: string) =>
  db
    .selectFrom('orders')
    .select('orders.id')
    .where((eb) => slugOrUuid(eb, slot(0), withUuid ? slot(1) : null))
    .limit(MATCHES_MAX + 1),
)
const projectsMatching = reusable((db: Db) => projectIdsNamed(db, slot(0)).limit(MATCHES_MAX + 1))
const resourcesMatching = reusable((db: Db, form: string) =>
  resourceIdsNamed(db, form, slot(0)).limit(MATCHES_MAX + 1),
)

const customerAndProjectByIds = reusable((db: Db) =>
  db
    .selectFrom(['customers', 'projects'])
    .select(['customers.blocked', 'customers.archived', 'projects.name', 'projects.end_date'])
    .where('customers.id', '=', slot(0))
    .where('projects.id', '=', slot(1)),
)

export function ordersRepository(db: Db) {
  return {
    async count(vis: OrderVisibility, f: OrderFilters): Promise<number> {
      // Everything, unfiltered: the trigger-kept total instead of a scan of the table.
      if (vis.all && Object.values(f).every((v) => !v || (Array.isArray(v) && v.length === 0))) {
        const total = (await ordersTotal(db, [], [])).rows[0]
        if (total) return Number(total.n)
      }
      const all = conditions(db, vis, f)
      const { form, values } = formOf(all)
      if (all.every((c) => c.counted)) {
        // Only projects and states: a sum over the trigger-kept counts, not a count of orders.
        const counts = db.selectFrom('order_counts as orders') as unknown as OrdersQuery
        const build = () =>
          applyConditions(counts, all).select(sql<number>`coalesce(sum(orders.n), 0)`.as('n'))
        return Number((await countOf(db, `counts/${form}`, build, values)).rows[0]!.n)
      }
      const build = () => applyConditions(base(db), all).select((eb) => eb.fn.countAll<number>().as('n'))
      return Number((await countOf(db, form, build, values)).rows[0]!.n)
    },
    /**
     * What a `query` text matches, looked up once before a list is counted and paged, and kept
     * between requests while no project or resource name and no order slug has changed. A text
     * that is a uuid is always looked up: the order with that uuid may be created at any time.
     */
    async matchQuery(text: string, uuid: string | null): Promise<QueryMatches> {
      const lookUp = async (): Promise<QueryMatches> => {
        const found = (rows: { id: number }[]) => (rows.length > MATCHES_MAX ? null : rows.map((r) => r.id))
        const named = resourcesNamed(db, text)
        const [orders, projects, resources] = await Promise.all([
          ordersMatching(db, [uuid ? 'uuid' : ''], uuid ? [text, uuid] : [text]),
          projectsMatching(db, [], [containsPattern(text)]),
          resourcesMatching(db, [named.form], [named.value]),
        ])
        return {
          orderIds: found(orders.rows),
          projectIds: found(projects.rows),
          resourceIds: found(resources.rows),
        }
      }
      return uuid ? lookUp() : queryMatches.get(db, text, lookUp)
    },
    /** One page's ids and versions, picked on the orders table alone. */
    page(vis: OrderVisibility, f: OrderFilters, order: OrderTerm[], limit: number, offset: number) {
      return pageVersions(db, vis, f, order, limit, offset)
    },
    /** The records of these orders, rendered, in the order of `ids` (those gone are left out). */
    async render(ids: number[], render: JsonRender): Promise<OrderJsonRow[]> {
      if (!ids.length) return []
      const { rows } = await jsonByIds(db, [ids.length], [...renderParams(render), ...ids])
      return inOrder(ids, rows)
    },
    /** The order's id and version, when the caller may see it (the list's visibility rule). */
    async findVisibleVersionByUuid(vis: OrderVisibility, uuid: string): Promise<OrderVersion | undefined> {
      const row = (await versionByUuid(db, [], [uuid])).rows[0]
      return row && isVisible(vis, row) ? versionOf(row) : undefined
    },
    async findJsonById(id: number, render: JsonRender): Promise<OrderJsonRow | undefined> {
      return (await jsonById(db, [], [...renderParams(render), id])).rows[0]
    },
    /** The order, when the caller may see it (the same rule as the list's visibility filter). */
    async findVisibleByUuid(vis: OrderVisibility, uuid: string): Promise<OrderRow | undefined> {
      const row = (await rowByUuid(db, [], [uuid])).rows[0]
      return row && isVisible(vis, row) ? row : undefined
    },
    async findById(id: number): Promise<OrderRow | undefined> {
      return (await rowById(db, [], [id])).rows[0]
    },
    insert(values: Record<string, unknown>): Promise<number> {
      return insertReturningId(db, 'orders', values)
    },
    /** The transition write: only when the order is still in one of `from`. True when it moved. */
    async updateStateIfCurrent(
      id: number,
      from: readonly OrderState[],
      values: Record<string, unknown>,
    ): Promise<boolean> {
      // As Kysely's `set`, an undefined value leaves its column alone.
      const columns = Object.keys(values).filter((c) => values[c] !== undefined)
      const r = await updateStateIf(
        db,
        [columns.join(','), from.length],
        [...columns.map((c) => values[c]), id, ...from],
      )
      return Number(r.numAffectedRows) === 1
    },
    /** What the side effects of a transition need to know of the order. */
    async transitionRow(id: number) {
      const row = (await transitionRowById(db, [], [id])).rows[0]
      if (!row) throw new Error(`order ${id} is gone`)
      return row
    },
    async projectStartDate(projectId: number): Promise<string | null> {
      return (await projectStartDateById(db, [], [projectId])).rows[0]?.start_date ?? null
    },
    /** What a consumer approval checks of the order's organization and project, in one read. */
    async customerAndProject(customerId: number, projectId: number) {
      const row = (await customerAndProjectByIds(db, [], [customerId, projectId])).rows[0]
      if (!row) throw new Error(`customer ${customerId} or project ${projectId} is gone`)
      return row
    },
    async update(id: number, values: Record<string, unknown>): Promise<void> {
      await db
        .updateTable('orders')
        .set(values as any)
        .where('id', '=', id)
        .execute()
    },
    async delete(id: number): Promise<void> {
      await db.deleteFrom('orders').where('id', '=', id).execute()
    },
    /** Is the offering open to this customer: no organization groups, or one the customer is in? */
    async offeringOpenToCustomer(offeringId: number, customerId: number): Promise<boolean> {
      const groups = await db
        .selectFrom('offering_organization_groups as og')
        .leftJoin('customer_organization_groups as cg', (j) =>
          j
            .onRef('cg.organization_group_id', '=', 'og.organization_group_id')
            .on('cg.customer_id', '=', customerId),
        )
        .select(['og.organization_group_id', 'cg.customer_id'])
        .where('og.offering_id', '=', offeringId)
        .execute()
      return groups.length === 0 || groups.some((g) => g.customer_id !== null)
    },
    /** Is there a pending or executing order for this resource? */
    async hasOpenOrderForResource(resourceId: number): Promise<boolean> {
      const r = await db
        .selectFrom('orders')
        .select('id')
        .where('resource_id', '=', resourceId)
        .where('state', 'in', [
          'pending-consumer',
          'pending-provider',
          'pending-project',
          'pending-start-date',
          'executing',
        ])
        .executeTakeFirst()
      return !!r
    },
  }
}

export function resourcesWriteRepository(db: Db) {
  return {
    insert(values: Record<string, unknown>): Promise<number> {
      return insertReturningId(db, 'resources', values)
    },
    async update(id: number, values: Record<string, unknown>): Promise<void> {
      await db
        .updateTable('resources')
        .set(values as any)
        .where('id', '=', id)
        .execute()
    },
    findById(id: number) {
      return db.selectFrom('resources').selectAll().where('id', '=', id).executeTakeFirst()
    },
  }
}
