// Backend resource request use cases. Staff create them for an offering; the offering's site agent
// (acting as a user holding OFFERING.MANAGE_BACKEND_RESOURCES on the offering or its provider)
// moves them along Sent → Processing → Done, or reports Erred from any state.
import type { AppContext } from '../../context.js'
import { foundByUuid } from '../../http/uuid.js'
import type { Listing } from '../../db/listing.js'
import { fieldError, forbidden, invalidState, notFound } from '../../http/errors.js'
import { urlOf } from '../../http/links.js'
import { requireStaff, can, customerIds, offeringIds, seesAll, type Actor } from '../../http/permissions.js'
import { pageOf, type Pager } from '../../http/resource.js'
import { normalizeUuid } from '../../http/uuid.js'
import { backendRequestsRepository, type RequestRow, type RequestVisibility } from './repository.js'
import { PATH, type BackendRequest } from './schema.js'
import { STATUS_MESSAGES, TRANSITIONS, type Action } from './state-machine.js'

const NOT_FOUND = 'No BackendResourceRequest matches the given query.'

/** Staff and support see all; otherwise the provider side: the offering's organization or offering roles. */
export function visibility(actor: Actor): RequestVisibility {
  if (seesAll(actor)) return { all: true }
  return { all: false, customerIds: customerIds(actor), offeringIds: offeringIds(actor) }
}

async function findRow(ctx: AppContext, uuid: string) {
  const u = normalizeUuid(uuid)
  return u ? backendRequestsRepository(ctx.db).findByUuid(u) : undefined
}

function toRecord(b: string, r: RequestRow): BackendRequest {
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
  vis: RequestVisibility,
  listing: Listing,
  b: string,
  page: Pager<BackendRequest>,
): Promise<BackendRequest[]> {
  return pageOf(page, backendRequestsRepository(ctx.db), vis, listing, (r) => toRecord(b, r))
}

export async function get(
  ctx: AppContext,
  vis: RequestVisibility,
  uuid: string,
  b: string,
): Promise<BackendRequest> {
  const find = (u: string) => backendRequestsRepository(ctx.db).findVisibleByUuid(vis, u)
  return toRecord(b, await foundByUuid(uuid, find, 'BackendResourceRequest'))
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
  const repo = backendRequestsRepository(ctx.db)
  const offeringId = await repo.findOfferingId(u)
  if (offeringId === undefined) throw fieldError('offering', `Object with uuid=${u} does not exist.`)
  const now = ctx.clock().toISOString()
  const uuid = ctx.newUuid()
  await repo.insert({
    uuid,
    offering_id: offeringId,
    state: 'Sent',
    created_by_id: actor.id,
    created: now,
    modified: now,
  })
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
  if (!(await backendRequestsRepository(ctx.db).moveIfIn(row.id, t.from, set))) throw invalidState(t.from)
  return { status: STATUS_MESSAGES[action] }
}
