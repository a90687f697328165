// The event outbox: events written in the transaction of the change they tell, given positions in
// the order they became visible, and the wake-up of whoever waits for new ones.
//
// Positions. SQLite runs one writing transaction at a time, so a position taken from the counter
// row inside the transaction commits in order with it. On PostgreSQL transactions commit in any
// order: a position taken inside one could become visible after a higher one taken by a later
// transaction, and a reader that moved past the higher one would never see it. So an event is
// written there without a position, and a sequencer gives positions to the committed events after
// the fact: it locks the counter row, numbers the events still without a position in the order
// they were written, and commits. The lock makes sequencers run one at a time, and each one's
// positions are visible before the next one takes the lock, so the positions a reader sees are
// always every position up to the highest it sees.
//
// Wake-ups. On PostgreSQL a trigger notifies `marketplace_events` when a transaction that wrote
// events commits (nothing on rollback); every process listening (on its one listening connection,
// src/db/notifications.ts) runs the sequencer (at most one at a time gets anything to do) and
// wakes its waiters, and looks once whenever LISTEN is in place again after the connection was
// lost. A poll of the counter backs this up (and is the only signal on SQLite for other processes'
// commits; this process's own wake the waiters at once): it costs one indexed read.
import type { AppContext } from '../../context.js'
import { parseJson, toJson } from '../../db/values.js'
import { eventsRepository, type EventRow } from './repository.js'

/** The CloudEvents 1.0 JSON envelope of an event. */
export interface CloudEvent {
  specversion: '1.0'
  id: string
  source: string
  type: string
  subject: string
  time: string
  datacontenttype: 'application/json'
  data: Record<string, unknown>
}

/** A committed event and the objects it concerns. */
export interface StoredEvent {
  position: number
  envelope: CloudEvent
  objectType: string
  offeringUuid: string | null
  projectUuid: string | null
  customerUuid: string | null
}

/** What an area tells: the object, its URL's path, its scopes and the facts of the change. */
export interface EventInput {
  /** `<area>.<object>.<change>`, e.g. `marketplace.order.state_changed`. */
  type: string
  /** The object's kind, e.g. `order`, `resource`, `role_grant`. */
  objectType: string
  objectUuid: string
  /** The object's path under the API, e.g. `/api/marketplace-orders/<uuid>/`. */
  path: string
  offeringUuid?: string | null
  projectUuid?: string | null
  customerUuid?: string | null
  /** The change's facts (state before and after, the new value, ...). */
  data?: Record<string, unknown>
}

type Db = Parameters<typeof eventsRepository>[0]

/** Events given positions by one sequencer transaction at most. */
const SEQUENCE_BATCH = 1000

/** The outbox row of an event, as `emitEvent` writes it. */
export type OutboxRow = Omit<EventRow, 'position'>

/**
 * The outbox row telling `input` now, for a caller that writes it in the same statement as the
 * change it tells (`emitEvent` writes it on its own).
 */
export function outboxRow(ctx: AppContext, input: EventInput): OutboxRow {
  // An event names its object and scopes by uuid or not at all: an empty one is a caller's bug,
  // and would be stored as a scope nobody can filter on.
  for (const [name, v] of Object.entries({
    objectUuid: input.objectUuid,
    offeringUuid: input.offeringUuid,
    projectUuid: input.projectUuid,
    customerUuid: input.customerUuid,
  })) {
    if (v === '') throw new Error(`event ${input.type}: ${name} is empty`)
  }
  const e = input
  const time = ctx.clock().toISOString()
  const prefix = ctx.config.publicUrl ?? ''
  const url = `${prefix}${e.path}`
  const uuid = ctx.newUuid()
  const envelope: CloudEvent = {
    specversion: '1.0',
    id: uuid,
    source: `${prefix}/api/`,
    type: e.type,
    subject: url,
    time,
    datacontenttype: 'application/json',
    data: {
      uuid: e.objectUuid,
      url,
      object_type: e.objectType,
      offering_uuid: e.offeringUuid ?? null,
      project_uuid: e.projectUuid ?? null,
      customer_uuid: e.customerUuid ?? null,
      ...e.data,
    },
  }
  return {
    uuid,
    type: e.type,
    object_type: e.objectType,
    object_uuid: e.objectUuid,
    offering_uuid: e.offeringUuid ?? null,
    project_uuid: e.projectUuid ?? null,
    customer_uuid: e.customerUuid ?? null,
    envelope: toJson(envelope),
    created: time,
  }
}

/**
 * Writes an event in `db`, the transaction of the change it tells: it commits with the change or
 * not at all.
 */
export async function emitEvent(ctx: AppContext, db: Db, input: EventInput): Promise<void> {
  await eventsRepository(db).insert(outboxRow(ctx, input))
}

/**
 * Runs `write` in `db` when it is a transaction, else in a transaction of its own: a change and
 * the events telling it commit together.
 */
export function inTransaction<T>(ctx: AppContext, db: Db, write: (trx: Db) => Promise<T>): Promise<T> {
  return db === ctx.db ? ctx.db.transaction().execute(write) : write(db)
}

/**
 * PostgreSQL: gives every committed event without a position its position (see above), `batch`
 * at a time. Each batch starts past the last id the one before numbered: the events numbered keep
 * their entries in the index of events without a position until PostgreSQL may drop them (no
 * older snapshot left) or a vacuum removes them, and a batch that scanned that index from its
 * start would walk them all again, a cost growing with the square of the backlog (60,000 events
 * with a snapshot held open elsewhere: 36 ms a batch from the start, 26 ms past the last id). An
 * event with a lower id that commits during the pass is numbered by the next pass, as any event
 * committed after it.
 */
export async function sequenceEvents(ctx: AppContext, batch = SEQUENCE_BATCH): Promise<void> {
  if (ctx.dialect !== 'postgres') return
  let after = 0
  for (;;) {
    const r = await ctx.db.transaction().execute((trx) => eventsRepository(trx).sequenceBatch(batch, after))
    if (r.n < batch) return
    after = r.lastId
  }
}

export function storedEvent(r: EventRow): StoredEvent {
  return {
    position: Number(r.position),
    envelope: parseJson(r.envelope, {}) as CloudEvent,
    objectType: r.object_type,
    offeringUuid: r.offering_uuid,
    projectUuid: r.project_uuid,
    customerUuid: r.customer_uuid,
  }
}

/** Committed events with a position past `position`, ascending, at most `limit`. */
export async function eventsAfter(ctx: AppContext, position: number, limit: number): Promise<StoredEvent[]> {
  // What committed before this read is read: on PostgreSQL, events still without a position get one first.
  if (ctx.dialect === 'postgres' && (await eventsRepository(ctx.db).anyUnsequenced()))
    await sequenceEvents(ctx)
  return (await eventsRepository(ctx.db).after(position, limit)).map(storedEvent)
}

/** The last committed position (0 before any event). */
export async function eventsHead(ctx: AppContext): Promise<number> {
  if (ctx.dialect === 'postgres' && (await eventsRepository(ctx.db).anyUnsequenced()))
    await sequenceEvents(ctx)
  return eventsRepository(ctx.db).head()
}

/** The positions the retention has deleted up to (0: none). */
export function eventsPurgedUpTo(ctx: AppContext): Promise<number> {
  return eventsRepository(ctx.db).purgedUpTo()
}

/** Deletes the events older than the retention; how many. */
export async function purgeEvents(ctx: AppContext): Promise<number> {
  const before = new Date(ctx.clock().getTime() - ctx.config.eventRetentionDays * 86_400_000).toISOString()
  // Committed events still without a position get one first, so that old ones go too.
  await sequenceEvents(ctx)
  let total = 0
  for (;;) {
    const n = await ctx.db.transaction().execute((trx) => eventsRepository(trx).purgeBatch(before, 1000))
    total += n
    if (n < 1000) return total
  }
}

/** The channel the outbox's trigger notifies (its payload: the schema the events were written in). */
const EVENTS_CHANNEL = 'marketplace_events'

/** The waiters of one app's events, the poll and (PostgreSQL) the subscription to the notifications. */
class EventHub {
  readonly #listeners = new Set<() => void>()
  #head = -1
  #checking = false
  #again = false
  #poll: NodeJS.Timeout | null = null
  #stopCommits: (() => void) | null = null
  #unlisten: (() => void) | null = null
  #closed = false

  constructor(private readonly ctx: AppContext) {}

  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener)
    if (!this.#poll && !this.#closed) this.#start()
    return () => {
      this.#listeners.delete(listener)
      if (!this.#listeners.size) this.#stop()
    }
  }

  /** Looks for new events now; wakes the waiters when the head moved. Calls during a look fold into one more. */
  check(): void {
    if (this.#checking) {
      this.#again = true
      return
    }
    this.#checking = true
    void (async () => {
      try {
        do {
          this.#again = false
          const head = await eventsHead(this.ctx)
          if (head !== this.#head) {
            this.#head = head
            for (const l of [...this.#listeners]) l()
          }
        } while (this.#again && !this.#closed)
      } catch (e) {
        if (!this.#closed) this.ctx.log.warn({ err: e }, 'looking for new events failed')
      } finally {
        this.#checking = false
      }
    })()
  }

  #start(): void {
    const pollMs = this.ctx.config.eventPollMs * (this.ctx.dialect === 'postgres' ? 20 : 1)
    this.#poll = setInterval(() => this.check(), pollMs)
    // SQLite: this process's own commits wake the waiters at once; the poll is for other processes'.
    this.#stopCommits = this.ctx.onCommit?.(() => this.check()) ?? null
    const notifications = this.ctx.notifications
    // Subscribed once, kept while no stream waits: the connection serves the change feed anyway.
    if (!notifications || this.#unlisten) {
      this.check()
      return
    }
    this.#unlisten = notifications.listen(EVENTS_CHANNEL, {
      notification: (payload) => {
        if (payload === notifications.schema) this.check()
      },
      // Whatever committed while nobody listened.
      connected: () => this.check(),
    })
  }

  #stop(): void {
    if (this.#poll) clearInterval(this.#poll)
    this.#poll = null
    this.#stopCommits?.()
    this.#stopCommits = null
  }

  close(): void {
    this.#closed = true
    this.#stop()
    this.#unlisten?.()
    this.#unlisten = null
    this.#listeners.clear()
  }
}

const hubs = new WeakMap<AppContext, EventHub>()

function hubOf(ctx: AppContext): EventHub {
  let hub = hubs.get(ctx)
  if (!hub) hubs.set(ctx, (hub = new EventHub(ctx)))
  return hub
}

/**
 * Calls `listener` after events commit, in this process or (PostgreSQL) any process on the
 * database; the answer unsubscribes. A wake-up may come without a new event, and several commits
 * may share one: the listener reads what is new with `eventsAfter`.
 */
export function onEventsCommitted(ctx: AppContext, listener: () => void): () => void {
  return hubOf(ctx).subscribe(listener)
}

/** Stops the poll and the subscription to the notifications (the app's onClose). */
export function closeEvents(ctx: AppContext): void {
  const hub = hubs.get(ctx)
  hubs.delete(ctx)
  hub?.close()
}
