// The only reader of process.env. Every setting is documented in README.md with its default.
import { DATABASE_POOL_SIZE, SQLITE_CACHE_MB } from './db/database.js'
import { parseCidr } from './http/addresses.js'

export interface Config {
  port: number
  host: string
  databaseUrl: string
  /** PostgreSQL: connections each server or worker process keeps open to the database, at most. */
  databasePoolSize: number
  publicUrl: string | null
  /**
   * Proxies whose X-Forwarded-* headers are believed: false (none), a hop count (the client is the
   * address that many proxies back), or the proxies' addresses and CIDRs.
   */
  trustProxy: false | number | string[]
  logLevel: string
  bootstrapStaffToken: string | null
  /** Signs support feedback tokens; null: the install's own secret, kept in the database. */
  secretKey: string | null
  /** Run the job worker inside the serve process. */
  workerEnabled: boolean
  workerPollMs: number
  /** Days finished (done or failed) jobs are kept before the worker deletes them; 0 keeps them. */
  jobRetentionDays: number
  /** Days events are kept before the cleanup job deletes them (at least 1). */
  eventRetentionDays: number
  /** Milliseconds between two looks for new events while streams are open (SQLite; a backstop on PostgreSQL). */
  eventPollMs: number
  /** Milliseconds between two heartbeat comments of an event stream. */
  eventHeartbeatMs: number
  /** SQLite file: milliseconds between background WAL checkpoints; 0 leaves them to the commits. */
  sqliteCheckpointMs: number
  /** SQLite: page cache per connection, in MB. */
  sqliteCacheMb: number
  /** Seconds a token look-up may be cached in-process (revocation delay bound). */
  tokenCacheSeconds: number
  /** Rendered order records kept in-process between requests (0: none). */
  orderRecordCacheSize: number
  bodyLimitBytes: number
  uploadLimitBytes: number
  /** Longest request target (path and query) answered; longer is 414. */
  urlLimitBytes: number
  uploadDir: string
  pageSizeDefault: number
  pageSizeMax: number
  requestTimeoutMs: number
  /** /metrics: a bearer token that opens it (null: none). */
  metricsToken: string | null
  /** /metrics: addresses and CIDRs that may read it without the token (empty: none). */
  metricsAllow: string[]
  /** Requests per minute per authenticated user (or per address for anonymous callers); 0 disables. */
  rateLimitPerMinute: number
  /** Login attempts per minute per username and client address; 0 disables. */
  loginRateLimitPerMinute: number
  /** Failed password logins per minute from one client address, across usernames (0: off). */
  loginFailuresPerAddressPerMinute: number
  /** Redis holding the rate limits' counts instead of the database (null: the database). */
  redisUrl: string | null
  /** Redis: longest wait for a connection or a command's answer, in ms. */
  redisTimeoutMs: number
  corsOrigins: string[]
  /** Hosts or CIDRs that callback_url may target besides public addresses. */
  callbackAllowList: string[]
  /** Allow callbacks to loopback/private addresses (tests, single-machine setups). */
  callbackAllowPrivate: boolean
  /** One delivery attempt: connecting, sending and reading the answer. */
  callbackTimeoutMs: number
  /** One delivery in all: it gives up this long after the state change, attempts and waits included. */
  callbackBudgetMs: number
  /** Deliveries in flight at once per process (in their own lane, beside order processing). */
  callbackConcurrency: number
  /** Deliveries in flight at once per process to one host. */
  callbackHostConcurrency: number
  feedbackTokenDays: number
  orderStartDateEnabled: boolean
  /** Compress answers (above 1 KB) for clients that accept it. */
  compression: boolean
  /** Serve the benchmark's reference route (a precomputed body behind the token check). */
  benchRoutes: boolean
  /** RabbitMQ over AMQP for the site agents' event queues (null: event queues off). */
  rabbitmqUrl: string | null
  /** RabbitMQ's management HTTP API, with an administrator's credentials in the URL (null: off). */
  rabbitmqManagementUrl: string | null
  /** One call to RabbitMQ (a management request, connecting, a publish's confirmation). */
  rabbitmqTimeoutMs: number
  /** The relay looks for new events at least this often (it is also woken by each commit). */
  rabbitmqRelayPollMs: number
}

/** Only this machine can reach a server bound to a loopback address. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host)
}

function int(
  env: NodeJS.ProcessEnv,
  name: string,
  dflt: number,
  min = 0,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return dflt
  const n = Number(raw)
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new Error(`${name} must be an integer from ${min} to ${max}, got "${raw}"`)
  }
  return n
}

/** A week: the longest a setting that is added to the current time may be (the result stays a date). */
const WEEK_MS = 7 * 24 * 3600 * 1000

function bool(env: NodeJS.ProcessEnv, name: string, dflt: boolean): boolean {
  const raw = env[name]
  if (raw === undefined || raw === '') return dflt
  if (/^(1|true|yes|on)$/i.test(raw)) return true
  if (/^(0|false|no|off)$/i.test(raw)) return false
  throw new Error(`${name} must be true or false, got "${raw}"`)
}

/**
 * TRUST_PROXY: unset, `false` or `0` trusts no proxy; a number is the count of proxies in front of
 * the server; otherwise a comma-separated list of the proxies' addresses and CIDRs. `true` would
 * believe a client's own X-Forwarded-For (the left-most address, which the client writes), so it
 * is refused.
 */
function trustProxy(env: NodeJS.ProcessEnv): false | number | string[] {
  const raw = (env.TRUST_PROXY ?? '').trim()
  if (raw === '' || /^(0|false|no|off)$/i.test(raw)) return false
  if (/^(true|yes|on)$/i.test(raw)) {
    throw new Error(
      `TRUST_PROXY=${raw} would trust the X-Forwarded-For a client writes itself: give the number of ` +
        'proxies in front of the server (e.g. 1) or their addresses/CIDRs (e.g. 10.0.0.5,10.1.0.0/16)',
    )
  }
  if (/^\d+$/.test(raw)) return int(env, 'TRUST_PROXY', 0, 1, 100)
  const entries = list(env, 'TRUST_PROXY')
  for (const entry of entries) {
    if (!parseCidr(entry)) {
      throw new Error(`TRUST_PROXY: "${entry}" is not an address or a CIDR (nor a hop count)`)
    }
  }
  return entries
}

function list(env: NodeJS.ProcessEnv, name: string): string[] {
  return (env[name] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
}

/** Host names, addresses and CIDRs; a malformed CIDR is refused at start, not at the first callback. */
function hostList(env: NodeJS.ProcessEnv, name: string): string[] {
  const entries = list(env, name)
  for (const entry of entries) {
    if (entry.includes('/') && !parseCidr(entry)) throw new Error(`${name}: "${entry}" is not a valid CIDR`)
  }
  return entries
}

/** RABBITMQ_URL and RABBITMQ_MANAGEMENT_URL: both or neither (event queues need the two). */
function rabbitmq(env: NodeJS.ProcessEnv): Pick<Config, 'rabbitmqUrl' | 'rabbitmqManagementUrl'> {
  const amqp = env.RABBITMQ_URL || null
  const management = env.RABBITMQ_MANAGEMENT_URL ? env.RABBITMQ_MANAGEMENT_URL.replace(/\/+$/, '') : null
  if (!amqp !== !management) {
    throw new Error('RABBITMQ_URL and RABBITMQ_MANAGEMENT_URL must be set together (or neither)')
  }
  if (amqp && !/^amqps?:\/\/[^/]+/.test(amqp)) throw new Error('RABBITMQ_URL must be an amqp(s) URL')
  if (management && !/^https?:\/\/[^/]+/.test(management)) {
    throw new Error('RABBITMQ_MANAGEMENT_URL must be an http(s) URL')
  }
  return { rabbitmqUrl: amqp, rabbitmqManagementUrl: management }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const publicUrl = env.PUBLIC_URL ? env.PUBLIC_URL.replace(/\/+$/, '') : null
  if (publicUrl && !/^https?:\/\/[^/]+/.test(publicUrl)) throw new Error('PUBLIC_URL must be an http(s) URL')
  const config: Config = {
    port: int(env, 'PORT', 8000),
    host: env.HOST || '127.0.0.1',
    databaseUrl: env.DATABASE_URL || 'sqlite:./data/marketplace.sqlite',
    databasePoolSize: int(env, 'DATABASE_POOL_SIZE', DATABASE_POOL_SIZE, 1, 1000),
    publicUrl,
    trustProxy: trustProxy(env),
    logLevel: env.LOG_LEVEL || 'info',
    bootstrapStaffToken: env.BOOTSTRAP_STAFF_TOKEN || null,
    secretKey: env.SECRET_KEY || null,
    workerEnabled: bool(env, 'WORKER_ENABLED', true),
    workerPollMs: int(env, 'WORKER_POLL_MS', 500, 10),
    jobRetentionDays: int(env, 'JOB_RETENTION_DAYS', 30),
    eventRetentionDays: int(env, 'EVENT_RETENTION_DAYS', 7, 1, 36500),
    eventPollMs: int(env, 'EVENT_POLL_MS', 50, 5),
    eventHeartbeatMs: int(env, 'EVENT_HEARTBEAT_MS', 15000, 10),
    sqliteCheckpointMs: int(env, 'SQLITE_CHECKPOINT_MS', 20),
    sqliteCacheMb: int(env, 'SQLITE_CACHE_MB', SQLITE_CACHE_MB, 1),
    tokenCacheSeconds: int(env, 'TOKEN_CACHE_SECONDS', 5),
    orderRecordCacheSize: int(env, 'ORDER_RECORD_CACHE_SIZE', 5000),
    bodyLimitBytes: int(env, 'BODY_LIMIT_BYTES', 1024 * 1024, 1024),
    uploadLimitBytes: int(env, 'UPLOAD_LIMIT_BYTES', 10 * 1024 * 1024, 1024),
    urlLimitBytes: int(env, 'URL_LIMIT_BYTES', 8192, 1024),
    uploadDir: env.UPLOAD_DIR || './data/uploads',
    pageSizeDefault: int(env, 'PAGE_SIZE_DEFAULT', 10, 1),
    pageSizeMax: int(env, 'PAGE_SIZE_MAX', 300, 1),
    requestTimeoutMs: int(env, 'REQUEST_TIMEOUT_MS', 30000),
    metricsToken: env.METRICS_TOKEN || null,
    metricsAllow: hostList(env, 'METRICS_ALLOW'),
    rateLimitPerMinute: int(env, 'RATE_LIMIT_PER_MINUTE', 0),
    loginRateLimitPerMinute: int(env, 'LOGIN_RATE_LIMIT_PER_MINUTE', 10),
    loginFailuresPerAddressPerMinute: int(env, 'LOGIN_FAILURES_PER_ADDRESS_PER_MINUTE', 30),
    redisUrl: env.REDIS_URL || null,
    redisTimeoutMs: int(env, 'REDIS_TIMEOUT_MS', 500, 10, 60_000),
    corsOrigins: list(env, 'CORS_ORIGINS'),
    callbackAllowList: hostList(env, 'CALLBACK_ALLOW_LIST'),
    callbackAllowPrivate: bool(env, 'CALLBACK_ALLOW_PRIVATE', false),
    callbackTimeoutMs: int(env, 'CALLBACK_TIMEOUT_MS', 5000, 1, WEEK_MS),
    callbackBudgetMs: int(env, 'CALLBACK_BUDGET_MS', 60000, 1, WEEK_MS),
    callbackConcurrency: int(env, 'CALLBACK_CONCURRENCY', 16, 1),
    callbackHostConcurrency: int(env, 'CALLBACK_HOST_CONCURRENCY', 4, 1),
    feedbackTokenDays: int(env, 'FEEDBACK_TOKEN_DAYS', 7, 1, 36500),
    orderStartDateEnabled: bool(env, 'ORDER_START_DATE_ENABLED', true),
    compression: bool(env, 'COMPRESSION', true),
    benchRoutes: bool(env, 'BENCH_ROUTES', false),
    ...rabbitmq(env),
    rabbitmqTimeoutMs: int(env, 'RABBITMQ_TIMEOUT_MS', 5000, 1, WEEK_MS),
    rabbitmqRelayPollMs: int(env, 'RABBITMQ_RELAY_POLL_MS', 1000, 10, WEEK_MS),
    ...overrides,
  }
  return Object.freeze(config)
}
