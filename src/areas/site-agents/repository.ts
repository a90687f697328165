// All SQL of site agents: identities, their services and the services' processors, each read
// with its offering (the offering decides who sees and manages it). The services' list, the hot
// path of the agents' polling, is in `repository-service-list.ts`.
import {
  sql,
  type Expression,
  type ExpressionBuilder,
  type Kysely,
  type SqlBool,
  type Transaction,
} from 'kysely'
import { insertReturningId, reusable, slot } from '../../db/compiled.js'
import { scopedList } from '../../db/listing.js'
import { firstWhere, onlyWhere, updateRow } from '../../db/rows.js'
import { joined } from '../../db/joins.js'
import { inAnyOf } from '../../db/sql.js'
import type { DB } from '../../db/tables.js'
import { toJson } from '../../db/values.js'

export type Db = Kysely<DB> | Transaction<DB>

/**
 * What a caller sees: null, every agent; else the agents of these offerings (given by their
 * organization, `offerings.customer_id`, or by themselves, `offerings.id`).
 */
export type AgentScope = readonly (readonly [column: string, ids: readonly number[]])[] | null

export function restrict<Q extends { where: any }>(q: Q, scope: AgentScope): Q {
  if (!scope) return q
  return q.where((eb: any) => inAnyOf(eb, scope))
}

// ---- identities ----

const identityColumns = [
  'site_agent_identities.id',
  'site_agent_identities.uuid',
  'site_agent_identities.name',
  'site_agent_identities.version',
  'site_agent_identities.last_polled_at',
  'site_agent_identities.dependencies',
  'site_agent_identities.config_file_path',
  'site_agent_identities.config_file_content',
  'site_agent_identities.last_restarted_at',
  'site_agent_identities.created',
  'site_agent_identities.modified',
  'site_agent_identities.offering_id',
  'offerings.uuid as offering_uuid',
  'offerings.name as offering_name',
  'offerings.customer_id as offering_customer_id',
  'users.uuid as created_by_uuid',
] as const

/** An identity's offering, and a service's identity and offering. */
const OFFERING_OF_IDENTITY = ['inner', 'offerings', 'site_agent_identities.offering_id'] as const
const IDENTITY_OF_SERVICE = [
  ['inner', 'site_agent_identities', 'site_agent_services.identity_id'],
  OFFERING_OF_IDENTITY,
] as const

function identities(db: Db) {
  return joined(db, 'site_agent_identities', [
    OFFERING_OF_IDENTITY,
    ['left', 'users', 'site_agent_identities.created_by_id'],
  ])
}

export type IdentityRow = NonNullable<Awaited<ReturnType<typeof identityById>>>
export function identityById(db: Db, id: number) {
  return firstWhere(identities(db).select(identityColumns), 'site_agent_identities.id', id)
}

export function visibleIdentity(db: Db, scope: AgentScope, uuid: string) {
  return firstWhere(
    restrict(identities(db).select(identityColumns), scope),
    'site_agent_identities.uuid',
    uuid,
  )
}

/** The identities a scope sees, for the kit's listing (filters and order). */
export function identityList(db: Db) {
  return scopedList(
    (scope: AgentScope) => restrict(identities(db), scope),
    (q) => q.select(identityColumns),
    'site_agent_identities.id',
  )
}

/** The `orphaned` filter's condition: true, identities without services; false, those with some. */
export function orphaned(eb: ExpressionBuilder<any, any>, value: boolean): Expression<SqlBool> {
  const services = eb
    .selectFrom('site_agent_services')
    .select('site_agent_services.id')
    .whereRef('site_agent_services.identity_id', '=', 'site_agent_identities.id')
  return value ? eb.not(eb.exists(services)) : eb.exists(services)
}

/** The offering an identity would serve: who owns it and its type. */
export function offeringOf(db: Db, id: number) {
  return onlyWhere(db.selectFrom('offerings').select(['id', 'customer_id', 'type']), 'id', id)
}

export async function insertIdentity(
  db: Db,
  values: {
    uuid: string
    name: string
    offering_id: number
    version: string | null
    dependencies: string
    config_file_path: string | null
    config_file_content: string | null
    last_restarted_at: string
    last_polled_at: string | null
    created_by_id: number
    created: string
  },
): Promise<number> {
  return insertReturningId(db, 'site_agent_identities', { ...values, modified: values.created })
}

export function updateIdentity(db: Db, id: number, set: Record<string, unknown>) {
  return updateRow(db, 'site_agent_identities', id, set)
}

/** Deletes the identity, its services and their processors (in the caller's transaction). */
export async function deleteIdentity(trx: Db, id: number) {
  const services = trx.selectFrom('site_agent_services').select('id').where('identity_id', '=', id)
  await trx.deleteFrom('site_agent_processors').where('service_id', 'in', services).execute()
  await trx.deleteFrom('site_agent_services').where('identity_id', '=', id).execute()
  await trx.deleteFrom('site_agent_identities').where('id', '=', id).execute()
}

// ---- services ----

export const serviceColumns = [
  'site_agent_services.id',
  'site_agent_services.uuid',
  'site_agent_services.name',
  'site_agent_services.mode',
  'site_agent_services.state',
  'site_agent_services.statistics',
  'site_agent_services.created',
  'site_agent_services.modified',
  'site_agent_identities.uuid as identity_uuid',
  'site_agent_identities.name as identity_name',
  'site_agent_services.identity_id',
  'site_agent_identities.offering_id',
  'offerings.customer_id as offering_customer_id',
] as const

export function services(db: Db) {
  return joined(db, 'site_agent_services', IDENTITY_OF_SERVICE)
}

export type ServiceRow = NonNullable<Awaited<ReturnType<typeof serviceById>>>
export function serviceById(db: Db, id: number) {
  return firstWhere(services(db).select(serviceColumns), 'site_agent_services.id', id)
}

export function visibleService(db: Db, scope: AgentScope, uuid: string) {
  return firstWhere(restrict(services(db).select(serviceColumns), scope), 'site_agent_services.uuid', uuid)
}

/** The services of these identities, oldest first. */
export function servicesOfIdentities(db: Db, ids: number[]) {
  return services(db)
    .select(serviceColumns)
    .where('site_agent_services.identity_id', 'in', ids)
    .orderBy('site_agent_services.created')
    .orderBy('site_agent_services.id')
    .execute()
}

const processorsOf = reusable((db: Db, n: number) =>
  db
    .selectFrom('site_agent_processors')
    .selectAll()
    .where(
      'service_id',
      'in',
      Array.from({ length: n }, (_, i) => slot<number>(i)),
    )
    .orderBy('created')
    .orderBy('id'),
)

/** The processors of these services, oldest first. */
export async function processorsOfServices(db: Db, ids: number[]) {
  return ids.length ? (await processorsOf(db, [ids.length], ids)).rows : []
}

/** The id of the service or processor named `name` under its identity or service (`parent` = `parentId`). */
function idByName(
  db: Db,
  table: 'site_agent_services' | 'site_agent_processors',
  parent: 'identity_id' | 'service_id',
  parentId: number,
  name: string,
) {
  return db
    .selectFrom(table)
    .select('id')
    .where(parent as any, '=', parentId)
    .where('name', '=', name)
    .executeTakeFirst()
}

/** Inserts a service or processor created at `now`, with `stamps` after its own values. */
function insertStamped(
  db: Db,
  table: 'site_agent_services' | 'site_agent_processors',
  { now, ...rest }: { now: string },
  stamps: Record<string, unknown>,
): Promise<number> {
  return insertReturningId(db, table, { ...rest, ...stamps, created: now, modified: now })
}

export function serviceByName(trx: Db, identityId: number, name: string) {
  return idByName(trx, 'site_agent_services', 'identity_id', identityId, name)
}

/** What a service's events tell of it: its uuid and state code, and its identity's offering. */
export function serviceEventRow(db: Db, id: number) {
  return db
    .selectFrom('site_agent_services')
    .innerJoin('site_agent_identities', 'site_agent_identities.id', 'site_agent_services.identity_id')
    .innerJoin('offerings', 'offerings.id', 'site_agent_identities.offering_id')
    .select(['site_agent_services.uuid', 'site_agent_services.state', 'offerings.uuid as offering_uuid'])
    .where('site_agent_services.id', '=', id)
    .executeTakeFirst()
}

export function updateService(db: Db, id: number, set: Record<string, unknown>) {
  return updateRow(db, 'site_agent_services', id, set)
}

export async function insertService(
  trx: Db,
  values: {
    uuid: string
    identity_id: number
    name: string
    mode: string | null
    state: number
    now: string
  },
): Promise<number> {
  return insertStamped(trx, 'site_agent_services', values, { statistics: toJson({}) })
}

/** Is a job of this kind waiting to run? */
export async function hasQueuedJob(trx: Db, kind: string): Promise<boolean> {
  const queued = await trx
    .selectFrom('jobs')
    .select('id')
    .where('kind', '=', kind)
    .where('state', '=', 'queued')
    .executeTakeFirst()
  return queued !== undefined
}

/** Deletes these services and their processors (in the caller's transaction). */
export async function deleteServices(trx: Db, ids: number[]) {
  await trx.deleteFrom('site_agent_processors').where('service_id', 'in', ids).execute()
  await trx.deleteFrom('site_agent_services').where('id', 'in', ids).execute()
}

/** The services not modified since `before`, oldest first. */
export function servicesModifiedBefore(trx: Db, before: string) {
  return services(trx)
    .select(serviceColumns)
    .where('site_agent_services.modified', '<', before)
    .orderBy('site_agent_services.modified')
    .orderBy('site_agent_services.id')
    .execute()
}

/**
 * Active services whose newest processor run is at or before `threshold` become `idle`
 * (services without processors are left alone); answers how many, and whether any stays `active`.
 */
export async function markIdle(trx: Db, active: number, idle: number, threshold: string, now: string) {
  const newest = trx
    .selectFrom('site_agent_processors')
    .select((eb) => eb.fn.max('last_run').as('m'))
    .where(sql<boolean>`site_agent_processors.service_id = site_agent_services.id`)
  const idled = await trx
    .updateTable('site_agent_services')
    .set({ state: idle, modified: now })
    .where('state', '=', active)
    .where(newest, '<=', threshold)
    .returning('id')
    .execute()
  const remaining = await trx
    .selectFrom('site_agent_services')
    .select('id')
    .where('state', '=', active)
    .executeTakeFirst()
  return { idled: idled.map((r) => r.id), activeLeft: remaining !== undefined }
}

// ---- processors ----

export function processorByName(db: Db, serviceId: number, name: string) {
  return idByName(db, 'site_agent_processors', 'service_id', serviceId, name)
}

export function updateProcessor(db: Db, id: number, set: Record<string, unknown>) {
  return updateRow(db, 'site_agent_processors', id, set)
}

export async function insertProcessor(
  db: Db,
  values: {
    uuid: string
    service_id: number
    name: string
    backend_type: string
    backend_version: string | null
    now: string
  },
): Promise<number> {
  return insertStamped(db, 'site_agent_processors', values, { last_run: values.now })
}

export function processorById(db: Db, id: number) {
  return db.selectFrom('site_agent_processors').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
}

function processors(db: Db) {
  return joined(db, 'site_agent_processors', [
    ['inner', 'site_agent_services', 'site_agent_processors.service_id'],
    ...IDENTITY_OF_SERVICE,
  ])
}

/** The processors of the services a scope sees, for the kit's listing (filters and order). */
export function processorList(db: Db) {
  return scopedList(
    (scope: AgentScope) => restrict(processors(db), scope),
    (q) =>
      q
        .selectAll('site_agent_processors')
        .select(['site_agent_services.uuid as service_uuid', 'site_agent_services.name as service_name']),
    'site_agent_processors.id',
  )
}

// ---- stats ----

type Count = number | string

/**
 * The counts of the stats: identities by offering, services by state and processors by type, each
 * group with how many of its rows are stale (so the stale totals need no scan of their own).
 */
export async function statsCounts(db: Db, staleBefore: string, processorStaleBefore: string) {
  const byOffering = await identities(db)
    .select(['offerings.uuid as offering_uuid', 'offerings.name as offering_name'])
    .select((eb) => eb.fn.countAll<Count>().as('n'))
    .groupBy(['offerings.uuid', 'offerings.name'])
    .orderBy('offerings.name')
    .orderBy('offerings.uuid')
    .execute()
  const byState = await db
    .selectFrom('site_agent_services')
    .select('state')
    .select((eb) => eb.fn.countAll<Count>().as('n'))
    .select(sql<Count>`sum(case when modified < ${staleBefore} then 1 else 0 end)`.as('stale'))
    .groupBy('state')
    .execute()
  const byType = await db
    .selectFrom('site_agent_processors')
    .select('backend_type')
    .select((eb) => eb.fn.countAll<Count>().as('n'))
    .select(
      sql<Count>`sum(case when last_run is null or last_run < ${processorStaleBefore} then 1 else 0 end)`.as(
        'stale',
      ),
    )
    .groupBy('backend_type')
    .orderBy('backend_type')
    .execute()
  const staleOf = (groups: { stale: Count }[]) => groups.reduce((t, r) => t + Number(r.stale), 0)
  const staleServices = staleOf(byState)
  const staleProcessors = staleOf(byType)
  return { byOffering, byState, staleServices, byType, staleProcessors }
}
