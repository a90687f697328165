import { readdirSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { join } from 'node:path'
import { Migrator, type Migration, type MigrationProvider, type Kysely } from 'kysely'

const dir = fileURLToPath(new URL('./migrations/', import.meta.url))

/** Every file in db/migrations/ (not starting with "_"), ordered by its timestamped name. */
class DirectoryProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    const out: Record<string, Migration> = {}
    const files = readdirSync(dir)
      .filter(
        (f) => /\.(ts|js)$/.test(f) && !f.startsWith('_') && !f.endsWith('.d.ts') && !f.includes('.test.'),
      )
      .sort()
    for (const f of files) {
      const mod = (await import(pathToFileURL(join(dir, f)).href)) as Migration
      out[f.replace(/\.(ts|js)$/, '')] = mod
    }
    return out
  }
}

export async function migrateToLatest(db: Kysely<any>, schema?: string): Promise<void> {
  // With a non-default schema the migration tables must live there too: Kysely's existence
  // check looks across schemas and would otherwise find another schema's tables.
  const migrator = new Migrator({
    db,
    provider: new DirectoryProvider(),
    ...(schema ? { migrationTableSchema: schema } : {}),
  })
  let outcome = await migrator.migrateToLatest()
  // Kysely checks for its migration tables by introspecting every table of every schema
  // (pg_get_serial_sequence on each); a schema another process drops meanwhile makes that check
  // fail with invalid_schema_name (3F000). A failed attempt is rolled back: try again.
  for (let attempt = 1; attempt < 5 && droppedMeanwhile(outcome.error, schema); attempt++) {
    outcome = await migrator.migrateToLatest()
  }
  const { error, results } = outcome
  const failed = results?.find((r) => r.status === 'Error')
  if (error || failed) {
    const reason = error instanceof Error ? error.message : String(error ?? '')
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${reason}`, { cause: error })
  }
}

function droppedMeanwhile(error: unknown, own: string | undefined): boolean {
  if (!error || typeof error !== 'object' || (error as { code?: unknown }).code !== '3F000') return false
  const message = String((error as { message?: unknown }).message ?? '')
  return !own || !message.includes(`"${own}"`)
}
