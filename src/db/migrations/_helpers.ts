// Column helpers shared by migrations so both dialects get the same logical schema.
// SQLite: timestamps are ISO-8601 UTC text (fixed width, so they sort), uuids text, booleans
// integers 0/1, JSON text. PostgreSQL: `timestamptz`, `uuid`, `boolean`, `jsonb` and `numeric`.
// Dates are YYYY-MM-DD text on both. A new column takes its type from `types(db)`, so it is
// native on PostgreSQL from the start; the repositories read every type back in the shape they
// expect on both dialects (see `database.ts`, `typeParsers`).
import { PostgresAdapter, type CreateTableBuilder, type Kysely } from 'kysely'
import { ownedBy } from './_columns.js'

export function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter
}

export function withId<T extends string>(
  db: Kysely<any>,
  t: CreateTableBuilder<T, never>,
): CreateTableBuilder<T, 'id'> {
  return isPostgres(db)
    ? t.addColumn('id', 'serial', (c) => c.primaryKey())
    : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
}

/**
 * The column type of each kind of value, per dialect. A flag's default is written `false`/`true`
 * (`defaultTo(false)`): SQLite stores it as 0/1.
 */
export function types(db: Kysely<any>) {
  const pg = isPostgres(db)
  return {
    uuid: pg ? 'uuid' : 'varchar(36)',
    timestamp: pg ? 'timestamptz' : 'varchar(32)',
    flag: pg ? 'boolean' : 'integer',
    json: pg ? 'jsonb' : 'text',
    decimal: pg ? 'numeric(22, 10)' : 'numeric',
  } as const
}

export function jsonType(db: Kysely<any>): 'jsonb' | 'text' {
  return types(db).json
}

export function decimalType(db: Kysely<any>): 'numeric(22, 10)' | 'numeric' {
  return types(db).decimal
}

/**
 * A table of records: the `id` key, then the record's unique `uuid` (its identifier in the API).
 * The record's other columns follow, and its timestamps last (`.$call(timestamps)`).
 */
export function createRecordTable<T extends string>(db: Kysely<any>, name: T) {
  return withId(db, db.schema.createTable(name)).addColumn('uuid', 'varchar(36)', (c) => c.notNull().unique())
}

/**
 * A table linking two tables' rows (many to many): each column, named by its key, references the
 * row of the table named by its value and goes with it; the pair of columns is the primary key
 * (`<name>_pk`).
 */
export function createLinkTable(db: Kysely<any>, name: string, links: Record<string, string>) {
  let t: CreateTableBuilder<string, string> = db.schema.createTable(name)
  for (const [column, table] of Object.entries(links)) t = t.addColumn(column, 'integer', ownedBy(table))
  return t.addPrimaryKeyConstraint(`${name}_pk`, Object.keys(links))
}

/** Creates each index of `table`, by name: its columns, in order. */
export async function createIndexes(db: Kysely<any>, table: string, indexes: Record<string, string[]>) {
  for (const [name, columns] of Object.entries(indexes)) {
    await db.schema.createIndex(name).on(table).columns(columns).execute()
  }
}

/** Drops each table that exists, in the order given (a table before those it references). */
export async function dropTables(db: Kysely<any>, tables: string[]) {
  for (const table of tables) await db.schema.dropTable(table).ifExists().execute()
}
