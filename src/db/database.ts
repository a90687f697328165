import { createHash } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import SQLite from 'better-sqlite3'
import pg from 'pg'
import {
  CompiledQuery,
  Kysely,
  PostgresDialect,
  SqliteDialect,
  SqliteDriver,
  sql,
  type DatabaseConnection,
  type SqliteDialectConfig,
} from 'kysely'
import type { DB } from './tables.js'
import { BACKSTOP_PAGES, startCheckpointer, type CheckpointResult } from './checkpointer.js'

export type Dialect = 'sqlite' | 'postgres'

export interface Database {
  db: Kysely<DB>
  dialect: Dialect
  /** PostgreSQL schema holding the tables, when not the default. */
  schema?: string
  /** SQLite file with background checkpoints only: copies the log into the file now. */
  checkpoint?: () => Promise<CheckpointResult>
  /** Closes the pool or file handle. */
  close(): Promise<void>
}

export interface DatabaseOptions {
  /** PostgreSQL only: put every table in this schema (created when missing). Tests use one per file. */
  schema?: string
  poolSize?: number
  /**
   * SQLite file only: milliseconds between WAL checkpoints run by a background thread (see
   * checkpointer.ts). 0 or absent leaves them to SQLite, inside the commits that cross its threshold.
   */
  checkpointIntervalMs?: number
}

// int8 (count(*), sum of integers) comes back as a string by default; our counts fit in a double.
pg.types.setTypeParser(20, (v) => Number(v))

/**
 * SQLite transactions start with BEGIN IMMEDIATE: a deferred transaction that reads and then
 * writes fails at once with SQLITE_BUSY when another process wrote in between (the busy timeout
 * does not apply to that upgrade); taking the write lock up front makes concurrent writers queue.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'))
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig
  constructor(config: SqliteDialectConfig) {
    super(config)
    this.#config = config
  }
  override createDriver() {
    return new ImmediateSqliteDriver(this.#config)
  }
}

/** What Kysely's SQLite connection calls on a prepared statement. */
interface CachedStatement {
  reader: boolean
  all(params: readonly unknown[]): unknown[]
  run(params: readonly unknown[]): SQLite.RunResult
  iterate(params: readonly unknown[]): IterableIterator<unknown>
}

/**
 * Builds row objects from raw row arrays. better-sqlite3 turns each row into an object with
 * named properties in C++, which costs more than the query for a wide joined row; fetching the
 * row as an array and building the object with a literal compiled per column list is 2x cheaper.
 * Duplicate column names keep the last value, as better-sqlite3 does.
 */
function rowBuilder(columns: string[]): (row: unknown[]) => Record<string, unknown> {
  const fields = columns.map((c, i) => `${JSON.stringify(c)}: r[${i}]`).join(', ')
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  return new Function('r', `return { ${fields} }`) as (row: unknown[]) => Record<string, unknown>
}

function cachedStatement(handle: SQLite.Database, text: string): CachedStatement {
  const statement = handle.prepare(text)
  if (!statement.reader) {
    return {
      reader: false,
      all: (params) => statement.all(...params),
      run: (params) => statement.run(...params),
      iterate: (params) => statement.iterate(...params),
    }
  }
  const raw = handle.prepare(text).raw(true)
  let names = statement.columns().map((c) => c.name)
  let build = rowBuilder(names)
  return {
    reader: true,
    all(params) {
      const rows = raw.all(...params) as unknown[][]
      if (rows.length && rows[0]!.length !== names.length) {
        names = raw.columns().map((c) => c.name)
        build = rowBuilder(names)
      }
      return rows.map(build)
    },
    run: (params) => statement.run(...params),
    iterate: (params) => statement.iterate(...params),
  }
}

/**
 * Prepared statements reused by SQL text. Kysely prepares every query anew, which costs as much as
 * running a small one; the bound keeps queries with variable-length IN lists from growing it.
 * Statements are never iterated by Kysely here, so one statement per text is safe. A schema
 * change (a migration) empties the cache, so no row builder outlives the columns it was made for.
 */
export function withStatementCache(handle: SQLite.Database, max = 1000) {
  const cache = new Map<string, CachedStatement>()
  return {
    close: () => handle.close(),
    prepare(text: string): CachedStatement {
      let statement = cache.get(text)
      if (statement) return statement
      if (/^\s*(create|alter|drop)\b/i.test(text)) cache.clear()
      statement = cachedStatement(handle, text)
      if (cache.size >= max) cache.delete(cache.keys().next().value!)
      cache.set(text, statement)
      return statement
    },
  }
}

/**
 * PostgreSQL plans an unnamed statement on every execution; for the order record (a dozen joins)
 * planning takes longer than running it. Reads and writes with parameters are sent as named
 * prepared statements instead, so each connection plans them once (PostgreSQL then reuses a
 * generic plan where it is as good). The name is a hash of the text; texts with long parameter
 * lists (variable-length IN lists) are left unnamed so a connection keeps a bounded set.
 */
const NAMED_MAX_PARAMS = 32
const NAMED = /^\s*(select|insert|update|delete|with)\b/i

function namedStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown
  ;(client as { query: unknown }).query = (text: unknown, values?: unknown, ...rest: unknown[]) => {
    if (
      typeof text === 'string' &&
      Array.isArray(values) &&
      values.length > 0 &&
      values.length <= NAMED_MAX_PARAMS &&
      rest.length === 0 &&
      NAMED.test(text)
    ) {
      const name = `k${createHash('sha1').update(text).digest('base64url')}`
      return query({ name, text, values })
    }
    return query(text, values, ...rest)
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
    const handle = new SQLite(file)
    handle.pragma('journal_mode = WAL')
    handle.pragma('synchronous = NORMAL')
    handle.pragma('foreign_keys = ON')
    handle.pragma('busy_timeout = 5000')
    const db = new Kysely<DB>({
      dialect: new ImmediateSqliteDialect({ database: withStatementCache(handle) }),
    })
    if (file === ':memory:' || !opts.checkpointIntervalMs) return { db, dialect, close: () => db.destroy() }
    // Should the thread stop, commits checkpoint at the connection's own threshold again.
    const own = handle.pragma('wal_autocheckpoint', { simple: true }) as number
    handle.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`)
    const checkpointer = startCheckpointer(file, opts.checkpointIntervalMs, () => {
      if (handle.open) handle.pragma(`wal_autocheckpoint = ${own}`)
    })
    return {
      db,
      dialect,
      checkpoint: () => checkpointer.run(),
      close: async () => {
        await checkpointer.close()
        await db.destroy()
      },
    }
  }
  // `?schema=name` in the URL keeps every table in that PostgreSQL schema.
  const parsed = new URL(url)
  const schemaParam = parsed.searchParams.get('schema')
  if (schemaParam) {
    parsed.searchParams.delete('schema')
    url = parsed.toString()
    opts = { ...opts, schema: opts.schema ?? schemaParam }
  }
  if (opts.schema && !/^[a-z_][a-z0-9_]*$/.test(opts.schema)) throw new Error('invalid schema name')
  if (opts.schema) {
    const admin = new pg.Client({ connectionString: url })
    await admin.connect()
    try {
      await admin.query(`CREATE SCHEMA IF NOT EXISTS ${opts.schema}`)
    } finally {
      await admin.end()
    }
  }
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.poolSize ?? 10,
    ...(opts.schema ? { options: `-c search_path=${opts.schema}` } : {}),
  })
  pool.on('connect', (client) => namedStatements(client))
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) })
  return { db, dialect, schema: opts.schema, close: () => db.destroy() }
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
