// Reads of one row each, made one statement: a request that names several rows (a new order's
// project, offering and plan) reads them in one round trip instead of one each. Each area builds
// its part (its own scoping and columns); the caller's repository joins the parts.
import type { SelectQueryBuilder } from 'kysely'
import { slot } from './compiled.js'
import { keptOrMade } from '../kept.js'

/**
 * One row at most, as part of a read made of several: its columns named `<name>__<column>`
 * (`prefixed`), its slots numbered from the `from` it was built for, `values` their parameters in
 * order, and `form` what its compiled text depends on (with `values`' count).
 */
export interface ReadPart {
  name: string
  form: string
  values: unknown[]
  build: () => SelectQueryBuilder<any, any, any>
}

/**
 * A part built for the slots from `from` on; `R`, the row it answers, is carried for the reader's
 * types only.
 */
export type ReadPartOf<R = Record<string, unknown>> = ((from: number) => ReadPart) & { readonly row?: R }

/** The row a part selecting `columns` (`table.column`) answers: those columns of the table's row `R`. */
export type PartRow<R, C extends readonly string[]> = Pick<R, ColumnName<C[number]> & keyof R>
type ColumnName<C> = C extends `${string}.${infer N}` ? N : never

/**
 * Part `name`: the row of `table` whose uuid is `uuid` (null: none), its `columns` from `source`
 * (the table narrowed by the caller's scope, built with the scope's slots: `scope.values`,
 * numbered from `from`); the uuid's slot follows the scope's.
 */
export function partByUuid(
  name: string,
  table: string,
  columns: readonly string[],
  scope: { values: unknown[]; form: string },
  uuid: string | null,
  from: number,
  source: () => SelectQueryBuilder<any, any, any>,
): ReadPart {
  const at = from + scope.values.length
  return {
    name,
    form: `${name}:${scope.form}`,
    values: [...scope.values, uuid],
    build: () =>
      source()
        .select(prefixed(name, columns) as any)
        .where(`${table}.uuid`, '=', slot(at)),
  }
}

const SEP = '__'

/** Kysely column selections (`t.c`, `t.c as a`) renamed `<name>__c`, `<name>__a`. */
export function prefixed(name: string, columns: readonly string[]): string[] {
  return columns.map((c) => {
    const [ref, alias] = c.split(' as ')
    const column = alias ?? ref!.slice(ref!.lastIndexOf('.') + 1)
    return `${ref} as ${name}${SEP}${column}`
  })
}

type Parts = Record<string, Record<string, unknown>>

/**
 * A joined row's parts: `<name>__<column>` goes to part `name` as `column`; a part whose `id` is
 * null (no row) is left out, and so are columns without a part. Every row of one statement has the
 * same columns, so the splitter made by `partSplitter` writes, once per `key` (the statement's
 * form), a function that builds each part as one object literal: naming the properties one by one
 * on every row made objects V8 keeps as dictionaries, slow to build and to read (docs/performance.md,
 * "SQLite create: the rest found").
 */
export function partSplitter(max = 500): (key: string, row: Record<string, unknown> | undefined) => Parts {
  const splits = new Map<string, (row: Record<string, unknown>) => Parts>()
  return (key, row) => {
    if (!row) return {}
    return keptOrMade(splits, key, max, () => splitOf(Object.keys(row)))(row)
  }
}

function splitOf(columns: string[]): (row: Record<string, unknown>) => Parts {
  const parts = new Map<string, [column: string, key: string][]>()
  for (const key of columns) {
    const at = key.indexOf(SEP)
    if (at <= 0) continue
    const name = key.slice(0, at)
    let list = parts.get(name)
    if (!list) parts.set(name, (list = []))
    list.push([key.slice(at + SEP.length), key])
  }
  const q = JSON.stringify
  const lines = [...parts].map(([name, list]) => {
    const id = `r[${q(`${name}${SEP}id`)}]`
    const literal = list.map(([column, key]) => `${q(column)}: r[${q(key)}]`).join(', ')
    return `if (${id} !== null && ${id} !== undefined) p[${q(name)}] = { ${literal} }`
  })
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  return new Function('r', ['const p = {}', ...lines, 'return p'].join('\n')) as (
    row: Record<string, unknown>,
  ) => Parts
}

/** A part's column as the joining query names it (`<alias>.<name>__<column>`). */
export function partColumn(alias: string, name: string, column: string): string {
  return `${alias}.${name}${SEP}${column}`
}
