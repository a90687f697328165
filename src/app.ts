// Builds the Fastify app from config: plumbing first, then every area. Listening is main.ts's job,
// so tests build the app and call app.inject without opening a socket.
import { randomUUID } from 'node:crypto'
import { lookup } from 'node:dns/promises'
import { readFileSync } from 'node:fs'
import Fastify, { type FastifyInstance } from 'fastify'
import swagger from '@fastify/swagger'
import multipart from '@fastify/multipart'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Config } from './config.js'
import type { AppContext, LookupHost } from './context.js'
import { connectDatabase, ping, type Database } from './db/database.js'
import { migrateToLatest } from './db/migrate.js'
import { installSecret } from './db/install-secret.js'
import { installErrorHandling } from './http/errors.js'
import { installAuth, installAuthCheck, TokenCache } from './http/auth.js'
import { installRateLimit } from './http/rate-limit.js'
import {
  collectRoutes,
  installBaseUrl,
  installBodyParsing,
  installEmptyBody,
  installCors,
  installUrlLimit,
  installMethodNotAllowed,
  installSecurityHeaders,
  installValidators,
  lazySerializers,
} from './http/plumbing.js'
import { installMetrics } from './http/metrics.js'
import { installIdempotency } from './http/idempotency.js'
import { trustProxyFunction } from './http/addresses.js'
import { JobQueue } from './jobs/queue.js'
import { installBenchLimit } from './http/bench-limit.js'
import { installBodyDrain } from './http/drain.js'
import { uuid7 } from './http/uuid.js'
import { REDACTED_PATHS, redactUrl } from './http/redact.js'
import { areas } from './areas/index.js'
import { orderRecordCounters } from './areas/orders/service.js'
import { finishDocument } from './http/openapi.js'
import { installCompression, installDocsUi } from './http/docs-ui.js'
import { installVersion } from './http/version.js'
import { lazyChildLoggerFactory } from './http/request-log.js'

/** The product's name and version, as the OpenAPI document and the docs UI show them. */
export const PRODUCT = {
  title: 'Marketplace API',
  version: (
    JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
  ).version,
}

export interface AppDeps {
  clock?: () => Date
  newUuid?: () => string
  /** Name resolution for outgoing requests (default: the system's, as `dns.lookup`). */
  lookupHost?: LookupHost
  /** An already open database (tests share one per file); otherwise opened from config. */
  database?: Database
  /** Run migrations while building (default true). */
  migrate?: boolean
  /** Where logs go (default stdout); tests capture them to check nothing secret is logged. */
  logStream?: NodeJS.WritableStream
  /** Called on the new instance before anything is registered (tests add response checks). */
  instrument?: (app: FastifyInstance) => void
}

declare module 'fastify' {
  interface FastifyInstance {
    ctx: AppContext
    tokenCache: TokenCache
    /** Every documented API route: url → methods (the OpenAPI coverage test reads it). */
    apiRoutes: Map<string, Set<string>>
    /** The migrations this build applied (the start log names them). */
    migrationsApplied: string[]
  }
}

export type App = FastifyInstance

export async function buildApp(config: Config, deps: AppDeps = {}): Promise<FastifyInstance> {
  const clock = deps.clock ?? (() => new Date())
  const newUuid = deps.newUuid ?? (() => uuid7())
  const lookupHost = deps.lookupHost ?? ((hostname: string) => lookup(hostname, { all: true }))
  const database =
    deps.database ??
    (await connectDatabase(config.databaseUrl, {
      poolSize: config.databasePoolSize,
      checkpointIntervalMs: config.sqliteCheckpointMs,
      cacheMb: config.sqliteCacheMb,
    }))
  let migrationsApplied: string[] = []
  let secretKey: string
  try {
    if (deps.migrate !== false) migrationsApplied = await migrateToLatest(database.db, database.schema)
    secretKey = config.secretKey ?? (await installSecret(database.db, 'secret_key'))
  } catch (e) {
    if (!deps.database) await database.close()
    throw e
  }

  const app = Fastify({
    logger: {
      level: config.logLevel,
      ...(deps.logStream ? { stream: deps.logStream } : {}),
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      serializers: {
        req: (req: { method: string; url: string; id: string }) => ({
          method: req.method,
          // Tokens may travel in the query (x-auth-token): never log their values.
          url: redactUrl(req.url),
          id: req.id,
        }),
      },
    },
    bodyLimit: config.bodyLimitBytes,
    trustProxy: trustProxyFunction(config.trustProxy),
    requestTimeout: config.requestTimeoutMs,
    // Node checks for requests past their time every connectionsCheckingInterval (30 s by
    // default), so a slow request was cut up to that late; check often enough that the timeout,
    // counted from the request's first byte, holds within a tenth (at most a second).
    ...(config.requestTimeoutMs > 0 && {
      http: {
        requestTimeout: config.requestTimeoutMs,
        headersTimeout: config.requestTimeoutMs,
        connectionsCheckingInterval: Math.max(
          50,
          Math.min(1000, Math.floor(config.requestTimeoutMs / 10) || 1000),
        ),
      },
    }),
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, maxParamLength: 200 },
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    childLoggerFactory: lazyChildLoggerFactory,
    return503OnClosing: true,
    schemaController: { compilersFactory: { buildSerializer: lazySerializers() } },
  }).withTypeProvider<TypeBoxTypeProvider>()

  const jobs = new JobQueue(database.db, database.dialect, clock, app.log)
  if (database.notifications) database.notifications.warn = (msg, err) => app.log.warn({ err }, msg)
  const tokenCache = new TokenCache(config.tokenCacheSeconds * 1000)
  const ctx: AppContext = {
    db: database.db,
    dialect: database.dialect,
    config,
    secretKey,
    clock,
    newUuid,
    lookupHost,
    jobs,
    log: app.log,
    actorsChanged: () => tokenCache.invalidate(),
    onCommit: database.onCommit,
    notifications: database.notifications,
  }
  app.decorate('appConfig', config)
  app.decorate('ctx', ctx)
  app.decorate('tokenCache', tokenCache)
  app.decorate('migrationsApplied', migrationsApplied)

  deps.instrument?.(app)
  installValidators(app)
  installBodyParsing(app)
  installEmptyBody(app)
  installErrorHandling(app)
  installBaseUrl(app, config)
  await installSecurityHeaders(app)
  installBodyDrain(app)
  await installCors(app, config)
  installUrlLimit(app, config)
  // With a request limit, an authentication failure is answered after the limit has counted it
  // (callers rotating bogus tokens are counted by address); without one, at once.
  const { requestHook } = await installRateLimit(app, config, database.db, clock)
  installAuth(app, database.db, tokenCache, clock, { deferFailure: !!requestHook })
  if (requestHook) {
    app.addHook('onRequest', requestHook)
    installAuthCheck(app)
  }
  installMetrics(app, database, orderRecordCounters(ctx), jobs)
  const routes = collectRoutes(app)
  installIdempotency(app, database, ctx)
  // Before the docs UI's static files, so that they are compressed too.
  await installCompression(app, config)

  await app.register(multipart, {
    limits: { fileSize: config.uploadLimitBytes, files: 1, fields: 10, fieldSize: 64 * 1024 },
    throwFileSizeLimit: true,
  })

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: PRODUCT.title,
        version: PRODUCT.version,
        description:
          'Marketplace orders, cost policies, site agents, invitations, payment profiles, support feedback and cloud resources.',
      },
      components: {
        securitySchemes: {
          TokenAuth: {
            type: 'apiKey',
            in: 'header',
            name: 'Authorization',
            description: 'The word Token, a space, and the API token: `Token <key>`.',
          },
        },
      },
      security: [{ TokenAuth: [] }],
    },
    transformObject: (documentObject) =>
      finishDocument((documentObject as { openapiObject: Record<string, unknown> }).openapiObject, {
        ...PRODUCT,
        publicUrl: config.publicUrl,
      }),
  })
  // The docs UI's own routes (HTML and static assets) are public, like the schema.
  app.addHook('onRoute', (r) => {
    if (r.url.startsWith('/api/docs')) r.config = { ...(r.config ?? {}), auth: 'optional' }
  })
  // The docs UI gets the policy @fastify/swagger-ui makes for its own files (see installDocsUi),
  // in place of the API's, which allows nothing.
  await installDocsUi(app, PRODUCT)

  app.get('/api/schema/', { schema: { hide: true }, config: { auth: 'optional' } }, async () => app.swagger())

  app.get('/health/', { schema: { hide: true }, config: { auth: 'optional' } }, async (_req, reply) => {
    try {
      await ping(database.db)
      return { status: 'ok', database: database.dialect }
    } catch {
      return reply.code(503).send({ status: 'unavailable', database: database.dialect })
    }
  })

  if (config.benchRoutes) installBenchLimit(app)
  installVersion(app, PRODUCT.version)
  for (const area of areas) await app.register(area, { ctx })
  await app.after()
  app.decorate('apiRoutes', new Map(routes))
  installMethodNotAllowed(app, routes)

  app.addHook('onClose', async () => {
    await jobs.stop()
    if (!deps.database) await database.close()
  })
  return app
}
