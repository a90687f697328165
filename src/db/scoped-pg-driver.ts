// PostgreSQL's driver with requests' own transactions (see request-transaction.ts): a request
// holds one pooled connection in a transaction from its start to its end, and every statement it
// runs goes there. A statement it runs outside a transaction of its own is wrapped in a savepoint,
// so that one that fails (a unique violation a service expects and answers, say) leaves the
// request's transaction usable, as it would have left an autocommitted connection.
import {
  CompiledQuery,
  PostgresDialect,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely'
import {
  closeScope,
  currentScope,
  newScope,
  runInScope,
  type RequestScope,
  type RequestTransaction,
} from './request-transaction.js'
import { SearchPathIntrospector } from './pg-introspector.js'

export class ScopedPostgresDriver implements Driver {
  constructor(private readonly inner: Driver) {}

  init(): Promise<void> {
    return this.inner.init()
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const scope = currentScope(this) as PgScope | undefined
    return scope ? new ScopedConnection(scope) : this.inner.acquireConnection()
  }

  async beginRequest(): Promise<RequestTransaction> {
    const connection = await this.inner.acquireConnection()
    try {
      await this.inner.beginTransaction(connection, {})
    } catch (e) {
      await this.inner.releaseConnection(connection)
      throw e
    }
    const scope: PgScope = { ...newScope(this), connection }
    let open = true
    const end = async (commit: boolean) => {
      if (!open) return
      open = false
      closeScope(scope)
      try {
        if (commit) await this.inner.commitTransaction(connection)
        else await this.inner.rollbackTransaction(connection)
      } catch (e) {
        if (commit) await this.inner.rollbackTransaction(connection).catch(() => undefined)
        throw e
      } finally {
        await this.inner.releaseConnection(connection)
      }
    }
    return {
      run: (fn) => runInScope(scope, fn),
      commit: () => end(true),
      rollback: () => end(false),
      get open() {
        return open
      },
    }
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    if (connection instanceof ScopedConnection) return connection.begin()
    return this.inner.beginTransaction(connection, settings)
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    if (connection instanceof ScopedConnection) return connection.end(true)
    return this.inner.commitTransaction(connection)
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (connection instanceof ScopedConnection) return connection.end(false)
    return this.inner.rollbackTransaction(connection)
  }

  async savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']) {
    await this.inner.savepoint!(connection, name, compile)
  }

  async rollbackToSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: QueryCompiler['compileQuery'],
  ) {
    await this.inner.rollbackToSavepoint!(connection, name, compile)
  }

  async releaseSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: QueryCompiler['compileQuery'],
  ) {
    await this.inner.releaseSavepoint!(connection, name, compile)
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    if (connection instanceof ScopedConnection) return
    await this.inner.releaseConnection(connection)
  }

  destroy(): Promise<void> {
    return this.inner.destroy()
  }
}

interface PgScope extends RequestScope {
  connection: DatabaseConnection
}

function raw(text: string): CompiledQuery {
  return CompiledQuery.raw(text)
}

/**
 * One use of the request's connection: a statement alone (in a savepoint of its own), or a
 * transaction opened on it (a savepoint for its whole length). One at a time, so savepoints nest.
 */
class ScopedConnection implements DatabaseConnection {
  #savepoint: string | null = null
  constructor(private readonly scope: PgScope) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const base = this.scope.connection
    if (this.#savepoint) return base.executeQuery<R>(query)
    await this.scope.nested.acquire()
    try {
      const name = `request_${++this.scope.savepoints}`
      await base.executeQuery(raw(`savepoint ${name}`))
      try {
        const result = await base.executeQuery<R>(query)
        await base.executeQuery(raw(`release savepoint ${name}`))
        return result
      } catch (e) {
        await base.executeQuery(raw(`rollback to savepoint ${name}`))
        await base.executeQuery(raw(`release savepoint ${name}`))
        throw e
      }
    } finally {
      this.scope.nested.release()
    }
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    yield* this.scope.connection.streamQuery<R>(query, chunkSize)
  }

  async begin(): Promise<void> {
    await this.scope.nested.acquire()
    try {
      const name = `request_${++this.scope.savepoints}`
      await this.scope.connection.executeQuery(raw(`savepoint ${name}`))
      this.#savepoint = name
    } catch (e) {
      this.scope.nested.release()
      throw e
    }
  }

  async end(commit: boolean): Promise<void> {
    const name = this.#savepoint
    if (!name) return
    this.#savepoint = null
    try {
      if (!commit) await this.scope.connection.executeQuery(raw(`rollback to savepoint ${name}`))
      await this.scope.connection.executeQuery(raw(`release savepoint ${name}`))
    } finally {
      this.scope.nested.release()
    }
  }
}

/** PostgresDialect with the driver above. */
export class ScopedPostgresDialect extends PostgresDialect {
  readonly driver: ScopedPostgresDriver
  constructor(config: ConstructorParameters<typeof PostgresDialect>[0]) {
    super(config)
    this.driver = new ScopedPostgresDriver(super.createDriver())
  }
  override createDriver() {
    return this.driver
  }
  override createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new SearchPathIntrospector(db)
  }
}
