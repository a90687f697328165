// Rate limits through @fastify/rate-limit: one limit per caller (the authenticated user, or the
// client address for anonymous callers and for credentials that fail), and a login throttle per
// username and address. Counts live in the database (every process and every server on it shares
// them) or in Redis when REDIS_URL is set, and in the database while Redis is away.
import { createHash } from 'node:crypto'
import rateLimit from '@fastify/rate-limit'
import type {
  FastifyInstance,
  FastifyRequest,
  onSendAsyncHookHandler,
  preHandlerAsyncHookHandler,
} from 'fastify'
import { Redis } from 'ioredis'
import { sql, type Kysely } from 'kysely'
import type { Config } from '../config.js'
import { AppError } from './errors.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** A route's preHandler throttling login attempts per username and client address. */
    loginThrottle: preHandlerAsyncHookHandler
    /** The login route's onSend hook: counts a refused login (400) for its client address. */
    loginFailed: onSendAsyncHookHandler
  }
}

const WINDOW_MS = 60_000
/** Routes never limited: probes and scrapers call them on a schedule of their own. */
const EXEMPT = new Set(['/health/', '/metrics'])
/** Expired rows are deleted at most this often (by clock time) per process. */
const PURGE_EVERY_MS = 60_000

type IncrCallback = (err: Error | null, res?: { current: number; ttl: number }) => void

/**
 * A store for @fastify/rate-limit on our database: a fixed window per key, counted by one upsert
 * (the same statement on SQLite and PostgreSQL), so concurrent requests of several processes
 * count exactly. Expired rows are deleted in passing.
 */
export class DatabaseRateLimitStore {
  private nextPurge = 0
  constructor(
    private readonly db: Kysely<any>,
    private readonly clock: () => Date,
  ) {}

  incr(key: string, cb: IncrCallback, timeWindow: number): void {
    this.hit(key, timeWindow).then(
      (res) => cb(null, res),
      (err: Error) => cb(err),
    )
  }

  child(): DatabaseRateLimitStore {
    return this
  }

  /** The count of `key`'s current window, without counting (0 when it has none). */
  async read(key: string): Promise<{ current: number; ttl: number }> {
    const now = this.clock().getTime()
    const { rows } = await sql<{ count: number | string; window_end_ms: number | string }>`
      select count, window_end_ms from rate_limits where key = ${key}`.execute(this.db)
    const row = rows[0]
    if (!row || Number(row.window_end_ms) <= now) return { current: 0, ttl: 0 }
    return { current: Number(row.count), ttl: Number(row.window_end_ms) - now }
  }

  async hit(key: string, timeWindow: number): Promise<{ current: number; ttl: number }> {
    const now = this.clock().getTime()
    if (now >= this.nextPurge) {
      this.nextPurge = now + PURGE_EVERY_MS
      await sql`delete from rate_limits where window_end_ms <= cast(${now} as bigint)`.execute(this.db)
    }
    const reset = now + timeWindow
    const { rows } = await sql<{ count: number | string; window_end_ms: number | string }>`
      insert into rate_limits (key, count, window_end_ms) values (${key}, 1, cast(${reset} as bigint))
      on conflict (key) do update set
        count = case when rate_limits.window_end_ms <= cast(${now} as bigint) then 1 else rate_limits.count + 1 end,
        window_end_ms = case when rate_limits.window_end_ms <= cast(${now} as bigint) then cast(${reset} as bigint)
                   else rate_limits.window_end_ms end
      returning count, window_end_ms`.execute(this.db)
    const row = rows[0]!
    return { current: Number(row.count), ttl: Math.max(0, Number(row.window_end_ms) - now) }
  }
}

/** Counts one hit in a fixed window (INCR, then the window's expiry on the first hit) → [count, ttl]. */
const REDIS_HIT = `
local current = redis.call('INCR', KEYS[1])
if current == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {current, ttl}
`

type RedisWithHit = Redis & {
  rateLimitHit(key: string, windowMs: number, cb: (err: Error | null, res?: [number, number]) => void): void
}

/** The prefix of every rate limit key in Redis. */
export const REDIS_KEY_PREFIX = 'marketplace-rate-limit:'

/**
 * A store on Redis that never waits on it: connections and commands have timeouts, commands are
 * never queued while Redis is unreachable, and while Redis is away (not connected, or a command
 * failed or timed out in the last `pauseMs`) each hit is counted by `fallback` instead, so the
 * limit still holds. Once the pause is over the next hit tries Redis again.
 */
export class RedisRateLimitStore {
  private awayUntil = 0
  private readonly redis: RedisWithHit
  constructor(
    redis: Redis,
    private readonly fallback: DatabaseRateLimitStore,
    private readonly onAway: (err: Error) => void,
    private readonly pauseMs = 5000,
  ) {
    this.redis = redis as RedisWithHit
    if (!('rateLimitHit' in redis)) redis.defineCommand('rateLimitHit', { numberOfKeys: 1, lua: REDIS_HIT })
  }

  child(): RedisRateLimitStore {
    return this
  }

  hit(key: string, timeWindow: number): Promise<{ current: number; ttl: number }> {
    return new Promise((resolve, reject) =>
      this.incr(
        key,
        (err, res) => (err || !res ? reject(err ?? new Error('no count')) : resolve(res)),
        timeWindow,
      ),
    )
  }

  /** The count of `key`'s current window, without counting; from the database while Redis is away. */
  async read(key: string): Promise<{ current: number; ttl: number }> {
    if (this.redis.status !== 'ready' || Date.now() < this.awayUntil) return this.fallback.read(key)
    try {
      const [[, count], [, ttl]] = (await this.redis
        .multi()
        .get(REDIS_KEY_PREFIX + key)
        .pttl(REDIS_KEY_PREFIX + key)
        .exec()) as [[Error | null, string | null], [Error | null, number]]
      return count === null ? { current: 0, ttl: 0 } : { current: Number(count), ttl: Math.max(0, ttl) }
    } catch (e) {
      this.awayUntil = Date.now() + this.pauseMs
      this.onAway(e as Error)
      return this.fallback.read(key)
    }
  }

  incr(key: string, cb: IncrCallback, timeWindow: number): void {
    if (this.redis.status !== 'ready' || Date.now() < this.awayUntil) {
      this.fallback.incr(key, cb, timeWindow)
      return
    }
    this.redis.rateLimitHit(REDIS_KEY_PREFIX + key, timeWindow, (err, res) => {
      if (err || !res) {
        this.awayUntil = Date.now() + this.pauseMs
        this.onAway(err ?? new Error('no answer'))
        this.fallback.incr(key, cb, timeWindow)
        return
      }
      cb(null, { current: Number(res[0]), ttl: Number(res[1]) })
    })
  }
}

/** The caller a request is counted for: the authenticated user, else the client address. */
export function callerKey(request: FastifyRequest): string {
  return request.actor ? `u:${request.actor.uuid}` : `ip:${request.ip}`
}

function throttled(ttlInSeconds: number): AppError {
  return new AppError('rate_limited', 'Request was throttled.', {
    'retry-after': String(Math.max(1, ttlInSeconds)),
  })
}

/**
 * Registers the limiter. The request limit's hook must run after the caller is identified and
 * before a failed authentication is answered, so that callers rotating bogus tokens are counted
 * as the one anonymous address they come from: app.ts adds it between the two.
 */
export async function installRateLimit(
  app: FastifyInstance,
  config: Config,
  db: Kysely<any>,
  clock: () => Date,
): Promise<{ requestHook: ReturnType<FastifyInstance['rateLimit']> | null }> {
  const database = new DatabaseRateLimitStore(db, clock)
  let store: DatabaseRateLimitStore | RedisRateLimitStore = database
  if (config.redisUrl) {
    const timeout = config.redisTimeoutMs
    const redis = new Redis(config.redisUrl, {
      connectTimeout: timeout,
      commandTimeout: timeout,
      // A command is sent only on a ready connection; otherwise the store counts elsewhere.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      // Reconnect in the background, at most every 2 s, for as long as the server runs.
      retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    })
    let warned = 0
    const away = (err: Error) => {
      // One warning per pause, not one per request.
      if (Date.now() - warned < 5000) return
      warned = Date.now()
      app.log.warn({ err: err.message }, 'rate limit: Redis unavailable, counting in the database')
    }
    redis.on('error', away)
    store = new RedisRateLimitStore(redis, database, away)
    // The first requests find Redis connected when it answers at once; the server starts anyway.
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer)
        redis.off('ready', done)
        resolve()
      }
      const timer = setTimeout(done, timeout)
      redis.once('ready', done)
    })
    app.addHook('onClose', async () => {
      redis.disconnect()
    })
  }
  await app.register(rateLimit, {
    global: false,
    timeWindow: WINDOW_MS,
    store: function Store() {
      return store
    } as any,
    errorResponseBuilder: (_req, ctx) => throttled(Math.ceil(ctx.ttl / 1000)),
  })

  const loginLimit = config.loginRateLimitPerMinute
  const login = app.createRateLimit({
    max: loginLimit,
    timeWindow: WINDOW_MS,
    keyGenerator: (request) => {
      const username = String((request.body as { username?: unknown } | undefined)?.username ?? '')
      const digest = createHash('sha256').update(username).digest('hex').slice(0, 32)
      return `login:${request.ip}:${digest}`
    },
  })
  // Failed logins per client address, whatever the usernames: password spraying across many
  // accounts is refused as a whole, while the per-username limit above keeps its own count.
  const failureLimit = config.loginFailuresPerAddressPerMinute
  const failureKey = (request: FastifyRequest) => `login-failed:${request.ip}`
  app.decorate('loginThrottle', async (request: FastifyRequest) => {
    if (failureLimit > 0) {
      const failures = await store.read(failureKey(request))
      if (failures.current >= failureLimit) throw throttled(Math.ceil(failures.ttl / 1000))
    }
    if (loginLimit <= 0) return
    const res = await login(request)
    if (!res.isAllowed && res.isExceeded) throw throttled(res.ttlInSeconds)
  })
  // Counted before the answer goes out, so the next attempt already sees it; a hook of the login
  // route only, so no other request pays for it.
  app.decorate(
    'loginFailed',
    async (request: FastifyRequest, reply: { statusCode: number }, payload: unknown) => {
      if (failureLimit <= 0 || reply.statusCode !== 400) return payload
      await store.hit(failureKey(request), WINDOW_MS).catch((err: unknown) => {
        app.log.warn({ err }, 'rate limit: a failed login was not counted')
      })
      return payload
    },
  )

  if (config.rateLimitPerMinute <= 0) return { requestHook: null }
  const requestHook = app.rateLimit({
    max: config.rateLimitPerMinute,
    timeWindow: WINDOW_MS,
    keyGenerator: callerKey,
    allowList: (request) => EXEMPT.has(request.routeOptions.url ?? ''),
  })
  return { requestHook }
}
