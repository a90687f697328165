import { sql, type Kysely } from 'kysely'
import { isPostgres } from './_helpers.js'

// The epoch `site_agent_records`, raised by any write to a site agent's processors or identities:
// with `site_agent_services` (any write to a service) it tells every server process, through the
// change notifications, that a services list kept in memory may no longer hold
// (areas/site-agents/service.ts). Raised at commit, once a transaction, as the other epochs
// (migration 2026-12-07T1000_commit_time_counters, whose `raise_epoch_at_commit` it uses).
//
// PostgreSQL only: on a SQLite file every commit drops what is kept in memory, and nothing reads
// this epoch there.

const EPOCH = 'site_agent_records'

/** Each trigger: its name, its table and event. */
const TRIGGERS = [
  {
    name: 'site_agent_processors_record_epoch',
    table: 'site_agent_processors',
    event: 'insert or update or delete',
  },
  { name: 'site_agent_identities_record_epoch', table: 'site_agent_identities', event: 'update or delete' },
]

export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return
  await sql`insert into record_epochs (name, n) values (${EPOCH}, 0)`.execute(db)
  for (const t of TRIGGERS) {
    await sql
      .raw(
        `create constraint trigger ${t.name} after ${t.event} on ${t.table}
        deferrable initially deferred for each row execute function raise_epoch_at_commit('${EPOCH}')`,
      )
      .execute(db)
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return
  for (const t of TRIGGERS) await sql.raw(`drop trigger if exists ${t.name} on ${t.table}`).execute(db)
  await sql`delete from record_epochs where name = ${EPOCH}`.execute(db)
}
