// HTTP for /api/events/ (the list) and /api/events/stream/ (Server-Sent Events), the retention's
// cleanup job, and the end of the wake-ups' subscription when the app closes.
import { Type } from '@sinclair/typebox'
import { AppError, fieldError } from '../../http/errors.js'
import { compileFilters, type FilterValues } from '../../http/filters.js'
import { parsedByHandler } from '../../http/resource-docs.js'
import { defineResource, resourceRoutes } from '../../http/resource.js'
import type { Query } from '../../http/query.js'
import type { AppContext } from '../../context.js'
import type { EventFilters } from './repository.js'
import * as s from './schema.js'
import * as svc from './service.js'
import { endStreams, systemTimer, type HeartbeatTimer } from './stream.js'

/** The cleanup job: deletes the events past the retention, then runs again in an hour. */
export const PURGE_JOB = 'events.purge'
const PURGE_EVERY_MS = 3600 * 1000

const parseFilters = compileFilters(s.eventFilters)

/** The parsed filters as the outbox reads them (a uuid that can name nothing matches nothing). */
function toFilters(v: FilterValues<typeof s.eventFilters>): EventFilters {
  const uuid = (x: string | null | undefined) => (x === null ? '' : x)
  return {
    type: v.type ?? undefined,
    object_type: v.object_type ?? undefined,
    offering_uuid: uuid(v.offering_uuid),
    project_uuid: uuid(v.project_uuid),
    customer_uuid: uuid(v.customer_uuid),
    after: v.after ?? undefined,
  }
}

/** Where a stream resumes: `Last-Event-ID` (as EventSource sends it on reconnecting), else `?after=`. */
function resumeFrom(header: unknown, after: number | undefined): number | undefined {
  if (header === undefined || header === '') return after
  if (typeof header !== 'string' || !/^\d{1,15}$/.test(header.trim()))
    throw fieldError('Last-Event-ID', 'Enter a whole number.')
  return Number(header.trim())
}

const streamQuery = parsedByHandler(
  Type.Object(Object.fromEntries(Object.entries(s.eventFilters).map(([n, f]) => [n, Type.Optional(f.doc)])), {
    additionalProperties: true,
  }),
)

/** What the stream's heartbeat runs on: tests replace it to beat without waiting. */
const timers = new WeakMap<AppContext, HeartbeatTimer>()
export function setHeartbeatTimer(ctx: AppContext, timer: HeartbeatTimer): void {
  timers.set(ctx, timer)
}

export const events = defineResource({
  path: s.PATH,
  noun: 'event',
  record: s.EventSchema,
  list: {
    filters: s.eventFilters,
    ordering: { default: [{ column: 'outbox_events.position', desc: false }] },
    run: (c) => svc.listEvents(c.ctx, c.actor, toFilters(c.filters), c.base, c.page),
  },
  actions: [
    {
      name: 'stream',
      method: 'GET',
      detail: false,
      summary: 'Stream the events the caller sees as Server-Sent Events, resuming after Last-Event-ID',
      query: streamQuery,
      response: s.StreamResponse,
      run: async (c) => {
        const f = toFilters(parseFilters(c.request.query as Query).values)
        const after = resumeFrom(c.request.headers['last-event-id'], f.after)
        if (after !== undefined && after < 0)
          throw new AppError('invalid', { after: ['Enter a position from 0.'] })
        c.reply.hijack()
        await svc.streamEvents(c.ctx, c.actor, c.reply.raw, {
          after,
          filters: { ...f, after: undefined },
          base: c.base,
          timer: timers.get(c.ctx) ?? systemTimer,
        })
        return c.reply
      },
    },
  ],
})

export const eventsRoutes = resourceRoutes([events], (app, ctx) => {
  ctx.jobs.definePeriodic(PURGE_JOB, PURGE_EVERY_MS, async () => {
    const n = await svc.purgeEvents(ctx)
    if (n) ctx.log.info({ deleted: n, retentionDays: ctx.config.eventRetentionDays }, 'old events deleted')
  })
  // With a worker, one cleanup job is kept queued.
  if (ctx.config.workerEnabled) app.addHook('onReady', () => ctx.jobs.queuePeriodic(PURGE_JOB))
  app.addHook('preClose', async () => endStreams(ctx))
  app.addHook('onClose', async () => svc.closeEvents(ctx))
})
