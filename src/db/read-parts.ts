// Reads of one row each, made one statement: a request that names several rows (a new order's
// project, offering and plan) reads them in one round trip instead of one each. Each area builds
// its part (its own scoping and columns); the caller's repository joins the parts.
import type { SelectQueryBuilder } from 'kysely'
import { slot } from './compiled.js'

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

/**
 * A joined row's parts, in one pass over its columns: `<name>__<column>` goes to part `name` as
 * `column`; a part whose `id` is null (no row) is left out, and so are columns without a part.
 */
export function partRows(row: Record<string, unknown> | undefined): Record<string, Record<string, unknown>> {
  const parts: Record<string, Record<string, unknown>> = {}
  if (!row) return parts
  for (const key in row) {
    const at = key.indexOf(SEP)
    if (at <= 0) continue
    const name = key.slice(0, at)
    ;(parts[name] ??= {})[key.slice(at + SEP.length)] = row[key]
  }
  for (const name in parts) if (parts[name]!.id === null || parts[name]!.id === undefined) delete parts[name]
  return parts
}

/** A part's column as the joining query names it (`<alias>.<name>__<column>`). */
export function partColumn(alias: string, name: string, column: string): string {
  return `${alias}.${name}${SEP}${column}`
}
