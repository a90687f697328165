// PostgreSQL notifications: the one connection a process keeps for LISTEN, shared by whatever
// wants to hear of other processes' commits (the change feed of kept order answers, the event
// streams' wake-ups). It is opened at the first subscription, LISTENs on every channel somebody
// subscribed to, and is opened again `retryMs` after it was lost (a restart of the database server,
// a network fault, an operator's pg_terminate_backend). Notifications sent while it was down are
// lost for good, so each subscriber is told when it goes (`lost`) and when LISTEN is in place again
// (`connected`), and can make up for what it may have missed.
import pg from 'pg'

/** What a subscriber of one channel is told. */
export interface ChannelHandlers {
  /** A notification on the channel, with its payload ('' when it had none). */
  notification(payload: string): void
  /**
   * LISTEN on the channel is in place: every notification committed from now on arrives. Told
   * once per connection: after subscribing, and again after each reconnection.
   */
  connected?(): void
  /**
   * The connection went (or could not be made): notifications are missed until `connected` is
   * told again. Told at once, before anything else of this process can run.
   */
  lost?(): void
}

interface Subscription extends ChannelHandlers {
  channel: string
  /** The connection `connected` was told for. */
  toldOn: Connection | null
}

/** One attempt at the listening connection: its client and the channels it LISTENs on. */
interface Connection {
  client: pg.Client
  /** The search path's first schema, once connected. */
  schema: string | null
  /** Channels LISTENed on (or with a LISTEN on its way) on this connection. */
  listened: Set<string>
  syncing: boolean
  again: boolean
  /** The last query sent on it, settled or not: the next one is sent when it has settled. */
  tail: Promise<unknown>
}

/** A channel name as LISTEN takes it unquoted. */
const CHANNEL = /^[a-z_][a-z0-9_]*$/

/** Milliseconds before a lost listening connection is opened again, unless told otherwise. */
export const LISTEN_RETRY_MS = 1000

export class Notifications {
  readonly #url: string
  readonly #options: string | undefined
  readonly #retryMs: number
  readonly #channels = new Map<string, Set<Subscription>>()
  #connection: Connection | null = null
  #reconnect: NodeJS.Timeout | null = null
  #closed = false
  /** Told when the connection is lost (the app logs it). */
  warn: (msg: string, err: unknown) => void = () => {}

  /**
   * `url` without `?schema=`; `options` the pool's connection options (its search path), so that
   * `schema` is the pool's; `retryMs` the wait before a lost connection is opened again.
   */
  constructor(url: string, options?: string, retryMs = LISTEN_RETRY_MS) {
    this.#url = url
    this.#options = options
    this.#retryMs = retryMs
  }

  /**
   * Subscribes to `channel` (opening the connection if it is not open); the answer unsubscribes
   * (and UNLISTENs when nobody else listens on the channel).
   */
  listen(channel: string, handlers: ChannelHandlers): () => void {
    if (!CHANNEL.test(channel)) throw new Error(`invalid channel name ${channel}`)
    const sub: Subscription = { ...handlers, channel, toldOn: null }
    let subs = this.#channels.get(channel)
    if (!subs) this.#channels.set(channel, (subs = new Set()))
    subs.add(sub)
    const conn = this.#connection
    if (conn?.schema != null) void this.#sync(conn)
    else this.#connect()
    return () => this.#unlisten(sub)
  }

  #unlisten(sub: Subscription): void {
    const subs = this.#channels.get(sub.channel)
    if (!subs?.delete(sub) || subs.size) return
    this.#channels.delete(sub.channel)
    const conn = this.#connection
    if (!conn?.listened.delete(sub.channel)) return
    // Sent after any LISTEN on its way (the connection's queries go in order); a failure is the
    // connection's loss, handled by its 'error' or 'end'.
    this.#query(conn, `UNLISTEN ${sub.channel}`).catch(() => undefined)
  }

  /** Whether the connection is open (LISTEN may still be on its way for some channels). */
  get connected(): boolean {
    return this.#connection?.schema != null
  }

  /** The search path's first schema on the connection (the pool's), while it is open. */
  get schema(): string | null {
    return this.#connection?.schema ?? null
  }

  /** The listening connection's server process, while it is connected. */
  get pid(): number | null {
    return (this.#connection?.client as { processID?: number } | undefined)?.processID ?? null
  }

  /**
   * Notifies `channel` from the listening connection, so that it arrives after every notification
   * of a transaction that committed before it was sent (PostgreSQL delivers them in commit order).
   * Rejects when the connection is not open.
   */
  async notify(channel: string, payload: string): Promise<void> {
    const conn = this.#connection
    if (conn?.schema == null) throw new Error('the listening connection is not open')
    await this.#query(conn, 'select pg_notify($1, $2)', [channel, payload])
  }

  /**
   * Sends a query on the connection once the one before it has settled. A pg client queues the
   * queries it is given while one runs, but that queue is deprecated (pg 9 refuses a second query);
   * the fences' notifications, a LISTEN and an UNLISTEN can all be asked for at once.
   */
  #query<R extends pg.QueryResultRow>(
    conn: Connection,
    text: string,
    values?: unknown[],
  ): Promise<pg.QueryResult<R>> {
    const sent = conn.tail.then(() => conn.client.query<R>(text, values))
    conn.tail = sent.catch(() => undefined)
    return sent
  }

  #connect(): void {
    if (this.#closed || this.#connection || this.#reconnect) return
    const client = new pg.Client({ connectionString: this.#url, options: this.#options })
    const conn: Connection = {
      client,
      schema: null,
      listened: new Set(),
      syncing: false,
      again: false,
      tail: Promise.resolve(),
    }
    this.#connection = conn
    client.on('error', (e) => this.#lost(conn, e))
    client.on('end', () => this.#lost(conn, new Error('connection ended')))
    client.on('notification', (n) => {
      if (this.#connection !== conn) return
      for (const sub of [...(this.#channels.get(n.channel) ?? [])]) sub.notification(n.payload ?? '')
    })
    client
      .connect()
      .then(() => this.#query<{ s: string }>(conn, 'select current_schema() as s'))
      .then((r) => {
        if (this.#connection !== conn) return
        // The schema the triggers name in their notifications: the first of the search path.
        conn.schema = r.rows[0]!.s
        return this.#sync(conn)
      })
      .catch((e: unknown) => this.#lost(conn, e))
  }

  /**
   * LISTENs on every channel subscribed to and not yet listened on, then tells `connected` to
   * the subscriptions whose channel is listened on. One at a time per connection; a call while one
   * runs makes it go round again.
   */
  async #sync(conn: Connection): Promise<void> {
    if (conn.syncing) {
      conn.again = true
      return
    }
    conn.syncing = true
    try {
      do {
        conn.again = false
        const wanted = [...this.#channels.keys()].filter((c) => !conn.listened.has(c))
        if (wanted.length) {
          for (const c of wanted) conn.listened.add(c)
          await this.#query(conn, wanted.map((c) => `LISTEN ${c}`).join('; '))
        }
        for (const [channel, subs] of this.#channels) {
          if (!conn.listened.has(channel)) continue
          for (const sub of [...subs]) {
            if (this.#connection !== conn) return
            if (sub.toldOn === conn || !subs.has(sub)) continue
            sub.toldOn = conn
            sub.connected?.()
          }
        }
      } while (conn.again && this.#connection === conn)
    } catch (e) {
      this.#lost(conn, e)
    } finally {
      conn.syncing = false
    }
  }

  #lost(conn: Connection, e: unknown): void {
    if (this.#connection !== conn) return
    this.#connection = null
    void conn.client.end().catch(() => undefined)
    for (const subs of [...this.#channels.values()]) {
      for (const sub of [...subs]) {
        sub.toldOn = null
        sub.lost?.()
      }
    }
    if (this.#closed) return
    this.warn(`notifications lost; listening again in ${this.#retryMs} ms`, e)
    this.#reconnect = setTimeout(() => {
      this.#reconnect = null
      if (this.#channels.size) this.#connect()
    }, this.#retryMs)
    this.#reconnect.unref()
  }

  /** Closes the connection for good: nothing is told any more. */
  async close(): Promise<void> {
    this.#closed = true
    if (this.#reconnect) clearTimeout(this.#reconnect)
    this.#reconnect = null
    this.#channels.clear()
    const conn = this.#connection
    this.#connection = null
    if (conn) await conn.client.end().catch(() => undefined)
  }
}
