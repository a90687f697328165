// SQLite under many concurrent requests: reads on a connection of their own, and the write
// transactions of requests that arrive together committed as one.
//
// A commit costs more than the statements of a typical request (the log frames of every page the
// transaction touched, the full-text index flush), and SQLite has one writer anyway. So a write
// transaction does not commit alone: it runs inside a SAVEPOINT of a transaction that stays open
// until the event loop has run every request that arrived with it, then one COMMIT makes them all
// durable at once. Each request's result is handed back only after that commit, so nothing is
// answered before it is on disk; a request that fails rolls back to its own savepoint and leaves
// the others' work alone. Reads outside a transaction never see that open transaction: on a file
// they run on a second connection (WAL readers see the last commit), and on an in-memory database,
// which has one connection only, a read first commits what is open.
import SQLite from 'better-sqlite3'
import { keptOrMade } from '../kept.js'
import type { CompiledQuery, DatabaseConnection, Driver, QueryResult } from 'kysely'
import {
  closeScope,
  currentScope,
  newScope,
  runInScope,
  type RequestScope,
  type RequestTransaction,
  Lock,
} from './request-transaction.js'

/** What the driver calls on a prepared statement. */
export interface CachedStatement {
  /** It answers rows (a select, or a write with RETURNING). */
  reader: boolean
  /** It leaves the database unchanged (a pragma may still set something: see `pragma`). */
  readonly: boolean
  /** A pragma: reads or sets something of the connection it runs on. */
  pragma: boolean
  all(params: readonly unknown[]): unknown[]
  run(params: readonly unknown[]): SQLite.RunResult
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

/**
 * `lower(column) like` as `column like`: SQLite's LIKE ignores the case of ASCII letters, which
 * are all that its lower() folds, so the two match the same rows (`ilike` in sql.ts writes lower()
 * for PostgreSQL, whose LIKE is case-sensitive). Without lower(), no string is built per row:
 * a contains-match over 1,000 project names took 44 us instead of 72 us.
 */
export function withoutLowerInLike(text: string): string {
  return text.replace(/\blower\(("[^"]+"(?:\."[^"]+")?)\) like /g, '$1 like ')
}

function cachedStatement(handle: SQLite.Database, text: string): CachedStatement {
  const prepared = withoutLowerInLike(text)
  const statement = handle.prepare(prepared)
  const readonly = statement.readonly
  const pragma = /^\s*pragma\b/i.test(text)
  if (!statement.reader) {
    return {
      reader: false,
      readonly,
      pragma,
      all: (params) => statement.all(...params),
      run: (params) => statement.run(...params),
    }
  }
  const raw = handle.prepare(prepared).raw(true)
  let names = statement.columns().map((c) => c.name)
  let build = rowBuilder(names)
  return {
    reader: true,
    readonly,
    pragma,
    all(params) {
      const rows = raw.all(...params) as unknown[][]
      if (rows.length && rows[0]!.length !== names.length) {
        names = raw.columns().map((c) => c.name)
        build = rowBuilder(names)
      }
      return rows.map(build)
    },
    run: (params) => statement.run(...params),
  }
}

const SCHEMA_CHANGE = /^\s*(create|alter|drop)\b/i

export interface StatementCache {
  handle: SQLite.Database
  prepare(text: string): CachedStatement
  /** Forgets every statement (another connection changed the schema). */
  clear(): void
  close(): void
}

/**
 * Prepared statements reused by SQL text. Kysely prepares every query anew, which costs as much as
 * running a small one; the bound keeps queries with variable-length IN lists from growing it.
 * Statements are never iterated here, so one statement per text is safe. A schema change (a
 * migration) empties the cache, so no row builder outlives the columns it was made for;
 * `onSchemaChange` lets other connections' caches do the same.
 */
export function withStatementCache(
  handle: SQLite.Database,
  max = 1000,
  onSchemaChange?: () => void,
): StatementCache {
  const cache = new Map<string, CachedStatement>()
  return {
    handle,
    close: () => handle.close(),
    clear: () => cache.clear(),
    prepare(text: string): CachedStatement {
      return keptOrMade(cache, text, max, () => {
        if (SCHEMA_CHANGE.test(text)) {
          cache.clear()
          onSchemaChange?.()
        }
        return cachedStatement(handle, text)
      })
    },
  }
}

/** The open transaction that the write transactions of one turn of the event loop share. */
class Batch {
  readonly done: Promise<void>
  resolve!: () => void
  reject!: (e: unknown) => void
  /** Transactions and statements that completed in it. */
  members = 0
  constructor() {
    this.done = new Promise((resolve, reject) => {
      this.resolve = resolve
      this.reject = reject
    })
    // A batch nobody waits for (every member failed) must not be an unhandled rejection.
    this.done.catch(() => undefined)
  }
}

const LIMIT = ' limit ?'
const LIMIT_OFFSET = ' limit ? offset ?'

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0
}

/**
 * The query with a trailing `limit ?` / `limit ? offset ?` written as numbers. SQLite reads a bound
 * LIMIT while planning, and so prepares such a statement again each time the value is bound: about
 * as long as running a small query. Written out, the statement is prepared once per page.
 */
export function inlineLimit(query: CompiledQuery): { sql: string; parameters: readonly unknown[] } {
  const { sql, parameters } = query
  const n = parameters.length
  if (sql.endsWith(LIMIT_OFFSET) && isCount(parameters[n - 2]) && isCount(parameters[n - 1])) {
    return {
      sql: `${sql.slice(0, -LIMIT_OFFSET.length)} limit ${parameters[n - 2]} offset ${parameters[n - 1]}`,
      parameters: parameters.slice(0, -2),
    }
  }
  if (sql.endsWith(LIMIT) && isCount(parameters[n - 1])) {
    return {
      sql: `${sql.slice(0, -LIMIT.length)} limit ${parameters[n - 1]}`,
      parameters: parameters.slice(0, -1),
    }
  }
  return query
}

function result(statement: CachedStatement, params: readonly unknown[]): QueryResult<any> {
  if (statement.reader) return { rows: statement.all(params) }
  const { changes, lastInsertRowid } = statement.run(params)
  return {
    numAffectedRows: BigInt(changes),
    insertId: BigInt(lastInsertRowid),
    rows: [],
  }
}

const MEMBER = 'batch_member'

function quoted(name: string): string {
  return `"${name.replace(/"/g, '""')}"`
}

export interface GroupCommitOptions {
  /** A batch commits at the latest when this many transactions have joined it. */
  maxMembers?: number
}

/** What the driver has committed since it started. */
export interface CommitStats {
  /** COMMITs that succeeded. */
  commits: number
  /** Write transactions and single write statements those commits made durable. */
  writes: number
}

/**
 * The Kysely driver. `writer` holds the write transactions; `reader`, when given (a file), runs
 * every read made outside a transaction.
 */
export class GroupCommitDriver implements Driver {
  readonly #writer: StatementCache
  readonly #reader: StatementCache | null
  readonly #maxMembers: number
  /** The writing connection, first come, first served. */
  readonly #lock = new Lock()
  #batch: Batch | null = null
  #commitScheduled = false
  readonly stats: CommitStats = { commits: 0, writes: 0 }
  readonly #committed = new Set<() => void>()
  /** Statements run so far for callers (the transactions' savepoints and commits left out). */
  statements = 0

  constructor(writer: StatementCache, reader: StatementCache | null, opts: GroupCommitOptions = {}) {
    this.#writer = writer
    this.#reader = reader
    this.#maxMembers = opts.maxMembers ?? 64
  }

  async init(): Promise<void> {}

  /** Calls `listener` after each commit that made writes durable; the answer stops it. */
  onCommit(listener: () => void): () => void {
    this.#committed.add(listener)
    return () => this.#committed.delete(listener)
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const scope = currentScope(this)
    return scope ? new ScopedConnection(this, scope) : new BatchConnection(this)
  }

  /**
   * A request's own transaction (see request-transaction.ts). It holds the writing connection
   * from its first statement to its end, alone: what is open commits first, and it commits by
   * itself. Every statement of the request runs on the writing connection, so it reads what it
   * wrote; the rest of the process waits for the connection meanwhile, other processes for the
   * file's write lock (`busy_timeout`).
   */
  async beginRequest(): Promise<RequestTransaction> {
    await this.#lock.acquire()
    try {
      this.#commit()
      this.#exec('begin immediate')
    } catch (e) {
      this.#release()
      throw e
    }
    const scope = newScope(this)
    let open = true
    const end = (statement: 'commit' | 'rollback') => {
      if (!open) return
      open = false
      closeScope(scope)
      try {
        if (statement === 'commit') {
          this.#exec('commit')
          this.stats.commits++
          this.stats.writes++
          this.#notifyCommitted()
        } else if (this.#writer.handle.inTransaction) {
          this.#exec('rollback')
        }
      } catch (e) {
        if (this.#writer.handle.inTransaction) this.#writer.handle.exec('rollback')
        throw e
      } finally {
        this.#release()
      }
    }
    return {
      run: (fn) => runInScope(scope, fn),
      commit: async () => end('commit'),
      rollback: async () => end('rollback'),
      get open() {
        return open
      },
    }
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    if (connection instanceof ScopedConnection) return connection.begin()
    await this.#lock.acquire()
    try {
      if (this.#batch && this.#batch.members >= this.#maxMembers) this.#commit()
      const batch = this.#open()
      this.#exec(`savepoint ${MEMBER}`)
      ;(connection as BatchConnection).batch = batch
    } catch (e) {
      this.#release()
      throw e
    }
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    if (connection instanceof ScopedConnection) return connection.end(true)
    const c = connection as BatchConnection
    const batch = c.batch!
    // Should the release fail, the member is still open: Kysely then rolls it back.
    this.#exec(`release ${MEMBER}`)
    c.batch = null
    batch.members++
    this.#release()
    await batch.done
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (connection instanceof ScopedConnection) return connection.end(false)
    const c = connection as BatchConnection
    const batch = c.batch
    // Already left the batch: its commit failed (and the batch was rolled back with it).
    if (!batch) return
    c.batch = null
    try {
      if (this.#writer.handle.inTransaction) {
        this.#exec(`rollback to ${MEMBER}`)
        this.#exec(`release ${MEMBER}`)
      } else {
        this.#afterFailure(batch, new Error('the transaction was rolled back by SQLite'))
      }
    } finally {
      // The others' work commits as planned.
      this.#release()
    }
  }

  async savepoint(connection: DatabaseConnection, name: string) {
    this.#savepointCommand(connection, `savepoint ${quoted(name)}`)
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string) {
    this.#savepointCommand(connection, `rollback to ${quoted(name)}`)
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string) {
    this.#savepointCommand(connection, `release ${quoted(name)}`)
  }

  async releaseConnection(): Promise<void> {}

  async destroy(): Promise<void> {
    await this.#lock.acquire()
    try {
      if (this.#batch) this.#commit()
    } finally {
      this.#reader?.close()
      this.#writer.close()
    }
  }

  /** Runs a statement given outside a transaction. */
  async execute(compiled: CompiledQuery): Promise<QueryResult<any>> {
    if (currentScope(this)) return this.executeInTransaction(compiled)
    this.statements++
    const query = inlineLimit(compiled)
    if (this.#reader) {
      const statement = this.#reader.prepare(query.sql)
      if (statement.readonly && !statement.pragma) return result(statement, query.parameters)
    }
    await this.#lock.acquire()
    let batch: Batch
    let out: QueryResult<any>
    try {
      const statement = this.#writer.prepare(query.sql)
      if (statement.readonly || statement.pragma) {
        // A read on the one connection of an in-memory database, or a pragma (which must run on
        // the writing connection, outside a transaction): after what is open has committed.
        this.#commit()
        return result(statement, query.parameters)
      }
      batch = this.#open()
      try {
        out = result(statement, query.parameters)
      } catch (e) {
        this.#afterFailure(batch, e)
        throw e
      }
      batch.members++
    } finally {
      this.#release()
    }
    await batch.done
    return out
  }

  /** Runs a statement of a transaction that holds the lock. */
  executeInTransaction(compiled: CompiledQuery): QueryResult<any> {
    this.statements++
    const query = inlineLimit(compiled)
    return result(this.#writer.prepare(query.sql), query.parameters)
  }

  /** A statement of a request's transaction (see ScopedConnection). */
  execInScope(sql: string): void {
    this.#exec(sql)
  }

  /** The request's transaction is still open (SQLite rolls it all back on a full disk, say). */
  get inTransaction(): boolean {
    return this.#writer.handle.inTransaction
  }

  #savepointCommand(connection: DatabaseConnection, sql: string): void {
    if (connection instanceof ScopedConnection) {
      if (!connection.savepoint) throw new Error('a savepoint needs a transaction')
    } else if (!(connection as BatchConnection).batch) throw new Error('a savepoint needs a transaction')
    this.#exec(sql)
  }

  #exec(sql: string): void {
    this.#writer.prepare(sql).run([])
  }

  #open(): Batch {
    if (!this.#batch) {
      this.#exec('begin immediate')
      this.#batch = new Batch()
    }
    return this.#batch
  }

  /** Commits the open batch; called with the lock held. */
  #commit(): void {
    const batch = this.#batch
    if (!batch) return
    this.#batch = null
    try {
      this.#exec('commit')
      this.stats.commits++
      this.stats.writes += batch.members
    } catch (e) {
      try {
        if (this.#writer.handle.inTransaction) this.#writer.handle.exec('rollback')
      } finally {
        batch.reject(e)
      }
      return
    }
    batch.resolve()
    this.#notifyCommitted()
  }

  /** Tells the onCommit listeners, after the lock is given back (a listener may well read at once). */
  #notifyCommitted(): void {
    if (this.#committed.size) queueMicrotask(() => this.#committed.forEach((l) => l()))
  }

  /** SQLite rolled the whole transaction back (a full disk, say): every member of it has failed. */
  #afterFailure(batch: Batch, e: unknown): void {
    if (this.#writer.handle.inTransaction || this.#batch !== batch) return
    this.#batch = null
    batch.reject(e)
  }

  /** Gives the writing connection to the next in line; an open batch is sure to commit. */
  #release(): void {
    this.#lock.release()
    if (this.#batch) this.#scheduleCommit()
  }

  /** The batch commits once the requests that arrived with it have run (`setImmediate`). */
  #scheduleCommit(): void {
    if (this.#commitScheduled) return
    this.#commitScheduled = true
    setImmediate(() => {
      void this.#lock.acquire().then(() => {
        this.#commitScheduled = false
        try {
          this.#commit()
        } finally {
          this.#lock.release()
        }
      })
    })
  }
}

class BatchConnection implements DatabaseConnection {
  /** Set while this connection runs a transaction (it then holds the lock). */
  batch: Batch | null = null
  constructor(private readonly driver: GroupCommitDriver) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.batch ? this.driver.executeInTransaction(query) : this.driver.execute(query)
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not supported on SQLite here')
  }
}

/**
 * A connection inside a request's transaction: statements run at once on the writing connection
 * (the request holds it); a transaction opened on it is a savepoint of the request's.
 */
class ScopedConnection implements DatabaseConnection {
  /** The savepoint of the transaction open on this connection, if any. */
  savepoint: string | null = null
  constructor(
    private readonly driver: GroupCommitDriver,
    private readonly scope: RequestScope,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.driver.executeInTransaction(query)
  }

  async begin(): Promise<void> {
    await this.scope.nested.acquire()
    try {
      const name = `request_${++this.scope.savepoints}`
      this.driver.execInScope(`savepoint ${name}`)
      this.savepoint = name
    } catch (e) {
      this.scope.nested.release()
      throw e
    }
  }

  async end(commit: boolean): Promise<void> {
    const name = this.savepoint
    if (!name) return
    this.savepoint = null
    try {
      if (!this.driver.inTransaction) {
        if (commit) throw new Error('the transaction was rolled back by SQLite')
        return
      }
      if (!commit) this.driver.execInScope(`rollback to ${name}`)
      this.driver.execInScope(`release ${name}`)
    } finally {
      this.scope.nested.release()
    }
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not supported on SQLite here')
  }
}
