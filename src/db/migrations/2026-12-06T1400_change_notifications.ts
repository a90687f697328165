import { sql, type Kysely } from 'kysely'
import { isPostgres } from './_helpers.js'

// PostgreSQL: every process learns of changes to orders and to the records' epochs by
// notification (src/db/change-feed.ts), so that what it keeps of them is used without a round
// trip. One notification per statement, delivered at commit (none on rollback), its payload
// `<schema> orders <ids>` (`*` past IDS_MAX rows or on truncate, `new` for inserts) or `<schema> epoch <name>`:
// processes of other schemas on the database ignore it. SQLite needs none: its processes check
// the versions, which cost no round trip there.

/** The most ids one notification names (its payload stays far below PostgreSQL's 8,000 bytes). */
const IDS_MAX = 500

export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return
  await sql
    .raw(
      `create function orders_changed_notify() returns trigger language plpgsql as $$
      declare ids text;
      begin
        select case when count(*) > ${IDS_MAX} then '*' else string_agg(id::text, ',') end
          into ids from changed;
        if ids is not null then
          perform pg_notify('marketplace_changes', current_schema() || ' orders ' || ids);
        end if;
        return null;
      end $$`,
    )
    .execute(db)
  await sql`create trigger orders_update_notify after update on orders
    referencing old table as changed for each statement execute function orders_changed_notify()`.execute(db)
  await sql`create trigger orders_delete_notify after delete on orders
    referencing old table as changed for each statement execute function orders_changed_notify()`.execute(db)
  await sql`create function orders_inserted_notify() returns trigger language plpgsql as $$
    begin perform pg_notify('marketplace_changes', current_schema() || ' orders new'); return null; end $$`.execute(
    db,
  )
  await sql`create trigger orders_insert_notify after insert on orders
    for each statement execute function orders_inserted_notify()`.execute(db)
  await sql`create function orders_truncated_notify() returns trigger language plpgsql as $$
    begin perform pg_notify('marketplace_changes', current_schema() || ' orders *'); return null; end $$`.execute(
    db,
  )
  await sql`create trigger orders_truncate_notify after truncate on orders
    for each statement execute function orders_truncated_notify()`.execute(db)
  await sql`create function record_epochs_notify() returns trigger language plpgsql as $$
    begin perform pg_notify('marketplace_changes', current_schema() || ' epoch ' || new.name); return null; end $$`.execute(
    db,
  )
  await sql`create trigger record_epochs_notify after update on record_epochs
    for each row execute function record_epochs_notify()`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return
  for (const t of [
    'orders_update_notify',
    'orders_delete_notify',
    'orders_insert_notify',
    'orders_truncate_notify',
  ]) {
    await sql.raw(`drop trigger if exists ${t} on orders`).execute(db)
  }
  await sql`drop trigger if exists record_epochs_notify on record_epochs`.execute(db)
  for (const f of [
    'orders_changed_notify',
    'orders_inserted_notify',
    'orders_truncated_notify',
    'record_epochs_notify',
  ]) {
    await sql.raw(`drop function if exists ${f}()`).execute(db)
  }
}
