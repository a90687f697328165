// The SQL side of a list: conditions given as data (a list's parsed filters), the count, and one
// page in a stable order. Repositories build the visible rows of a list; these helpers add the
// rest, so no repository writes the count and page queries again.
import { sql, type Expression, type ExpressionBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely'
import { icontains } from './sql.js'

/** A condition on a list's rows, as data: made by the HTTP layer's filters, applied here. */
export type Condition =
  | { readonly op: '=' | '>=' | '<='; readonly column: string; readonly value: unknown }
  | { readonly op: 'in'; readonly column: string; readonly value: readonly unknown[] }
  /** Case-insensitive "contains", with LIKE wildcards in the value matched literally. */
  | { readonly op: 'contains'; readonly column: string; readonly value: string }
  /** A condition the repository writes itself (a join, an EXISTS, a computed column). */
  | { readonly op: 'sql'; readonly build: (eb: ExpressionBuilder<any, any>) => Expression<SqlBool> }
  /** Matches no row (a filter whose value cannot name anything, such as a link of another kind). */
  | { readonly op: 'none' }

export interface OrderBy {
  readonly column: string
  readonly desc: boolean
}

/** What a list asks of its rows besides visibility: the filters' conditions and the order. */
export interface Listing {
  readonly where: readonly Condition[]
  readonly order: readonly OrderBy[]
}

type AnySelect = SelectQueryBuilder<any, any, any>

/** Adds every condition to the query (AND). */
export function applyConditions<Q extends AnySelect>(query: Q, where: readonly Condition[]): Q {
  let q: AnySelect = query
  for (const c of where) {
    switch (c.op) {
      case '=':
      case '>=':
      case '<=':
        q = q.where(c.column, c.op, c.value)
        break
      case 'in':
        q = q.where(c.column, 'in', c.value)
        break
      case 'contains':
        q = q.where(icontains(c.column, c.value))
        break
      case 'sql':
        q = q.where((eb) => c.build(eb))
        break
      case 'none':
        q = q.where(sql<boolean>`1 = 0`)
        break
    }
  }
  return q as Q
}

/** How many rows the query selects. */
export async function countRows(query: AnySelect): Promise<number> {
  const r = await query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
  return Number((r as { n: number | string }).n)
}

/**
 * One page of the query in the listing's order, then by `tiebreak` (a unique column, ascending
 * unless given as an `OrderBy`), so pages never overlap or skip rows when the ordered columns repeat.
 */
export function pageRows<O>(
  query: SelectQueryBuilder<any, any, O>,
  order: readonly OrderBy[],
  tiebreak: string | OrderBy,
  limit: number,
  offset: number,
): Promise<O[]> {
  let q: AnySelect = query
  for (const t of order) q = q.orderBy(t.column, t.desc ? 'desc' : 'asc')
  const last = typeof tiebreak === 'string' ? { column: tiebreak, desc: false } : tiebreak
  q = q.orderBy(last.column, last.desc ? 'desc' : 'asc')
  return (q.limit(limit).offset(offset) as SelectQueryBuilder<any, any, O>).execute()
}

/**
 * The count and the pages of a list whose rows depend on what the caller may see: `visible(scope)`
 * is the rows the caller may see, `select` picks the columns of a record.
 */
export function scopedList<S, Q extends AnySelect, O>(
  visible: (scope: S) => Q,
  select: (query: Q) => SelectQueryBuilder<any, any, O>,
  tiebreak: string | OrderBy,
) {
  return {
    count: (scope: S, l: Listing): Promise<number> => countRows(applyConditions(visible(scope), l.where)),
    list: (scope: S, l: Listing, limit: number, offset: number): Promise<O[]> =>
      pageRows(select(applyConditions(visible(scope), l.where)), l.order, tiebreak, limit, offset),
  }
}
