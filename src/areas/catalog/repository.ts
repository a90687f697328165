// All SQL of the catalog area. Visibility scoping (what a caller may see → 404) lives here.
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
import { icontains } from '../../db/sql.js'
import { reusableByForm, slot, slottedLists } from '../../db/compiled.js'
import type { OrderTerm } from '../../http/query.js'

type Db = Kysely<DB> | Transaction<DB>

/**
 * What a caller may see in the catalog: everything (staff, support), or rows reached through
 * these grants. `customerIds`: customer roles; `connectedCustomerIds`: customer roles plus the
 * customers of projects with a project role; `projectIds`: project roles; `offeringIds`:
 * offering roles.
 */
export type CatalogVisibility =
  | { all: true }
  | {
      all: false
      customerIds: number[]
      connectedCustomerIds: number[]
      projectIds: number[]
      offeringIds: number[]
    }

/** Offering states everybody (authenticated) may see when the offering is shared. */
export const PUBLIC_OFFERING_STATES = ['Active', 'Paused']

const none = (ids: number[]) => (ids.length ? ids : [-1])

/** A catalog visibility with its ids as slots (from 0), for a compiled query; see `slottedLists`. */
function slottedCatalogVisibility(vis: CatalogVisibility): {
  slotted: CatalogVisibility
  values: number[]
  form: string
} {
  if (vis.all) return { slotted: vis, values: [], form: 'all' }
  const lists = [vis.customerIds, vis.connectedCustomerIds, vis.projectIds, vis.offeringIds].map(none)
  const { slots, values, form } = slottedLists(lists)
  const [customerIds, connectedCustomerIds, projectIds, offeringIds] = slots as [
    number[],
    number[],
    number[],
    number[],
  ]
  return { slotted: { all: false, customerIds, connectedCustomerIds, projectIds, offeringIds }, values, form }
}

const offeringByUuid = reusableByForm()
const planByUuid = reusableByForm(1)

function applyOrder<QB extends SelectQueryBuilder<any, any, any>>(
  qb: QB,
  order: OrderTerm[],
  tiebreak: string,
): QB {
  let q = qb
  for (const t of order) q = q.orderBy(t.column as any, t.desc ? 'desc' : 'asc') as QB
  return q.orderBy(tiebreak as any, 'asc') as QB
}

/**
 * The visibility condition of an offering row (table reference `offerings`):
 * - shared offerings in Active/Paused: everybody;
 * - every state: the provider's people (customer roles) and the offering's managers;
 * - private offerings in Active/Paused: people connected to the customer of their project.
 */
function offeringVisible(eb: ExpressionBuilder<any, any>, vis: CatalogVisibility): Expression<SqlBool> {
  if (vis.all) return eb.lit(true)
  return eb.or([
    eb.and([eb('offerings.shared', '=', 1), eb('offerings.state', 'in', PUBLIC_OFFERING_STATES)]),
    eb('offerings.customer_id', 'in', none(vis.customerIds)),
    eb('offerings.id', 'in', none(vis.offeringIds)),
    eb.and([
      eb('offerings.shared', '=', 0),
      eb('offerings.state', 'in', PUBLIC_OFFERING_STATES),
      eb(
        'offerings.project_id',
        'in',
        eb
          .selectFrom('projects')
          .select('projects.id')
          .where('projects.customer_id', 'in', none(vis.connectedCustomerIds)),
      ),
    ]),
  ])
}

// ---- service providers ----

export interface ServiceProviderFilters {
  customer_uuid?: string
  name?: string
}

export function serviceProvidersRepository(db: Db) {
  function base() {
    return db
      .selectFrom('service_providers')
      .innerJoin('customers', 'customers.id', 'service_providers.customer_id')
  }
  function filtered(f: ServiceProviderFilters) {
    let q = base()
    if (f.customer_uuid) q = q.where('customers.uuid', '=', f.customer_uuid)
    if (f.name) q = q.where(icontains('customers.name', f.name))
    return q
  }
  const columns = [
    'service_providers.id',
    'service_providers.uuid',
    'service_providers.customer_id',
    'service_providers.description',
    'service_providers.image',
    'service_providers.created',
    'customers.uuid as customer_uuid',
    'customers.name as customer_name',
  ] as const
  return {
    async count(f: ServiceProviderFilters): Promise<number> {
      const r = await filtered(f)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
      return Number(r.n)
    },
    list(f: ServiceProviderFilters, order: OrderTerm[], limit: number, offset: number) {
      return applyOrder(filtered(f).select(columns), order, 'service_providers.id')
        .limit(limit)
        .offset(offset)
        .execute()
    },
    findByUuid(uuid: string) {
      return base().select(columns).where('service_providers.uuid', '=', uuid).executeTakeFirst()
    },
    findByCustomer(customerId: number) {
      return base().select(columns).where('service_providers.customer_id', '=', customerId).executeTakeFirst()
    },
    async insert(values: {
      uuid: string
      customer_id: number
      description: string
      image: string | null
      created: string
      modified: string
    }): Promise<void> {
      await db.insertInto('service_providers').values(values).execute()
    },
    async update(id: number, values: Record<string, unknown>): Promise<void> {
      await db
        .updateTable('service_providers')
        .set(values as any)
        .where('id', '=', id)
        .execute()
    },
    async delete(id: number): Promise<void> {
      await db.deleteFrom('service_providers').where('id', '=', id).execute()
    },
  }
}

// ---- categories ----

export function categoriesRepository(db: Db) {
  function filtered(f: { title?: string }) {
    let q = db.selectFrom('categories')
    if (f.title) q = q.where(icontains('categories.title', f.title))
    return q
  }
  function withCount<QB extends SelectQueryBuilder<DB, 'categories', object>>(q: QB) {
    return q.selectAll('categories').select((eb) =>
      eb
        .selectFrom('offerings')
        .whereRef('offerings.category_id', '=', 'categories.id')
        .where('offerings.state', '=', 'Active')
        .where('offerings.shared', '=', 1)
        .select((e) => e.fn.countAll<number>().as('c'))
        .as('offering_count'),
    )
  }
  return {
    async count(f: { title?: string }): Promise<number> {
      const r = await filtered(f)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
      return Number(r.n)
    },
    list(f: { title?: string }, order: OrderTerm[], limit: number, offset: number) {
      return applyOrder(withCount(filtered(f)), order, 'categories.id')
        .limit(limit)
        .offset(offset)
        .execute()
    },
    findByUuid(uuid: string) {
      return withCount(db.selectFrom('categories')).where('categories.uuid', '=', uuid).executeTakeFirst()
    },
    async insert(values: {
      uuid: string
      title: string
      description: string
      icon: string | null
      created: string
      modified: string
    }): Promise<void> {
      await db.insertInto('categories').values(values).execute()
    },
    async update(id: number, values: Record<string, unknown>): Promise<void> {
      await db
        .updateTable('categories')
        .set(values as any)
        .where('id', '=', id)
        .execute()
    },
    async delete(id: number): Promise<void> {
      await db.deleteFrom('categories').where('id', '=', id).execute()
    },
    async offeringCount(id: number): Promise<number> {
      const r = await db
        .selectFrom('offerings')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('category_id', '=', id)
        .executeTakeFirstOrThrow()
      return Number(r.n)
    },
  }
}

// ---- offerings ----

export interface OfferingFilters {
  name?: string
  name_exact?: string
  customer_uuid?: string
  category_uuid?: string
  type?: string[]
  state?: string[]
  shared?: boolean
  billable?: boolean
  uuid?: string
  slug?: string
  scope_uuid?: string
  parent_uuid?: string
}

export function offeringsRepository(db: Db) {
  function base() {
    return db
      .selectFrom('offerings')
      .innerJoin('customers as provider', 'provider.id', 'offerings.customer_id')
      .leftJoin('categories', 'categories.id', 'offerings.category_id')
      .leftJoin('service_settings', 'service_settings.id', 'offerings.service_settings_id')
      .leftJoin('projects as offering_project', 'offering_project.id', 'offerings.project_id')
      .leftJoin('offerings as parent', 'parent.id', 'offerings.parent_id')
  }
  function filtered(vis: CatalogVisibility, f: OfferingFilters) {
    let q = base().where((eb) => offeringVisible(eb, vis))
    if (f.name) q = q.where(icontains('offerings.name', f.name))
    if (f.name_exact) q = q.where('offerings.name', '=', f.name_exact)
    if (f.customer_uuid) q = q.where('provider.uuid', '=', f.customer_uuid)
    if (f.category_uuid) q = q.where('categories.uuid', '=', f.category_uuid)
    if (f.type?.length) q = q.where('offerings.type', 'in', f.type)
    if (f.state?.length) q = q.where('offerings.state', 'in', f.state)
    if (f.shared !== undefined) q = q.where('offerings.shared', '=', f.shared ? 1 : 0)
    if (f.billable !== undefined) q = q.where('offerings.billable', '=', f.billable ? 1 : 0)
    if (f.uuid) q = q.where('offerings.uuid', '=', f.uuid)
    if (f.slug) q = q.where('offerings.slug', '=', f.slug)
    if (f.scope_uuid) q = q.where('service_settings.uuid', '=', f.scope_uuid)
    if (f.parent_uuid) q = q.where('parent.uuid', '=', f.parent_uuid)
    return q
  }
  const columns = [
    'offerings.id',
    'offerings.uuid',
    'offerings.name',
    'offerings.description',
    'offerings.slug',
    'offerings.category_id',
    'offerings.customer_id',
    'offerings.parent_id',
    'offerings.type',
    'offerings.state',
    'offerings.shared',
    'offerings.billable',
    'offerings.plugin_options',
    'offerings.terms_of_service',
    'offerings.image',
    'offerings.thumbnail',
    'offerings.service_settings_id',
    'offerings.project_id',
    'offerings.created',
    'offerings.modified',
    'provider.uuid as customer_uuid',
    'provider.name as customer_name',
    'categories.uuid as category_uuid',
    'categories.title as category_title',
    'service_settings.uuid as scope_uuid',
    'offering_project.uuid as project_uuid',
    'offering_project.customer_id as project_customer_id',
    'parent.uuid as parent_uuid',
  ] as const
  return {
    async count(vis: CatalogVisibility, f: OfferingFilters): Promise<number> {
      const r = await filtered(vis, f)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
      return Number(r.n)
    },
    list(vis: CatalogVisibility, f: OfferingFilters, order: OrderTerm[], limit: number, offset: number) {
      return applyOrder(filtered(vis, f).select(columns), order, 'offerings.id')
        .limit(limit)
        .offset(offset)
        .execute()
    },
    /** Compiled once per form of the caller's scopes: order creation resolves an offering each time. */
    async findVisibleByUuid(vis: CatalogVisibility, uuid: string) {
      const { slotted, values, form } = slottedCatalogVisibility(vis)
      const build = () =>
        filtered(slotted, {}).select(columns).where('offerings.uuid', '=', slot(values.length))
      return (await offeringByUuid(db, form, build, [...values, uuid])).rows[0]
    },
    findByUuid(uuid: string) {
      return base().select(columns).where('offerings.uuid', '=', uuid).executeTakeFirst()
    },
    findById(id: number) {
      return base().select(columns).where('offerings.id', '=', id).executeTakeFirst()
    },
    async groupUuids(offeringIds: number[]): Promise<Map<number, string[]>> {
      const out = new Map<number, string[]>()
      if (!offeringIds.length) return out
      const rows = await db
        .selectFrom('offering_organization_groups')
        .innerJoin(
          'organization_groups',
          'organization_groups.id',
          'offering_organization_groups.organization_group_id',
        )
        .select(['offering_organization_groups.offering_id', 'organization_groups.uuid'])
        .where('offering_organization_groups.offering_id', 'in', offeringIds)
        .orderBy('organization_groups.name')
        .execute()
      for (const r of rows) out.set(r.offering_id, [...(out.get(r.offering_id) ?? []), r.uuid])
      return out
    },
    async setGroups(offeringId: number, groupIds: number[]): Promise<void> {
      await db.deleteFrom('offering_organization_groups').where('offering_id', '=', offeringId).execute()
      const unique = [...new Set(groupIds)]
      if (unique.length) {
        await db
          .insertInto('offering_organization_groups')
          .values(unique.map((g) => ({ offering_id: offeringId, organization_group_id: g })))
          .execute()
      }
    },
    async insert(values: Record<string, unknown>): Promise<number> {
      const r = await db
        .insertInto('offerings')
        .values(values as any)
        .returning('id')
        .executeTakeFirstOrThrow()
      return r.id
    },
    async update(id: number, values: Record<string, unknown>): Promise<void> {
      await db
        .updateTable('offerings')
        .set(values as any)
        .where('id', '=', id)
        .execute()
    },
    /** The conditional write of a state transition: true when this call won. */
    async updateStateIfCurrent(id: number, from: readonly string[], to: string, modified: string) {
      const r = await db
        .updateTable('offerings')
        .set({ state: to, modified })
        .where('id', '=', id)
        .where('state', 'in', [...from])
        .executeTakeFirst()
      return Number(r.numUpdatedRows) > 0
    },
    /** Deletes only while the offering is in one of `states`: true when deleted. */
    async deleteIfState(id: number, states: readonly string[]): Promise<boolean> {
      const r = await db
        .deleteFrom('offerings')
        .where('id', '=', id)
        .where('state', 'in', [...states])
        .executeTakeFirst()
      return Number(r.numDeletedRows) > 0
    },
    async countByCustomer(customerId: number, exceptStates: string[]): Promise<number> {
      const r = await db
        .selectFrom('offerings')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('customer_id', '=', customerId)
        .where('state', 'not in', exceptStates)
        .executeTakeFirstOrThrow()
      return Number(r.n)
    },
    async resourceCount(offeringId: number): Promise<number> {
      const r = await db
        .selectFrom('resources')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('offering_id', '=', offeringId)
        .executeTakeFirstOrThrow()
      return Number(r.n)
    },
    findServiceSettingsByUuid(uuid: string) {
      return db
        .selectFrom('service_settings')
        .select(['id', 'uuid', 'type', 'shared', 'customer_id'])
        .where('uuid', '=', uuid)
        .executeTakeFirst()
    },
  }
}

// ---- plans ----

export function plansRepository(db: Db) {
  function base() {
    return db.selectFrom('plans').innerJoin('offerings', 'offerings.id', 'plans.offering_id')
  }
  function filtered(vis: CatalogVisibility, f: { offering_uuid?: string; archived?: boolean }) {
    let q = base().where((eb) => offeringVisible(eb, vis))
    if (f.offering_uuid) q = q.where('offerings.uuid', '=', f.offering_uuid)
    if (f.archived !== undefined) q = q.where('plans.archived', '=', f.archived ? 1 : 0)
    return q
  }
  const columns = [
    'plans.id',
    'plans.uuid',
    'plans.offering_id',
    'plans.name',
    'plans.description',
    'plans.unit',
    'plans.unit_price',
    'plans.fixed_price',
    'plans.activation_price',
    'plans.archived',
    'plans.created',
    'offerings.uuid as offering_uuid',
    'offerings.name as offering_name',
    'offerings.customer_id as offering_customer_id',
  ] as const
  return {
    async count(vis: CatalogVisibility, f: { offering_uuid?: string; archived?: boolean }) {
      const r = await filtered(vis, f)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
      return Number(r.n)
    },
    list(
      vis: CatalogVisibility,
      f: { offering_uuid?: string; archived?: boolean },
      order: OrderTerm[],
      limit: number,
      offset: number,
    ) {
      return applyOrder(filtered(vis, f).select(columns), order, 'plans.id')
        .limit(limit)
        .offset(offset)
        .execute()
    },
    findVisibleByUuid(vis: CatalogVisibility, uuid: string) {
      return filtered(vis, {}).select(columns).where('plans.uuid', '=', uuid).executeTakeFirst()
    },
    async findByUuid(uuid: string) {
      const build = () => base().select(columns).where('plans.uuid', '=', slot(0))
      return (await planByUuid(db, '', build, [uuid])).rows[0]
    },
    findById(id: number) {
      return base().select(columns).where('plans.id', '=', id).executeTakeFirst()
    },
    listByOfferings(offeringIds: number[]) {
      if (!offeringIds.length) return Promise.resolve([])
      return base()
        .select(columns)
        .where('plans.offering_id', 'in', offeringIds)
        .orderBy('plans.created')
        .orderBy('plans.id')
        .execute()
    },
    async insert(values: Record<string, unknown>): Promise<number> {
      const r = await db
        .insertInto('plans')
        .values(values as any)
        .returning('id')
        .executeTakeFirstOrThrow()
      return r.id
    },
    async update(id: number, values: Record<string, unknown>): Promise<void> {
      await db
        .updateTable('plans')
        .set(values as any)
        .where('id', '=', id)
        .execute()
    },
    async delete(id: number): Promise<void> {
      await db.deleteFrom('plans').where('id', '=', id).execute()
    },
    async resourceCount(planId: number): Promise<number> {
      const r = await db
        .selectFrom('resources')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('plan_id', '=', planId)
        .executeTakeFirstOrThrow()
      return Number(r.n)
    },
  }
}

// ---- marketplace resources ----

export interface ResourceFilters {
  project_uuid?: string
  customer_uuid?: string
  offering_uuid?: string
  provider_uuid?: string
  category_uuid?: string
  state?: string[]
  name?: string
  query?: string
  queryUuid?: string | null
  backend_id?: string
}

export function resourcesRepository(db: Db) {
  function base() {
    return db
      .selectFrom('resources')
      .innerJoin('offerings', 'offerings.id', 'resources.offering_id')
      .innerJoin('customers as provider', 'provider.id', 'offerings.customer_id')
      .innerJoin('projects', 'projects.id', 'resources.project_id')
      .innerJoin('customers', 'customers.id', 'projects.customer_id')
      .leftJoin('plans', 'plans.id', 'resources.plan_id')
      .leftJoin('categories', 'categories.id', 'offerings.category_id')
  }
  function filtered(vis: CatalogVisibility, f: ResourceFilters) {
    let q = base()
    if (!vis.all) {
      q = q.where((eb) =>
        eb.or([
          eb('resources.project_id', 'in', none(vis.projectIds)),
          eb('projects.customer_id', 'in', none(vis.customerIds)),
          eb('offerings.customer_id', 'in', none(vis.customerIds)),
          eb('resources.offering_id', 'in', none(vis.offeringIds)),
        ]),
      )
    }
    if (f.project_uuid) q = q.where('projects.uuid', '=', f.project_uuid)
    if (f.customer_uuid) q = q.where('customers.uuid', '=', f.customer_uuid)
    if (f.offering_uuid) q = q.where('offerings.uuid', '=', f.offering_uuid)
    if (f.provider_uuid) q = q.where('provider.uuid', '=', f.provider_uuid)
    if (f.category_uuid) q = q.where('categories.uuid', '=', f.category_uuid)
    if (f.state?.length) q = q.where('resources.state', 'in', f.state)
    if (f.name) q = q.where(icontains('resources.name', f.name))
    if (f.backend_id) q = q.where('resources.backend_id', '=', f.backend_id)
    if (f.query) {
      const v = f.query
      const u = f.queryUuid
      q = q.where((eb) =>
        u
          ? eb.or([icontains('resources.name', v), eb('resources.uuid', '=', u)])
          : icontains('resources.name', v),
      )
    }
    return q
  }
  const columns = [
    'resources.id',
    'resources.uuid',
    'resources.name',
    'resources.state',
    'resources.attributes',
    'resources.limits',
    'resources.backend_id',
    'resources.resource_type',
    'resources.scope_type',
    'resources.scope_id',
    'resources.end_date',
    'resources.created',
    'resources.modified',
    'offerings.uuid as offering_uuid',
    'offerings.name as offering_name',
    'offerings.type as offering_type',
    'plans.uuid as plan_uuid',
    'plans.name as plan_name',
    'projects.uuid as project_uuid',
    'projects.name as project_name',
    'customers.uuid as customer_uuid',
    'customers.name as customer_name',
    'provider.uuid as provider_uuid',
    'provider.name as provider_name',
    'categories.uuid as category_uuid',
    'categories.title as category_title',
  ] as const
  return {
    async count(vis: CatalogVisibility, f: ResourceFilters): Promise<number> {
      const r = await filtered(vis, f)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
      return Number(r.n)
    },
    list(vis: CatalogVisibility, f: ResourceFilters, order: OrderTerm[], limit: number, offset: number) {
      return applyOrder(filtered(vis, f).select(columns), order, 'resources.id')
        .limit(limit)
        .offset(offset)
        .execute()
    },
    findVisibleByUuid(vis: CatalogVisibility, uuid: string) {
      return filtered(vis, {}).select(columns).where('resources.uuid', '=', uuid).executeTakeFirst()
    },
    findById(id: number) {
      return base().select(columns).where('resources.id', '=', id).executeTakeFirst()
    },
  }
}

// ---- backend objects linked to resources ----

/** uuid of each row id of `table` (a table with `id` and `uuid` columns). */
export async function uuidsOf(db: Db, table: string, ids: number[]): Promise<Map<number, string>> {
  const out = new Map<number, string>()
  if (!ids.length) return out
  const r = await sql<{
    id: number
    uuid: string
  }>`select id, uuid from ${sql.table(table)} where id in (${sql.join(ids)})`.execute(db)
  for (const row of r.rows) out.set(Number(row.id), row.uuid)
  return out
}
