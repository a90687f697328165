// Rate limits through @fastify/rate-limit: one limit per caller (the authenticated user, or the
// client address for anonymous callers and for credentials that fail), and a login throttle per
// username and address. Counts live in the database (every process and every server on it shares
// them) or in Redis when REDIS_URL is set.
import { createHash } from 'node:crypto'
import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify'
import { Redis } from 'ioredis'
import { sql, type Kysely } from 'kysely'
import type { Config } from '../config.js'
import { AppError } from './errors.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** A route's preHandler throttling login attempts per username and client address. */
    loginThrottle: preHandlerAsyncHookHandler
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
  let redis: Redis | null = null
  if (config.redisUrl) {
    redis = new Redis(config.redisUrl, {
      connectTimeout: 1000,
      maxRetriesPerRequest: 1,
      lazyConnect: false,
    })
    // Connection errors are reported per request (the limit is then skipped), not thrown here.
    redis.on('error', (err: Error) => app.log.warn({ err: err.message }, 'rate limit: Redis unavailable'))
    app.addHook('onClose', async () => {
      redis?.disconnect()
    })
  }
  const store = new DatabaseRateLimitStore(db, clock)
  await app.register(rateLimit, {
    global: false,
    timeWindow: WINDOW_MS,
    ...(redis
      ? { redis, nameSpace: 'marketplace-rate-limit:', skipOnError: true }
      : {
          store: function Store() {
            return store
          } as any,
        }),
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
  app.decorate('loginThrottle', async (request: FastifyRequest) => {
    if (loginLimit <= 0) return
    const res = await login(request)
    if (!res.isAllowed && res.isExceeded) throw throttled(res.ttlInSeconds)
  })

  if (config.rateLimitPerMinute <= 0) return { requestHook: null }
  const requestHook = app.rateLimit({
    max: config.rateLimitPerMinute,
    timeWindow: WINDOW_MS,
    keyGenerator: callerKey,
    allowList: (request) => EXEMPT.has(request.routeOptions.url ?? ''),
  })
  return { requestHook }
}
