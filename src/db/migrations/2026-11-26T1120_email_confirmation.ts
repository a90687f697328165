import type { Kysely } from 'kysely'

// A user's own change of e-mail waits in pending_email until confirmed with a token (or by
// staff); `email` only ever holds an address the user proved, or staff set. Invitations match
// their e-mail patterns against `email`, so claiming an organization's address no longer works.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').addColumn('pending_email', 'varchar(320)').execute()
  await db.schema.alterTable('users').addColumn('email_token_hash', 'varchar(64)').execute()
  await db.schema.alterTable('users').addColumn('email_token_expires', 'varchar(32)').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const c of ['pending_email', 'email_token_hash', 'email_token_expires']) {
    await db.schema.alterTable('users').dropColumn(c).execute()
  }
}
