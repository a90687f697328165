import { sql, type Kysely } from 'kysely'
import { isPostgres } from './_helpers.js'
import { createStatementTriggers, pgTriggers } from './2026-12-06T1000_pg_match_epochs.js'

// PostgreSQL: the rows every write of a kind updates (the epochs of `record_epochs` that order
// searches and the stale services' total are kept by, and the orders' total in `row_counts`)
// are updated when the transaction commits instead of by the statement that wrote, so that their
// row locks are held for the commit alone. Updated by the writing statement, each such row stayed
// locked until the end of the transaction: every create of an order (which raises
// `resource_names` and `order_slugs` and adds to the total) waited for the create before it to
// finish its remaining statements and its commit, one at a time (docs/performance.md).
//
// - Epochs: deferred constraint triggers, one per row written (the SQLite triggers' events and
//   WHEN conditions, so a statement that writes no row raises nothing), raise their epoch once a
//   transaction: the epoch moves with the commit that changed what it guards, as before.
// - The orders' total: the statement-level triggers add each statement's rows to a count local
//   to the transaction (a setting), and a deferred trigger adds that count to `row_counts` once,
//   at commit. A savepoint rolled back takes its rows, its count and its deferred events back.
//
// SQLite writes one transaction at a time: nothing to do there.

const DELTA = 'marketplace.orders_delta'

export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return
  await sql
    .raw(
      `create function raise_epoch_at_commit() returns trigger language plpgsql as $$
      declare
        flag text := 'marketplace.raised_' || tg_argv[0];
        xact text := pg_current_xact_id()::text;
      begin
        if current_setting(flag, true) is distinct from xact then
          perform set_config(flag, xact, true);
          update record_epochs set n = n + 1 where name = tg_argv[0];
        end if;
        return null;
      end $$`,
    )
    .execute(db)
  // Each statement trigger is replaced by a deferred row trigger of the same name and event.
  for (const t of pgTriggers()) {
    await sql.raw(`drop trigger ${t.name} on ${t.table}`).execute(db)
    await sql.raw(`drop function ${t.name}()`).execute(db)
    await sql
      .raw(
        `create constraint trigger ${t.name} after ${t.event} on ${t.table}
        deferrable initially deferred for each row${t.when ? ` when (${t.when})` : ''}
        execute function raise_epoch_at_commit('${t.epoch}')`,
      )
      .execute(db)
  }
  const pending = (sign: string, rows: string) =>
    `begin
      perform set_config('${DELTA}', (coalesce(nullif(current_setting('${DELTA}', true), ''), '0')::bigint
        ${sign} (select count(*) from ${rows}))::text, true);
      return null;
    end`
  await sql
    .raw(
      `create or replace function orders_count_insert() returns trigger language plpgsql as $$ ${pending('+', 'new_rows')} $$`,
    )
    .execute(db)
  await sql
    .raw(
      `create or replace function orders_count_delete() returns trigger language plpgsql as $$ ${pending('-', 'old_rows')} $$`,
    )
    .execute(db)
  await sql
    .raw(
      `create function orders_count_apply() returns trigger language plpgsql as $$
      declare delta bigint := coalesce(nullif(current_setting('${DELTA}', true), ''), '0')::bigint;
      begin
        if delta <> 0 then
          perform set_config('${DELTA}', '0', true);
          update row_counts set n = n + delta where name = 'orders';
        end if;
        return null;
      end $$`,
    )
    .execute(db)
  await sql`create constraint trigger orders_count_apply after insert or delete on orders
    deferrable initially deferred for each row execute function orders_count_apply()`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return
  await sql`drop trigger if exists orders_count_apply on orders`.execute(db)
  await sql`drop function if exists orders_count_apply()`.execute(db)
  await sql`create or replace function orders_count_insert() returns trigger language plpgsql as $$
    begin
      update row_counts set n = n + (select count(*) from new_rows) where name = 'orders';
      return null;
    end $$`.execute(db)
  await sql`create or replace function orders_count_delete() returns trigger language plpgsql as $$
    begin
      update row_counts set n = n - (select count(*) from old_rows) where name = 'orders';
      return null;
    end $$`.execute(db)
  for (const t of pgTriggers()) await sql.raw(`drop trigger if exists ${t.name} on ${t.table}`).execute(db)
  await sql`drop function if exists raise_epoch_at_commit()`.execute(db)
  await createStatementTriggers(db)
}
