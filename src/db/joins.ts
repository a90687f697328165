// A record's base query declared as data: its table and the joins of what the record shows, each
// one line, and the relations several tables share (a project and its customer) declared once.
// The query keeps Kysely's types: the joined tables and their aliases are known to the selects
// and conditions written on it.
import type {
  Kysely,
  SelectQueryBuilder,
  SelectQueryBuilderWithInnerJoin,
  SelectQueryBuilderWithLeftJoin,
  TableExpression,
  Transaction,
} from 'kysely'
import type { DB } from './tables.js'

type Db = Kysely<DB> | Transaction<DB>

/**
 * One join: inner or left, the table (`'customers as provider'` for an alias), the column of the
 * rows so far that refers to it, its own column that column holds (`id` unless given), and a
 * column of the rows so far that must hold a value for the join to apply (`['x.scope_type', 'project']`).
 */
export type Join = readonly [
  kind: 'inner' | 'left',
  table: string,
  by: string,
  key?: string,
  when?: readonly [column: string, value: string],
]

type JoinStep<Q, J> =
  Q extends SelectQueryBuilder<infer D, infer TB, infer O>
    ? J extends readonly [infer K, infer TE extends TableExpression<D, TB>, ...unknown[]]
      ? K extends 'inner'
        ? SelectQueryBuilderWithInnerJoin<D, TB, O, TE>
        : SelectQueryBuilderWithLeftJoin<D, TB, O, TE>
      : never
    : never

/** The rows of `T`, nothing selected yet (Kysely's type of `selectFrom(T)`). */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
type From<T extends keyof DB> = SelectQueryBuilder<DB, T, {}>

/** The query `Q` with the joins `Js` added in order. */
export type Joined<Q, Js> = Js extends readonly [infer H, ...infer R] ? Joined<JoinStep<Q, H>, R> : Q

/** The rows of `table` with `joins` added in the order given. */
export function joined<T extends keyof DB, const Js extends readonly Join[]>(
  db: Db,
  table: T,
  joins: Js,
): Joined<From<T>, Js> {
  return withJoins(db.selectFrom(table) as unknown as From<T>, joins)
}

/** `query` with `joins` added in the order given. */
export function withJoins<Q extends SelectQueryBuilder<any, any, any>, const Js extends readonly Join[]>(
  query: Q,
  joins: Js,
): Joined<Q, Js> {
  let q: any = query
  for (const [kind, target, by, key = 'id', when] of joins) {
    const on = `${target.split(' as ')[1] ?? target}.${key}`
    const args = when ? [(j: any) => j.onRef(on, '=', by).on(when[0], '=', when[1])] : [on, by]
    q = kind === 'inner' ? q.innerJoin(target, ...args) : q.leftJoin(target, ...args)
  }
  return q
}

/** The project a row of `table` belongs to (its `project_id`) and the project's customer. */
export function projectAndCustomer<T extends string>(table: T) {
  return [
    ['inner', 'projects', `${table}.project_id`],
    ['inner', 'customers', 'projects.customer_id'],
  ] as const
}

/**
 * `visible(scope)` of a table whose callers who see everything (`all`) get `base()` whole and the
 * others `base()` narrowed by `narrow` to the rows their scope reaches.
 */
export function unlessAll<V, Q>(
  base: () => Q,
  narrow: (q: Q, scope: V) => Q,
): (scope: { all: true } | ({ all: false } & V)) => Q {
  return (scope) => (scope.all ? base() : narrow(base(), scope))
}
