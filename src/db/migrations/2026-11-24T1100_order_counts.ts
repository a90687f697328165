import { sql, type Kysely } from 'kysely'
import { isPostgres } from './_helpers.js'

// The number of orders of each project in each state, kept by triggers: a list filtered only by
// projects and states (a project member's list, `project_uuid` with `state`) reads its total from
// here, a few rows, instead of counting every matching order on every page.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('order_counts')
    .addColumn('project_id', 'integer', (c) => c.notNull())
    .addColumn('state', 'varchar(30)', (c) => c.notNull())
    .addColumn('n', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('order_counts_pk', ['project_id', 'state'])
    .execute()
  await sql`insert into order_counts (project_id, state, n)
    select project_id, state, count(*) from orders group by project_id, state`.execute(db)

  if (isPostgres(db)) {
    await sql`
      create function order_counts_change() returns trigger language plpgsql as $$
      begin
        if tg_op in ('UPDATE', 'DELETE') then
          update order_counts set n = n - 1 where project_id = old.project_id and state = old.state;
        end if;
        if tg_op in ('INSERT', 'UPDATE') then
          insert into order_counts (project_id, state, n) values (new.project_id, new.state, 1)
            on conflict (project_id, state) do update set n = order_counts.n + 1;
        end if;
        return null;
      end $$`.execute(db)
    await sql`create trigger order_counts_insert_delete after insert or delete on orders
      for each row execute function order_counts_change()`.execute(db)
    await sql`create trigger order_counts_update after update of project_id, state on orders
      for each row when (old.project_id is distinct from new.project_id or old.state is distinct from new.state)
      execute function order_counts_change()`.execute(db)
    return
  }

  const add = (
    row: 'new',
  ) => `insert into order_counts (project_id, state, n) values (${row}.project_id, ${row}.state, 1)
      on conflict (project_id, state) do update set n = n + 1;`
  const remove = `update order_counts set n = n - 1 where project_id = old.project_id and state = old.state;`
  await sql
    .raw(`create trigger order_counts_insert after insert on orders begin ${add('new')} end`)
    .execute(db)
  await sql.raw(`create trigger order_counts_delete after delete on orders begin ${remove} end`).execute(db)
  await sql
    .raw(
      `create trigger order_counts_update after update of project_id, state on orders
      when old.project_id is not new.project_id or old.state is not new.state
      begin ${remove} ${add('new')} end`,
    )
    .execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    await sql`drop trigger if exists order_counts_insert_delete on orders`.execute(db)
    await sql`drop trigger if exists order_counts_update on orders`.execute(db)
    await sql`drop function if exists order_counts_change()`.execute(db)
  } else {
    for (const t of ['order_counts_insert', 'order_counts_delete', 'order_counts_update']) {
      await sql.raw(`drop trigger if exists ${t}`).execute(db)
    }
  }
  await db.schema.dropTable('order_counts').ifExists().execute()
}
