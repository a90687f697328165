import type { Kysely } from 'kysely'
import { createIndexes, isPostgres, types, withId } from './_helpers.js'
import { clearedWith, ownedBy } from './_columns.js'

// The whole marketplace resource record, as the reference's clients (its site agent among them)
// read it, and what its provider sets on it:
// - offerings get the `backend_id` their provider names them by on its backend;
// - resources get a unique `slug` (the site agent names backend accounts after it), a
//   `description`, the provider-set `effective_id`, `backend_metadata`, `paused`, `downscaled` and
//   `restrict_member_access` flags, the error texts of the last failure, `last_sync` (when the
//   provider's agent last reported on it), who changed `end_date` and when, `options`,
//   `current_usages`, the provider's `report` and the `usage_limit_restriction` in force;
// - their access endpoints, and the membership sync statuses the agent reports, get tables.
// Existing resources get the slug a new one gets: the slugified name with the next numeric suffix
// of that name (`<name>-1`, `<name>-2`, ...), in the order they were created. `slug_counters`
// keeps, per table and slugified name, the last suffix given, so the next one is one upsert.

/** Django's slugify, cut to 50 characters (a frozen copy of src/http/slug.ts). */
function slugify(text: string, fallback: string): string {
  const slug = text
    .normalize('NFKD')
    .replace(/[^ -~\s]/g, '')
    .toLowerCase()
    .replace(/[^\w\s-]/g, '')
    .replace(/[-\s]+/g, '-')
    .slice(0, 50)
    .replace(/^[-_]+|[-_]+$/g, '')
  return slug || fallback
}

const BATCH = 1000

export async function up(db: Kysely<any>): Promise<void> {
  const t = types(db)
  await db.schema
    .alterTable('offerings')
    .addColumn('backend_id', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .execute()

  const columns: [string, string, (c: any) => any][] = [
    ['slug', 'varchar(150)', (c) => c.notNull().defaultTo('')],
    ['description', 'text', (c) => c.notNull().defaultTo('')],
    ['effective_id', 'varchar(255)', (c) => c.notNull().defaultTo('')],
    ['backend_metadata', t.json, (c) => c.notNull().defaultTo('{}')],
    ['paused', t.flag, (c) => c.notNull().defaultTo(false)],
    ['downscaled', t.flag, (c) => c.notNull().defaultTo(false)],
    ['restrict_member_access', t.flag, (c) => c.notNull().defaultTo(false)],
    ['error_message', 'text', (c) => c.notNull().defaultTo('')],
    ['error_traceback', 'text', (c) => c.notNull().defaultTo('')],
    ['last_sync', t.timestamp, (c) => c],
    ['end_date_updated_at', t.timestamp, (c) => c],
    ['end_date_requested_by_id', 'integer', clearedWith('users')],
    ['options', t.json, (c) => c],
    ['current_usages', t.json, (c) => c.notNull().defaultTo('{}')],
    ['report', t.json, (c) => c],
    ['usage_limit_restriction', 'varchar(20)', (c) => c.notNull().defaultTo('')],
  ]
  for (const [name, type, build] of columns) {
    await db.schema
      .alterTable('resources')
      .addColumn(name, type as any, build)
      .execute()
  }

  // Backfill: slugs in creation order, and the last sync at the last change.
  const next = new Map<string, number>()
  let after = 0
  for (;;) {
    const rows: { id: number; name: string; modified: string }[] = await db
      .selectFrom('resources')
      .select(['id', 'name', 'modified'])
      .where('id', '>', after)
      .orderBy('id')
      .limit(BATCH)
      .execute()
    if (!rows.length) break
    for (const r of rows) {
      const base = slugify(r.name ?? '', 'resource')
      const n = (next.get(base) ?? 0) + 1
      next.set(base, n)
      await db
        .updateTable('resources')
        .set({ slug: `${base}-${n}`, last_sync: r.modified })
        .where('id', '=', r.id)
        .execute()
    }
    after = rows[rows.length - 1]!.id
  }
  await db.schema.createIndex('resources_slug_idx').on('resources').column('slug').unique().execute()
  await db.schema
    .createTable('slug_counters')
    .addColumn('scope', 'varchar(50)', (c) => c.notNull())
    .addColumn('base', 'varchar(150)', (c) => c.notNull())
    .addColumn('n', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('slug_counters_pk', ['scope', 'base'])
    .execute()
  for (const [base, n] of next) {
    await db.insertInto('slug_counters').values({ scope: 'resources', base, n }).execute()
  }

  // Record tables with their columns' native types (created after 2026-11-28T0900_native_pg_types).
  const recordTable = (name: string) =>
    withId(db, db.schema.createTable(name)).addColumn('uuid', t.uuid, (c) => c.notNull().unique())
  await recordTable('resource_endpoints')
    .addColumn('resource_id', 'integer', ownedBy('resources'))
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('url', 'varchar(2048)', (c) => c.notNull())
    .addColumn('created', t.timestamp, (c) => c.notNull())
    .addColumn('modified', t.timestamp, (c) => c.notNull())
    .execute()
  await createIndexes(db, 'resource_endpoints', { resource_endpoints_resource_idx: ['resource_id'] })

  await recordTable('resource_member_sync_statuses')
    .addColumn('resource_id', 'integer', ownedBy('resources'))
    .addColumn('user_id', 'integer', ownedBy('users'))
    .addColumn('scope_type', 'varchar(30)', (c) => c.notNull())
    .addColumn('resource_project_id', 'integer', clearedWith('projects'))
    .addColumn('role_name', 'varchar(150)', (c) => c.notNull())
    .addColumn('state', 'varchar(30)', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created', t.timestamp, (c) => c.notNull())
    .addColumn('modified', t.timestamp, (c) => c.notNull())
    .execute()
  await createIndexes(db, 'resource_member_sync_statuses', {
    resource_member_sync_statuses_resource_idx: ['resource_id'],
  })
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('resource_member_sync_statuses').ifExists().execute()
  await db.schema.dropTable('resource_endpoints').ifExists().execute()
  await db.schema.dropTable('slug_counters').ifExists().execute()
  await db.schema.dropIndex('resources_slug_idx').ifExists().execute()
  // SQLite cannot drop a column that references another table: it stays there, unused.
  const referencing = isPostgres(db) ? ['end_date_requested_by_id'] : []
  for (const name of [
    'usage_limit_restriction',
    'report',
    'current_usages',
    'options',
    ...referencing,
    'end_date_updated_at',
    'last_sync',
    'error_traceback',
    'error_message',
    'restrict_member_access',
    'downscaled',
    'paused',
    'backend_metadata',
    'effective_id',
    'description',
    'slug',
  ]) {
    await db.schema.alterTable('resources').dropColumn(name).execute()
  }
  await db.schema.alterTable('offerings').dropColumn('backend_id').execute()
}
