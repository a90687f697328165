import { sql, type Kysely } from 'kysely'
import { isPostgres } from './_helpers.js'
import { MATCH_EPOCHS } from './2026-11-24T1200_match_epochs.js'

// The epochs of migration 2026-11-24T1200_match_epochs (what an order list's `query` text
// matches, the total of stale site agent services) on PostgreSQL too, raised by the same writes:
// the answers they guard are now kept there as well, their epochs read by statements a request
// sends anyway (see db/epochs.ts). SQLite has them since that migration: nothing to do there.
//
// Each of its SQLite row triggers becomes a statement-level trigger, so a statement raises an
// epoch once however many rows it writes:
// - an insert, a delete or an update of any column: a trigger with the statement's rows as a
//   transition table, raising the epoch only when the statement wrote a row that meets the
//   SQLite trigger's WHEN condition (an order's slug not empty), as the row triggers fire;
// - an `update of <column>` (PostgreSQL allows no transition table on a trigger with a column
//   list): a trigger raising the epoch whenever the statement sets that column, as SQLite's
//   fires, and also when it sets it on no row: an epoch raised once more, never once less.

interface PgTrigger {
  /** The trigger's name, and its function's. */
  name: string
  epoch: string
  table: string
  /** `insert`, `update`, `delete` or `update of <column>`. */
  event: string
  /** The transition table the rows written are looked at in (`written`); null for a column list. */
  transition: 'new' | 'old' | null
  /** Which of the rows written raise the epoch (a condition on their columns); undefined: any. */
  rows?: string
  /** The SQLite trigger's WHEN condition as it is, on `new` or `old` (a row trigger's condition). */
  when?: string
}

export function pgTriggers(): PgTrigger[] {
  return Object.entries(MATCH_EPOCHS).flatMap(([epoch, events]) =>
    events.map(({ table, event, when }) => {
      const name = `${epoch}_epoch_${event.split(' ')[0]}`
      if (event.includes(' of ')) return { name, epoch, table, event, transition: null, when }
      const transition = event === 'delete' ? 'old' : 'new'
      // The SQLite condition names the row `new` or `old`; here it is a row of `written`.
      return { name, epoch, table, event, transition, rows: when?.replace(/\b(new|old)\./g, ''), when }
    }),
  )
}

export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return
  for (const epoch of Object.keys(MATCH_EPOCHS)) {
    await sql`insert into record_epochs (name, n) values (${epoch}, 0)`.execute(db)
  }
  await createStatementTriggers(db)
}

/** This migration's statement-level triggers (also what a later migration's `down` puts back). */
export async function createStatementTriggers(db: Kysely<any>): Promise<void> {
  for (const t of pgTriggers()) {
    const raise = `update record_epochs set n = n + 1 where name = '${t.epoch}';`
    const written = `select from written${t.rows ? ` where ${t.rows}` : ''}`
    const body = t.transition ? `if exists (${written}) then ${raise} end if;` : raise
    await sql
      .raw(
        `create function ${t.name}() returns trigger language plpgsql as $$
         begin ${body} return null; end $$`,
      )
      .execute(db)
    const referencing = t.transition ? ` referencing ${t.transition} table as written` : ''
    await sql
      .raw(
        `create trigger ${t.name} after ${t.event} on ${t.table}${referencing}
         for each statement execute function ${t.name}()`,
      )
      .execute(db)
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return
  for (const t of pgTriggers()) {
    await sql.raw(`drop trigger if exists ${t.name} on ${t.table}`).execute(db)
    await sql.raw(`drop function if exists ${t.name}()`).execute(db)
  }
  for (const epoch of Object.keys(MATCH_EPOCHS)) {
    await sql`delete from record_epochs where name = ${epoch}`.execute(db)
  }
}
