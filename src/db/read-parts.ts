// Reads of one row each, made one statement: a request that names several rows (a new order's
// project, offering and plan) reads them in one round trip instead of one each. Each area builds
// its part (its own scoping and columns); the caller's repository joins the parts.
import type { SelectQueryBuilder } from 'kysely'

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

/** A part built for the slots from `from` on. */
export type ReadPartOf = (from: number) => ReadPart

const SEP = '__'

/** Kysely column selections (`t.c`, `t.c as a`) renamed `<name>__c`, `<name>__a`. */
export function prefixed(name: string, columns: readonly string[]): string[] {
  return columns.map((c) => {
    const [ref, alias] = c.split(' as ')
    const column = alias ?? ref!.slice(ref!.lastIndexOf('.') + 1)
    return `${ref} as ${name}${SEP}${column}`
  })
}

/** The row of part `name` in a joined row: undefined when its `id` is null (no row). */
export function partRow<R>(row: Record<string, unknown> | undefined, name: string): R | undefined {
  if (!row || row[`${name}${SEP}id`] === null || row[`${name}${SEP}id`] === undefined) return undefined
  const start = `${name}${SEP}`
  const out: Record<string, unknown> = {}
  for (const key in row) if (key.startsWith(start)) out[key.slice(start.length)] = row[key]
  return out as R
}

/** A part's column as the joining query names it (`<alias>.<name>__<column>`). */
export function partColumn(alias: string, name: string, column: string): string {
  return `${alias}.${name}${SEP}${column}`
}
