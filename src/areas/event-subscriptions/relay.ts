// The relay: reads the event log after its stored position, publishes each event's message to the
// queues that observe it (the subscriptions' queues of the event's offering and object type, whose
// user may still manage that offering), and moves its position past an event only once RabbitMQ has
// confirmed every message of it and of the events before it. The log holds only committed events,
// so nothing uncommitted is announced; after a restart or an outage the relay starts again from its
// position, so nothing is lost (a message confirmed just before a failure may be sent twice: it
// carries the event's id as its message-id).
//
// One process relays at a time: the one holding the lease on the position's row (renewed at each
// pass; another takes over when it runs out). The position only moves under the lease.
import { hostname } from 'node:os'
import { randomBytes } from 'node:crypto'
import type { AppContext } from '../../context.js'
import { loadActor } from '../../http/auth.js'
import { canAsProvider, type Actor } from '../../http/permissions.js'
import { brokerSettings, BrokerError, Publisher, queueName, vhostName, type Outgoing } from './broker.js'
import {
  accountKey,
  factsWanted,
  messagesFor,
  type EventSource,
  type MessageFacts,
  type StoredEvent,
} from './messages.js'
import {
  accountResourceRows,
  grantFactsRows,
  queuesRepository,
  relayPositions,
  type QueueRow,
} from './repository.js'

export const RELAY_NAME = 'rabbitmq'
/** How long a relay's lease lasts without renewal. */
export const LEASE_MS = 30_000
/** Events read and published per pass. */
export const BATCH = 200
/** Waits after a failed pass: from 1 s, doubling, at most 30 s. */
const BACKOFF_MIN_MS = 1000
const BACKOFF_MAX_MS = 30_000

export interface RelayOptions {
  /** The lease holder's name (default: host, process and a random part). */
  holder?: string
  batch?: number
}

export interface PassResult {
  /** Whether this process holds the lease (false: another relays; nothing was done). */
  leader: boolean
  /** Events the position moved past. */
  events: number
  /** Messages confirmed by the broker. */
  messages: number
  /** More events may be waiting (the pass stopped at its batch size). */
  more: boolean
}

export class Relay {
  readonly holder: string
  private readonly publisher: Publisher
  private readonly batch: number
  private running = false
  private loop: Promise<void> | null = null
  private wake: (() => void) | null = null
  private woken = false
  private unsubscribe: (() => void) | null = null
  private timer: NodeJS.Timeout | null = null
  private backingOff = false

  constructor(
    private readonly ctx: AppContext,
    private readonly source: EventSource,
    opts: RelayOptions = {},
  ) {
    const settings = brokerSettings(ctx.config)
    if (!settings) throw new Error('the event relay needs RABBITMQ_URL and RABBITMQ_MANAGEMENT_URL')
    this.publisher = new Publisher(settings)
    this.holder = opts.holder ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`
    this.batch = opts.batch ?? BATCH
  }

  private positions() {
    return relayPositions(this.ctx.db, RELAY_NAME)
  }

  /** The stored position: the last event published to every queue that observes it. */
  position(): Promise<number> {
    return this.positions().position()
  }

  /**
   * One pass: takes or renews the lease, then publishes up to a batch of events past the position
   * and moves the position past those confirmed (in order). Throws when the broker fails before
   * any progress could be stored.
   */
  async runOnce(): Promise<PassResult> {
    const now = this.ctx.clock()
    const positions = this.positions()
    await positions.ensure(now.toISOString())
    const until = new Date(now.getTime() + LEASE_MS).toISOString()
    if (!(await positions.lease(this.holder, now.toISOString(), until))) {
      return { leader: false, events: 0, messages: 0, more: false }
    }
    const from = await positions.position()
    const events = await this.source.eventsAfter(this.ctx, from, this.batch)
    if (!events.length) return { leader: true, events: 0, messages: 0, more: false }

    const perEvent = await this.messagesOf(events)
    const outgoing = perEvent.flat()
    const results = await this.publisher.publish(outgoing)

    // The position moves past each event whose messages were all confirmed, up to the first that
    // was not. A message refused for good (its virtual host is gone) does not hold the others.
    let k = 0
    let reached = from
    let done = 0
    let failure: BrokerError | null = null
    for (const [i, event] of events.entries()) {
      const own = results.slice(k, k + perEvent[i]!.length)
      k += perEvent[i]!.length
      const blocking = own.find((r) => r !== null && !r.permanent)
      for (const r of own) {
        if (r?.permanent)
          this.ctx.log.error({ err: r, position: event.position }, 'event relay: message refused')
      }
      if (blocking) {
        failure = blocking
        break
      }
      reached = event.position
      done++
    }
    const confirmed = results.slice(0, k).filter((r) => r === null).length
    if (reached > from) {
      await positions.advance(this.holder, reached, this.ctx.clock().toISOString())
    }
    if (failure && done === 0) throw failure
    return { leader: true, events: done, messages: confirmed, more: !failure && events.length >= this.batch }
  }

  /**
   * What the batch's events need besides themselves: the role grants' facts in one query, and
   * (when offering users were given usernames) their resources' backend ids in another.
   */
  private async facts(events: readonly StoredEvent[]): Promise<MessageFacts> {
    const want = factsWanted(events)
    const usernames = new Map<string, string>()
    const projects = new Map<string, { name: string; offerings: string[] }>()
    for (const r of await grantFactsRows(this.ctx.db, want.users, want.projects)) {
      if (r.kind === 'user') {
        usernames.set(r.uuid, r.name)
        continue
      }
      let p = projects.get(r.uuid)
      if (!p) projects.set(r.uuid, (p = { name: r.name, offerings: [] }))
      if (r.offering_uuid && !p.offerings.includes(r.offering_uuid)) p.offerings.push(r.offering_uuid)
    }
    const accountResources = new Map<string, string[]>()
    const now = this.ctx.clock().toISOString()
    for (const r of await accountResourceRows(this.ctx.db, want.accounts, now)) {
      const key = accountKey(r.user_uuid, r.offering_uuid)
      const ids = accountResources.get(key) ?? []
      if (!ids.includes(r.backend_id)) accountResources.set(key, [...ids, r.backend_id].sort())
    }
    return { usernames, projects, accountResources }
  }

  /** The messages of each event, in order: one per queue observing it. */
  private async messagesOf(events: readonly StoredEvent[]): Promise<Outgoing[][]> {
    const facts = await this.facts(events)
    const wanted = events.map((e) => messagesFor(e, facts))
    const offerings = [...new Set(wanted.flatMap((ms) => ms.map((m) => m.offeringUuid)))]
    const queues = await queuesRepository(this.ctx.db).observing(offerings)
    const actors = new Map<number, Actor | null>()
    const now = this.ctx.clock().toISOString()
    const mayReceive = async (q: QueueRow): Promise<boolean> => {
      if (!actors.has(q.user_id)) actors.set(q.user_id, await loadActor(this.ctx.db, q.user_id, now))
      const actor = actors.get(q.user_id)
      if (!actor || (actor as Actor & { inactive?: boolean }).inactive) return false
      return canAsProvider(actor, 'OFFERING.UPDATE', {
        id: q.offering_id,
        customer_id: q.offering_customer_id,
      })
    }
    const out: Outgoing[][] = []
    for (const [i, event] of events.entries()) {
      const mine: Outgoing[] = []
      for (const m of wanted[i]!) {
        const body = Buffer.from(JSON.stringify(m.body))
        for (const q of queues) {
          if (q.offering_uuid !== m.offeringUuid || q.object_type !== m.objectType) continue
          if (!(await mayReceive(q))) continue
          mine.push({
            vhost: vhostName(q.user_uuid),
            queue: queueName(q.subscription_uuid, q.offering_uuid, q.object_type),
            body,
            messageId: event.envelope.id,
            timestamp: new Date(event.envelope.time),
          })
        }
      }
      out.push(mine)
    }
    return out
  }

  /**
   * Runs passes until stopped: at once after each commit the source reports, at least every
   * RABBITMQ_RELAY_POLL_MS, and after a failure with a growing wait.
   */
  start(): void {
    if (this.running) return
    this.running = true
    this.unsubscribe = this.source.onEventsCommitted(this.ctx, () => this.poke())
    this.loop = this.run()
  }

  private poke(): void {
    this.woken = true
    // While the broker is failing, a commit does not cut the wait short.
    if (!this.backingOff) this.wake?.()
  }

  private sleep(ms: number): Promise<void> {
    if (this.woken || !this.running) return Promise.resolve()
    return new Promise((resolve) => {
      this.wake = () => {
        this.wake = null
        if (this.timer) clearTimeout(this.timer)
        this.timer = null
        resolve()
      }
      this.timer = setTimeout(() => this.wake?.(), ms)
    })
  }

  private async run(): Promise<void> {
    let backoff = 0
    while (this.running) {
      this.woken = false
      let wait = this.ctx.config.rabbitmqRelayPollMs
      try {
        const r = await this.runOnce()
        backoff = 0
        if (r.more) wait = 0
      } catch (e) {
        backoff = Math.min(BACKOFF_MAX_MS, backoff ? backoff * 2 : BACKOFF_MIN_MS)
        wait = backoff
        this.ctx.log.warn({ err: e, retryInMs: backoff }, 'event relay: RabbitMQ pass failed; retrying')
        this.woken = false
      }
      this.backingOff = backoff > 0
      if (wait > 0) await this.sleep(wait)
      this.backingOff = false
    }
  }

  /** Stops the loop, gives the lease back and closes the broker connections. */
  async stop(): Promise<void> {
    this.running = false
    this.unsubscribe?.()
    this.unsubscribe = null
    this.backingOff = false
    this.wake?.()
    await this.loop?.catch(() => {})
    this.loop = null
    await this.positions()
      .release(this.holder, this.ctx.clock().toISOString())
      .catch(() => {})
    await this.publisher.close()
  }
}

/**
 * Starts the relay of the event log to RabbitMQ when event queues are on (RABBITMQ_URL set);
 * answers it (to stop it) or null.
 */
export function startRelay(ctx: AppContext, source: EventSource, opts: RelayOptions = {}): Relay | null {
  if (!brokerSettings(ctx.config)) return null
  const relay = new Relay(ctx, source, opts)
  relay.start()
  return relay
}
