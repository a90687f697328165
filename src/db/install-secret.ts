// Secrets an install generates for itself: made once, kept in the database, read by every process.
import { randomBytes } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { DB } from './tables.js'

/**
 * The install's secret called `name`: 256 random bits made the first time it is asked for. Two
 * processes starting at once both offer one; the insert keeps the first and both read it back.
 */
export async function installSecret(db: Kysely<DB>, name: string): Promise<string> {
  await db
    .insertInto('install_secrets')
    .values({ name, value: randomBytes(32).toString('base64url') })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute()
  const row = await db
    .selectFrom('install_secrets')
    .select('value')
    .where('name', '=', name)
    .executeTakeFirstOrThrow()
  return row.value
}
