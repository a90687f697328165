// A migration's test: a scratch database (its own schema on PostgreSQL) migrated up to just before
// the migration, the rows the test writes there, then the migration and whatever follows it.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { Migrator, type Kysely } from 'kysely'
import { TEST_DATABASE_URL } from './app.js'
import { createDatabase, dialectOf, dropSchema, type Database } from '../../src/db/database.js'
import { DirectoryProvider } from '../../src/db/migrate.js'

export interface BeforeMigration {
  database: Database
  /** The database untyped: the tables as they were before the migration. */
  db: Kysely<any>
  pg: boolean
  /** Runs the migration and every later one. */
  migrateToLatest: () => Promise<void>
  /** Undoes the migration and every later one (their `down`s, newest first). */
  migrateBack: () => Promise<void>
}

/** Runs `body` on a scratch database migrated up to just before `migration`, then drops it. */
export async function beforeMigration(
  migration: string,
  body: (m: BeforeMigration) => Promise<void>,
): Promise<void> {
  const pg = dialectOf(TEST_DATABASE_URL) === 'postgres'
  const schema = pg ? `t_${randomBytes(6).toString('hex')}` : undefined
  const database = await createDatabase(TEST_DATABASE_URL, { schema, poolSize: 2 })
  try {
    const db = database.db as Kysely<any>
    const migrator = new Migrator({
      db,
      provider: new DirectoryProvider(),
      ...(schema ? { migrationTableSchema: schema } : {}),
    })
    const names = (await migrator.getMigrations()).map((m) => m.name)
    const at = names.indexOf(migration)
    assert.ok(at > 0, `no migration ${migration}, or it is the first`)
    assert.equal((await migrator.migrateTo(names[at - 1]!)).error, undefined)
    await body({
      database,
      db,
      pg,
      migrateToLatest: async () => assert.equal((await migrator.migrateToLatest()).error, undefined),
      migrateBack: async () => assert.equal((await migrator.migrateTo(names[at - 1]!)).error, undefined),
    })
  } finally {
    await database.close()
    if (schema) await dropSchema(TEST_DATABASE_URL, schema)
  }
}
