// Site agent use cases. An identity belongs to one offering; whoever may update the offering
// (staff, the provider's owners and service-provider managers, offering managers) manages its
// identities, services and processors. Staff and support read everything; others read the
// identities of offerings they manage; consumers see nothing.
import type { AppContext } from '../../context.js'
import { pageOf, type Pager } from '../../http/resource.js'
import type { Listing } from '../../db/listing.js'
import { toJson } from '../../db/values.js'
import { fieldError, FieldErrorSet, forbidden } from '../../http/errors.js'
import { resolveLink, resolveUuid } from '../../http/links.js'
import { canAsProvider, scopesWith, seesAll, type Actor } from '../../http/permissions.js'
import { parseDateTime } from '../../http/query.js'
import { foundByUuid, normalizeUuid } from '../../http/uuid.js'
import { ACTIVE, IDLE_AFTER_MS, MARK_IDLE_JOB, STALE_MS, tellServiceState } from './maintenance.js'
import { identityRecord, serviceRecord, toIdentities, toProcessor, toServices } from './records.js'
import * as repo from './repository.js'
import * as eventSubscriptions from '../event-subscriptions/service.js'
import type { AgentEventSubscriptionCreate } from '../event-subscriptions/service.js'
import type { AgentScope, IdentityRow, ServiceRow } from './repository.js'
import { nextStale, serviceList, type ServiceFilters } from './repository-service-list.js'
import { notifiedCaches } from '../../db/change-feed.js'
import {
  AGENT_OFFERING_TYPES,
  type Identity,
  type IdentityWrite,
  type Processor,
  type Service,
} from './schema.js'

export type { ServiceFilters }

/** The models a 404 names (`No <Model> matches the given query.`). */
const IDENTITY = 'AgentIdentity'
const SERVICE = 'AgentService'

// ---- visibility and permission ----

/** The agents the caller sees: all (staff, support), or those of the offerings it may update. */
export function visibility(actor: Actor): AgentScope {
  if (seesAll(actor)) return null
  const s = scopesWith(actor, 'OFFERING.UPDATE')
  return [
    ['offerings.customer_id', s.customer],
    ['offerings.id', s.offering],
  ]
}

function mayManage(actor: Actor, row: { offering_id: number; offering_customer_id: number }): boolean {
  return canAsProvider(actor, 'OFFERING.UPDATE', {
    id: row.offering_id,
    customer_id: row.offering_customer_id,
  })
}

/** The row the actor sees by this uuid (404), when it may also manage it (403). */
async function managed<R extends { offering_id: number; offering_customer_id: number }>(
  actor: Actor,
  find: (u: string) => Promise<R | undefined>,
  uuid: string,
  model: string,
): Promise<R> {
  const row = await foundByUuid(uuid, find, model)
  if (!mayManage(actor, row)) throw forbidden()
  return row
}

const identityOf = (ctx: AppContext, scope: AgentScope) => (u: string) =>
  repo.visibleIdentity(ctx.db, scope, u)
const serviceOf = (ctx: AppContext, scope: AgentScope) => (u: string) => repo.visibleService(ctx.db, scope, u)

const managedIdentity = (ctx: AppContext, actor: Actor, uuid: string): Promise<IdentityRow> =>
  managed(actor, identityOf(ctx, visibility(actor)), uuid, IDENTITY)
const managedService = (ctx: AppContext, actor: Actor, uuid: string): Promise<ServiceRow> =>
  managed(actor, serviceOf(ctx, visibility(actor)), uuid, SERVICE)

/**
 * Runs an upsert keyed by a unique index; when a racing one inserted the same key first, runs it
 * again (now an update), answering the first error if that fails too.
 */
async function upsertOnce<T>(upsert: () => Promise<T>): Promise<T> {
  try {
    return await upsert()
  } catch (e) {
    return upsert().catch(() => {
      throw e
    })
  }
}

// ---- identities ----

export function listIdentities(
  ctx: AppContext,
  scope: AgentScope,
  listing: Listing,
  b: string,
  page: Pager<Identity>,
) {
  const list = repo.identityList(ctx.db)
  return page(
    () => list.count(scope, listing),
    async (limit, offset) => toIdentities(ctx, b, await list.list(scope, listing, limit, offset)),
  )
}

export async function getIdentity(ctx: AppContext, scope: AgentScope, uuid: string, b: string) {
  const row = await foundByUuid(uuid, identityOf(ctx, scope), IDENTITY)
  return (await toIdentities(ctx, b, [row]))[0]!
}

/** The offering of an identity, given as its URL or as its bare uuid (as agents send it). */
async function resolveOffering(ctx: AppContext, actor: Actor, value: unknown) {
  const link = normalizeUuid(value)
    ? await resolveUuid(ctx.db, 'offering', value, 'offerings')
    : await resolveLink(ctx.db, 'offering', value, 'marketplace-provider-offerings', 'offerings')
  const o = await repo.offeringOf(ctx.db, link.id)
  if (!canAsProvider(actor, 'OFFERING.UPDATE', o)) throw forbidden()
  if (!AGENT_OFFERING_TYPES.includes(o.type)) {
    throw fieldError('offering', `Offering type ${o.type} is not served by site agents.`)
  }
  return o
}

const WRONG_DATETIME = 'Datetime has wrong format. Use ISO 8601.'

/** A date-time of the body, normalized (null and undefined pass through); 400 on the field otherwise. */
function dateTime(errors: FieldErrorSet, field: string, v: string | null | undefined) {
  if (v === undefined || v === null) return v
  const p = parseDateTime(v)
  if (!p) errors.add(field, WRONG_DATETIME)
  return p ?? undefined
}

/**
 * The configuration file's path: empty (the agent's default) or an absolute Unix path without `..`
 * steps (the reference's rules; its length is capped by the schema, and a NUL character in any body
 * is refused before this).
 */
export function configPathProblem(path: string): string | null {
  if (path === '' || path.trim() === '') return null
  if (!path.startsWith('/')) return 'Path should be absolute (start with /).'
  if (path.split('/').includes('..')) return 'Path contains invalid directory traversal.'
  return null
}

/** The identity's columns a create or update writes, from the body's fields it was given. */
function identityColumns(body: IdentityWrite): Record<string, unknown> {
  const errors = new FieldErrorSet()
  const set: Record<string, unknown> = {}
  if (body.name !== undefined) set.name = body.name
  if (body.version !== undefined) set.version = body.version
  if (body.dependencies !== undefined) {
    set.dependencies = toJson(body.dependencies.map((d) => ({ package: d.package, version: d.version })))
  }
  if (body.config_file_path !== undefined) {
    const problem = body.config_file_path === null ? null : configPathProblem(body.config_file_path)
    if (problem) errors.add('config_file_path', problem)
    set.config_file_path = body.config_file_path
  }
  if (body.config_file_content !== undefined) set.config_file_content = body.config_file_content
  if (body.last_restarted !== undefined) {
    set.last_restarted_at = dateTime(errors, 'last_restarted', body.last_restarted)
  }
  if (body.last_polled_at !== undefined) {
    set.last_polled_at = dateTime(errors, 'last_polled_at', body.last_polled_at)
  }
  errors.throwIfAny()
  return set
}

export async function createIdentity(ctx: AppContext, actor: Actor, body: IdentityWrite, b: string) {
  const o = await resolveOffering(ctx, actor, body.offering)
  const set = identityColumns(body)
  const now = ctx.clock().toISOString()
  const id = await repo.insertIdentity(ctx.db, {
    uuid: ctx.newUuid(),
    name: body.name!,
    offering_id: o.id,
    version: body.version ?? null,
    dependencies: (set.dependencies as string | undefined) ?? '[]',
    config_file_path: body.config_file_path ?? null,
    config_file_content: body.config_file_content ?? null,
    // An agent registering tells when it started; without it, the registration is the start.
    last_restarted_at: (set.last_restarted_at as string | undefined) ?? now,
    last_polled_at: (set.last_polled_at as string | null | undefined) ?? null,
    created_by_id: actor.id,
    created: now,
  })
  return identityRecord(ctx, b, id)
}

export async function updateIdentity(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: IdentityWrite,
  b: string,
) {
  const row = await managedIdentity(ctx, actor, uuid)
  const offeringId =
    body.offering === undefined ? undefined : (await resolveOffering(ctx, actor, body.offering)).id
  const set: Record<string, unknown> = { ...identityColumns(body), modified: ctx.clock().toISOString() }
  if (offeringId !== undefined) set.offering_id = offeringId
  await repo.updateIdentity(ctx.db, row.id, set)
  return identityRecord(ctx, b, row.id)
}

export async function deleteIdentity(ctx: AppContext, actor: Actor, uuid: string) {
  const row = await managedIdentity(ctx, actor, uuid)
  await ctx.db.transaction().execute((trx) => repo.deleteIdentity(trx, row.id))
}

/** Makes sure one idle sweep is queued (called in the transaction that (re)activates a service). */
async function ensureSweep(ctx: AppContext, trx: repo.Db) {
  if (!(await repo.hasQueuedJob(trx, MARK_IDLE_JOB))) {
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
): Promise<{ created: boolean; record: Service }> {
  const identity = await managedIdentity(ctx, actor, uuid)
  const r = await upsertOnce(() =>
    ctx.db.transaction().execute(async (trx) => {
      const now = ctx.clock().toISOString()
      const existing = await repo.serviceByName(trx, identity.id, body.name)
      const before = existing && (await repo.serviceEventRow(trx, existing.id))
      let id: number
      if (existing) {
        const set: Record<string, unknown> = { state: ACTIVE, modified: now }
        if (body.mode !== undefined) set.mode = body.mode
        await repo.updateService(trx, existing.id, set)
        id = existing.id
      } else {
        id = await repo.insertService(trx, {
          uuid: ctx.newUuid(),
          identity_id: identity.id,
          name: body.name,
          mode: body.mode ?? null,
          state: ACTIVE,
          now,
        })
      }
      await tellServiceState(ctx, trx, id, before ? Number(before.state) : null)
      await ensureSweep(ctx, trx)
      return { id, created: !existing }
    }),
  )
  return { created: r.created, record: await serviceRecord(ctx, b, r.id) }
}

/**
 * POST identities/{uuid}/register_event_subscription/: the identity's subscription (the caller's)
 * for one object type of the identity's offering, made or found again (201 or 200).
 */
export async function registerEventSubscription(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: AgentEventSubscriptionCreate,
  sourceIp: string | null,
  b: string,
) {
  const identity = await managedIdentity(ctx, actor, uuid)
  return eventSubscriptions.registerForIdentity(
    ctx,
    actor,
    { id: identity.id, offering_uuid: identity.offering_uuid },
    body,
    sourceIp,
    b,
  )
}

// ---- services ----

/**
 * A services list's answer (a total, a page of records) kept in memory, with the time services had
 * to be modified before to count as stale when it was read (`before`) and the time the next
 * service goes stale (`until`, null: none does).
 */
interface KeptServices {
  before: string
  until: string | null
  value: unknown
}

/**
 * What the services' lists read, told by the change feed: any write to a service, a processor or
 * an identity (their epochs, raised by triggers).
 */
const SERVICE_LIST_TABLES = ['epoch site_agent_services', 'epoch site_agent_records']
/**
 * The lists of every service (staff and support: no scope), kept while the database's freshness
 * (src/db/change-feed.ts) tells no write to the services, their processors or identities, and,
 * for a list filtered by staleness, while no service has gone stale since (services go stale as
 * time passes, with no write to tell it): the agents and the dashboards poll them, and asked
 * again they cost no statement. None for a scoped list (it reads the offerings' roles too), for
 * in-memory SQLite or a transaction's handle.
 */
const keptServices = notifiedCaches<KeptServices>(SERVICE_LIST_TABLES, 256)

export function listServices(
  ctx: AppContext,
  scope: AgentScope,
  f: ServiceFilters,
  b: string,
  page: Pager<Service>,
) {
  const staleBefore = new Date(ctx.clock().getTime() - STALE_MS).toISOString()
  const list = serviceList(ctx.db, scope, f, staleBefore)
  const cache = scope === null ? keptServices(ctx.db) : undefined
  const timed = f.stale !== undefined
  /** `read`'s answer, kept by `what` (the total, a page) and the list's filters. */
  const kept = <T>(what: string, read: () => Promise<T>): Promise<T> => {
    if (!cache) return read()
    const key = `${what}\n${b}\n${JSON.stringify(f)}`
    return cache
      .get(
        key,
        async () => ({
          before: staleBefore,
          until: timed ? await nextStale(ctx.db, staleBefore) : null,
          value: await read(),
        }),
        (k) => !timed || (k.before <= staleBefore && (k.until === null || staleBefore <= k.until)),
      )
      .then((k) => k.value as T)
  }
  const counted = list.counted
  return page(
    () => kept('count', () => list.count()),
    (limit, offset) =>
      kept(`rows ${limit} ${offset}`, async () => toServices(ctx, b, await list.rows(limit, offset))),
    counted &&
      ((limit: number, offset: number) =>
        kept(`counted ${limit} ${offset}`, async () => {
          const { total, rows } = await counted(limit, offset)
          return { total, rows: await toServices(ctx, b, rows) }
        })),
  )
}

export async function getService(ctx: AppContext, scope: AgentScope, uuid: string, b: string) {
  const row = await foundByUuid(uuid, serviceOf(ctx, scope), SERVICE)
  return (await toServices(ctx, b, [row]))[0]!
}

export async function deleteService(ctx: AppContext, actor: Actor, uuid: string) {
  const row = await managedService(ctx, actor, uuid)
  await ctx.db.transaction().execute((trx) => repo.deleteServices(trx, [row.id]))
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
  await repo.updateService(ctx.db, row.id, {
    statistics: toJson(statistics),
    modified: ctx.clock().toISOString(),
  })
  return serviceRecord(ctx, b, row.id)
}

export async function registerProcessor(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: { name: string; backend_type: string; backend_version?: string | null },
  b: string,
): Promise<{ created: boolean; record: Processor }> {
  const service = await managedService(ctx, actor, uuid)
  const r = await upsertOnce(async () => {
    const now = ctx.clock().toISOString()
    const backend = { backend_type: body.backend_type, backend_version: body.backend_version ?? null }
    const existing = await repo.processorByName(ctx.db, service.id, body.name)
    if (existing) {
      await repo.updateProcessor(ctx.db, existing.id, { ...backend, last_run: now, modified: now })
      return { id: existing.id, created: false }
    }
    const id = await repo.insertProcessor(ctx.db, {
      uuid: ctx.newUuid(),
      service_id: service.id,
      name: body.name,
      ...backend,
      now,
    })
    return { id, created: true }
  })
  const p = await repo.processorById(ctx.db, r.id)
  return {
    created: r.created,
    record: toProcessor(b, p, { service_uuid: service.uuid, service_name: service.name }),
  }
}

// ---- processors ----

/** GET marketplace-site-agent-processors/: the processors of the services the caller sees. */
export function listProcessors(
  ctx: AppContext,
  scope: AgentScope,
  listing: Listing,
  b: string,
  page: Pager<Processor>,
) {
  return pageOf(page, repo.processorList(ctx.db), scope, listing, (p) => toProcessor(b, p, p))
}
