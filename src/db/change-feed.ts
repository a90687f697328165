// What tells this process that answers it keeps in memory still hold, so that they can be used
// without a statement to check them (`NotifiedCache`; the orders' retrieve and lists use it).
// On a SQLite file, the reading connection's data_version (`DataVersionFreshness`, below). On
// PostgreSQL, the change feed: what this process learns of changes to watched tables without
// asking. Changes come two ways:
// - from every process on the database, through LISTEN on `marketplace_changes` (on the process's
//   one listening connection, notifications.ts): triggers
//   (migration 2026-12-06T1400_change_notifications) notify `<schema> orders <ids>` after each
//   statement that updates or deletes orders, `<schema> orders *` when it touched too many to
//   name, `<schema> orders new` when it inserted some, and `<schema> epoch <name>` when an epoch
//   of `record_epochs` is raised. PostgreSQL delivers them when the writer commits, never on rollback;
//   an answer kept here may therefore lag another process's commit by the notification's delivery
//   (well under a millisecond on one machine), as the token cache lags it by up to
//   TOKEN_CACHE_SECONDS.
// - from this process's own connections, at once: a statement writing a watched table makes kept
//   answers unusable from its start until its transaction has ended and the notifications it
//   caused have come back (a fence notified after the end arrives after them). So a caller reads
//   its own writes, nobody reads another request's uncommitted ones from memory, and what the
//   write did not change stays kept.
//
// Nothing is used while the LISTEN connection is not established: a notification missed while it
// was down cannot be told from none, so (re)connecting drops everything kept.
import type { Notifications } from './notifications.js'
import { ORDER_RECORD_SOURCES } from './migrations/2026-11-24T1000_order_record_versions.js'
import { NEWLY_SHOWN } from './migrations/2026-11-26T1000_order_review_fields.js'

export const CHANGES_CHANNEL = 'marketplace_changes'

/**
 * A change told to the kept answers: of one table (an epoch is the table `epoch <name>`), the ids
 * of its changed rows (none: rows were only added) or null for any of them; or everything.
 */
export type Change = { table: string; ids: number[] | null } | 'all'

/** The site agents' tables, whose writes raise the epochs a kept services list is told by. */
const SITE_AGENT_TABLES = ['site_agent_services', 'site_agent_processors', 'site_agent_identities']

/**
 * Tables whose writes by this process count, named as in statements (quoted or not): the orders,
 * the epochs, the tables whose writes raise the records' epoch by trigger (both migrations'
 * lists: `service_providers` came with the second), and the site agents' tables.
 */
const WATCHED = new RegExp(
  `\\b(${['orders', 'record_epochs', ...new Set([...Object.keys(ORDER_RECORD_SOURCES), ...Object.keys(NEWLY_SHOWN)]), ...SITE_AGENT_TABLES].join('|')})\\b`,
)

export interface ConnectionState {
  inTransaction: boolean
  /** This transaction wrote a watched table (counted in `dirty`). */
  touched: boolean
}

/**
 * What tells kept answers whether they still hold: `ticket` before a read (null: nothing may be
 * used or kept now), `holds` after it (nothing changed meanwhile), `subscribe` for the changes.
 */
export interface Freshness {
  ticket(): number | null
  holds(ticket: number | null): boolean
  subscribe(listener: (change: Change) => void): () => void
}

export class ChangeFeed implements Freshness {
  readonly #notifications: Notifications
  readonly #listeners = new Set<(change: Change) => void>()
  #unlisten: (() => void) | null = null
  #live = false
  #closed = false
  /** Raised by every change told: a read that began at another generation keeps nothing. */
  #generation = 0
  /** This process's transactions (and statements) that wrote a watched table and have not ended. */
  #dirty = 0
  #waiters: (() => void)[] = []
  /** Fences sent after this process's writes whose notification has not come back yet. */
  readonly #fences = new Set<string>()
  #fenceSeq = 0

  /** Listens through `notifications`, the process's listening connection, from the first read on. */
  constructor(notifications: Notifications) {
    this.#notifications = notifications
  }

  /** The generation a read begins at, or null when nothing may be kept or used now. */
  ticket(): number | null {
    if (!this.#live) {
      this.#listen()
      return null
    }
    return this.#dirty > 0 || this.#fences.size > 0 ? null : this.#generation
  }

  /** Whether what was read at `ticket` may still be kept: nothing changed since. */
  holds(ticket: number | null): boolean {
    return (
      ticket !== null &&
      this.#live &&
      this.#dirty === 0 &&
      this.#fences.size === 0 &&
      ticket === this.#generation
    )
  }

  /**
   * Starts listening if it has not, and resolves once kept answers can be used: notifications are
   * coming in, and every write of this process has ended and its fence come back.
   */
  ready(): Promise<void> {
    if (this.ticket() !== null) return Promise.resolve()
    return new Promise((resolve) => this.#waiters.push(resolve))
  }

  #settled(): void {
    if (this.#waiters.length && this.ticket() !== null) for (const w of this.#waiters.splice(0)) w()
  }

  /** Calls `listener` with each change; the answer stops it. */
  subscribe(listener: (change: Change) => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  #tell(change: Change): void {
    this.#generation++
    for (const l of this.#listeners) l(change)
  }
  /**
   * Watches one pooled connection's statements (see `database.ts`): `send` runs one, and the
   * answer is its result. A write of a watched table holds the kept answers back from its start
   * to its transaction's end.
   */
  statement<T>(state: ConnectionState, text: string, send: () => Promise<T>): Promise<T> {
    const head = text.charCodeAt(0) | 0x20
    // select …: reads change nothing (the common case, decided on the first letter).
    if (head === 0x73 /* s */ && /^select\b/i.test(text)) return send()
    const verb = /^\s*(\w+)/.exec(text)?.[1]?.toLowerCase()
    if (verb === 'begin' || verb === 'start') {
      state.inTransaction = true
      return send()
    }
    // rollback to <savepoint>: the transaction goes on.
    if (verb === 'rollback' && /^\s*rollback\s+to\b/i.test(text)) return send()
    if (verb === 'commit' || verb === 'rollback' || verb === 'end' || verb === 'abort') {
      if (!state.touched) {
        state.inTransaction = false
        return send()
      }
      return this.#after(send, () => {
        state.inTransaction = false
        state.touched = false
        this.#dirty--
        this.#fence()
      })
    }
    if (verb === 'savepoint' || verb === 'release' || !WATCHED.test(text)) return send()
    // with …: a read unless one of its parts writes.
    if (verb === 'with' && !/\b(insert|update|delete)\b/i.test(text)) return send()
    if (state.inTransaction) {
      if (!state.touched) {
        state.touched = true
        this.#dirty++
      }
      this.#generation++
      return send()
    }
    this.#dirty++
    return this.#after(send, () => {
      this.#dirty--
      this.#fence()
    })
  }

  /**
   * After a write of this process ended: its notifications (which name the rows it changed) are
   * on their way. A fence notified now comes back after them, as notifications arrive in commit
   * order; until it does nothing kept is used. So kept answers the write did not touch stay kept.
   */
  #fence(): void {
    this.#generation++
    const schema = this.#notifications.schema
    if (!this.#live || schema === null) {
      this.#tell('all')
      return
    }
    const id = `${process.pid}.${++this.#fenceSeq}`
    this.#fences.add(id)
    this.#notifications.notify(CHANGES_CHANNEL, `${schema} fence ${id}`).catch(() => {
      // The connection's loss is told by `lost` (everything dropped).
      this.#fences.delete(id)
      this.#tell('all')
    })
  }

  #after<T>(send: () => Promise<T>, done: () => void): Promise<T> {
    this.#generation++
    return send().then(
      (r) => {
        done()
        return r
      },
      (e) => {
        done()
        throw e
      },
    )
  }

  /** A new connection's state for `statement`. */
  static connectionState(): ConnectionState {
    return { inTransaction: false, touched: false }
  }

  /** A connection left the pool: a transaction it had open ended with it. */
  connectionGone(state: ConnectionState): void {
    if (!state.touched) return
    state.touched = false
    state.inTransaction = false
    this.#dirty--
    this.#tell('all')
  }

  #listen(): void {
    if (this.#closed || this.#unlisten) return
    this.#unlisten = this.#notifications.listen(CHANGES_CHANNEL, {
      notification: (payload) => {
        const schema = this.#notifications.schema
        if (!payload || schema === null) return
        const [s, kind, id] = payload.split(' ')
        if (kind === 'fence' && s === schema) {
          if (this.#fences.delete(id!)) {
            this.#generation++
            this.#settled()
          }
          return
        }
        const change = parseChange(payload, schema)
        if (change) this.#tell(change)
      },
      connected: () => {
        // LISTEN is in place. Whatever was kept before is of unknown age.
        this.#tell('all')
        this.#live = true
        this.#settled()
      },
      lost: () => {
        // A notification missed from now on cannot be told from none.
        this.#live = false
        this.#fences.clear()
        this.#tell('all')
      },
    })
  }

  close(): void {
    this.#closed = true
    this.#live = false
    this.#unlisten?.()
    this.#unlisten = null
    this.#listeners.clear()
  }
}

/**
 * SQLite file: kept answers hold while the reading connection's `data_version` does not move. It
 * moves when any other connection commits (this process's writer, another process, an
 * operator's shell), and the reader sees committed data only; so one pragma, far cheaper than a
 * statement through the query builder, tells whether anything at all was written. Nothing is used
 * inside a request's own transaction (`inScope`), whose reads run on the writer.
 */
export class DataVersionFreshness implements Freshness {
  readonly #version: () => number
  readonly #inScope: () => boolean
  readonly #listeners = new Set<(change: Change) => void>()
  #seen = -1

  constructor(version: () => number, inScope: () => boolean) {
    this.#version = version
    this.#inScope = inScope
  }

  ticket(): number | null {
    if (this.#inScope()) return null
    const v = this.#version()
    if (v !== this.#seen) {
      this.#seen = v
      for (const l of this.#listeners) l('all')
    }
    return v
  }

  holds(ticket: number | null): boolean {
    return ticket !== null && !this.#inScope() && this.#version() === ticket
  }

  subscribe(listener: (change: Change) => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }
}

const feeds = new WeakMap<object, Freshness>()

/** Lets the repositories find the database's freshness from its Kysely instance (not a transaction's). */
export function registerFreshness(db: object, feed: Freshness): void {
  feeds.set(db, feed)
}

/** The freshness of this database handle: none for in-memory SQLite or a transaction's handle. */
export function freshnessOf(db: object): Freshness | undefined {
  return feeds.get(db)
}

/**
 * A `NotifiedCache` for each database's freshness, made on first use: `of(db)` is the cache of
 * `db`'s, or undefined where nothing may be kept (in-memory SQLite, a transaction's handle).
 */
export function notifiedCaches<V>(
  tables: readonly string[],
  max: number,
  idOf?: (v: V) => number,
): (db: object) => NotifiedCache<V> | undefined {
  const caches = new WeakMap<Freshness, NotifiedCache<V>>()
  return (db) => {
    const feed = freshnessOf(db)
    if (!feed) return undefined
    let cache = caches.get(feed)
    if (!cache) caches.set(feed, (cache = new NotifiedCache<V>(feed, tables, max, idOf)))
    return cache
  }
}

/** A notification's change, when it is of this schema. */
export function parseChange(payload: string, schema: string): Change | undefined {
  const [s, table, ids] = payload.split(' ')
  if (s !== schema || !table) return undefined
  if (table === 'epoch') return ids ? { table: `epoch ${ids}`, ids: null } : 'all'
  if (ids === undefined || ids === '*') return { table, ids: null }
  // Rows inserted: nothing kept of them yet.
  if (ids === 'new') return { table, ids: [] }
  const list = ids.split(',').map(Number)
  return list.every(Number.isSafeInteger) ? { table, ids: list } : { table, ids: null }
}

/**
 * Answers read from some tables, kept by key while the freshness tells no change that could alter
 * them. Given `idOf`, each answer is one row and goes when its id is told changed (a row inserted
 * changes none kept); without it, any change to the tables drops every answer (a list, a total).
 * A change of every row (an epoch, a truncate) or told as 'all' drops everything. At most `max`
 * are kept, the oldest going first.
 */
export class NotifiedCache<V> {
  readonly #feed: Freshness
  readonly #max: number
  readonly #idOf: ((v: V) => number) | undefined
  readonly #kept = new Map<string, V>()
  readonly #keys = new Map<number, string>()
  hits = 0
  misses = 0

  /** `tables`: the tables (and `epoch <name>`s) whose changes can alter the answers. */
  constructor(feed: Freshness, tables: readonly string[], max: number, idOf?: (v: V) => number) {
    this.#feed = feed
    this.#max = max
    this.#idOf = idOf
    feed.subscribe((change) => {
      if (change !== 'all' && !tables.includes(change.table)) return
      if (change === 'all' || change.ids === null || !idOf) {
        this.#kept.clear()
        this.#keys.clear()
        return
      }
      for (const id of change.ids) {
        const key = this.#keys.get(id)
        if (key === undefined) continue
        this.#kept.delete(key)
        this.#keys.delete(id)
      }
    })
  }

  /**
   * The answer kept for `key` (when `usable` allows it: an answer that holds for a while only),
   * else `read`'s (kept when nothing changed while it was read).
   */
  async get(key: string, read: () => Promise<V>, usable?: (kept: V) => boolean): Promise<V> {
    const ticket = this.#feed.ticket()
    if (ticket !== null) {
      const kept = this.#kept.get(key)
      if (kept !== undefined && (!usable || usable(kept))) {
        this.hits++
        return kept
      }
    }
    this.misses++
    const value = await read()
    if (value !== undefined && this.#max > 0 && this.#feed.holds(ticket)) this.#keep(key, value)
    return value
  }

  #keep(key: string, value: V): void {
    const replaced = this.#kept.get(key)
    if (replaced !== undefined) {
      this.#kept.delete(key)
      if (this.#idOf) this.#keys.delete(this.#idOf(replaced))
    }
    if (this.#kept.size >= this.#max) {
      const [oldest, v] = this.#kept.entries().next().value!
      this.#kept.delete(oldest)
      if (this.#idOf) this.#keys.delete(this.#idOf(v))
    }
    this.#kept.set(key, value)
    if (this.#idOf) this.#keys.set(this.#idOf(value), key)
  }
}
