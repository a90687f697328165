// Column helpers shared by migrations so both dialects get the same logical schema.
// Conventions: timestamps are ISO-8601 UTC text (fixed width, so they sort), dates are
// YYYY-MM-DD text, booleans are integers 0/1, JSON is text on SQLite and jsonb on PostgreSQL.
import { PostgresAdapter, type CreateTableBuilder, type Kysely } from 'kysely'

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

export function jsonType(db: Kysely<any>): 'jsonb' | 'text' {
  return isPostgres(db) ? 'jsonb' : 'text'
}

export function decimalType(db: Kysely<any>): 'numeric(22, 10)' | 'numeric' {
  return isPostgres(db) ? 'numeric(22, 10)' : 'numeric'
}
