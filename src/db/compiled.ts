// Queries built once and rerun with new parameters. Building a wide Kysely select (dozens of
// aliased columns, many joins) costs more than running it on SQLite; hot read paths compile
// their query once per dialect and only swap the parameter values afterwards.
import type { CompiledQuery, Compilable, Kysely, QueryResult, Transaction } from 'kysely'
import type { DB } from './tables.js'
import { isPostgres } from './sql.js'

type Db = Kysely<DB> | Transaction<DB>

const MARK = '\u0000param:'

/** The placeholder for the i-th parameter of a query given to `reusable`. */
export function slot<T = any>(i: number): T {
  return `${MARK}${i}` as T
}

/**
 * Wraps a query builder: the query is compiled on first use per dialect (and per `variant`, e.g.
 * the length of an IN list), then run with the given parameters in place of `slot(i)`.
 */
export function reusable<R, A extends unknown[]>(
  build: (db: Db, ...variant: A) => Compilable<R>,
): (db: Db, variant: A, params: readonly unknown[]) => Promise<QueryResult<R>> {
  const cache = new Map<string, CompiledQuery<R>>()
  return (db, variant, params) => {
    const key = `${isPostgres(db as Kysely<DB>) ? 'pg' : 'sqlite'}:${variant.join(',')}`
    let compiled = cache.get(key)
    if (!compiled) {
      compiled = build(db, ...variant).compile()
      cache.set(key, compiled)
    }
    const parameters = compiled.parameters.map((p) =>
      typeof p === 'string' && p.startsWith(MARK) ? params[Number(p.slice(MARK.length))] : p,
    )
    return db.executeQuery<R>({ ...compiled, parameters })
  }
}
