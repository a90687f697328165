// Small SQL fragments that read the same on both dialects.
import { PostgresAdapter, sql, type ExpressionBuilder, type Kysely, type RawBuilder } from 'kysely'

export function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter
}

/** Case-insensitive "contains" with LIKE wildcards in the value matched literally. */
export function icontains(column: string, value: string): RawBuilder<boolean> {
  return ilike(column, containsPattern(value))
}

/** The LIKE pattern of "contains `value`", lowercased, with `\` escaping its wildcards. */
export function containsPattern(value: string): string {
  return `%${value.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`
}

/**
 * The lowercased column matches a `containsPattern` (given as a value or a slot). On SQLite the
 * driver drops the lower() (`withoutLowerInLike`): SQLite's LIKE already ignores ASCII case.
 */
export function ilike(column: string, pattern: unknown): RawBuilder<boolean> {
  return sql<boolean>`lower(${sql.ref(column)}) like ${pattern} escape '\\'`
}

/** A search: any of the columns contains the value, ignoring case (a list's `query` filter). */
export function icontainsAny(columns: readonly string[]) {
  return (eb: ExpressionBuilder<any, any>, value: string) => eb.or(columns.map((c) => icontains(c, value)))
}

/** Case-insensitive equality. */
export function iexact(column: string, value: string): RawBuilder<boolean> {
  return sql<boolean>`lower(${sql.ref(column)}) = ${value.toLowerCase()}`
}

/** A role grant (a `user_roles` row) still in force at `now`: no expiration time, or a later one. */
export function grantUnexpired(eb: any, now: string): any {
  return eb.or([eb('user_roles.expiration_time', 'is', null), eb('user_roles.expiration_time', '>', now)])
}

/** An id list for `in` that may be empty: never empty (`[-1]` matches no row). */
export const none = (ids: number[]): number[] => (ids.length ? ids : [-1])

/**
 * Rows whose column is in one of these id lists: the visibility rule of every scoped list. Empty
 * lists are left out (an `IN (-1)` branch still costs the planner an index probe and, with an
 * ORDER BY, a sort of the union); with no ids at all, no row.
 */
export function inAnyOf(
  eb: any,
  branches: readonly (readonly [column: string, ids: readonly number[]])[],
): any {
  const held = branches.filter(([, ids]) => ids.length).map(([column, ids]) => eb(column, 'in', ids))
  return held.length ? eb.or(held) : sql<boolean>`1 = 0`
}

/**
 * A PostgreSQL `timestamptz` expression as ISO-8601 UTC text with milliseconds and `Z`, the form
 * SQLite stores and the API shows (`isoNow`).
 */
export function isoText(expr: string): string {
  return `to_char((${expr}) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
}

/**
 * Builders for a record rendered as JSON text by the database: each returns a SQL expression whose
 * value is one JSON value (never SQL NULL), so a record is the concatenation of `"key":value`
 * pairs. Strings are quoted by the database (`json_quote` on SQLite, `to_json` on PostgreSQL).
 */
export function jsonSql(pg: boolean) {
  const quote = (expr: string) => (pg ? `coalesce(to_json(${expr})::text, 'null')` : `json_quote(${expr})`)
  return {
    /** A text column; null stays null. */
    text: quote,
    /** A text column the schema declares non-null: null renders as "". */
    textOrEmpty: (expr: string) => quote(`coalesce(${expr}, '')`),
    /** A flag column (boolean on PostgreSQL, 0/1 on SQLite) as true/false; null is false. */
    bool: (expr: string) => `(case when ${pg ? expr : `${expr} = 1`} then 'true' else 'false' end)`,
    /** A timestamp column as the ISO-8601 UTC text the API shows; null stays null. */
    time: (expr: string) => quote(pg ? isoText(expr) : expr),
    /** A condition as true/false. */
    check: (cond: string) => `(case when ${cond} then 'true' else 'false' end)`,
    /** A JSON column, embedded as is (`fallback` when null or, on SQLite, not valid JSON). */
    json: (expr: string, fallback: string) =>
      pg
        ? `coalesce((${expr})::text, '${fallback}')`
        : `(case when json_valid(${expr}) then ${expr} else '${fallback}' end)`,
    /**
     * A link `<base>/api/<path>/<uuid>/`, or null without a uuid. `base` is an expression holding
     * the base URL already escaped for a JSON string; uuids need no escaping.
     */
    link: (base: string, path: string, uuid: string, suffix = '') =>
      `(case when ${uuid} is null then 'null' else '"' || ${base} || '/api/${path}/' || ${uuid} || '/${suffix}"' end)`,
    /**
     * `{"k1":v1,"k2":v2,...` (without the closing brace) from [key, value expression] pairs. One
     * `concat` builds the text in one pass (a chain of `||` copies the growing prefix once per
     * piece); its arguments come in groups, since PostgreSQL takes at most 100.
     */
    object: (pairs: readonly (readonly [string, string])[]) => {
      const args = pairs.flatMap(([k, v], i) => [`'${i ? ',' : '{'}"${k}":'`, v])
      const groups: string[] = []
      for (let i = 0; i < args.length; i += 90) groups.push(`concat(${args.slice(i, i + 90).join(', ')})`)
      return groups.length === 1 ? groups[0]! : `concat(${groups.join(', ')})`
    },
  }
}

/** A unique index refused the row (SQLite and PostgreSQL error shapes). */
export function isUniqueViolation(e: unknown): boolean {
  const err = e as { code?: unknown }
  return err?.code === '23505' || err?.code === 'SQLITE_CONSTRAINT_UNIQUE'
}
