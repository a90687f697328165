// RabbitMQ: its management HTTP API (virtual hosts, users, permissions and queues of the event
// subscriptions) and an AMQP publisher with publisher confirms. Every call to the broker (requests,
// connecting, opening a channel, waiting for confirms, closing) is bounded by the jobs' deadline
// helper: a timer held by the event loop, not an AbortSignal.timeout() a garbage collection can drop.
import amqp from 'amqplib'
import type { Config } from '../../config.js'
import { deadline, settledBy } from '../../jobs/deadline.js'

export interface BrokerSettings {
  /** amqp(s)://user:password@host:port[/vhost]: the relay's connections (the vhost is replaced). */
  amqpUrl: string
  /** http(s)://user:password@host:port: the management API, as an administrator. */
  managementUrl: string
  timeoutMs: number
}

/** The broker's settings, or null when event queues are off (RABBITMQ_URL unset). */
export function brokerSettings(config: Config): BrokerSettings | null {
  if (!config.rabbitmqUrl || !config.rabbitmqManagementUrl) return null
  return {
    amqpUrl: config.rabbitmqUrl,
    managementUrl: config.rabbitmqManagementUrl,
    timeoutMs: config.rabbitmqTimeoutMs,
  }
}

/** A call to the broker that did not succeed: unreachable, too slow, or refused. */
export class BrokerError extends Error {
  constructor(
    message: string,
    /** The broker answered that this will not work however often it is tried (e.g. no such vhost). */
    readonly permanent = false,
  ) {
    super(message)
    this.name = 'BrokerError'
  }
}

/**
 * Runs `work` with a signal aborted after `ms` by the deadline's own timer (held by the event loop
 * whatever the garbage collector does, cleared when `work` settles). When the time is up first,
 * answers a BrokerError naming `what` at once, without waiting for `work` (and `work`'s late result
 * is handed to `late`, so that a connection opened too late is closed rather than leaked).
 */
export async function withTimeout<T>(
  ms: number,
  what: string,
  work: (signal: AbortSignal) => Promise<T>,
  late?: (value: T) => void,
): Promise<T> {
  const d = deadline(ms)
  let running: Promise<T> | undefined
  try {
    running = work(d.signal)
    return await settledBy(running, d.signal)
  } catch (e) {
    if (d.signal.aborted) {
      running?.then(
        (v) => late?.(v),
        () => {},
      )
      throw new BrokerError(`${what}: no answer within ${ms} ms`)
    }
    throw e instanceof BrokerError ? e : new BrokerError(`${what}: ${(e as Error)?.message ?? e}`)
  } finally {
    d.clear()
  }
}

/** Names of the broker's objects for one subscription (the reference agent derives the same). */
export function hex(uuid: string): string {
  return uuid.replace(/-/g, '').toLowerCase()
}
export function vhostName(userUuid: string): string {
  return hex(userUuid)
}
export function rabbitUserName(subscriptionUuid: string): string {
  return hex(subscriptionUuid)
}
export function queueName(subscriptionUuid: string, offeringUuid: string, objectType: string): string {
  return `subscription_${hex(subscriptionUuid)}_offering_${hex(offeringUuid)}_${objectType}`
}
/** Every queue of a subscription starts so: what its RabbitMQ user may read. */
export function queuePrefix(subscriptionUuid: string): string {
  return `subscription_${hex(subscriptionUuid)}_`
}

/** The user name in an amqp or http URL (decoded), or `guest` as RabbitMQ's default. */
export function urlUser(url: string): string {
  const u = new URL(url)
  return u.username ? decodeURIComponent(u.username) : 'guest'
}

/** RabbitMQ's management HTTP API, as the administrator named in its URL. */
export class ManagementApi {
  private readonly base: string
  private readonly authorization: string
  constructor(private readonly settings: BrokerSettings) {
    const u = new URL(settings.managementUrl)
    const user = u.username ? decodeURIComponent(u.username) : 'guest'
    const password = u.password ? decodeURIComponent(u.password) : 'guest'
    this.authorization = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`
    u.username = ''
    u.password = ''
    this.base = u.toString().replace(/\/+$/, '')
  }

  /** One request; answers the parsed body (or null). 404 answers null when `missingOk`. */
  async request(
    method: string,
    path: string,
    body?: unknown,
    { missingOk = false }: { missingOk?: boolean } = {},
  ): Promise<unknown> {
    const what = `RabbitMQ management ${method} ${path}`
    return withTimeout(this.settings.timeoutMs, what, async (signal) => {
      const res = await fetch(`${this.base}${path}`, {
        method,
        signal,
        headers: {
          authorization: this.authorization,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
      const text = await res.text()
      if (res.status === 404 && missingOk) return null
      if (!res.ok) {
        const permanent = res.status >= 400 && res.status < 500
        throw new BrokerError(`${what}: ${res.status} ${text.slice(0, 200)}`, permanent)
      }
      return text ? (JSON.parse(text) as unknown) : null
    })
  }

  /**
   * The virtual host of the subscription's user, the subscription's RabbitMQ user (its password
   * the agent's API token: the STOMP passcode), its right to read its own queues only, the relay's
   * right to publish there, and the durable queue.
   */
  async ensureQueue(q: {
    vhost: string
    user: string
    password: string
    readPattern: string
    queue: string
  }): Promise<void> {
    const v = encodeURIComponent(q.vhost)
    await this.request('PUT', `/api/vhosts/${v}`, {})
    await this.request('PUT', `/api/users/${encodeURIComponent(q.user)}`, { password: q.password, tags: '' })
    await this.request('PUT', `/api/permissions/${v}/${encodeURIComponent(q.user)}`, {
      configure: '^$',
      write: '^$',
      read: q.readPattern,
    })
    const relayUser = urlUser(this.settings.amqpUrl)
    await this.request('PUT', `/api/permissions/${v}/${encodeURIComponent(relayUser)}`, {
      configure: '.*',
      write: '.*',
      read: '.*',
    })
    await this.request('PUT', `/api/queues/${v}/${encodeURIComponent(q.queue)}`, {
      durable: true,
      auto_delete: false,
      arguments: {},
    })
  }

  /** Removes a subscription's RabbitMQ user and queues (those already gone are fine). */
  async removeSubscription(s: { vhost: string; user: string; queues: string[] }): Promise<void> {
    const v = encodeURIComponent(s.vhost)
    for (const queue of s.queues) {
      await this.request('DELETE', `/api/queues/${v}/${encodeURIComponent(queue)}`, undefined, {
        missingOk: true,
      })
    }
    await this.request('DELETE', `/api/users/${encodeURIComponent(s.user)}`, undefined, { missingOk: true })
  }
}

/** One message to one queue. */
export interface Outgoing {
  vhost: string
  queue: string
  body: Buffer
  /** The event's id (AMQP message-id: a consumer can drop a repeat). */
  messageId: string
  timestamp: Date
}

interface Link {
  connection: amqp.ChannelModel
  channel: amqp.ConfirmChannel
}

/**
 * Closes a connection, waiting for the broker's answer at most `ms`; without one, its socket is
 * dropped. Never throws.
 */
export async function closeConnection(connection: amqp.ChannelModel, ms: number): Promise<void> {
  try {
    await withTimeout(ms, 'RabbitMQ connection close', () => connection.close())
  } catch (e) {
    if (!(e instanceof BrokerError) || !/no answer within/.test(e.message)) return
    const socket = (connection.connection as unknown as { stream?: { destroy?: () => void } }).stream
    socket?.destroy?.()
  }
}

/**
 * Publishes to queues (through the default exchange, persistent) and answers once the broker has
 * confirmed every message: one AMQP connection and confirm channel per virtual host, opened when
 * first needed and dropped when it fails (the next publish opens it again).
 */
export class Publisher {
  private readonly links = new Map<string, Promise<Link>>()
  /** The connection each vhost's link is on, once connected (a late event of an old one is ignored). */
  private readonly connections = new Map<string, amqp.ChannelModel>()
  constructor(private readonly settings: BrokerSettings) {}

  private urlFor(vhost: string): string {
    const u = new URL(this.settings.amqpUrl)
    u.pathname = `/${encodeURIComponent(vhost)}`
    return u.toString()
  }

  private link(vhost: string): Promise<Link> {
    let link = this.links.get(vhost)
    if (!link) {
      link = this.open(vhost)
      this.links.set(vhost, link)
      link.catch(() => {
        if (this.links.get(vhost) === link) this.links.delete(vhost)
      })
    }
    return link
  }

  private async open(vhost: string): Promise<Link> {
    const what = `RabbitMQ connection to virtual host ${vhost}`
    const connection = await withTimeout(
      this.settings.timeoutMs,
      what,
      () =>
        amqp.connect(this.urlFor(vhost), { timeout: this.settings.timeoutMs }).catch((e: unknown) => {
          // Closed by the broker while opening the virtual host (530 NOT_ALLOWED: the vhost is
          // gone, or closed to the relay's user): that vhost only, and for good. A refused login
          // (403) concerns every vhost: it is not permanent, the relay waits for it to be fixed.
          const message = (e as Error)?.message ?? String(e)
          throw new BrokerError(
            `${what}: ${message}`,
            /NOT_ALLOWED|Expected ConnectionOpenOk; got <ConnectionClose/.test(message),
          )
        }),
      (late) => void closeConnection(late, this.settings.timeoutMs),
    )
    this.connections.set(vhost, connection)
    const forget = () => {
      if (this.connections.get(vhost) === connection) this.forget(vhost)
      else void closeConnection(connection, this.settings.timeoutMs)
    }
    connection.on('error', forget)
    connection.on('close', forget)
    try {
      const channel = await withTimeout(this.settings.timeoutMs, what, () =>
        connection.createConfirmChannel(),
      )
      channel.on('error', forget)
      channel.on('close', forget)
      return { connection, channel }
    } catch (e) {
      await closeConnection(connection, this.settings.timeoutMs)
      throw e
    }
  }

  private forget(vhost: string): void {
    const link = this.links.get(vhost)
    this.connections.delete(vhost)
    if (!link) return
    this.links.delete(vhost)
    link.then((l) => closeConnection(l.connection, this.settings.timeoutMs)).catch(() => {})
  }

  /**
   * Sends the messages in order and waits for the broker's confirmation of all of them. Answers,
   * per message, null (confirmed) or the error (a message not sent has the error that stopped it).
   */
  async publish(messages: readonly Outgoing[]): Promise<(BrokerError | null)[]> {
    const results: (BrokerError | null)[] = messages.map(() => null)
    const confirmed = messages.map(() => false)
    const waits: Promise<void>[] = []
    // A vhost refused for good fails its own messages; any other failure to connect stops the
    // sending, so that no later message overtakes one that will be sent again.
    const refused = new Map<string, BrokerError>()
    let stopped: BrokerError | null = null
    for (const [i, m] of messages.entries()) {
      if (stopped || refused.has(m.vhost)) {
        results[i] = stopped ?? refused.get(m.vhost)!
        continue
      }
      let link: Link
      try {
        link = await this.link(m.vhost)
      } catch (e) {
        const err = e instanceof BrokerError ? e : new BrokerError(String(e))
        results[i] = err
        if (err.permanent) refused.set(m.vhost, err)
        else stopped = err
        continue
      }
      waits.push(
        new Promise<void>((resolve) => {
          try {
            link.channel.publish(
              '',
              m.queue,
              m.body,
              {
                persistent: true,
                contentType: 'application/json',
                messageId: m.messageId,
                timestamp: Math.floor(m.timestamp.getTime() / 1000),
              },
              (err: unknown) => {
                if (err) results[i] = new BrokerError(`publish to ${m.queue}: ${String(err)}`)
                else confirmed[i] = true
                resolve()
              },
            )
          } catch (e) {
            results[i] = new BrokerError(`publish to ${m.queue}: ${(e as Error).message}`)
            this.forget(m.vhost)
            resolve()
          }
        }),
      )
    }
    try {
      await withTimeout(this.settings.timeoutMs, 'RabbitMQ publisher confirms', () =>
        Promise.all(waits).then(() => undefined),
      )
    } catch (e) {
      // Unconfirmed in time: count every message not yet confirmed as failed, and start afresh.
      for (const vhost of new Set(messages.map((m) => m.vhost))) this.forget(vhost)
      return messages.map((_, i) => results[i] ?? (confirmed[i] ? null : (e as BrokerError)))
    }
    return results
  }

  async close(): Promise<void> {
    const links = [...this.links.values()]
    this.links.clear()
    this.connections.clear()
    await Promise.all(
      links.map((l) => l.then((x) => closeConnection(x.connection, this.settings.timeoutMs)).catch(() => {})),
    )
  }
}
