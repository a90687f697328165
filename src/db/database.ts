import { createHash } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { dirname } from 'node:path'
import SQLite from 'better-sqlite3'
import pg from 'pg'
import { Kysely, SqliteDialect, sql, type SqliteDialectConfig } from 'kysely'
import type { DB } from './tables.js'
import { GroupCommitDriver, withStatementCache, type CommitStats } from './sqlite-driver.js'
import { runsDirectly } from './compiled.js'
import type { RequestTransaction } from './request-transaction.js'
import { ScopedPostgresDialect } from './scoped-pg-driver.js'
import { ChangeFeed, DataVersionFreshness, registerFreshness, type ConnectionState } from './change-feed.js'
import { Notifications } from './notifications.js'
import { currentScope } from './request-transaction.js'
import { BACKSTOP_PAGES, startCheckpointer, type CheckpointResult } from './checkpointer.js'

export type Dialect = 'sqlite' | 'postgres'

/** SQLite's page cache per connection, in MB, unless told otherwise (`SQLITE_CACHE_MB`). */
export const SQLITE_CACHE_MB = 8

/**
 * PostgreSQL: connections a process keeps open at most, unless told otherwise
 * (`DATABASE_POOL_SIZE`): twice the cores, at least 2. On two cores shared with PostgreSQL, 4 cost
 * PostgreSQL less CPU a write than 10 did, at the same rates; 20 was slower (docs/performance.md).
 */
export const DATABASE_POOL_SIZE = Math.max(2, 2 * availableParallelism())

/**
 * PostgreSQL: each statement is prepared once a connection and its plan kept (generic plans).
 * The statements are prepared by name and take their LIMIT and OFFSET as parameters, for which a
 * generic plan must guess (a tenth of the rows); PostgreSQL then judged the generic plan dearer
 * than one made for the values and planned every execution anew: 0.5 to 0.9 ms of PostgreSQL's
 * CPU for a page of site agent services whose execution took 0.1 ms. Measured in
 * docs/performance.md ("PostgreSQL: generic plans"); a URL's own `options` may set
 * `plan_cache_mode` back.
 */
const GENERIC_PLANS = '-c plan_cache_mode=force_generic_plan'

export interface Database {
  db: Kysely<DB>
  dialect: Dialect
  /** PostgreSQL schema holding the tables, when not the default. */
  schema?: string
  /** SQLite: commits so far, and the writes they carried (several requests share a commit). */
  commitStats?: () => CommitStats
  /** SQLite: calls `listener` after each commit of writes by this process; the answer stops it. */
  onCommit?: (listener: () => void) => () => void
  /** SQLite file with background checkpoints only: copies the log into the file now. */
  checkpoint?: () => Promise<CheckpointResult>
  /**
   * Opens a request's own transaction: every statement run inside it (`run`), through any handle
   * of this database, is part of it (see request-transaction.ts).
   */
  beginRequest(): Promise<RequestTransaction>
  /**
   * Statements sent so far: on PostgreSQL every one on the pool's connections (`begin` and
   * `commit` included), on SQLite those the queries run (not the transactions' own). Tests pin
   * what a request costs with it.
   */
  statements(): number
  /** PostgreSQL: what this process learns of changes by notification (see change-feed.ts). */
  changes?: ChangeFeed
  /**
   * PostgreSQL: the process's one LISTEN connection, shared by the change feed and the event
   * streams' wake-ups (see notifications.ts).
   */
  notifications?: Notifications
  /** Closes the pool or file handle. */
  close(): Promise<void>
}

export interface DatabaseOptions {
  /** PostgreSQL only: put every table in this schema (created when missing). Tests use one per file. */
  schema?: string
  /** PostgreSQL: the pool's connections at most (default DATABASE_POOL_SIZE). */
  poolSize?: number
  /**
   * SQLite file only: milliseconds between WAL checkpoints run by a background thread (see
   * checkpointer.ts). 0 or absent leaves them to SQLite, inside the commits that cross its threshold.
   */
  checkpointIntervalMs?: number
  /** SQLite: the page cache of each connection, in MB (default SQLITE_CACHE_MB). */
  cacheMb?: number
  /** PostgreSQL: milliseconds before a lost LISTEN connection is opened again (default LISTEN_RETRY_MS). */
  listenRetryMs?: number
}

// int8 (count(*), sum of integers) comes back as a string by default; our counts fit in a double.
pg.types.setTypeParser(20, (v) => Number(v))

const TIMESTAMPTZ = 1184
const parseDate = pg.types.getTypeParser(TIMESTAMPTZ) as (v: string) => Date | number

/**
 * Values read back in the shapes SQLite gives and the repositories expect: a `timestamptz` as
 * the ISO-8601 UTC text stored there (milliseconds, `Z`; the session's time zone does not
 * matter). Booleans stay booleans (`toBool` reads 0/1 and true/false alike), uuids text.
 */
export const typeParsers: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: string) => {
    if (oid === TIMESTAMPTZ) {
      return (v: string) => {
        const d = parseDate(v)
        return d instanceof Date && Number.isFinite(d.getTime()) ? d.toISOString() : v
      }
    }
    return pg.types.getTypeParser(oid, format as 'text')
  }) as pg.CustomTypesConfig['getTypeParser'],
}

/** The SQLite dialect with the group-commit driver (see sqlite-driver.ts). */
class GroupCommitSqliteDialect extends SqliteDialect {
  readonly #driver: GroupCommitDriver
  constructor(driver: GroupCommitDriver) {
    super({ database: {} as SqliteDialectConfig['database'] })
    this.#driver = driver
  }
  override createDriver() {
    return this.#driver
  }
}

function openSqlite(file: string, reader: boolean, cacheMb: number): SQLite.Database {
  const handle = new SQLite(file)
  handle.pragma(`cache_size = -${Math.round(cacheMb * 1024)}`)
  if (!reader) {
    handle.pragma('journal_mode = WAL')
    handle.pragma('synchronous = NORMAL')
  }
  handle.pragma('foreign_keys = ON')
  handle.pragma('busy_timeout = 5000')
  if (reader) {
    handle.pragma('query_only = ON')
  } else {
    // Statement journals in memory: an order insert touches a dozen index pages, more than the
    // 64 KiB after which SQLite moves a statement journal to a temporary file, and opening one
    // doubled the insert's time. Large sorts, which also use temporary files, run on the reader.
    handle.pragma('temp_store = MEMORY')
  }
  return handle
}

/**
 * PostgreSQL plans an unnamed statement on every execution; for the order record (a dozen joins)
 * planning takes longer than running it. Reads and writes with parameters are sent as named
 * prepared statements instead, so each connection plans them once (PostgreSQL then reuses a
 * generic plan where it is as good). The name is a hash of the text; texts with long parameter
 * lists (variable-length IN lists) are left unnamed so a connection keeps a bounded set. The
 * bound leaves room for the longest fixed statement: an order's insert with its event and its
 * record (about 40 parameters), which re-planned on every create doubled the database's CPU for it.
 */
const NAMED_MAX_PARAMS = 64
const NAMED = /^\s*(select|insert|update|delete|with)\b/i

/** Statement names by text: the hash is taken once per text, not on every execution. */
const statementNames = new Map<string, string>()
const STATEMENT_NAMES_MAX = 5000

function statementName(text: string): string {
  let name = statementNames.get(text)
  if (name === undefined) {
    name = `k${createHash('sha1').update(text).digest('base64url')}`
    if (statementNames.size >= STATEMENT_NAMES_MAX) statementNames.clear()
    statementNames.set(text, name)
  }
  return name
}

/**
 * Wraps a pooled connection's `query`: counts its statements, prepares those with parameters by
 * name, and tells the change feed of each (see change-feed.ts).
 */
function namedStatements(client: pg.PoolClient, sent: { n: number }, changes: ChangeFeed): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown
  const state = ChangeFeed.connectionState()
  ;(client as { feedState?: unknown }).feedState = state
  const send = (text: unknown, values?: unknown, ...rest: unknown[]) => {
    if (
      typeof text === 'string' &&
      Array.isArray(values) &&
      values.length > 0 &&
      values.length <= NAMED_MAX_PARAMS &&
      rest.length === 0 &&
      NAMED.test(text)
    ) {
      return query({ name: statementName(text), text, values })
    }
    return query(text, values, ...rest)
  }
  ;(client as { query: unknown }).query = (text: unknown, values?: unknown, ...rest: unknown[]) => {
    sent.n++
    if (typeof text !== 'string' || rest.length) return send(text, values, ...rest)
    return changes.statement(state, text, () => send(text, values) as Promise<unknown>)
  }
}

export function dialectOf(url: string): Dialect {
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return 'postgres'
  if (url.startsWith('sqlite:')) return 'sqlite'
  throw new Error(`DATABASE_URL must start with sqlite: or postgres://, got "${url}"`)
}

export async function createDatabase(url: string, opts: DatabaseOptions = {}): Promise<Database> {
  const dialect = dialectOf(url)
  if (dialect === 'sqlite') {
    const file = url.slice('sqlite:'.length) || ':memory:'
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true })
    const cacheMb = opts.cacheMb ?? SQLITE_CACHE_MB
    const handle = openSqlite(file, false, cacheMb)
    // A file gets a second connection for the reads made outside a transaction.
    const readHandle = file === ':memory:' ? null : openSqlite(file, true, cacheMb)
    const readCache = readHandle ? withStatementCache(readHandle) : null
    const writeCache = withStatementCache(handle, 1000, () => readCache?.clear())
    const driver = new GroupCommitDriver(writeCache, readCache)
    const db = new Kysely<DB>({ dialect: new GroupCommitSqliteDialect(driver) })
    // No plugins, and outside a transaction every connection runs a statement through
    // driver.execute: the compiled statements may call it themselves.
    runsDirectly(db, (query) => driver.execute(query))
    if (readHandle) {
      const dataVersion = readHandle.prepare('pragma data_version').pluck()
      const version = () => dataVersion.get() as number
      registerFreshness(db, new DataVersionFreshness(version, () => currentScope(driver) !== undefined))
    }
    const commitStats = () => driver.stats
    const onCommit = (listener: () => void) => driver.onCommit(listener)
    const beginRequest = () => driver.beginRequest()
    const statements = () => driver.statements
    if (file === ':memory:' || !opts.checkpointIntervalMs) {
      return { db, dialect, commitStats, onCommit, beginRequest, statements, close: () => db.destroy() }
    }
    // Should the thread stop, commits checkpoint at the connection's own threshold again.
    const own = handle.pragma('wal_autocheckpoint', { simple: true }) as number
    handle.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`)
    const checkpointer = startCheckpointer(file, opts.checkpointIntervalMs, () => {
      if (handle.open) handle.pragma(`wal_autocheckpoint = ${own}`)
    })
    return {
      db,
      dialect,
      commitStats,
      onCommit,
      beginRequest,
      statements,
      checkpoint: () => checkpointer.run(),
      close: async () => {
        await checkpointer.close()
        await db.destroy()
      },
    }
  }
  // Two parameters of the URL are ours, not the driver's: `?schema=name` keeps every table in that
  // PostgreSQL schema, and `?options=` are server settings each connection starts with, after the
  // search path and generic plans (GENERIC_PLANS), so that they win over ours.
  const parsed = new URL(url)
  const schemaParam = parsed.searchParams.get('schema')
  const urlOptions = parsed.searchParams.get('options')
  if (schemaParam !== null || urlOptions !== null) {
    parsed.searchParams.delete('schema')
    parsed.searchParams.delete('options')
    url = parsed.toString()
  }
  if (schemaParam) opts = { ...opts, schema: opts.schema ?? schemaParam }
  if (opts.schema && !/^[a-z_][a-z0-9_]*$/.test(opts.schema)) throw new Error('invalid schema name')
  const options = [opts.schema ? `-c search_path=${opts.schema}` : '', GENERIC_PLANS, urlOptions ?? '']
    .filter(Boolean)
    .join(' ')
  if (opts.schema) {
    const admin = new pg.Client({ connectionString: url, options })
    await admin.connect()
    try {
      await admin.query(`CREATE SCHEMA IF NOT EXISTS ${opts.schema}`)
    } finally {
      await admin.end()
    }
  }
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.poolSize ?? DATABASE_POOL_SIZE,
    types: typeParsers,
    options,
  })
  const sent = { n: 0 }
  const notifications = new Notifications(url, options, opts.listenRetryMs)
  const changes = new ChangeFeed(notifications)
  pool.on('connect', (client) => namedStatements(client, sent, changes))
  pool.on('remove', (client) => {
    const state = (client as { feedState?: ConnectionState }).feedState
    if (state) changes.connectionGone(state)
  })
  const pgDialect = new ScopedPostgresDialect({ pool })
  const db = new Kysely<DB>({ dialect: pgDialect })
  registerFreshness(db, changes)
  return {
    db,
    dialect,
    schema: opts.schema,
    changes,
    notifications,
    beginRequest: () => pgDialect.driver.beginRequest(),
    statements: () => sent.n,
    close: async () => {
      changes.close()
      await notifications.close()
      await db.destroy()
    },
  }
}

/** The database URL as it may be logged: without its password. */
export function describeDatabaseUrl(url: string): string {
  if (dialectOf(url) !== 'postgres') return url
  try {
    const parsed = new URL(url)
    parsed.password = ''
    return parsed.toString()
  } catch {
    return 'postgres://(unparsable URL)'
  }
}

/**
 * Opens the database and makes one round trip, so a database that cannot be reached (refused,
 * unknown host, wrong password, a file that cannot be opened) is reported as such, by its URL
 * without credentials, before anything else is attempted.
 */
export async function connectDatabase(url: string, opts: DatabaseOptions = {}): Promise<Database> {
  let database: Database | undefined
  try {
    database = await createDatabase(url, opts)
    await ping(database.db)
    return database
  } catch (e) {
    await database?.close().catch(() => undefined)
    const err = e as { message?: string; code?: string; errors?: { message?: string }[] }
    const reason = err.message || err.errors?.[0]?.message || err.code || String(e)
    throw new Error(`cannot connect to database ${describeDatabaseUrl(url)}: ${reason}`, { cause: e })
  }
}

export async function ping(db: Kysely<DB>): Promise<void> {
  await sql`select 1`.execute(db)
}

export async function dropSchema(url: string, schema: string): Promise<void> {
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  try {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
  } finally {
    await admin.end()
  }
}
