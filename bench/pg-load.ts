// Bulk loading for the PostgreSQL data set: rows go in as one array per column, unnested by the
// server (`insert … select * from unnest($1::t1[], $2::t2[], …)`), so a statement carries
// thousands of rows in as many parameters as the table has columns. Without a COPY client in the
// dependencies this is the closest to it: one parse and one plan per statement, no per-row
// parameter limit (PostgreSQL allows 65,535 per statement, which caps a VALUES list at ~2,000
// orders).
import { sql, type Kysely, type Transaction } from 'kysely'
import type { DB } from '../src/db/tables.js'

type Row = Record<string, unknown>

/** Rows per statement. */
const ROWS = 5000

const typesOf = new Map<string, Map<string, string>>()

/** The declared type of each column of a table in the current schema (`format_type`). */
async function columnTypes(db: Kysely<DB> | Transaction<DB>, table: string): Promise<Map<string, string>> {
  const known = typesOf.get(table)
  if (known) return known
  const { rows } = await sql<{ name: string; type: string }>`
    select a.attname as name, format_type(a.atttypid, a.atttypmod) as type
    from pg_attribute a
    where a.attrelid = ${table}::regclass and a.attnum > 0 and not a.attisdropped`.execute(db)
  const types = new Map(rows.map((r) => [r.name, r.type]))
  typesOf.set(table, types)
  return types
}

/** Inserts rows (all with the same keys) into a PostgreSQL table, ROWS at a time. */
export async function loadRows(
  db: Kysely<DB> | Transaction<DB>,
  table: keyof DB,
  rows: Row[],
): Promise<void> {
  if (!rows.length) return
  const types = await columnTypes(db, table)
  const columns = Object.keys(rows[0]!)
  for (let i = 0; i < rows.length; i += ROWS) {
    const batch = rows.slice(i, i + ROWS)
    const arrays = columns.map((c) => {
      const type = types.get(c)
      if (!type) throw new Error(`${table}.${c}: no such column`)
      // booleans are seeded as 0/1 (SQLite's form); PostgreSQL's array input takes them as text
      const values = batch.map((r) => (typeof r[c] === 'number' && type === 'boolean' ? r[c] === 1 : r[c]))
      return sql`${values}::${sql.raw(type)}[]`
    })
    await sql`insert into ${sql.table(table)} (${sql.join(columns.map((c) => sql.ref(c)))})
      select * from unnest(${sql.join(arrays)})`.execute(db)
  }
}
