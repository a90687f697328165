import { sql, type Kysely } from 'kysely'
import { isPostgres } from './_helpers.js'

// What tells a rendered order record kept between requests from a stale one (the orders
// repository keeps them, see record-cache.ts):
// - `orders.version`, raised by a trigger on every update of the order row;
// - the `orders` epoch in `record_epochs`, raised by triggers on every update (of a column the
//   record shows) and every delete of the rows an order record shows besides its own: offering,
//   provider and customer organizations, category, plans, project, resource and users.
// Triggers, not the application, keep both, so every process and every writer (a second server
// process, an operator's SQL) invalidates them alike.

/** The columns of other tables that the order record shows (repository `recordJson`). */
export const ORDER_RECORD_SOURCES: Record<string, string[]> = {
  offerings: [
    'uuid',
    'name',
    'description',
    'image',
    'thumbnail',
    'type',
    'shared',
    'billable',
    'plugin_options',
    'category_id',
  ],
  customers: ['uuid', 'name', 'slug'],
  categories: ['uuid', 'title', 'icon'],
  plans: ['uuid', 'name', 'unit', 'description', 'unit_price', 'fixed_price', 'activation_price'],
  projects: ['uuid', 'name', 'description', 'slug'],
  resources: ['uuid', 'name', 'resource_type'],
  users: ['username', 'full_name', 'civil_number'],
}

const trigger = (table: string) => `${table}_order_records`

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('orders')
    .addColumn('version', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute()
  await db.schema
    .createTable('record_epochs')
    .addColumn('name', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('n', 'bigint', (c) => c.notNull())
    .execute()
  await sql`insert into record_epochs (name, n) values ('orders', 0)`.execute(db)

  if (isPostgres(db)) {
    await sql`
      create function orders_version_bump() returns trigger language plpgsql as $$
      begin
        new.version := old.version + 1;
        return new;
      end $$`.execute(db)
    await sql`create trigger orders_version before update on orders
      for each row execute function orders_version_bump()`.execute(db)
    await sql`
      create function order_records_changed() returns trigger language plpgsql as $$
      begin
        update record_epochs set n = n + 1 where name = 'orders';
        return null;
      end $$`.execute(db)
    for (const [table, columns] of Object.entries(ORDER_RECORD_SOURCES)) {
      await sql
        .raw(
          `create trigger ${trigger(table)} after update of ${columns.join(', ')} or delete on ${table}
           for each statement execute function order_records_changed()`,
        )
        .execute(db)
    }
    return
  }

  // Not recursive: SQLite does not fire a trigger from its own statements (recursive_triggers off).
  await sql`create trigger orders_version after update on orders begin
      update orders set version = version + 1 where id = new.id; end`.execute(db)
  const bump = `update record_epochs set n = n + 1 where name = 'orders';`
  for (const [table, columns] of Object.entries(ORDER_RECORD_SOURCES)) {
    await sql
      .raw(
        `create trigger ${trigger(table)}_update after update of ${columns.join(', ')} on ${table} begin ${bump} end`,
      )
      .execute(db)
    await sql
      .raw(`create trigger ${trigger(table)}_delete after delete on ${table} begin ${bump} end`)
      .execute(db)
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    for (const table of Object.keys(ORDER_RECORD_SOURCES)) {
      await sql.raw(`drop trigger if exists ${trigger(table)} on ${table}`).execute(db)
    }
    await sql`drop trigger if exists orders_version on orders`.execute(db)
    await sql`drop function if exists order_records_changed()`.execute(db)
    await sql`drop function if exists orders_version_bump()`.execute(db)
  } else {
    for (const table of Object.keys(ORDER_RECORD_SOURCES)) {
      await sql.raw(`drop trigger if exists ${trigger(table)}_update`).execute(db)
      await sql.raw(`drop trigger if exists ${trigger(table)}_delete`).execute(db)
    }
    await sql`drop trigger if exists orders_version`.execute(db)
  }
  await db.schema.dropTable('record_epochs').ifExists().execute()
  await db.schema.alterTable('orders').dropColumn('version').execute()
}
