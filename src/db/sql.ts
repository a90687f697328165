// Small SQL fragments that read the same on both dialects.
import { PostgresAdapter, sql, type Kysely, type RawBuilder } from 'kysely'

export function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter
}

/** Case-insensitive "contains" with LIKE wildcards in the value matched literally. */
export function icontains(column: string, value: string): RawBuilder<boolean> {
  const pattern = `%${value.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`
  return sql<boolean>`lower(${sql.ref(column)}) like ${pattern} escape '\\'`
}

/** Case-insensitive equality. */
export function iexact(column: string, value: string): RawBuilder<boolean> {
  return sql<boolean>`lower(${sql.ref(column)}) = ${value.toLowerCase()}`
}
