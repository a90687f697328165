// Site agent use cases. An identity belongs to one offering; whoever may update the offering
// (staff, the provider's owners and service-provider managers, offering managers) manages its
// identities, services and processors. Staff and support read everything; others read the
// identities of offerings they manage; consumers see nothing.
import { sql, type Kysely, type Transaction } from 'kysely'
import type { AppContext } from '../../context.js'
import { countRows, pageRows } from '../../db/listing.js'
import {
  anyOf,
  applyConditions,
  formOf,
  reusable,
  reusableByForm,
  slot,
  type Condition,
} from '../../db/compiled.js'
import { EpochCache } from '../../db/epochs.js'
import { inAnyOf } from '../../db/sql.js'
import type { DB } from '../../db/tables.js'
import { parseJson, toJson } from '../../db/values.js'
import { fieldError, forbidden, notFound } from '../../http/errors.js'
import { resolveLink, resolveUuid, urlOf } from '../../http/links.js'
import { can, scopesWith, seesAll, type Actor } from '../../http/permissions.js'
import { parseDateTime } from '../../http/query.js'
import { normalizeUuid } from '../../http/uuid.js'
import {
  AGENT_OFFERING_TYPES,
  IDENTITY_PATH,
  PROCESSOR_PATH,
  SERVICE_PATH,
  stateLabel,
  type CleanupResultT,
  type Identity,
  type IdentityWrite,
  type Processor,
  type Service,
  type Stats,
} from './schema.js'

type Db = Kysely<DB> | Transaction<DB>
type Page<T> = (
  count: () => Promise<number>,
  fetch: (limit: number, offset: number) => Promise<T[]>,
) => Promise<T[]>

const IDENTITY_NOT_FOUND = 'No AgentIdentity matches the given query.'
const SERVICE_NOT_FOUND = 'No AgentService matches the given query.'
const MODIFIED = 'site_agent_services.modified'

export const ACTIVE = 1
export const IDLE = 2
/** Active services whose newest processor run is at least this old become Idle (reference §3.3). */
export const IDLE_AFTER_MS = 10 * 60 * 1000
/** How often the idle sweep runs while there are Active services. */
export const SWEEP_INTERVAL_MS = 5 * 60 * 1000
export const STALE_MS = 24 * 3600 * 1000
export const MARK_IDLE_JOB = 'site-agents.mark-idle'

// ---- visibility and permission ----

/** The offerings whose agents the caller sees: those of the organizations and offerings it may update. */
function visibleOfferings(actor: Actor) {
  const s = scopesWith(actor, 'OFFERING.UPDATE')
  return [
    ['offerings.customer_id', s.customer],
    ['offerings.id', s.offering],
  ] as const
}

function restrict<Q extends { where: any }>(q: Q, actor: Actor): Q {
  if (seesAll(actor)) return q
  return q.where((eb: any) => inAnyOf(eb, visibleOfferings(actor)))
}

function mayManage(actor: Actor, row: { offering_id: number; offering_customer_id: number }): boolean {
  return can(actor, 'OFFERING.UPDATE', { customerId: row.offering_customer_id, offeringId: row.offering_id })
}

// ---- identities ----

const identityColumns = [
  'site_agent_identities.id',
  'site_agent_identities.uuid',
  'site_agent_identities.name',
  'site_agent_identities.version',
  'site_agent_identities.last_polled_at',
  'site_agent_identities.created',
  'site_agent_identities.modified',
  'site_agent_identities.offering_id',
  'offerings.uuid as offering_uuid',
  'offerings.name as offering_name',
  'offerings.customer_id as offering_customer_id',
  'users.uuid as created_by_uuid',
] as const

function identities(db: Db) {
  return db
    .selectFrom('site_agent_identities')
    .innerJoin('offerings', 'offerings.id', 'site_agent_identities.offering_id')
    .leftJoin('users', 'users.id', 'site_agent_identities.created_by_id')
}

type IdentityRow = NonNullable<Awaited<ReturnType<typeof identityById>>>
function identityById(db: Db, id: number) {
  return identities(db).select(identityColumns).where('site_agent_identities.id', '=', id).executeTakeFirst()
}

/** The identities' records, each with its services (and their processors). */
async function toIdentities(ctx: AppContext, b: string, rows: IdentityRow[]): Promise<Identity[]> {
  const ids = rows.map((r) => r.id)
  const serviceRows = ids.length
    ? await services(ctx.db)
        .select(serviceColumns)
        .where('site_agent_services.identity_id', 'in', ids)
        .orderBy('site_agent_services.created')
        .orderBy('site_agent_services.id')
        .execute()
    : []
  const records = await toServices(ctx, b, serviceRows)
  return rows.map((r) =>
    toIdentity(
      b,
      r,
      records.filter((_, i) => serviceRows[i]!.identity_id === r.id),
    ),
  )
}

async function identityRecord(ctx: AppContext, b: string, id: number): Promise<Identity> {
  return (await toIdentities(ctx, b, [(await identityById(ctx.db, id))!]))[0]!
}

function toIdentity(b: string, r: IdentityRow, serviceRecords: Service[]): Identity {
  return {
    uuid: r.uuid,
    url: urlOf(b, IDENTITY_PATH, r.uuid)!,
    name: r.name,
    offering: urlOf(b, 'marketplace-provider-offerings', r.offering_uuid)!,
    offering_uuid: r.offering_uuid,
    offering_name: r.offering_name,
    version: r.version,
    last_polled_at: r.last_polled_at,
    created: r.created,
    modified: r.modified,
    created_by: urlOf(b, 'users', r.created_by_uuid),
    services: serviceRecords,
  }
}

async function visibleIdentity(ctx: AppContext, actor: Actor, uuid: string): Promise<IdentityRow> {
  const u = normalizeUuid(uuid)
  const row = u
    ? await restrict(identities(ctx.db).select(identityColumns), actor)
        .where('site_agent_identities.uuid', '=', u)
        .executeTakeFirst()
    : undefined
  if (!row) throw notFound(IDENTITY_NOT_FOUND)
  return row
}

export async function listIdentities(
  ctx: AppContext,
  actor: Actor,
  f: { offering_uuid?: string; name?: string },
  b: string,
  page: Page<Identity>,
) {
  const filtered = () => {
    let q = restrict(identities(ctx.db), actor)
    if (f.offering_uuid) q = q.where('offerings.uuid', '=', f.offering_uuid)
    if (f.name !== undefined) q = q.where('site_agent_identities.name', '=', f.name)
    return q
  }
  return page(
    async () =>
      Number(
        (
          await filtered()
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      ),
    async (limit, offset) =>
      toIdentities(
        ctx,
        b,
        await filtered()
          .select(identityColumns)
          .orderBy('site_agent_identities.created')
          .orderBy('site_agent_identities.id')
          .limit(limit)
          .offset(offset)
          .execute(),
      ),
  )
}

export async function getIdentity(ctx: AppContext, actor: Actor, uuid: string, b: string) {
  return (await toIdentities(ctx, b, [await visibleIdentity(ctx, actor, uuid)]))[0]!
}

/** The offering of an identity, given as its URL or as its bare uuid (as agents send it). */
async function resolveOffering(ctx: AppContext, actor: Actor, value: unknown) {
  const link = normalizeUuid(value)
    ? await resolveUuid(ctx.db, 'offering', value, 'offerings')
    : await resolveLink(ctx.db, 'offering', value, 'marketplace-provider-offerings', 'offerings')
  const o = await ctx.db
    .selectFrom('offerings')
    .select(['id', 'customer_id', 'type'])
    .where('id', '=', link.id)
    .executeTakeFirstOrThrow()
  if (!can(actor, 'OFFERING.UPDATE', { customerId: o.customer_id, offeringId: o.id })) throw forbidden()
  if (!AGENT_OFFERING_TYPES.includes(o.type)) {
    throw fieldError('offering', `Offering type ${o.type} is not served by site agents.`)
  }
  return o
}

function checkPolledAt(v: string | null | undefined): string | null | undefined {
  if (v === undefined || v === null) return v
  const p = parseDateTime(v)
  if (!p) throw fieldError('last_polled_at', 'Datetime has wrong format. Use ISO 8601.')
  return p
}

export async function createIdentity(ctx: AppContext, actor: Actor, body: IdentityWrite, b: string) {
  const o = await resolveOffering(ctx, actor, body.offering)
  const now = ctx.clock().toISOString()
  const r = await ctx.db
    .insertInto('site_agent_identities')
    .values({
      uuid: ctx.newUuid(),
      name: body.name!,
      offering_id: o.id,
      version: body.version ?? null,
      last_polled_at: checkPolledAt(body.last_polled_at) ?? null,
      created_by_id: actor.id,
      created: now,
      modified: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  return identityRecord(ctx, b, r.id)
}

export async function updateIdentity(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: IdentityWrite,
  b: string,
) {
  const row = await visibleIdentity(ctx, actor, uuid)
  if (!mayManage(actor, row)) throw forbidden()
  const set: Record<string, unknown> = { modified: ctx.clock().toISOString() }
  if (body.offering !== undefined) set.offering_id = (await resolveOffering(ctx, actor, body.offering)).id
  if (body.name !== undefined) set.name = body.name
  if (body.version !== undefined) set.version = body.version
  if (body.last_polled_at !== undefined) set.last_polled_at = checkPolledAt(body.last_polled_at)
  await ctx.db.updateTable('site_agent_identities').set(set).where('id', '=', row.id).execute()
  return identityRecord(ctx, b, row.id)
}

export async function deleteIdentity(ctx: AppContext, actor: Actor, uuid: string) {
  const row = await visibleIdentity(ctx, actor, uuid)
  if (!mayManage(actor, row)) throw forbidden()
  await ctx.db.transaction().execute(async (trx) => {
    const services = trx.selectFrom('site_agent_services').select('id').where('identity_id', '=', row.id)
    await trx.deleteFrom('site_agent_processors').where('service_id', 'in', services).execute()
    await trx.deleteFrom('site_agent_services').where('identity_id', '=', row.id).execute()
    await trx.deleteFrom('site_agent_identities').where('id', '=', row.id).execute()
  })
}

/** Makes sure one idle sweep is queued (called in the transaction that (re)activates a service). */
async function ensureSweep(ctx: AppContext, trx: Db) {
  const queued = await trx
    .selectFrom('jobs')
    .select('id')
    .where('kind', '=', MARK_IDLE_JOB)
    .where('state', '=', 'queued')
    .executeTakeFirst()
  if (!queued) {
    await ctx.jobs.enqueue(trx, MARK_IDLE_JOB, {}, { runAt: new Date(ctx.clock().getTime() + IDLE_AFTER_MS) })
  }
}

/** POST identities/{uuid}/register_service/: 201 new, 200 existing; either way the service is Active. */
export async function registerService(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: { name: string; mode?: string | null },
  b: string,
): Promise<{ created: boolean; service: Service }> {
  const identity = await visibleIdentity(ctx, actor, uuid)
  if (!mayManage(actor, identity)) throw forbidden()
  const upsert = () =>
    ctx.db.transaction().execute(async (trx) => {
      const now = ctx.clock().toISOString()
      const existing = await trx
        .selectFrom('site_agent_services')
        .select('id')
        .where('identity_id', '=', identity.id)
        .where('name', '=', body.name)
        .executeTakeFirst()
      let id: number
      if (existing) {
        const set: Record<string, unknown> = { state: ACTIVE, modified: now }
        if (body.mode !== undefined) set.mode = body.mode
        await trx.updateTable('site_agent_services').set(set).where('id', '=', existing.id).execute()
        id = existing.id
      } else {
        const r = await trx
          .insertInto('site_agent_services')
          .values({
            uuid: ctx.newUuid(),
            identity_id: identity.id,
            name: body.name,
            mode: body.mode ?? null,
            state: ACTIVE,
            statistics: toJson({}),
            created: now,
            modified: now,
          })
          .returning('id')
          .executeTakeFirstOrThrow()
        id = r.id
      }
      await ensureSweep(ctx, trx)
      return { id, created: !existing }
    })
  let r: { id: number; created: boolean }
  try {
    r = await upsert()
  } catch (e) {
    // A racing registration of the same name inserted first (unique index): now it is an update.
    r = await upsert().catch(() => {
      throw e
    })
  }
  return { created: r.created, service: await serviceRecord(ctx, b, r.id) }
}

// ---- services ----

const serviceColumns = [
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

function services(db: Db) {
  return db
    .selectFrom('site_agent_services')
    .innerJoin('site_agent_identities', 'site_agent_identities.id', 'site_agent_services.identity_id')
    .innerJoin('offerings', 'offerings.id', 'site_agent_identities.offering_id')
}

type ServiceRow = NonNullable<Awaited<ReturnType<typeof serviceRowById>>>
function serviceRowById(db: Db, id: number) {
  return services(db).select(serviceColumns).where('site_agent_services.id', '=', id).executeTakeFirst()
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

async function toServices(ctx: AppContext, b: string, rows: ServiceRow[]): Promise<Service[]> {
  const ids = rows.map((r) => r.id)
  const procs = ids.length ? (await processorsOf(ctx.db, [ids.length], ids)).rows : []
  return rows.map((r) => ({
    uuid: r.uuid,
    url: urlOf(b, SERVICE_PATH, r.uuid)!,
    identity: r.identity_uuid,
    identity_name: r.identity_name,
    name: r.name,
    mode: r.mode,
    state: stateLabel(r.state),
    statistics: parseJson(r.statistics, {}),
    created: r.created,
    modified: r.modified,
    processors: procs
      .filter((p) => p.service_id === r.id)
      .map((p) => ({
        uuid: p.uuid,
        url: urlOf(b, PROCESSOR_PATH, p.uuid)!,
        name: p.name,
        last_run: p.last_run,
        backend_type: p.backend_type,
        backend_version: p.backend_version,
        created: p.created,
        modified: p.modified,
      })),
  }))
}

async function serviceRecord(ctx: AppContext, b: string, id: number): Promise<Service> {
  return (await toServices(ctx, b, [(await serviceRowById(ctx.db, id))!]))[0]!
}

async function visibleService(ctx: AppContext, actor: Actor, uuid: string): Promise<ServiceRow> {
  const u = normalizeUuid(uuid)
  const row = u
    ? await restrict(services(ctx.db).select(serviceColumns), actor)
        .where('site_agent_services.uuid', '=', u)
        .executeTakeFirst()
    : undefined
  if (!row) throw notFound(SERVICE_NOT_FOUND)
  return row
}

export interface ServiceFilters {
  identity_uuid?: string
  mode?: string
  modified_after?: string
  modified_before?: string
  stale?: boolean
  states?: number[]
}

const serviceCountOf = reusableByForm()
const servicePageOf = reusableByForm()

/** `site_agent_services.modified <op> value`, a condition of the form `form`. */
function modifiedIs(form: string, op: '<' | '>' | '>=', value: string): Condition<any> {
  return { form, values: [value], apply: (q, [s]) => q.where(MODIFIED, op, s) }
}

/** The number of services meeting these conditions: `plain` ones read the service alone. */
async function countServices(db: Db, plain: boolean, counted: Condition<any>[]): Promise<number> {
  const { form, values } = formOf(counted)
  const build = () =>
    applyConditions<any>(plain ? db.selectFrom('site_agent_services') : services(db), counted).select(
      (eb: any) => eb.fn.countAll().as('n'),
    )
  const key = `${plain ? 'services' : 'joined'}/${form}`
  return Number((await serviceCountOf<{ n: number | string }>(db, key, build, values)).rows[0]!.n)
}

/** A total of stale services, and the time services had to be modified before to count in it. */
interface StaleTotal {
  before: string
  n: number
}

const staleTotals = new EpochCache<StaleTotal>(['site_agent_services'], 64)

/**
 * The number of services (of those meeting `own`, the service's own filters) modified before
 * `before`. While no service has been written since the last total, the services that went stale
 * since it are counted and added to it, a few index entries instead of every stale service.
 */
async function staleTotal(db: Db, own: Condition<any>[], before: string): Promise<number> {
  const range = (from: string | null): Condition<any>[] => [
    ...own,
    ...(from === null ? [] : [modifiedIs('stale-from', '>=', from)]),
    modifiedIs('stale', '<', before),
  ]
  const { form, values } = formOf(own)
  const { kept, keep } = await staleTotals.open(db, `${form}/${JSON.stringify(values)}`)
  const n =
    kept && kept.before <= before
      ? kept.n + (await countServices(db, true, range(kept.before)))
      : await countServices(db, true, range(null))
  keep({ before, n })
  return n
}

export async function listServices(
  ctx: AppContext,
  actor: Actor,
  f: ServiceFilters,
  b: string,
  page: Page<Service>,
) {
  const staleBefore = new Date(ctx.clock().getTime() - STALE_MS).toISOString()
  // The filters on the service's own columns, then those that need its identity and offering.
  const own: Condition<any>[] = []
  if (f.mode !== undefined) {
    own.push({
      form: 'mode',
      values: [f.mode],
      apply: (q, [s]) => q.where('site_agent_services.mode', '=', s),
    })
  }
  if (f.modified_after) own.push(modifiedIs('modified-after', '>', f.modified_after))
  if (f.modified_before) own.push(modifiedIs('modified-before', '<', f.modified_before))
  if (f.stale === false) own.push(modifiedIs('fresh', '>=', staleBefore))
  if (f.states?.length) {
    own.push({
      form: `states:${f.states.length}`,
      values: f.states,
      apply: (q, s) => q.where('site_agent_services.state', 'in', s),
    })
  }
  // The service's own filters but the stale rule (see staleTotal).
  const notStale = [...own]
  if (f.stale === true) own.push(modifiedIs('stale', '<', staleBefore))
  const joined: Condition<any>[] = [...own]
  if (f.identity_uuid) {
    joined.unshift({
      form: 'identity',
      values: [f.identity_uuid],
      apply: (q, [s]) => q.where('site_agent_identities.uuid', '=', s),
    })
  }
  if (!seesAll(actor)) joined.unshift(anyOf('visible', visibleOfferings(actor)))
  // Whoever sees every service counts them without the joins (the filters are the service's own).
  const plain = seesAll(actor) && !f.identity_uuid
  return page(
    async () => {
      if (plain && f.stale === true) return staleTotal(ctx.db, notStale, staleBefore)
      return countServices(ctx.db, plain, plain ? own : joined)
    },
    async (limit, offset) => {
      const { form, values } = formOf(joined)
      const build = () =>
        applyConditions<any>(services(ctx.db), joined)
          .select(serviceColumns)
          .orderBy('site_agent_services.created')
          .orderBy('site_agent_services.id')
          .limit(slot<number>(values.length))
          .offset(slot<number>(values.length + 1))
      const { rows } = await servicePageOf<ServiceRow>(ctx.db, form, build, [...values, limit, offset])
      return toServices(ctx, b, rows)
    },
  )
}

export async function getService(ctx: AppContext, actor: Actor, uuid: string, b: string) {
  const row = await visibleService(ctx, actor, uuid)
  return (await toServices(ctx, b, [row]))[0]!
}

async function managedService(ctx: AppContext, actor: Actor, uuid: string) {
  const row = await visibleService(ctx, actor, uuid)
  if (!mayManage(actor, row)) throw forbidden()
  return row
}

export async function deleteService(ctx: AppContext, actor: Actor, uuid: string) {
  const row = await managedService(ctx, actor, uuid)
  await ctx.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('site_agent_processors').where('service_id', '=', row.id).execute()
    await trx.deleteFrom('site_agent_services').where('id', '=', row.id).execute()
  })
}

/** Replaces the statistics object; answers the service. */
export async function setStatistics(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  statistics: Record<string, unknown>,
  b: string,
) {
  const row = await managedService(ctx, actor, uuid)
  await ctx.db
    .updateTable('site_agent_services')
    .set({ statistics: toJson(statistics), modified: ctx.clock().toISOString() })
    .where('id', '=', row.id)
    .execute()
  return serviceRecord(ctx, b, row.id)
}

export async function registerProcessor(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: { name: string; backend_type: string; backend_version?: string | null },
  b: string,
): Promise<{ created: boolean; processor: Processor }> {
  const service = await managedService(ctx, actor, uuid)
  const upsert = async () => {
    const now = ctx.clock().toISOString()
    const existing = await ctx.db
      .selectFrom('site_agent_processors')
      .select('id')
      .where('service_id', '=', service.id)
      .where('name', '=', body.name)
      .executeTakeFirst()
    if (existing) {
      await ctx.db
        .updateTable('site_agent_processors')
        .set({
          backend_type: body.backend_type,
          backend_version: body.backend_version ?? null,
          last_run: now,
          modified: now,
        })
        .where('id', '=', existing.id)
        .execute()
      return { id: existing.id, created: false }
    }
    const r = await ctx.db
      .insertInto('site_agent_processors')
      .values({
        uuid: ctx.newUuid(),
        service_id: service.id,
        name: body.name,
        backend_type: body.backend_type,
        backend_version: body.backend_version ?? null,
        last_run: now,
        created: now,
        modified: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow()
    return { id: r.id, created: true }
  }
  let r: { id: number; created: boolean }
  try {
    r = await upsert()
  } catch (e) {
    // A racing registration of the same name won the unique index: update instead.
    r = await upsert().catch(() => {
      throw e
    })
  }
  const p = await ctx.db
    .selectFrom('site_agent_processors')
    .selectAll()
    .where('id', '=', r.id)
    .executeTakeFirstOrThrow()
  return {
    created: r.created,
    processor: {
      uuid: p.uuid,
      url: urlOf(b, PROCESSOR_PATH, p.uuid)!,
      service: service.uuid,
      service_name: service.name,
      name: p.name,
      last_run: p.last_run,
      backend_type: p.backend_type,
      backend_version: p.backend_version,
      created: p.created,
      modified: p.modified,
    },
  }
}

/** The largest `older_than_hours` (about 114 years): beyond it, now − hours is no date at all. */
export const MAX_OLDER_THAN_HOURS = 1_000_000

// ---- processors ----

function processors(db: Db) {
  return db
    .selectFrom('site_agent_processors')
    .innerJoin('site_agent_services', 'site_agent_services.id', 'site_agent_processors.service_id')
    .innerJoin('site_agent_identities', 'site_agent_identities.id', 'site_agent_services.identity_id')
    .innerJoin('offerings', 'offerings.id', 'site_agent_identities.offering_id')
}

/** GET marketplace-site-agent-processors/: the processors of the services the caller sees. */
export async function listProcessors(
  ctx: AppContext,
  actor: Actor,
  f: { service_uuid?: string; offering_uuid?: string },
  b: string,
  page: Page<Processor>,
) {
  const filtered = () => {
    let q = restrict(processors(ctx.db), actor)
    if (f.service_uuid) q = q.where('site_agent_services.uuid', '=', f.service_uuid)
    if (f.offering_uuid) q = q.where('offerings.uuid', '=', f.offering_uuid)
    return q
  }
  return page(
    () => countRows(filtered()),
    async (limit, offset) =>
      (
        await pageRows(
          filtered()
            .selectAll('site_agent_processors')
            .select(['site_agent_services.uuid as service_uuid', 'site_agent_services.name as service_name']),
          [{ column: 'site_agent_processors.created', desc: false }],
          'site_agent_processors.id',
          limit,
          offset,
        )
      ).map((p) => ({
        uuid: p.uuid,
        url: urlOf(b, PROCESSOR_PATH, p.uuid)!,
        service: p.service_uuid,
        service_name: p.service_name,
        name: p.name,
        last_run: p.last_run,
        backend_type: p.backend_type,
        backend_version: p.backend_version,
        created: p.created,
        modified: p.modified,
      })),
  )
}

/** A processor whose last run is older than this (or that never ran) counts as stale in the stats. */
export const PROCESSOR_STALE_MS = 3600 * 1000

/** GET marketplace-site-agent-stats/ (staff and support): counts over every agent. */
export async function stats(ctx: AppContext, actor: Actor): Promise<Stats> {
  if (!seesAll(actor)) throw forbidden()
  const now = ctx.clock().getTime()
  const staleBefore = new Date(now - STALE_MS).toISOString()
  const processorStaleBefore = new Date(now - PROCESSOR_STALE_MS).toISOString()
  const byOffering = await identities(ctx.db)
    .select(['offerings.uuid as offering_uuid', 'offerings.name as offering_name'])
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .groupBy(['offerings.uuid', 'offerings.name'])
    .orderBy('offerings.name')
    .orderBy('offerings.uuid')
    .execute()
  const byState = await ctx.db
    .selectFrom('site_agent_services')
    .select('state')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .groupBy('state')
    .execute()
  const staleServices = await ctx.db
    .selectFrom('site_agent_services')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('modified', '<', staleBefore)
    .executeTakeFirstOrThrow()
  const byType = await ctx.db
    .selectFrom('site_agent_processors')
    .select('backend_type')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .groupBy('backend_type')
    .orderBy('backend_type')
    .execute()
  const staleProcessors = await ctx.db
    .selectFrom('site_agent_processors')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where((eb) => eb.or([eb('last_run', 'is', null), eb('last_run', '<', processorStaleBefore)]))
    .executeTakeFirstOrThrow()
  const inState = (code: number) => Number(byState.find((r) => Number(r.state) === code)?.n ?? 0)
  return {
    identities: {
      total: byOffering.reduce((t, r) => t + Number(r.n), 0),
      by_offering: byOffering.map((r) => ({
        offering_uuid: r.offering_uuid,
        offering_name: r.offering_name,
        count: Number(r.n),
      })),
    },
    services: {
      total: byState.reduce((t, r) => t + Number(r.n), 0),
      active: inState(1),
      idle: inState(2),
      error: inState(3),
      stale: Number(staleServices.n),
    },
    processors: {
      total: byType.reduce((t, r) => t + Number(r.n), 0),
      by_backend_type: Object.fromEntries(byType.map((r) => [r.backend_type, Number(r.n)])),
      stale: Number(staleProcessors.n),
    },
  }
}

/** Staff only (checked by the route before the body is read). */
export async function cleanupStale(
  ctx: AppContext,
  body: { dry_run?: unknown; older_than_hours?: unknown },
): Promise<CleanupResultT> {
  let dryRun = true
  if (body.dry_run !== undefined) {
    if (typeof body.dry_run !== 'boolean') throw fieldError('dry_run', 'Must be a valid boolean.')
    dryRun = body.dry_run
  }
  let hours = 24
  if (body.older_than_hours !== undefined) {
    const h = body.older_than_hours
    if (typeof h !== 'number' || !Number.isInteger(h))
      throw fieldError('older_than_hours', 'A valid integer is required.')
    if (h < 1) throw fieldError('older_than_hours', 'Ensure this value is greater than or equal to 1.')
    if (h > MAX_OLDER_THAN_HOURS)
      throw fieldError(
        'older_than_hours',
        `Ensure this value is less than or equal to ${MAX_OLDER_THAN_HOURS}.`,
      )
    hours = h
  }
  const before = new Date(ctx.clock().getTime() - hours * 3600 * 1000).toISOString()
  return ctx.db.transaction().execute(async (trx) => {
    const rows = await services(trx)
      .select(serviceColumns)
      .where('site_agent_services.modified', '<', before)
      .orderBy('site_agent_services.modified')
      .orderBy('site_agent_services.id')
      .execute()
    if (!dryRun && rows.length) {
      const ids = rows.map((r) => r.id)
      await trx.deleteFrom('site_agent_processors').where('service_id', 'in', ids).execute()
      await trx.deleteFrom('site_agent_services').where('id', 'in', ids).execute()
    }
    return {
      deleted_count: rows.length,
      dry_run: dryRun,
      items: rows.map((r) => ({
        uuid: r.uuid,
        name: r.name,
        identity_name: r.identity_name,
        // The stored state code as a string ("1"), not the label the service record shows.
        state: String(r.state),
        modified: r.modified,
      })),
    }
  })
}

/**
 * The idle sweep (reference §3.3): an Active service whose newest processor run is at least 10
 * minutes old becomes Idle (modified bumped); services without processors are skipped. While Active
 * services remain the sweep re-enqueues itself SWEEP_INTERVAL_MS later (runAt), so it runs only
 * when due and tests drive it with the clock.
 */
export async function markIdle(ctx: AppContext): Promise<number> {
  const now = ctx.clock()
  const threshold = new Date(now.getTime() - IDLE_AFTER_MS).toISOString()
  return ctx.db.transaction().execute(async (trx) => {
    const newest = trx
      .selectFrom('site_agent_processors')
      .select((eb) => eb.fn.max('last_run').as('m'))
      .where(sql<boolean>`site_agent_processors.service_id = site_agent_services.id`)
    const r = await trx
      .updateTable('site_agent_services')
      .set({ state: IDLE, modified: now.toISOString() })
      .where('state', '=', ACTIVE)
      .where(newest, '<=', threshold)
      .executeTakeFirst()
    const remaining = await trx
      .selectFrom('site_agent_services')
      .select('id')
      .where('state', '=', ACTIVE)
      .executeTakeFirst()
    if (remaining) {
      await ctx.jobs.enqueue(trx, MARK_IDLE_JOB, {}, { runAt: new Date(now.getTime() + SWEEP_INTERVAL_MS) })
    }
    return Number(r.numUpdatedRows)
  })
}
