// Backend resource request use cases. Staff create them for an offering; the offering's site agent
// (acting as a user holding OFFERING.MANAGE_BACKEND_RESOURCES on the offering or its provider)
// moves them along Sent → Processing → Done, or reports Erred from any state.
import type { AppContext } from '../../context.js'
import { fieldError, forbidden, invalidState } from '../../http/errors.js'
import { recordRenderer } from '../../http/links.js'
import { requireStaff, canAsProvider, providerVisibility, type Actor } from '../../http/permissions.js'
import { eachRow, visibleRecords } from '../../http/visible-records.js'
import { foundByUuid, normalizeUuid } from '../../http/uuid.js'
import { backendRequestsRepository, type RequestRow } from './repository.js'
import { PATH, type BackendRequest } from './schema.js'
import { STATUS_MESSAGES, TRANSITIONS, type Action } from './state-machine.js'
import { emitEvent } from '../events/service.js'

/** The model a 404 names. */
const MODEL = 'BackendResourceRequest'

/** Staff and support see all; otherwise the provider side: the offering's organization or offering roles. */
export const visibility = providerVisibility

const toRecord = recordRenderer<RequestRow, BackendRequest>({
  url: { link: PATH, from: 'uuid' },
  uuid: 'copy',
  created: 'copy',
  modified: 'copy',
  started: 'copy',
  finished: 'copy',
  state: 'copy',
  offering: (r) => r.offering_uuid,
  offering_name: 'copy',
  offering_url: { link: 'marketplace-provider-offerings', from: 'offering_uuid' },
  error_message: 'copy',
  error_traceback: 'copy',
})

/** The requests' list and record, by the caller's visibility. */
const requests = visibleRecords({
  rows: backendRequestsRepository,
  visibility,
  model: MODEL,
  render: eachRow(toRecord),
})
export const list = requests.list
export const get = requests.get

/** Tells a request's new state (`marketplace.backend_resource_request.<change>`), in `db`'s transaction. */
async function tell(
  ctx: AppContext,
  db: Parameters<typeof backendRequestsRepository>[0],
  r: { uuid: string; offering_uuid: string },
  change: 'created' | 'state_changed',
  from: string | null,
  to: string,
): Promise<void> {
  await emitEvent(ctx, db, {
    type: `marketplace.backend_resource_request.${change}`,
    objectType: 'backend_resource_request',
    objectUuid: r.uuid,
    path: `/api/${PATH}/${r.uuid}/`,
    offeringUuid: r.offering_uuid,
    data: { state_before: from, state_after: to },
  })
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
  const id = await ctx.db.transaction().execute(async (trx) => {
    const inserted = await backendRequestsRepository(trx).insert({
      uuid,
      offering_id: offeringId,
      state: 'Sent',
      created_by_id: actor.id,
      created: now,
      modified: now,
    })
    await tell(ctx, trx, { uuid, offering_uuid: u }, 'created', null, 'Sent')
    return inserted
  })
  return requests.record(ctx, id, b)
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
  const row = await foundByUuid(uuid, (u) => backendRequestsRepository(ctx.db).findByUuid(u), MODEL)
  const offering = { id: row.offering_id, customer_id: row.offering_customer_id }
  if (!canAsProvider(actor, 'OFFERING.MANAGE_BACKEND_RESOURCES', offering)) throw forbidden()
  const t = TRANSITIONS[action]
  const now = ctx.clock().toISOString()
  const set: Record<string, unknown> = { state: t.to, modified: now }
  if (action === 'start_processing') set.started = now
  else set.finished = now
  if (action === 'set_erred') {
    set.error_message = extra.error_message ?? ''
    set.error_traceback = extra.error_traceback ?? ''
  }
  await ctx.db.transaction().execute(async (trx) => {
    if (!(await backendRequestsRepository(trx).moveIfIn(row.id, t.from, set))) throw invalidState(t.from)
    await tell(ctx, trx, row, 'state_changed', row.state, t.to)
  })
  return { status: STATUS_MESSAGES[action] }
}
