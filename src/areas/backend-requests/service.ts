// Backend resource request use cases. Staff create them for an offering; the offering's site agent
// (acting as a user holding OFFERING.MANAGE_BACKEND_RESOURCES on the offering or its provider)
// moves them along Sent → Processing → Done, or reports Erred from any state.
import type { AppContext } from '../../context.js'
import { inAnyOf } from '../../db/sql.js'
import { fieldError, forbidden, invalidState, notFound } from '../../http/errors.js'
import { urlOf } from '../../http/links.js'
import { requireStaff, can, customerIds, offeringIds, seesAll, type Actor } from '../../http/permissions.js'
import type { OrderTerm } from '../../http/query.js'
import { normalizeUuid } from '../../http/uuid.js'
import { PATH, type BackendRequest } from './schema.js'
import { STATUS_MESSAGES, TRANSITIONS, type Action } from './state-machine.js'

const NOT_FOUND = 'No BackendResourceRequest matches the given query.'

export interface Filters {
  offering_uuid?: string
  states?: string[]
  created?: string
  modified?: string
  started?: string
  finished?: string
}

type Page = (
  count: () => Promise<number>,
  fetch: (limit: number, offset: number) => Promise<BackendRequest[]>,
) => Promise<BackendRequest[]>

const columns = [
  'backend_resource_requests.id',
  'backend_resource_requests.uuid',
  'backend_resource_requests.state',
  'backend_resource_requests.started',
  'backend_resource_requests.finished',
  'backend_resource_requests.error_message',
  'backend_resource_requests.error_traceback',
  'backend_resource_requests.created',
  'backend_resource_requests.modified',
  'backend_resource_requests.offering_id',
  'offerings.uuid as offering_uuid',
  'offerings.name as offering_name',
  'offerings.customer_id as offering_customer_id',
] as const

function base(ctx: AppContext) {
  return ctx.db
    .selectFrom('backend_resource_requests')
    .innerJoin('offerings', 'offerings.id', 'backend_resource_requests.offering_id')
}

/** Staff and support see all; otherwise the provider side: the offering's organization or offering roles. */
function visible(ctx: AppContext, actor: Actor) {
  const q = base(ctx)
  if (seesAll(actor)) return q
  return q.where((eb) =>
    inAnyOf(eb, [
      ['offerings.customer_id', customerIds(actor)],
      ['offerings.id', offeringIds(actor)],
    ]),
  )
}

type Row = Awaited<ReturnType<typeof findRow>>

async function findRow(ctx: AppContext, uuid: string) {
  const u = normalizeUuid(uuid)
  if (!u) return undefined
  return base(ctx).select(columns).where('backend_resource_requests.uuid', '=', u).executeTakeFirst()
}

function toRecord(b: string, r: NonNullable<Row>): BackendRequest {
  return {
    url: urlOf(b, PATH, r.uuid)!,
    uuid: r.uuid,
    created: r.created,
    modified: r.modified,
    started: r.started,
    finished: r.finished,
    state: r.state,
    offering: r.offering_uuid,
    offering_name: r.offering_name,
    offering_url: urlOf(b, 'marketplace-provider-offerings', r.offering_uuid)!,
    error_message: r.error_message,
    error_traceback: r.error_traceback,
  }
}

export async function list(
  ctx: AppContext,
  actor: Actor,
  f: Filters,
  order: OrderTerm[],
  b: string,
  page: Page,
): Promise<BackendRequest[]> {
  const filtered = () => {
    let q = visible(ctx, actor)
    if (f.offering_uuid) q = q.where('offerings.uuid', '=', f.offering_uuid)
    if (f.states?.length) q = q.where('backend_resource_requests.state', 'in', f.states)
    if (f.created) q = q.where('backend_resource_requests.created', '>=', f.created)
    if (f.modified) q = q.where('backend_resource_requests.modified', '>=', f.modified)
    if (f.started) q = q.where('backend_resource_requests.started', '>=', f.started)
    if (f.finished) q = q.where('backend_resource_requests.finished', '>=', f.finished)
    return q
  }
  return page(
    async () => {
      const r = await filtered()
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
      return Number(r.n)
    },
    async (limit, offset) => {
      let q = filtered().select(columns)
      for (const t of order) q = q.orderBy(t.column as any, t.desc ? 'desc' : 'asc')
      const rows = await q
        .orderBy('backend_resource_requests.id', 'asc')
        .limit(limit)
        .offset(offset)
        .execute()
      return rows.map((r) => toRecord(b, r))
    },
  )
}

export async function get(ctx: AppContext, actor: Actor, uuid: string, b: string): Promise<BackendRequest> {
  const u = normalizeUuid(uuid)
  const row = u
    ? await visible(ctx, actor)
        .select(columns)
        .where('backend_resource_requests.uuid', '=', u)
        .executeTakeFirst()
    : undefined
  if (!row) throw notFound(NOT_FOUND)
  return toRecord(b, row)
}

export async function create(
  ctx: AppContext,
  actor: Actor,
  body: { offering: string },
  b: string,
): Promise<BackendRequest> {
  requireStaff(actor)
  const u = normalizeUuid(body.offering)
  if (!u) throw fieldError('offering', 'Must be a valid UUID.')
  const offering = await ctx.db.selectFrom('offerings').select('id').where('uuid', '=', u).executeTakeFirst()
  if (!offering) throw fieldError('offering', `Object with uuid=${u} does not exist.`)
  const now = ctx.clock().toISOString()
  const uuid = ctx.newUuid()
  await ctx.db
    .insertInto('backend_resource_requests')
    .values({
      uuid,
      offering_id: offering.id,
      state: 'Sent',
      created_by_id: actor.id,
      created: now,
      modified: now,
    })
    .execute()
  return toRecord(b, (await findRow(ctx, uuid))!)
}

/**
 * Status actions. Any authenticated caller finds the request (the reference answers 403, not 404,
 * to consumer-side users); acting needs staff or OFFERING.MANAGE_BACKEND_RESOURCES. The write is a
 * conditional UPDATE on the source states, so of two racing requests exactly one wins.
 */
export async function transition(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  action: Action,
  extra: { error_message?: string; error_traceback?: string } = {},
): Promise<{ status: string }> {
  const row = await findRow(ctx, uuid)
  if (!row) throw notFound(NOT_FOUND)
  const allowed = can(actor, 'OFFERING.MANAGE_BACKEND_RESOURCES', {
    customerId: row.offering_customer_id,
    offeringId: row.offering_id,
  })
  if (!allowed) throw forbidden()
  const t = TRANSITIONS[action]
  const now = ctx.clock().toISOString()
  const set: Record<string, unknown> = { state: t.to, modified: now }
  if (action === 'start_processing') set.started = now
  else set.finished = now
  if (action === 'set_erred') {
    set.error_message = extra.error_message ?? ''
    set.error_traceback = extra.error_traceback ?? ''
  }
  const r = await ctx.db
    .updateTable('backend_resource_requests')
    .set(set)
    .where('id', '=', row.id)
    .where('state', 'in', t.from as string[])
    .executeTakeFirst()
  if (Number(r.numUpdatedRows) === 0) throw invalidState(t.from)
  return { status: STATUS_MESSAGES[action] }
}
