import { readdirSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { join } from 'node:path'
import {
  Migrator,
  type Kysely,
  type Migration,
  type MigrationProvider,
  type MigrationResultSet,
} from 'kysely'

const dir = fileURLToPath(new URL('./migrations/', import.meta.url))

/** Every file in db/migrations/ (not starting with "_"), ordered by its timestamped name. */
export class DirectoryProvider implements MigrationProvider {
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

function migratorOf(db: Kysely<any>, schema?: string): Migrator {
  // With a non-default schema the migration tables must live there too: Kysely's existence
  // check looks across schemas and would otherwise find another schema's tables.
  return new Migrator({
    db,
    provider: new DirectoryProvider(),
    ...(schema ? { migrationTableSchema: schema } : {}),
  })
}

/** Every migration there is, in order, with when it was applied (null: pending). */
export async function listMigrations(
  db: Kysely<any>,
  schema?: string,
): Promise<{ name: string; appliedAt: Date | null }[]> {
  const all = await migratorOf(db, schema).getMigrations()
  return all.map((m) => ({ name: m.name, appliedAt: m.executedAt ?? null }))
}

/** Applies the pending migrations; returns the names of those it applied, in order. */
export async function migrateToLatest(db: Kysely<any>, schema?: string): Promise<string[]> {
  const migrator = migratorOf(db, schema)
  let outcome = await migrator.migrateToLatest()
  // Kysely checks for its migration tables by introspecting every table of every schema
  // (pg_get_serial_sequence on each); a schema another process drops meanwhile makes that check
  // fail. Nothing has run then (a failed attempt is rolled back): try again.
  for (let attempt = 1; attempt < 5 && droppedMeanwhile(outcome, schema); attempt++) {
    outcome = await migrator.migrateToLatest()
  }
  const { error, results } = outcome
  const failed = results?.find((r) => r.status === 'Error')
  if (error || failed) {
    const reason = error instanceof Error ? error.message : String(error ?? '')
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${reason}`, { cause: error })
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}

/**
 * Did the table check fail because another schema went away under it? The schema itself
 * (invalid_schema_name, 3F000, naming another schema), or one of its tables between the catalog
 * read and the per-column look-up (undefined_table 42P01, undefined_column 42703) while no
 * migration of ours had failed.
 */
export function droppedMeanwhile(outcome: MigrationResultSet, own: string | undefined): boolean {
  const { error, results } = outcome
  if (!error || typeof error !== 'object') return false
  const code = (error as { code?: unknown }).code
  const message = String((error as { message?: unknown }).message ?? '')
  if (code === '3F000') return !own || !message.includes(`"${own}"`)
  const inCheck = !results?.some((r) => r.status === 'Error')
  return (code === '42P01' || code === '42703') && !!own && inCheck
}
