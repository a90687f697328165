// All SQL of the orders area. A list page is one query: the order row joined with everything the
// record shows (offering, provider, category, plans, project, customer, resource, users).
import { sql, type Kysely, type SelectQueryBuilder, type Transaction } from 'kysely'
import type { DB } from '../../db/tables.js'
import { icontains, isPostgres } from '../../db/sql.js'
import { reusable, slot } from '../../db/compiled.js'
import type { OrderTerm } from '../../http/query.js'
import type { OrderState } from './state-machine.js'

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
  query?: { text: string; uuid: string | null }
  resource_uuid?: string
  resource_name?: string
  service_manager_uuid?: string
  states?: string[]
  types?: string[]
  /** A filter that can match nothing (a URL filter of the wrong kind). */
  none?: boolean
}

/**
 * Ids of resources whose name contains `text` (case-insensitive). On SQLite a text of three or
 * more characters is looked up in the trigram index (a phrase of trigrams is a substring match);
 * PostgreSQL's trigram index serves the LIKE itself.
 */
function resourceIdsNamed(db: Db, text: string) {
  if (!isPostgres(db) && [...text].length >= 3) {
    const phrase = `"${text.replace(/"/g, '""')}"`
    return sql<number>`(select rowid from resources_name_fts where resources_name_fts match ${phrase})`
  }
  return db.selectFrom('resources').select('resources.id').where(icontains('resources.name', text))
}

const NONE = [-1]
const ids = (xs: number[]) => (xs.length ? xs : NONE)

function base(db: Db) {
  return db.selectFrom('orders')
}

function applyFilters(
  db: Db,
  q: SelectQueryBuilder<DB, 'orders', object>,
  vis: OrderVisibility,
  f: OrderFilters,
) {
  if (f.none) return q.where(sql<boolean>`1 = 0`)
  if (!vis.all) {
    q = q.where((eb) =>
      eb.or([
        eb('orders.project_id', 'in', ids(vis.projectIds)),
        eb('orders.customer_id', 'in', ids(vis.customerIds)),
        eb('orders.provider_customer_id', 'in', ids(vis.customerIds)),
        eb('orders.offering_id', 'in', ids(vis.offeringIds)),
      ]),
    )
  }
  const c = f.canApproveAsConsumer
  if (c) {
    q = q.where('orders.state', '=', 'pending-consumer')
    if (typeof c === 'object') {
      q = q.where((eb) =>
        eb.or([
          eb('orders.project_id', 'in', ids(c.projectIds)),
          eb('orders.customer_id', 'in', ids(c.customerIds)),
        ]),
      )
    }
  }
  const p = f.canApproveAsProvider
  if (p) {
    q = q.where('orders.state', '=', 'pending-provider')
    if (typeof p === 'object') {
      q = q.where((eb) =>
        eb.or([
          eb('orders.provider_customer_id', 'in', ids(p.customerIds)),
          eb('orders.offering_id', 'in', ids(p.offeringIds)),
        ]),
      )
    }
  }
  const sub = (table: 'projects' | 'customers' | 'offerings' | 'categories', uuid: string) =>
    sql<number>`(select id from ${sql.table(table)} where uuid = ${uuid})`
  if (f.project_uuid) q = q.where('orders.project_id', '=', sub('projects', f.project_uuid))
  if (f.customer_uuid) q = q.where('orders.customer_id', '=', sub('customers', f.customer_uuid))
  if (f.provider_uuid) q = q.where('orders.provider_customer_id', '=', sub('customers', f.provider_uuid))
  if (f.offering_uuids?.length) {
    q = q.where('orders.offering_id', 'in', (eb) =>
      eb.selectFrom('offerings').select('id').where('uuid', 'in', f.offering_uuids!),
    )
  }
  if (f.offering_slugs?.length) {
    q = q.where('orders.offering_id', 'in', (eb) =>
      eb.selectFrom('offerings').select('id').where('slug', 'in', f.offering_slugs!),
    )
  }
  if (f.offering_types?.length) {
    q = q.where('orders.offering_id', 'in', (eb) =>
      eb.selectFrom('offerings').select('id').where('type', 'in', f.offering_types!),
    )
  }
  if (f.category_uuid) {
    const cat = f.category_uuid
    q = q.where('orders.offering_id', 'in', (eb) =>
      eb
        .selectFrom('offerings')
        .select('offerings.id')
        .where('offerings.category_id', '=', sub('categories', cat)),
    )
  }
  if (f.parent_offering_uuid) {
    const parent = f.parent_offering_uuid
    q = q.where('orders.offering_id', 'in', (eb) =>
      eb
        .selectFrom('offerings')
        .select('offerings.id')
        .where('offerings.parent_id', '=', sub('offerings', parent)),
    )
  }
  if (f.service_manager_uuid) {
    // Orders of offerings whose provider organization the user manages (CUSTOMER.MANAGER) or
    // that the user manages directly (OFFERING.MANAGER).
    const user = f.service_manager_uuid
    q = q.where((eb) =>
      eb.or([
        eb(
          'orders.provider_customer_id',
          'in',
          eb
            .selectFrom('user_roles')
            .innerJoin('roles', 'roles.id', 'user_roles.role_id')
            .innerJoin('users', 'users.id', 'user_roles.user_id')
            .select('user_roles.scope_id')
            .where('users.uuid', '=', user)
            .where('roles.name', '=', 'CUSTOMER.MANAGER')
            .where('user_roles.is_active', '=', 1),
        ),
        eb(
          'orders.offering_id',
          'in',
          eb
            .selectFrom('user_roles')
            .innerJoin('roles', 'roles.id', 'user_roles.role_id')
            .innerJoin('users', 'users.id', 'user_roles.user_id')
            .select('user_roles.scope_id')
            .where('users.uuid', '=', user)
            .where('roles.name', '=', 'OFFERING.MANAGER')
            .where('user_roles.is_active', '=', 1),
        ),
      ]),
    )
  }
  if (f.resource_uuid) {
    const r = f.resource_uuid
    q = q.where('orders.resource_id', '=', sql<number>`(select id from resources where uuid = ${r})`)
  }
  if (f.resource_name) {
    const name = f.resource_name
    q = q.where('orders.resource_id', 'in', resourceIdsNamed(db, name))
  }
  if (f.query) {
    const { text, uuid } = f.query
    q = q.where((eb) =>
      eb.or([
        ...(uuid ? [eb('orders.uuid', '=', uuid)] : []),
        eb('orders.slug', '=', text),
        eb(
          'orders.project_id',
          'in',
          eb.selectFrom('projects').select('projects.id').where(icontains('projects.name', text)),
        ),
        eb('orders.resource_id', 'in', resourceIdsNamed(db, text)),
      ]),
    )
  }
  if (f.states?.length) q = q.where('orders.state', 'in', f.states)
  if (f.types?.length) q = q.where('orders.type', 'in', f.types)
  if (f.created) q = q.where('orders.created', '>=', f.created)
  if (f.modified) q = q.where('orders.modified', '>=', f.modified)
  return q
}

/** The joined row a record is built from. */
function detail(db: Db) {
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
    .selectAll('orders')
    .select([
      'offerings.uuid as offering_uuid',
      'offerings.name as offering_name',
      'offerings.description as offering_description',
      'offerings.image as offering_image',
      'offerings.thumbnail as offering_thumbnail',
      'offerings.type as offering_type',
      'offerings.shared as offering_shared',
      'offerings.billable as offering_billable',
      'offerings.plugin_options as offering_plugin_options',
      'provider.name as provider_name',
      'provider.uuid as provider_uuid',
      'provider.slug as provider_slug',
      'categories.title as category_title',
      'categories.uuid as category_uuid',
      'categories.icon as category_icon',
      'plans.uuid as plan_uuid',
      'plans.name as plan_name',
      'plans.description as plan_description',
      'plans.unit as plan_unit',
      'plans.unit_price as plan_unit_price',
      'plans.fixed_price as plan_fixed_price',
      'plans.activation_price as plan_activation_price',
      'old_plan.uuid as old_plan_uuid',
      'old_plan.name as old_plan_name',
      'old_plan.unit_price as old_plan_unit_price',
      'old_plan.fixed_price as old_plan_fixed_price',
      'projects.uuid as project_uuid',
      'projects.name as project_name',
      'projects.description as project_description',
      'projects.slug as project_slug',
      'customers.uuid as customer_uuid',
      'customers.name as customer_name',
      'customers.slug as customer_slug',
      'resources.uuid as resource_uuid',
      'resources.name as resource_name',
      'resources.resource_type as resource_type',
      'consumer_reviewer.username as consumer_reviewed_by_username',
      'consumer_reviewer.full_name as consumer_reviewed_by_full_name',
      'provider_reviewer.username as provider_reviewed_by_username',
      'provider_reviewer.full_name as provider_reviewed_by_full_name',
      'creator.username as created_by_username',
      'creator.full_name as created_by_full_name',
      'creator.civil_number as created_by_civil_number',
    ])
}

export type OrderDetailRow = Awaited<ReturnType<ReturnType<typeof detail>['executeTakeFirstOrThrow']>>

const detailByUuid = reusable((db: Db) => detail(db).where('orders.uuid', '=', slot(0)))
const detailById = reusable((db: Db) => detail(db).where('orders.id', '=', slot(0)))
const detailByIds = reusable((db: Db, n: number) =>
  detail(db).where(
    'orders.id',
    'in',
    Array.from({ length: n }, (_, i) => slot<number>(i)),
  ),
)

export function ordersRepository(db: Db) {
  return {
    async count(vis: OrderVisibility, f: OrderFilters): Promise<number> {
      // Everything, unfiltered: the trigger-kept total instead of a scan of the table.
      if (vis.all && Object.values(f).every((v) => !v || (Array.isArray(v) && v.length === 0))) {
        const total = await db
          .selectFrom('row_counts')
          .select('n')
          .where('name', '=', 'orders')
          .executeTakeFirst()
        if (total) return Number(total.n)
      }
      const r = await applyFilters(db, base(db), vis, f)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
      return Number(r.n)
    },
    /** One page: the ids are picked on the orders table alone, then joined for the record. */
    async list(vis: OrderVisibility, f: OrderFilters, order: OrderTerm[], limit: number, offset: number) {
      let q = applyFilters(db, base(db), vis, f).select('orders.id')
      for (const t of order) q = q.orderBy(t.column as any, t.desc ? 'desc' : 'asc')
      const last = order[order.length - 1]
      q = q.orderBy('orders.id', last?.desc ? 'desc' : 'asc')
      const page = await q.limit(limit).offset(offset).execute()
      if (!page.length) return []
      const { rows } = await detailByIds(
        db,
        [page.length],
        page.map((r) => r.id),
      )
      const byId = new Map(rows.map((r) => [r.id, r]))
      return page.map((r) => byId.get(r.id)!).filter(Boolean)
    },
    /** The order, when the caller may see it (the same rule as the list's visibility filter). */
    async findVisibleByUuid(vis: OrderVisibility, uuid: string): Promise<OrderDetailRow | undefined> {
      const row = (await detailByUuid(db, [], [uuid])).rows[0]
      if (!row || vis.all) return row
      const visible =
        vis.projectIds.includes(row.project_id) ||
        vis.customerIds.includes(row.customer_id) ||
        vis.customerIds.includes(row.provider_customer_id) ||
        vis.offeringIds.includes(row.offering_id)
      return visible ? row : undefined
    },
    async findById(id: number): Promise<OrderDetailRow | undefined> {
      return (await detailById(db, [], [id])).rows[0]
    },
    async insert(values: Record<string, unknown>): Promise<number> {
      const r = await db
        .insertInto('orders')
        .values(values as any)
        .returning('id')
        .executeTakeFirstOrThrow()
      return r.id
    },
    /** The transition write: only when the order is still in one of `from`. True when it moved. */
    async updateStateIfCurrent(
      id: number,
      from: readonly OrderState[],
      values: Record<string, unknown>,
    ): Promise<boolean> {
      const r = await db
        .updateTable('orders')
        .set(values as any)
        .where('id', '=', id)
        .where('state', 'in', from as OrderState[])
        .executeTakeFirst()
      return Number(r.numUpdatedRows) === 1
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
    /** Is there a pending or executing order for this resource (other than `exceptId`)? */
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
    async insert(values: Record<string, unknown>): Promise<number> {
      const r = await db
        .insertInto('resources')
        .values(values as any)
        .returning('id')
        .executeTakeFirstOrThrow()
      return r.id
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
