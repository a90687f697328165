// What Kysely's Migrator asks of the database (whether its tables exist), answered from the
// schemas on this connection's search path only. Kysely's own PostgreSQL introspector reads every
// schema of the database, and fails when another schema is dropped while it reads (several
// installs, or test runs, sharing one database, each in a schema of its own).
import {
  sql,
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type Kysely,
  type SchemaMetadata,
  type TableMetadata,
} from 'kysely'

export class SearchPathIntrospector implements DatabaseIntrospector {
  constructor(private readonly db: Kysely<any>) {}

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<{ name: string }>`select nspname as name from pg_catalog.pg_namespace`.execute(
      this.db,
    )
    return rows
  }

  /** The tables and views of the search path's schemas, without their columns (nothing asks for them). */
  async getTables(): Promise<TableMetadata[]> {
    const { rows } = await sql<{ name: string; schema: string; is_view: boolean }>`
      select c.relname as name, n.nspname as schema, c.relkind = 'v' as is_view
      from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where c.relkind in ('r', 'v', 'p') and n.nspname = any (current_schemas(false))`.execute(this.db)
    return rows.map((r) => ({ name: r.name, schema: r.schema, isView: r.is_view, columns: [] }))
  }

  async getMetadata(): Promise<DatabaseMetadata> {
    return { tables: await this.getTables() }
  }
}
