// Column helpers shared by migrations so both dialects get the same logical schema.
// SQLite: timestamps are ISO-8601 UTC text (fixed width, so they sort), uuids text, booleans
// integers 0/1, JSON text. PostgreSQL: `timestamptz`, `uuid`, `boolean`, `jsonb` and `numeric`.
// Dates are YYYY-MM-DD text on both. A new column takes its type from `types(db)`, so it is
// native on PostgreSQL from the start; the repositories read every type back in the shape they
// expect on both dialects (see `database.ts`, `typeParsers`).
import { PostgresAdapter, type ColumnDefinitionBuilder, type CreateTableBuilder, type Kysely } from 'kysely'

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

/** The record's `created` and `modified` times (ISO text; `timestamptz` once native_pg_types ran). */
export function timestamps<T extends string, C extends string>(t: CreateTableBuilder<T, C>) {
  return t
    .addColumn('created', 'varchar(32)', (c) => c.notNull())
    .addColumn('modified', 'varchar(32)', (c) => c.notNull())
}

/** A required reference to `table`'s row, whose deletion deletes this row. */
export function ownedBy(table: string) {
  return (c: ColumnDefinitionBuilder) => c.notNull().references(`${table}.id`).onDelete('cascade')
}

/** An optional reference to `table`'s row, cleared when that row is deleted. */
export function clearedWith(table: string) {
  return (c: ColumnDefinitionBuilder) => c.references(`${table}.id`).onDelete('set null')
}
