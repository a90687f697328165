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
