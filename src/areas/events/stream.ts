// One Server-Sent Events stream: from a position on, every committed event the caller sees, in
// position order, each once; a heartbeat comment while nothing happens; `event: reset` when the
// position asked for is older than the retention.
import type { ServerResponse } from 'node:http'
import type { AppContext } from '../../context.js'
import { loadActor } from '../../http/auth.js'
import type { Actor } from '../../http/permissions.js'
import { eventsAfter, eventsHead, eventsPurgedUpTo, onEventsCommitted, type StoredEvent } from './outbox.js'
import type { EventFilters } from './repository.js'
import { VisibilityCheck } from './visibility.js'
import { eventRecord, matches } from './records.js'

/** Timers of the heartbeat (tests give their own to beat without waiting). */
export interface HeartbeatTimer {
  every(ms: number, beat: () => void): { stop(): void }
}

export const systemTimer: HeartbeatTimer = {
  every(ms, beat) {
    const h = setInterval(beat, ms)
    return { stop: () => clearInterval(h) }
  },
}

/** The open streams of each app, ended when it closes (an open stream would hold its close). */
const open = new WeakMap<AppContext, Set<() => void>>()

/** Ends every open stream of the app (its preClose: the server then closes at once). */
export function endStreams(ctx: AppContext): void {
  for (const end of [...(open.get(ctx) ?? [])]) end()
}

/** Events read from the outbox at once while catching up. */
const BATCH = 200

export interface StreamOptions {
  after: number
  filters: EventFilters
  base: string
  heartbeatMs: number
  timer: HeartbeatTimer
}

/**
 * Writes the stream on `raw` (whose headers it sends) until the client goes away or the caller's
 * account is no longer active.
 */
export function runStream(ctx: AppContext, actor: Actor, raw: ServerResponse, opts: StreamOptions): void {
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  })
  let cursor = opts.after
  let closed = false
  let pumping = false
  let again = false
  let unsubscribe: () => void = () => {}
  let heartbeat: { stop(): void } | null = null

  let streams = open.get(ctx)
  if (!streams) open.set(ctx, (streams = new Set()))
  const close = () => {
    if (closed) return
    closed = true
    streams.delete(close)
    unsubscribe()
    heartbeat?.stop()
    if (!raw.writableEnded) raw.end()
  }
  streams.add(close)
  raw.on('close', close)

  /** Writes a chunk; waits while the client's buffer is full. */
  const write = async (chunk: string) => {
    if (closed) return
    if (!raw.write(chunk))
      await new Promise<void>((resolve) => raw.once('drain', resolve).once('close', resolve))
  }

  const send = async (e: StoredEvent) => {
    await write(`id: ${e.position}\ndata: ${JSON.stringify(eventRecord(e, opts.base))}\n\n`)
  }

  /** Sends what committed past the cursor; calls while it runs fold into one more round. */
  const pump = async () => {
    if (pumping) {
      again = true
      return
    }
    pumping = true
    try {
      do {
        again = false
        for (;;) {
          if (closed) return
          const batch = await eventsAfter(ctx, cursor, BATCH)
          if (!batch.length) break
          // Who the caller is now: a grant ended since the stream opened hides what it showed.
          const now = await loadActor(ctx.db, actor.id, ctx.clock().toISOString())
          if (!now || (now as Actor & { inactive?: boolean }).inactive) return close()
          const check = new VisibilityCheck(ctx, now)
          const wanted = batch.filter((e) => matches(e, opts.filters))
          for (const e of await check.filter(wanted)) await send(e)
          cursor = batch[batch.length - 1]!.position
          if (batch.length < BATCH) break
        }
      } while (again && !closed)
    } catch (e) {
      ctx.log.warn({ err: e }, 'event stream failed')
      close()
    } finally {
      pumping = false
    }
  }

  void (async () => {
    try {
      await write(': connected\n\n')
      const purged = await eventsPurgedUpTo(ctx)
      if (cursor < purged) {
        // Events past the position asked for are gone: the client starts over from now.
        cursor = await eventsHead(ctx)
        await write(`event: reset\nid: ${cursor}\ndata: ${JSON.stringify({ position: cursor })}\n\n`)
      }
      if (closed) return
      unsubscribe = onEventsCommitted(ctx, () => void pump())
      heartbeat = opts.timer.every(opts.heartbeatMs, () => void write(': heartbeat\n\n'))
      await pump()
    } catch (e) {
      ctx.log.warn({ err: e }, 'event stream failed')
      close()
    }
  })()
}
