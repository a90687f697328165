import { sql, type Kysely } from 'kysely'
import { isPostgres } from './_helpers.js'

// What the newest clients read of an order: the rejection comments given with a rejection, whether
// consumer review was skipped by a rule at creation, and when the output and error texts last
// changed. The record also shows its creator's e-mail and its provider's description, so changes of
// those columns must invalidate kept records too (see 2026-11-24T1000_order_record_versions.ts).

const USERS_BEFORE = ['username', 'full_name', 'civil_number']
const USERS_NOW = [...USERS_BEFORE, 'email']
const PROVIDERS = ['description']

async function usersTrigger(db: Kysely<any>, columns: string[]): Promise<void> {
  if (isPostgres(db)) {
    await sql`drop trigger if exists users_order_records on users`.execute(db)
    await sql
      .raw(
        `create trigger users_order_records after update of ${columns.join(', ')} or delete on users
         for each statement execute function order_records_changed()`,
      )
      .execute(db)
    return
  }
  await sql`drop trigger if exists users_order_records_update`.execute(db)
  await sql
    .raw(
      `create trigger users_order_records_update after update of ${columns.join(', ')} on users begin
       update record_epochs set n = n + 1 where name = 'orders'; end`,
    )
    .execute(db)
}

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
  await usersTrigger(db, USERS_NOW)
  if (isPostgres(db)) {
    await sql
      .raw(
        `create trigger service_providers_order_records after update of ${PROVIDERS.join(', ')} or delete
         on service_providers for each statement execute function order_records_changed()`,
      )
      .execute(db)
  } else {
    const bump = `update record_epochs set n = n + 1 where name = 'orders';`
    await sql
      .raw(
        `create trigger service_providers_order_records_update after update of ${PROVIDERS.join(', ')}
         on service_providers begin ${bump} end`,
      )
      .execute(db)
    await sql
      .raw(
        `create trigger service_providers_order_records_delete after delete on service_providers begin ${bump} end`,
      )
      .execute(db)
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    await sql`drop trigger if exists service_providers_order_records on service_providers`.execute(db)
  } else {
    await sql`drop trigger if exists service_providers_order_records_update`.execute(db)
    await sql`drop trigger if exists service_providers_order_records_delete`.execute(db)
  }
  await usersTrigger(db, USERS_BEFORE)
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
