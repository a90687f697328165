// Queries built once and rerun with new parameters. Building a wide Kysely select (dozens of
// aliased columns, many joins) costs more than running it on SQLite; hot read paths compile
// their query once per dialect and only swap the parameter values afterwards.
import type { CompiledQuery, Compilable, Kysely, QueryResult, Transaction } from 'kysely'
import type { DB } from './tables.js'
import { inAnyOf, isPostgres } from './sql.js'
import { keptOrMade } from '../kept.js'

type Db = Kysely<DB> | Transaction<DB>

const MARK = '\u0000param:'

/** The placeholder for the i-th parameter of a query given to `reusable` or `reusableByForm`. */
export function slot<T = any>(i: number): T {
  return `${MARK}${i}` as T
}

function withParams<R>(compiled: CompiledQuery<R>, params: readonly unknown[]): CompiledQuery<R> {
  const parameters = compiled.parameters.map((p) =>
    typeof p === 'string' && p.startsWith(MARK) ? params[Number(p.slice(MARK.length))] : p,
  )
  return { ...compiled, parameters }
}

/**
 * Root databases whose driver runs a compiled statement given outside a transaction at once (see
 * `runsDirectly`). Transactions and other derived instances are not here, so theirs go through
 * Kysely and the connection it holds.
 */
const direct = new WeakMap<object, (query: CompiledQuery) => Promise<QueryResult<any>>>()

/**
 * Lets the compiled statements of this database skip Kysely's executor (a connection acquired
 * and released, a query id, result plugins) and call `execute` instead: for a driver without
 * plugins, whose connections outside a transaction all run statements the same way (SQLite).
 * In a run of retrievals alone it saved about a tenth of their time.
 */
export function runsDirectly(
  db: Kysely<DB>,
  execute: (query: CompiledQuery) => Promise<QueryResult<any>>,
): void {
  direct.set(db, execute)
}

function runCompiled<R>(db: Db, query: CompiledQuery<R>): Promise<QueryResult<R>> {
  const execute = direct.get(db)
  return execute ? (execute(query) as Promise<QueryResult<R>>) : db.executeQuery<R>(query)
}

function dialectKey(db: Db): string {
  return isPostgres(db as Kysely<DB>) ? 'pg' : 'sqlite'
}

/**
 * For queries whose form depends on the request (which filters are given, how long each IN list
 * is): the caller names the form and builds it with slots. Each form is compiled once per dialect
 * and kept while it is among the `max` most recently compiled. Every value that comes from the
 * request must go through a slot, or the value of the request that compiled the form would stay.
 */
export function reusableByForm(
  max = 500,
): <R>(
  db: Db,
  form: string,
  build: () => Compilable<R>,
  params: readonly unknown[],
) => Promise<QueryResult<R>> {
  const cache = new Map<string, CompiledQuery<unknown>>()
  return <R>(db: Db, form: string, build: () => Compilable<R>, params: readonly unknown[]) => {
    const compiled = keptOrMade(cache, `${dialectKey(db)}:${form}`, max, () => build().compile())
    return runCompiled(db, withParams(compiled, params))
  }
}

/**
 * Wraps a query builder: the query is compiled on first use per dialect (and per `variant`, e.g.
 * the length of an IN list), then run with the given parameters in place of `slot(i)`.
 */
export function reusable<R, A extends unknown[]>(
  build: (db: Db, ...variant: A) => Compilable<R>,
): (db: Db, variant: A, params: readonly unknown[]) => Promise<QueryResult<R>> {
  // A fixed query has few variants: none is evicted.
  const run = reusableByForm(Infinity)
  return (db, variant, params) => run(db, variant.join(','), () => build(db, ...variant), params)
}

/**
 * Id lists as slots: each id becomes a slot, numbered from `from` in order. Answers the slotted
 * lists (to build the query with), the ids in slot order (its parameters) and its form (the
 * lists' lengths). For queries whose form depends on the caller's scopes.
 */
export function slottedLists(
  lists: readonly (readonly number[])[],
  from = 0,
): { slots: number[][]; values: number[]; form: string } {
  let next = from
  return {
    slots: lists.map((ids) => ids.map(() => slot<number>(next++))),
    values: lists.flat(),
    form: lists.map((ids) => ids.length).join('.'),
  }
}

const insertsOf = reusableByForm(Infinity)

/**
 * Inserts one row and answers its id, the statement compiled once per table and set of columns
 * (columns whose value is undefined are left out, as Kysely does). Values must be plain values,
 * not SQL expressions.
 */
export async function insertReturningId<T extends keyof DB>(
  db: Db,
  table: T,
  values: Record<string, unknown>,
): Promise<number> {
  const columns = Object.keys(values).filter((c) => values[c] !== undefined)
  const build = () =>
    db
      .insertInto(table)
      .values(Object.fromEntries(columns.map((c, i) => [c, slot(i)])) as any)
      .returning('id' as any)
  const { rows } = await insertsOf(
    db,
    `${table}:${columns.join(',')}`,
    build as () => Compilable<{ id: number }>,
    columns.map((c) => values[c]),
  )
  return rows[0]!.id
}

/**
 * One condition of a query whose form depends on the request. `form` names its shape (which
 * filter, how many values), `values` are its parameters, and `apply` adds it to a query given one
 * slot per value; a list of conditions is compiled once per combination of forms.
 */
export interface Condition<Q> {
  form: string
  values: readonly unknown[]
  apply: (q: Q, s: readonly any[]) => Q
}

/** The form of a list of conditions (a `reusableByForm` key) and their values, in order. */
export function formOf<Q>(all: readonly Condition<Q>[]): { form: string; values: unknown[] } {
  return { form: all.map((c) => c.form).join('|'), values: all.flatMap((c) => c.values) }
}

/** `q` with the conditions added, their slots numbered from `from` (0) in order. */
export function applyConditions<Q>(q: Q, all: readonly Condition<Q>[], from = 0): Q {
  let next = from
  for (const c of all)
    q = c.apply(
      q,
      c.values.map(() => slot(next++)),
    )
  return q
}

/** `inAnyOf` as a condition: the id lists are its values. */
export function anyOf<Q extends { where: any }>(
  name: string,
  branches: readonly (readonly [column: string, ids: readonly number[]])[],
): Condition<Q> {
  return {
    form: `${name}:${branches.map(([, ids]) => ids.length).join('.')}`,
    values: branches.flatMap(([, ids]) => ids),
    apply: (q, s) => {
      let i = 0
      const slotted = branches.map(([column, ids]) => [column, ids.map(() => s[i++])] as const)
      return q.where((eb: any) => inAnyOf(eb, slotted))
    },
  }
}

/**
 * A repository built once per database handle (or transaction) and reused: building one prepares
 * its query builders, which would otherwise cost every call that asks for it (an order create
 * looks up its project and customer through them).
 */
export function perDatabase<D extends object, R>(build: (db: D) => R): (db: D) => R {
  const built = new WeakMap<D, R>()
  return (db) => {
    let repository = built.get(db)
    if (repository === undefined) built.set(db, (repository = build(db)))
    return repository
  }
}
