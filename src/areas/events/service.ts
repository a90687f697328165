// Events: the outbox other areas write to in their state-change paths, read in position order by
// the HTTP list and stream (and by any relay), each caller seeing only events about what it may see.
import type { ServerResponse } from 'node:http'
import type { AppContext } from '../../context.js'
import { seesAll, type Actor } from '../../http/permissions.js'
import type { Pager } from '../../http/resource.js'
import { eventsHead as head, storedEvent } from './outbox.js'
export { OUTBOX_COLUMNS } from './repository.js'
import { eventsRepository, type EventFilters } from './repository.js'
import { eventRecord } from './records.js'
import type { EventRecord } from './schema.js'
import { runStream, type HeartbeatTimer } from './stream.js'
import { ruledObjectTypes, VisibilityCheck } from './visibility.js'

export {
  closeEvents,
  emitEvent,
  eventsAfter,
  eventsHead,
  eventsPurgedUpTo,
  inTransaction,
  onEventsCommitted,
  outboxRow,
  purgeEvents,
  sequenceEvents,
  type CloudEvent,
  type EventInput,
  type OutboxRow,
  type StoredEvent,
} from './outbox.js'

/**
 * GET /api/events/: the committed events the caller sees, oldest first. Staff and support page
 * in SQL; anyone else's candidates (of the object types a visibility rule decides) are checked
 * object by object, and the page is cut from those seen.
 */
export async function listEvents(
  ctx: AppContext,
  actor: Actor,
  f: EventFilters,
  base: string,
  page: Pager<EventRecord>,
): Promise<EventRecord[]> {
  // What committed before this request is listed (PostgreSQL: with its position).
  await head(ctx)
  const repo = eventsRepository(ctx.db)
  if (seesAll(actor)) {
    return page(
      () => repo.count(f),
      async (limit, offset) =>
        (await repo.page(f, limit, offset)).map((r) => eventRecord(storedEvent(r), base)),
    )
  }
  const asked = f.object_type?.length
    ? f.object_type.filter((t) => ruledObjectTypes().includes(t))
    : ruledObjectTypes()
  const candidates = (await repo.positions({ ...f, object_type: asked })).map((r) =>
    storedEvent({ ...r, uuid: '', type: '', created: '' }),
  )
  const seen = asked.length ? await new VisibilityCheck(ctx, actor).filter(candidates) : []
  return page(
    async () => seen.length,
    async (limit, offset) => {
      const positions = seen.slice(offset, offset + limit).map((e) => e.position)
      return (await repo.byPositions(positions)).map((r) => eventRecord(storedEvent(r), base))
    },
  )
}

/**
 * GET /api/events/stream/: Server-Sent Events past `after` (the `Last-Event-ID` or `?after=`;
 * neither: from now on).
 */
export async function streamEvents(
  ctx: AppContext,
  actor: Actor,
  raw: ServerResponse,
  opts: { after: number | undefined; filters: EventFilters; base: string; timer: HeartbeatTimer },
): Promise<void> {
  const from = opts.after ?? (await head(ctx))
  runStream(ctx, actor, raw, {
    after: Math.max(0, from),
    filters: opts.filters,
    base: opts.base,
    heartbeatMs: ctx.config.eventHeartbeatMs,
    timer: opts.timer,
  })
}

/** Is a cleanup job of the events queued (or running)? */
