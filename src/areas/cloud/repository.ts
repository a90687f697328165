// SQL of the shared cloud base: service settings and the common record of cloud resources (the
// emulator's durable state is in emulator-repository.ts).
import { sql, type ExpressionBuilder, type Kysely, type SelectQueryBuilder, type Transaction } from 'kysely'
import type { DB } from '../../db/tables.js'
import { countRows } from '../../db/listing.js'
import { icontains, inAnyOf, isPostgres } from '../../db/sql.js'
import { perDatabase, reusable, slot } from '../../db/compiled.js'
import { tableRecords, updateRow } from '../../db/rows.js'
import { joined, unlessAll } from '../../db/joins.js'
import { insertReturningId } from '../../db/compiled.js'

type Db = Kysely<DB> | Transaction<DB>

/** Staff and support see every settings; others the shared ones and their customers' own. */
export type SettingsVisibility = { all: true } | { all: false; customerIds: number[] }

/** Service settings (`service_settings` joined) visible to these customers: shared ones and their own. */
export function settingsVisibleTo(eb: any, customerIds: number[]): any {
  return customerIds.length
    ? eb.or([eb('service_settings.shared', '=', 1), eb('service_settings.customer_id', 'in', customerIds)])
    : eb('service_settings.shared', '=', 1)
}

/** `visible(scope)` of rows joined with their `service_settings`: those whose settings the caller may see. */
export function visibleWithSettings<Q extends SelectQueryBuilder<any, any, any>>(base: () => Q) {
  return unlessAll(
    base,
    (q, vis: { customerIds: number[] }): Q => q.where((eb) => settingsVisibleTo(eb, vis.customerIds)) as Q,
  )
}

export function serviceSettingsRepository(db: Db) {
  const base = () => joined(db, 'service_settings', [['left', 'customers', 'service_settings.customer_id']])
  const visible = visibleWithSettings(base)
  const columns = [
    'service_settings.id',
    'service_settings.uuid',
    'service_settings.name',
    'service_settings.type',
    'service_settings.shared',
    'service_settings.customer_id',
    'service_settings.state',
    'service_settings.error_message',
    'service_settings.options',
    'service_settings.created',
    'service_settings.modified',
    'customers.uuid as customer_uuid',
    'customers.name as customer_name',
  ] as const
  const records = tableRecords(db, {
    table: 'service_settings',
    base,
    visible,
    select: (q) => q.select(columns),
  })
  return {
    ...records,
    insert(values: {
      uuid: string
      name: string
      type: string
      shared: number
      customer_id: number | null
      options: string
      created: string
      modified: string
    }): Promise<number> {
      return records.insert({ ...values, state: 'OK', error_message: '' })
    },
    /** How many cloud resources use these settings. */
    countResources(id: number): Promise<number> {
      return countRows(db.selectFrom('cloud_resources').where('service_settings_id', '=', id))
    },
  }
}

export type SettingsRow = NonNullable<
  Awaited<ReturnType<ReturnType<typeof serviceSettingsRepository>['findById']>>
>

// ---- cloud resources: the common record ----

/** Staff and support see every resource; others those of connected customers and projects. */
export type ResourceVisibility = { all: true } | { all: false; customerIds: number[]; projectIds: number[] }

/** Where the actor may manage resources (RESOURCE.MANAGE), for `can_manage`. */
export type ManageScopes = { all: true } | { all: false; customerIds: number[]; projectIds: number[] }

export interface CommonFilters {
  /** null: a filter that matches nothing. */
  customer_uuid?: string | null
  customer_name?: string
  customer_native_name?: string
  customer_abbreviation?: string
  project_uuid?: string | null
  project_name?: string
  service_settings_name?: string
  service_settings_uuid?: string
  name?: string
  name_exact?: string
  description?: string
  backend_id?: string
  states?: string[]
  uuid?: string
  can_manage?: ManageScopes
}

/**
 * Objects of these customers' projects or of these projects (`projects` joined on the object's
 * project column).
 */
export function inScopes(
  eb: any,
  scopes: { customerIds: number[]; projectIds: number[] },
  projectColumn = 'cloud_resources.project_id',
): any {
  return inAnyOf(eb, [
    ['projects.customer_id', scopes.customerIds],
    [projectColumn, scopes.projectIds],
  ])
}

/**
 * The common record's joins: service settings, project, customer and the marketplace resource
 * whose scope is this object (the newest one, if several), with its offering, plan and category.
 */
export function cloudResourcesBase(db: Db, resourceType: string) {
  return db
    .selectFrom('cloud_resources')
    .innerJoin('service_settings', 'service_settings.id', 'cloud_resources.service_settings_id')
    .innerJoin('projects', 'projects.id', 'cloud_resources.project_id')
    .innerJoin('customers', 'customers.id', 'projects.customer_id')
    .leftJoin('resources as mr', (j) =>
      j.on(
        sql<boolean>`mr.id = (select max(r2.id) from resources r2 where r2.scope_type = cloud_resources.resource_type and r2.scope_id = cloud_resources.id)`,
      ),
    )
    .leftJoin('offerings as mo', 'mo.id', 'mr.offering_id')
    .leftJoin('plans as mp', 'mp.id', 'mr.plan_id')
    .leftJoin('categories as mc', 'mc.id', 'mo.category_id')
    .where('cloud_resources.resource_type', '=', resourceType)
}

export type CloudResourcesQuery = ReturnType<typeof cloudResourcesBase>

export const COMMON_COLUMNS = [
  'cloud_resources.id',
  'cloud_resources.uuid',
  'cloud_resources.resource_type',
  'cloud_resources.name',
  'cloud_resources.description',
  'cloud_resources.state',
  'cloud_resources.error_message',
  'cloud_resources.error_traceback',
  'cloud_resources.backend_id',
  'cloud_resources.access_url',
  'cloud_resources.runtime_state',
  'cloud_resources.created',
  'cloud_resources.modified',
  'cloud_resources.service_settings_id',
  'cloud_resources.project_id',
  'service_settings.uuid as service_settings_uuid',
  'service_settings.name as service_settings_name',
  'service_settings.state as service_settings_state',
  'service_settings.error_message as service_settings_error_message',
  'projects.uuid as project_uuid',
  'projects.name as project_name',
  'projects.customer_id',
  'customers.uuid as customer_uuid',
  'customers.name as customer_name',
  'customers.native_name as customer_native_name',
  'customers.abbreviation as customer_abbreviation',
  'mr.uuid as marketplace_resource_uuid',
  'mr.state as marketplace_resource_state',
  'mo.uuid as marketplace_offering_uuid',
  'mo.name as marketplace_offering_name',
  'mo.type as marketplace_offering_type',
  'mo.plugin_options as marketplace_offering_plugin_options',
  'mp.uuid as marketplace_plan_uuid',
  'mc.uuid as marketplace_category_uuid',
  'mc.title as marketplace_category_name',
] as const

export function applyResourceVisibility(
  q: CloudResourcesQuery,
  vis: ResourceVisibility,
): CloudResourcesQuery {
  if (vis.all) return q
  return q.where((eb) => inScopes(eb, vis))
}

export function applyCommonFilters(q: CloudResourcesQuery, f: CommonFilters): CloudResourcesQuery {
  if (f.customer_uuid === null || f.project_uuid === null) return q.where(sql<boolean>`1 = 0`)
  if (f.customer_uuid) q = q.where('customers.uuid', '=', f.customer_uuid)
  if (f.customer_name) q = q.where(icontains('customers.name', f.customer_name))
  if (f.customer_native_name) q = q.where(icontains('customers.native_name', f.customer_native_name))
  if (f.customer_abbreviation) q = q.where(icontains('customers.abbreviation', f.customer_abbreviation))
  if (f.project_uuid) q = q.where('projects.uuid', '=', f.project_uuid)
  if (f.project_name) q = q.where(icontains('projects.name', f.project_name))
  if (f.service_settings_name) q = q.where(icontains('service_settings.name', f.service_settings_name))
  if (f.service_settings_uuid) q = q.where('service_settings.uuid', '=', f.service_settings_uuid)
  if (f.name) q = q.where(icontains('cloud_resources.name', f.name))
  if (f.name_exact !== undefined) q = q.where('cloud_resources.name', '=', f.name_exact)
  if (f.description) q = q.where(icontains('cloud_resources.description', f.description))
  if (f.backend_id !== undefined) q = q.where('cloud_resources.backend_id', '=', f.backend_id)
  if (f.states?.length) q = q.where('cloud_resources.state', 'in', f.states)
  if (f.uuid) q = q.where('cloud_resources.uuid', '=', f.uuid)
  const manage = f.can_manage
  if (manage && !manage.all) q = q.where((eb) => inScopes(eb, manage))
  return q
}

/** The resources of one type this scope may see, with the common filters applied. */
export function visibleResources(
  db: Db,
  resourceType: string,
  vis: ResourceVisibility,
  f: CommonFilters,
): CloudResourcesQuery {
  return applyCommonFilters(applyResourceVisibility(cloudResourcesBase(db, resourceType), vis), f)
}

/**
 * One resource of a type, by id or uuid, if visible: the shape of a query compiled once by
 * `reusable` (variant: `oneResourceVariant`; parameters: `oneResourceParams`). The parameters are
 * the resource type, the id or uuid, then the visible customer and project ids (customers = -1:
 * everything is visible).
 */
export function oneResource(db: Db, by: 'id' | 'uuid', customers: number, projects: number) {
  let q = cloudResourcesBase(db, slot(0))
  if (customers >= 0) {
    const scopes = {
      customerIds: Array.from({ length: customers }, (_, i) => slot<number>(2 + i)),
      projectIds: Array.from({ length: projects }, (_, i) => slot<number>(2 + customers + i)),
    }
    q = q.where((eb) => inScopes(eb, scopes))
  }
  return q.where(by === 'id' ? 'cloud_resources.id' : 'cloud_resources.uuid', '=', slot(1))
}

export type OneResourceWhere = { id: number } | { uuid: string }

export function oneResourceVariant(where: OneResourceWhere, vis: ResourceVisibility) {
  return [
    'id' in where ? 'id' : 'uuid',
    vis.all ? -1 : vis.customerIds.length,
    vis.all ? 0 : vis.projectIds.length,
  ] as ['id' | 'uuid', number, number]
}

export function oneResourceParams(resourceType: string, where: OneResourceWhere, vis: ResourceVisibility) {
  const value = 'id' in where ? where.id : where.uuid
  return vis.all ? [resourceType, value] : [resourceType, value, ...vis.customerIds, ...vis.projectIds]
}

/** What a cloud resource's events tell of it: its kind, uuid, state and the uuids of its scopes. */
export interface CloudEventRow {
  uuid: string
  resource_type: string
  state: string
  /** Its marketplace resource's offering, else its parent's (a tenant's objects: their tenant's). */
  offering_uuid: string | null
  project_uuid: string
  customer_uuid: string
}

/**
 * The offering of the newest marketplace resource whose scope is the row (as `mr` of the common
 * record), else of the one whose scope is its parent.
 */
const OFFERING_OF_ROW = sql<string | null>`coalesce(
  (select o.uuid from resources r inner join offerings o on o.id = r.offering_id
    where r.scope_type = cloud_resources.resource_type and r.scope_id = cloud_resources.id
    order by r.id desc limit 1),
  (select o.uuid from cloud_resources p
    inner join resources r on r.scope_type = p.resource_type and r.scope_id = p.id
    inner join offerings o on o.id = r.offering_id
    where p.id = cloud_resources.parent_id
    order by r.id desc limit 1))`

/** A cloud resource row's told values, selected from (or returned by a write of) `cloud_resources`. */
function told(eb: ExpressionBuilder<DB, 'cloud_resources'>) {
  return [
    'cloud_resources.uuid',
    'cloud_resources.resource_type',
    'cloud_resources.state',
    OFFERING_OF_ROW.as('offering_uuid'),
    eb
      .selectFrom('projects')
      .select('projects.uuid')
      .whereRef('projects.id', '=', 'cloud_resources.project_id')
      .$asScalar()
      .$notNull()
      .as('project_uuid'),
    eb
      .selectFrom('projects')
      .innerJoin('customers', 'customers.id', 'projects.customer_id')
      .select('customers.uuid')
      .whereRef('projects.id', '=', 'cloud_resources.project_id')
      .$asScalar()
      .$notNull()
      .as('customer_uuid'),
  ] as const
}

const commonBy = reusable((db: Db, by: 'id' | 'uuid', customers: number, projects: number) =>
  oneResource(db, by, customers, projects).select(COMMON_COLUMNS),
)

/** Built once per database handle or transaction (`perDatabase`). */
export const cloudResourcesRepository = perDatabase((db: Db) => {
  return {
    /** One common row by id or uuid, if visible. The query is compiled once per shape. */
    async findCommon(resourceType: string, where: OneResourceWhere, vis: ResourceVisibility) {
      const { rows } = await commonBy(
        db,
        oneResourceVariant(where, vis),
        oneResourceParams(resourceType, where, vis),
      )
      return rows[0]
    },
    findById(id: number) {
      return db.selectFrom('cloud_resources').selectAll().where('id', '=', id).executeTakeFirst()
    },
    insert(values: {
      uuid: string
      resource_type: string
      name: string
      description: string
      service_settings_id: number
      project_id: number
      parent_id?: number | null
      state: string
      backend_id?: string
      runtime_state?: string
      created: string
      modified: string
    }): Promise<number> {
      return insertReturningId(db, 'cloud_resources', values)
    },
    /**
     * The conditional transition: moves the row to `to` with `values` if its state is one of
     * `from` (any when null); its state before and its told values after, or undefined when it
     * was elsewhere. PostgreSQL does it in one statement (the row locked and read as it was in
     * the FROM subquery); SQLite, one writer at a time, reads the state first.
     */
    async moveState(
      id: number,
      from: readonly string[] | null,
      to: string,
      values: Record<string, unknown> = {},
    ): Promise<{ before: string; after: CloudEventRow } | undefined> {
      const set = { ...(values as any), state: to }
      if (isPostgres(db)) {
        const old = db.selectFrom('cloud_resources').select(['id', 'state']).where('id', '=', id).forUpdate()
        let q = db
          .updateTable('cloud_resources')
          .set(set)
          .from(old.as('old'))
          .whereRef('cloud_resources.id', '=', 'old.id')
        if (from) q = q.where('cloud_resources.state', 'in', [...from])
        const r = await q.returning((eb) => [...told(eb), 'old.state as before']).executeTakeFirst()
        return r && { before: r.before, after: r }
      }
      const was = await db
        .selectFrom('cloud_resources')
        .select('state')
        .where('id', '=', id)
        .executeTakeFirst()
      if (!was || (from && !from.includes(was.state))) return undefined
      const after = await db
        .updateTable('cloud_resources')
        .set(set)
        .where('id', '=', id)
        .returning((eb) => told(eb))
        .executeTakeFirst()
      return after && { before: was.state, after }
    },
    /** Writes columns that are not the state (the state goes through `moveState`). */
    update(id: number, values: Record<string, unknown>): Promise<void> {
      if ('state' in values) throw new Error('a cloud resource state is written by moveState')
      return updateRow(db, 'cloud_resources', id, values)
    },
    /** Deletes the rows; their told values as they were. */
    async deleteTold(ids: readonly number[]): Promise<CloudEventRow[]> {
      if (!ids.length) return []
      return db
        .deleteFrom('cloud_resources')
        .where('id', 'in', [...ids])
        .returning((eb) => told(eb))
        .execute()
    },
    /** The told values of a row (after an insert). */
    told(id: number): Promise<CloudEventRow | undefined> {
      return db
        .selectFrom('cloud_resources')
        .select((eb) => told(eb))
        .where('id', '=', id)
        .executeTakeFirst()
    },
  }
})

export type CommonRow = NonNullable<
  Awaited<ReturnType<ReturnType<typeof cloudResourcesRepository>['findCommon']>>
>
