import { sql, type Kysely } from 'kysely'
import { isPostgres } from './_helpers.js'

// What the newest clients read of an order: the rejection comments given with a rejection, whether
// consumer review was skipped by a rule at creation, and when the output and error texts last
// changed. The record also shows its creator's e-mail and its provider's description, so changes of
// those columns must invalidate kept records too (see 2026-11-24T1000_order_record_versions.ts).

/** The columns of other tables the record now shows besides those watched already. */
export const NEWLY_SHOWN: Record<string, string[]> = { users: ['email'], service_providers: ['description'] }
const trigger = (table: string) => `${table}_order_records_more`

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('orders')
    .addColumn('consumer_rejection_comment', 'text', (c) => c.notNull().defaultTo(''))
    .execute()
  await db.schema
    .alterTable('orders')
    .addColumn('provider_rejection_comment', 'text', (c) => c.notNull().defaultTo(''))
    .execute()
  await db.schema
    .alterTable('orders')
    .addColumn('auto_approved', 'integer', (c) => c.notNull().defaultTo(0))
    .execute()
  await db.schema.alterTable('orders').addColumn('output_updated_at', 'varchar(32)').execute()
  await db.schema.alterTable('orders').addColumn('error_updated_at', 'varchar(32)').execute()
  for (const [table, columns] of Object.entries(NEWLY_SHOWN)) {
    // A delete of a service provider is watched here too; users' deletes are watched already.
    const del = table === 'service_providers'
    if (isPostgres(db)) {
      await sql
        .raw(
          `create trigger ${trigger(table)} after update of ${columns.join(', ')}${del ? ' or delete' : ''}
           on ${table} for each statement execute function order_records_changed()`,
        )
        .execute(db)
      continue
    }
    const bump = `update record_epochs set n = n + 1 where name = 'orders';`
    await sql
      .raw(
        `create trigger ${trigger(table)}_update after update of ${columns.join(', ')} on ${table} begin ${bump} end`,
      )
      .execute(db)
    if (del) {
      await sql
        .raw(`create trigger ${trigger(table)}_delete after delete on ${table} begin ${bump} end`)
        .execute(db)
    }
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of Object.keys(NEWLY_SHOWN)) {
    if (isPostgres(db)) {
      await sql.raw(`drop trigger if exists ${trigger(table)} on ${table}`).execute(db)
    } else {
      await sql.raw(`drop trigger if exists ${trigger(table)}_update`).execute(db)
      await sql.raw(`drop trigger if exists ${trigger(table)}_delete`).execute(db)
    }
  }
  for (const column of [
    'error_updated_at',
    'output_updated_at',
    'auto_approved',
    'provider_rejection_comment',
    'consumer_rejection_comment',
  ]) {
    await db.schema.alterTable('orders').dropColumn(column).execute()
  }
}
