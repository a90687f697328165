import { sql, type Kysely } from 'kysely'
import { isPostgres } from './_helpers.js'

// Epochs (rows of `record_epochs`) raised by triggers whenever what a kept answer was computed
// from may have changed, so an answer kept between requests is used only while its epoch holds
// (see db/epochs.ts):
// - `project_names`, `resource_names`, `order_slugs`: what an order list's `query` text matches
//   (project and resource names, order slugs);
// - `site_agent_services`: any write to a site agent service (the total of stale services).
// SQLite here; PostgreSQL's epochs and triggers come with migration 2026-12-06T1000_pg_match_epochs,
// once its statements read the epochs without a round trip of their own.

/** Each epoch and the SQLite trigger events (with an optional WHEN condition) that raise it. */
export const MATCH_EPOCHS: Record<string, { table: string; event: string; when?: string }[]> = {
  project_names: [
    { table: 'projects', event: 'insert' },
    { table: 'projects', event: 'update of name' },
    { table: 'projects', event: 'delete' },
  ],
  resource_names: [
    { table: 'resources', event: 'insert' },
    { table: 'resources', event: 'update of name' },
    { table: 'resources', event: 'delete' },
  ],
  // An empty slug matches no `query` text (an empty text is no filter), so only others count.
  order_slugs: [
    { table: 'orders', event: 'insert', when: "new.slug <> ''" },
    { table: 'orders', event: 'update of slug' },
    { table: 'orders', event: 'delete', when: "old.slug <> ''" },
  ],
  site_agent_services: [
    { table: 'site_agent_services', event: 'insert' },
    { table: 'site_agent_services', event: 'update' },
    { table: 'site_agent_services', event: 'delete' },
  ],
}

const triggers = () =>
  Object.entries(MATCH_EPOCHS).flatMap(([name, events]) =>
    events.map((e) => ({ ...e, name, trigger: `${name}_epoch_${e.event.split(' ')[0]}` })),
  )

export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) return
  for (const name of Object.keys(MATCH_EPOCHS)) {
    await sql`insert into record_epochs (name, n) values (${name}, 0)`.execute(db)
  }
  for (const t of triggers()) {
    await sql
      .raw(
        `create trigger ${t.trigger} after ${t.event} on ${t.table}${t.when ? ` when ${t.when}` : ''}
         begin update record_epochs set n = n + 1 where name = '${t.name}'; end`,
      )
      .execute(db)
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) return
  for (const t of triggers()) await sql.raw(`drop trigger if exists ${t.trigger}`).execute(db)
  for (const name of Object.keys(MATCH_EPOCHS)) {
    await sql`delete from record_epochs where name = ${name}`.execute(db)
  }
}
