// SQL of marketplace resources: the rows each side may see (the consumer's and provider's view of
// `/api/marketplace-resources/`, the provider's of `/api/marketplace-provider-resources/`), the
// `query` search, what a record shows besides its row (endpoints, open and creating orders, the
// project's team), and the provider's writes: flags and identifiers, conditional state changes,
// endpoints and membership sync statuses. New resources get their unique slug here.
import type { Expression, ExpressionBuilder, Insertable, SqlBool } from 'kysely'
import { tableRecords } from '../../db/rows.js'
import { grantUnexpired, icontains, isPostgres, none } from '../../db/sql.js'
import { normalizeUuid } from '../../http/uuid.js'
import { joined, projectAndCustomer, unlessAll } from '../../db/joins.js'
import {
  CATEGORY_OF_OFFERING,
  OFFERING_OF_RESOURCE,
  PROVIDER_OF_OFFERING,
  visibleToProvider,
} from '../../db/relations.js'
import { nextSlug } from '../../db/slugs.js'
import type { DB } from '../../db/tables.js'
import { type CatalogVisibility, type Db } from './repository.js'

/** Order states in which an order is still open: the resource has an order in progress. */
export const OPEN_ORDER_STATES = [
  'pending-consumer',
  'pending-provider',
  'pending-project',
  'pending-start-date',
  'executing',
] as const

/** `query`: the name contains the text, or the text is the resource's uuid, slug or backend id. */
export function resourceQueryMatches(eb: ExpressionBuilder<any, any>, text: string): Expression<SqlBool> {
  const uuid = normalizeUuid(text.trim())
  const exact = [eb('resources.slug', '=', text), eb('resources.backend_id', '=', text)]
  return eb.or([
    icontains('resources.name', text),
    ...exact,
    ...(uuid ? [eb('resources.uuid', '=', uuid)] : []),
  ])
}

/** `order_state`: the resource has an order in one of these states. */
export function resourceOrderInStates(
  eb: ExpressionBuilder<any, any>,
  states: string[],
): Expression<SqlBool> {
  return eb.exists(
    eb
      .selectFrom('orders')
      .select('orders.id')
      .whereRef('orders.resource_id', '=', 'resources.id')
      .where('orders.state', 'in', states),
  )
}

/** `has_terminate_date`: the resource has (or has not) an end date. */
export function resourceHasEndDate(eb: ExpressionBuilder<any, any>, has: boolean): Expression<SqlBool> {
  return has ? eb('resources.end_date', 'is not', null) : eb('resources.end_date', 'is', null)
}

function resourceBase(db: Db) {
  return joined(db, 'resources', [
    OFFERING_OF_RESOURCE,
    PROVIDER_OF_OFFERING,
    ...projectAndCustomer('resources'),
    ['left', 'plans', 'resources.plan_id'],
    CATEGORY_OF_OFFERING,
    ['left', 'offerings as parent_offering', 'offerings.parent_id'],
    ['left', 'service_providers', 'offerings.customer_id', 'customer_id'],
    ['left', 'service_settings', 'offerings.service_settings_id'],
    ['left', 'users as end_date_requester', 'resources.end_date_requested_by_id'],
  ])
}

const columns = [
  'resources.id',
  'resources.uuid',
  'resources.name',
  'resources.slug',
  'resources.description',
  'resources.state',
  'resources.attributes',
  'resources.limits',
  'resources.backend_id',
  'resources.effective_id',
  'resources.resource_type',
  'resources.scope_type',
  'resources.scope_id',
  'resources.end_date',
  'resources.end_date_updated_at',
  'resources.backend_metadata',
  'resources.paused',
  'resources.downscaled',
  'resources.restrict_member_access',
  'resources.error_message',
  'resources.error_traceback',
  'resources.last_sync',
  'resources.options',
  'resources.current_usages',
  'resources.report',
  'resources.usage_limit_restriction',
  'resources.created',
  'resources.modified',
  'resources.project_id',
  'resources.offering_id',
  'offerings.uuid as offering_uuid',
  'offerings.name as offering_name',
  'offerings.type as offering_type',
  'offerings.description as offering_description',
  'offerings.slug as offering_slug',
  'offerings.image as offering_image',
  'offerings.thumbnail as offering_thumbnail',
  'offerings.shared as offering_shared',
  'offerings.billable as offering_billable',
  'offerings.plugin_options as offering_plugin_options',
  'offerings.backend_id as offering_backend_id',
  'offerings.state as offering_state',
  'offerings.customer_id as provider_id',
  'parent_offering.uuid as parent_offering_uuid',
  'parent_offering.name as parent_offering_name',
  'parent_offering.slug as parent_offering_slug',
  'plans.uuid as plan_uuid',
  'plans.name as plan_name',
  'plans.unit as plan_unit',
  'plans.description as plan_description',
  'projects.uuid as project_uuid',
  'projects.name as project_name',
  'projects.description as project_description',
  'projects.slug as project_slug',
  'projects.end_date as project_end_date',
  'customers.id as customer_id',
  'customers.uuid as customer_uuid',
  'customers.name as customer_name',
  'customers.slug as customer_slug',
  'customers.blocked as customer_blocked',
  'customers.archived as customer_archived',
  'provider.uuid as provider_uuid',
  'provider.name as provider_name',
  'provider.slug as provider_slug',
  'service_providers.description as provider_description',
  'categories.uuid as category_uuid',
  'categories.title as category_title',
  'categories.icon as category_icon',
  'service_settings.uuid as service_settings_uuid',
  'end_date_requester.uuid as end_date_requested_by_uuid',
] as const

/**
 * The consumer's and provider's view (`/api/marketplace-resources/`): the resources of the
 * caller's projects and customers, and of the offerings its organizations provide or it manages.
 */
export function resourcesRepository(db: Db) {
  const base = () => resourceBase(db)
  const visible = unlessAll(base, (q, vis: Extract<CatalogVisibility, { all: false }>) =>
    q.where((eb) =>
      eb.or([
        eb('resources.project_id', 'in', none(vis.projectIds)),
        eb('projects.customer_id', 'in', none(vis.customerIds)),
        eb('offerings.customer_id', 'in', none(vis.customerIds)),
        eb('resources.offering_id', 'in', none(vis.offeringIds)),
      ]),
    ),
  )
  return tableRecords(db, { table: 'resources', base, visible, select: (q) => q.select(columns) })
}

/**
 * The provider's view (`/api/marketplace-provider-resources/`): the resources of the offerings of
 * the organizations the caller holds a customer role in, and of the offerings it manages.
 */
export function providerResourcesRepository(db: Db) {
  const base = () => resourceBase(db)
  return tableRecords(db, {
    table: 'resources',
    base,
    visible: visibleToProvider(base),
    select: (q) => q.select(columns),
  })
}

export type ResourceRow = NonNullable<Awaited<ReturnType<ReturnType<typeof resourcesRepository>['findById']>>>

/** What a record shows besides its row, read for a page of resources at once. */
export function resourceDetailsRepository(db: Db) {
  return {
    /** Each resource's endpoints, oldest first. */
    async endpointsOf(ids: readonly number[]) {
      const out = new Map<number, { uuid: string; name: string; url: string }[]>()
      if (!ids.length) return out
      const rows = await db
        .selectFrom('resource_endpoints')
        .select(['resource_id', 'uuid', 'name', 'url'])
        .where('resource_id', 'in', [...ids])
        .orderBy('id')
        .execute()
      for (const r of rows) {
        out.set(r.resource_id, [
          ...(out.get(r.resource_id) ?? []),
          { uuid: r.uuid, name: r.name, url: r.url },
        ])
      }
      return out
    },
    /** Each resource's open order (the newest, should there be several), by resource id. */
    async openOrdersOf(ids: readonly number[]): Promise<Map<number, number>> {
      const out = new Map<number, number>()
      if (!ids.length) return out
      const rows = await db
        .selectFrom('orders')
        .select(['id', 'resource_id'])
        .where('resource_id', 'in', [...ids])
        .where('state', 'in', [...OPEN_ORDER_STATES])
        .orderBy('id')
        .execute()
      for (const r of rows) out.set(r.resource_id!, r.id)
      return out
    },
    /** The Create order of a resource, if it has one. */
    async creationOrderOf(id: number): Promise<number | undefined> {
      const r = await db
        .selectFrom('orders')
        .select('id')
        .where('resource_id', '=', id)
        .where('type', '=', 'Create')
        .orderBy('id')
        .executeTakeFirst()
      return r?.id
    },
  }
}

/** What a resource's events tell of it (see service-resources.ts, `tellResourceChanges`). */
export interface ResourceEventRow {
  uuid: string
  state: string
  limits: unknown
  backend_id: string | null
  end_date: string | null
  project_uuid: string
  plan_uuid: string | null
  offering_uuid: string
  customer_uuid: string
}

/** A resource row's told values, as selected from (or returned by an UPDATE of) `resources`. */
function toldAfter(eb: ExpressionBuilder<DB, 'resources'>) {
  return [
    'resources.uuid',
    'resources.state',
    'resources.limits',
    'resources.backend_id',
    'resources.end_date',
    eb
      .selectFrom('projects')
      .select('projects.uuid')
      .whereRef('projects.id', '=', 'resources.project_id')
      .$asScalar()
      .$notNull()
      .as('project_uuid'),
    eb
      .selectFrom('plans')
      .select('plans.uuid')
      .whereRef('plans.id', '=', 'resources.plan_id')
      .as('plan_uuid'),
    eb
      .selectFrom('offerings')
      .select('offerings.uuid')
      .whereRef('offerings.id', '=', 'resources.offering_id')
      .$asScalar()
      .$notNull()
      .as('offering_uuid'),
    eb
      .selectFrom('projects')
      .innerJoin('customers', 'customers.id', 'projects.customer_id')
      .select('customers.uuid')
      .whereRef('projects.id', '=', 'resources.project_id')
      .$asScalar()
      .$notNull()
      .as('customer_uuid'),
  ] as const
}

/** The writes of marketplace resources. */
export function resourcesWriteRepository(db: Db) {
  return {
    /**
     * Writes `values` on the resource `id` if its state is one of `from` (any state when null) and
     * answers its told values before and after the write; undefined when nothing was written.
     * PostgreSQL does it in one statement: the row is locked and read as it was (the FROM
     * subquery, `FOR UPDATE`) and the UPDATE answers both. SQLite (one writer at a time, so
     * nothing changes between the two) reads the row before, and the UPDATE answers the after.
     */
    async writeTold(
      id: number,
      from: readonly string[] | null,
      values: Record<string, unknown>,
    ): Promise<{ before: ResourceEventRow; after: ResourceEventRow } | undefined> {
      if (isPostgres(db)) {
        const old = db
          .selectFrom('resources')
          .innerJoin('projects', 'projects.id', 'resources.project_id')
          .innerJoin('customers', 'customers.id', 'projects.customer_id')
          .innerJoin('offerings', 'offerings.id', 'resources.offering_id')
          .leftJoin('plans', 'plans.id', 'resources.plan_id')
          .select([
            'resources.id',
            'resources.state',
            'resources.limits',
            'resources.backend_id',
            'resources.end_date',
            'projects.uuid as project_uuid',
            'plans.uuid as plan_uuid',
            'offerings.uuid as offering_uuid',
            'customers.uuid as customer_uuid',
          ])
          .where('resources.id', '=', id)
          .forUpdate('resources')
        let q = db
          .updateTable('resources')
          .set(values as any)
          .from(old.as('old'))
          .whereRef('resources.id', '=', 'old.id')
        if (from) q = q.where('resources.state', 'in', [...from])
        const r = await q
          .returning((eb) => [
            ...toldAfter(eb),
            'old.state as old_state',
            'old.limits as old_limits',
            'old.backend_id as old_backend_id',
            'old.end_date as old_end_date',
            'old.project_uuid as old_project_uuid',
            'old.plan_uuid as old_plan_uuid',
            'old.offering_uuid as old_offering_uuid',
            'old.customer_uuid as old_customer_uuid',
          ])
          .executeTakeFirst()
        if (!r) return undefined
        return {
          before: {
            uuid: r.uuid,
            state: r.old_state,
            limits: r.old_limits,
            backend_id: r.old_backend_id,
            end_date: r.old_end_date,
            project_uuid: r.old_project_uuid,
            plan_uuid: r.old_plan_uuid,
            offering_uuid: r.old_offering_uuid,
            customer_uuid: r.old_customer_uuid,
          },
          after: r,
        }
      }
      const before = await db
        .selectFrom('resources')
        .select((eb) => toldAfter(eb))
        .where('resources.id', '=', id)
        .executeTakeFirst()
      if (!before) return undefined
      let q = db
        .updateTable('resources')
        .set(values as any)
        .where('resources.id', '=', id)
      if (from) q = q.where('resources.state', 'in', [...from])
      const after = await q.returning((eb) => toldAfter(eb)).executeTakeFirst()
      return after && { before, after }
    },
    /**
     * Inserts a resource with the next slug of `slugBase` (`<base>-<n>`): should a slug a staff
     * member set take that number, the next one is tried.
     */
    async insert(
      values: Omit<Insertable<DB['resources']>, 'slug'>,
      slugBase: string,
    ): Promise<{ id: number; slug: string }> {
      for (;;) {
        const slug = await nextSlug(db, 'resources', slugBase)
        const row = await db
          .insertInto('resources')
          .values({ ...values, slug })
          .onConflict((oc) => oc.column('slug').doNothing())
          .returning('id')
          .executeTakeFirst()
        if (row) return { id: row.id, slug }
      }
    },
    async update(id: number, values: Record<string, unknown>): Promise<void> {
      await db
        .updateTable('resources')
        .set(values as any)
        .where('id', '=', id)
        .execute()
    },
    /** Another resource of the offering, not terminated, already known by this backend id? */
    async backendIdTaken(offeringId: number, backendId: string, exceptId: number): Promise<boolean> {
      const r = await db
        .selectFrom('resources')
        .select('id')
        .where('offering_id', '=', offeringId)
        .where('backend_id', '=', backendId)
        .where('state', '!=', 'Terminated')
        .where('id', '!=', exceptId)
        .executeTakeFirst()
      return !!r
    },
    /** Another resource with this slug? */
    async slugTaken(slug: string, exceptId: number): Promise<boolean> {
      const r = await db
        .selectFrom('resources')
        .select('id')
        .where('slug', '=', slug)
        .where('id', '!=', exceptId)
        .executeTakeFirst()
      return !!r
    },
    /** Replaces the resource's endpoints. */
    async replaceEndpoints(
      id: number,
      endpoints: readonly { uuid: string; name: string; url: string }[],
      now: string,
    ): Promise<void> {
      await db.deleteFrom('resource_endpoints').where('resource_id', '=', id).execute()
      if (!endpoints.length) return
      await db
        .insertInto('resource_endpoints')
        .values(endpoints.map((e) => ({ ...e, resource_id: id, created: now, modified: now })))
        .execute()
    },
    /** Replaces the resource's membership sync statuses. */
    async replaceMemberSyncStatuses(
      id: number,
      rows: readonly Omit<Insertable<DB['resource_member_sync_statuses']>, 'resource_id'>[],
    ): Promise<void> {
      await db.deleteFrom('resource_member_sync_statuses').where('resource_id', '=', id).execute()
      if (!rows.length) return
      await db
        .insertInto('resource_member_sync_statuses')
        .values(rows.map((r) => ({ ...r, resource_id: id })))
        .execute()
    },
  }
}

/** Users and projects named by a provider's report, and a project's team. */
export function resourcePeopleRepository(db: Db) {
  return {
    async usersByUuid(uuids: readonly string[]): Promise<Map<string, number>> {
      if (!uuids.length) return new Map()
      const rows = await db
        .selectFrom('users')
        .select(['id', 'uuid'])
        .where('uuid', 'in', [...uuids])
        .execute()
      return new Map(rows.map((r) => [r.uuid, r.id]))
    },
    async usersByUsername(names: readonly string[]): Promise<Map<string, number>> {
      if (!names.length) return new Map()
      const rows = await db
        .selectFrom('users')
        .select(['id', 'username'])
        .where('username', 'in', [...names])
        .execute()
      return new Map(rows.map((r) => [r.username, r.id]))
    },
    async projectsByUuid(uuids: readonly string[]): Promise<Map<string, number>> {
      if (!uuids.length) return new Map()
      const rows = await db
        .selectFrom('projects')
        .select(['id', 'uuid'])
        .where('uuid', 'in', [...uuids])
        .execute()
      return new Map(rows.map((r) => [r.uuid, r.id]))
    },
    /**
     * The users holding a role in force on the project, by username, each with the grant it got
     * first (its role and expiration time).
     */
    async projectTeam(projectId: number, now: string) {
      return db
        .selectFrom('user_roles')
        .innerJoin('users', 'users.id', 'user_roles.user_id')
        .innerJoin('roles', 'roles.id', 'user_roles.role_id')
        .select([
          'users.id',
          'users.uuid',
          'users.username',
          'users.full_name',
          'users.email',
          'roles.name as role',
          'user_roles.expiration_time',
        ])
        .where('user_roles.scope_type', '=', 'project')
        .where('user_roles.scope_id', '=', projectId)
        .where('user_roles.is_active', '=', 1)
        .where((eb) => grantUnexpired(eb, now))
        .orderBy('users.username')
        .orderBy('user_roles.id')
        .execute()
    },
  }
}
