import { sql, type Kysely } from 'kysely'
import { isPostgres } from './_helpers.js'

// What keeps lists fast at a million orders:
// - `row_counts`: the total number of orders, kept by triggers, so an unfiltered list's
//   X-Result-Count does not scan the table.
// - a substring index on resource names (the order `query` and `resource_name` filters):
//   an FTS5 trigram table on SQLite, a pg_trgm GIN index on PostgreSQL.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('row_counts')
    .addColumn('name', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('n', 'bigint', (c) => c.notNull())
    .execute()
  await sql`insert into row_counts (name, n) select 'orders', count(*) from orders`.execute(db)

  if (isPostgres(db)) {
    await sql`
      create function orders_count_insert() returns trigger language plpgsql as $$
      begin
        update row_counts set n = n + (select count(*) from new_rows) where name = 'orders';
        return null;
      end $$`.execute(db)
    await sql`
      create function orders_count_delete() returns trigger language plpgsql as $$
      begin
        update row_counts set n = n - (select count(*) from old_rows) where name = 'orders';
        return null;
      end $$`.execute(db)
    await sql`create trigger orders_count_insert after insert on orders
      referencing new table as new_rows for each statement execute function orders_count_insert()`.execute(db)
    await sql`create trigger orders_count_delete after delete on orders
      referencing old table as old_rows for each statement execute function orders_count_delete()`.execute(db)
    // pg_trgm lives in `public` so every schema's index can use it. Installing it needs the right
    // privilege; without it (or when another migration installs it concurrently) the search still
    // works, only without the index.
    await sql`savepoint trgm`.execute(db)
    try {
      await sql`create extension if not exists pg_trgm schema public`.execute(db)
      await sql`release savepoint trgm`.execute(db)
    } catch {
      await sql`rollback to savepoint trgm`.execute(db)
    }
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from pg_extension where extname = 'pg_trgm'`.execute(db)
    if (rows[0]?.n) {
      const { rows: ns } = await sql<{ schema: string }>`
        select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace
        where e.extname = 'pg_trgm'`.execute(db)
      const ops = sql.raw(`${ns[0]!.schema}.gin_trgm_ops`)
      await sql`create index resources_name_trgm_idx on resources using gin (lower(name) ${ops})`.execute(db)
    }
    return
  }

  await sql`create trigger orders_count_insert after insert on orders begin
      update row_counts set n = n + 1 where name = 'orders'; end`.execute(db)
  await sql`create trigger orders_count_delete after delete on orders begin
      update row_counts set n = n - 1 where name = 'orders'; end`.execute(db)
  await sql`create virtual table resources_name_fts using fts5(
      name, content = 'resources', content_rowid = 'id', tokenize = 'trigram')`.execute(db)
  await sql`insert into resources_name_fts (resources_name_fts) values ('rebuild')`.execute(db)
  await sql`create trigger resources_name_fts_insert after insert on resources begin
      insert into resources_name_fts (rowid, name) values (new.id, new.name); end`.execute(db)
  await sql`create trigger resources_name_fts_delete after delete on resources begin
      insert into resources_name_fts (resources_name_fts, rowid, name) values ('delete', old.id, old.name); end`.execute(
    db,
  )
  await sql`create trigger resources_name_fts_update after update of name on resources begin
      insert into resources_name_fts (resources_name_fts, rowid, name) values ('delete', old.id, old.name);
      insert into resources_name_fts (rowid, name) values (new.id, new.name); end`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    await sql`drop trigger if exists orders_count_insert on orders`.execute(db)
    await sql`drop trigger if exists orders_count_delete on orders`.execute(db)
    await sql`drop function if exists orders_count_insert()`.execute(db)
    await sql`drop function if exists orders_count_delete()`.execute(db)
    await sql`drop index if exists resources_name_trgm_idx`.execute(db)
  } else {
    for (const t of [
      'orders_count_insert',
      'orders_count_delete',
      'resources_name_fts_insert',
      'resources_name_fts_delete',
      'resources_name_fts_update',
    ]) {
      await sql.raw(`drop trigger if exists ${t}`).execute(db)
    }
    await sql`drop table if exists resources_name_fts`.execute(db)
  }
  await db.schema.dropTable('row_counts').ifExists().execute()
}
