// Keeping the agents' records current: the idle sweep, the stale cleanup and the stats over
// every agent (staff and support).
import type { AppContext } from '../../context.js'
import { fieldError, forbidden } from '../../http/errors.js'
import { seesAll, type Actor } from '../../http/permissions.js'
import * as repo from './repository.js'
import { SERVICE_PATH, STATE_LABELS, type CleanupResultT, type Stats } from './schema.js'
import { emitEvent } from '../events/service.js'

export const ACTIVE = 1
export const IDLE = 2
/** Active services whose newest processor run is at least this old become Idle (reference §3.3). */
export const IDLE_AFTER_MS = 10 * 60 * 1000
/** How often the idle sweep runs while there are Active services. */
export const SWEEP_INTERVAL_MS = 5 * 60 * 1000
export const STALE_MS = 24 * 3600 * 1000
export const MARK_IDLE_JOB = 'site-agents.mark-idle'
/** The largest `older_than_hours` (about 114 years): beyond it, now − hours is no date at all. */
export const MAX_OLDER_THAN_HOURS = 1_000_000
/** A processor whose last run is older than this (or that never ran) counts as stale in the stats. */
export const PROCESSOR_STALE_MS = 3600 * 1000

/** GET marketplace-site-agent-stats/ (staff and support): counts over every agent. */
export async function stats(ctx: AppContext, actor: Actor): Promise<Stats> {
  if (!seesAll(actor)) throw forbidden()
  const now = ctx.clock().getTime()
  const staleBefore = new Date(now - STALE_MS).toISOString()
  const processorStaleBefore = new Date(now - PROCESSOR_STALE_MS).toISOString()
  const { byOffering, byState, staleServices, byType, staleProcessors } = await repo.statsCounts(
    ctx.db,
    staleBefore,
    processorStaleBefore,
  )
  const inState = (code: number) => Number(byState.find((r) => Number(r.state) === code)?.n ?? 0)
  return {
    identities: {
      total: byOffering.reduce((t, r) => t + Number(r.n), 0),
      by_offering: byOffering.map((r) => ({
        offering__uuid: r.offering_uuid,
        offering__name: r.offering_name,
        count: Number(r.n),
      })),
    },
    services: {
      total: byState.reduce((t, r) => t + Number(r.n), 0),
      by_state: { active: inState(1), idle: inState(2), error: inState(3) },
      stale_count: staleServices,
    },
    processors: {
      total: byType.reduce((t, r) => t + Number(r.n), 0),
      by_backend_type: byType.map((r) => ({ backend_type: r.backend_type, count: Number(r.n) })),
      stale_count: staleProcessors,
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
    const rows = await repo.servicesModifiedBefore(trx, before)
    if (!dryRun && rows.length) {
      await repo.deleteServices(
        trx,
        rows.map((r) => r.id),
      )
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
 * Tells a service's new state (`marketplace.site_agent_service.state_changed`, or `.registered`
 * for a new one), in the transaction that changed it.
 */
export async function tellServiceState(ctx: AppContext, trx: repo.Db, id: number, from: number | null) {
  const s = await repo.serviceEventRow(trx, id)
  if (!s || s.state === from) return
  const label = (code: number | null) =>
    code === null ? null : (STATE_LABELS[code as 1 | 2 | 3] ?? String(code))
  await emitEvent(ctx, trx, {
    type: `marketplace.site_agent_service.${from === null ? 'registered' : 'state_changed'}`,
    objectType: 'site_agent_service',
    objectUuid: s.uuid,
    path: `/api/${SERVICE_PATH}/${s.uuid}/`,
    offeringUuid: s.offering_uuid,
    data: { state_before: label(from), state_after: label(Number(s.state)) },
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
    const r = await repo.markIdle(trx, ACTIVE, IDLE, threshold, now.toISOString())
    for (const id of r.idled) await tellServiceState(ctx, trx, id, ACTIVE)
    if (r.activeLeft) {
      await ctx.jobs.enqueue(trx, MARK_IDLE_JOB, {}, { runAt: new Date(now.getTime() + SWEEP_INTERVAL_MS) })
    }
    return r.idled.length
  })
}
