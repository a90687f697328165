// Column types: native on PostgreSQL (uuid, timestamptz, boolean, numeric, jsonb), as read from
// information_schema.columns; SQLite keeps text, integers and numeric. Every column named like a
// uuid, a timestamp or a flag has its kind's type, so a column added later without the helpers
// of db/migrations/_helpers.ts fails here.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { randomBytes } from 'node:crypto'
import { Migrator, sql, type Kysely } from 'kysely'
import { sharedTestApp, TEST_DATABASE_URL } from './support/app.js'
import { createDatabase, dropSchema } from '../src/db/database.js'
import { DirectoryProvider } from '../src/db/migrate.js'
import {
  isFlagColumn,
  isTimestampColumn,
  isUuidColumn,
} from '../src/db/migrations/2026-11-28T0900_native_pg_types.js'

type Column = { table: string; name: string; type: string }

const t = sharedTestApp(async (t) => {
  if (t.dialect === 'postgres') {
    const { rows } = await sql<Column>`
      select table_name as "table", column_name as name, data_type as type
      from information_schema.columns
      where table_schema = current_schema() and table_name not like 'kysely\\_%'`.execute(t.ctx.db)
    return { columns: rows }
  }
  const { rows } = await sql<Column>`
    select m.name as "table", p.name as name, lower(p.type) as type
    from sqlite_master m join pragma_table_info(m.name) p
    where m.type = 'table' and m.name not like 'kysely\\_%' escape '\\'
      and m.name not like 'sqlite\\_%' escape '\\' and m.name not like '%fts%'`.execute(t.ctx.db)
  return { columns: rows }
})

const typeOf = (table: string, name: string) => {
  const c = t.columns.find((x) => x.table === table && x.name === name)
  assert.ok(c, `${table}.${name} exists`)
  return c.type
}

const native = {
  uuid: 'uuid',
  timestamp: 'timestamp with time zone',
  flag: 'boolean',
  decimal: 'numeric',
  json: 'jsonb',
}
const sqlite = {
  uuid: 'varchar(36)',
  timestamp: 'varchar(32)',
  flag: 'integer',
  decimal: 'numeric',
  json: 'text',
}

test('uuids, timestamps, flags, prices and JSON fields have their kind of column', () => {
  const want = t.dialect === 'postgres' ? native : sqlite
  // Each kind's columns, as table.column.
  const expected: Record<keyof typeof native, string[]> = {
    uuid: ['orders.uuid', 'users.uuid'],
    timestamp: [
      'orders.created',
      'orders.completed_at',
      'jobs.run_at',
      'user_roles.expiration_time',
      'cost_policies.fired_datetime',
    ],
    flag: ['users.is_staff', 'offerings.shared', 'payment_profiles.is_active', 'cloud_b_subnets.enable_dhcp'],
    decimal: ['orders.cost', 'plans.unit_price'],
    json: ['orders.attributes', 'jobs.payload'],
  }
  for (const [kind, named] of Object.entries(expected) as [keyof typeof native, string[]][]) {
    for (const column of named) {
      const [table, name] = column.split('.') as [string, string]
      assert.equal(typeOf(table, name), want[kind], `${table}.${name}`)
    }
  }
})

test('every column named as a uuid, a timestamp or a flag has its kind of column', () => {
  const kinds = [
    [isUuidColumn, 'uuid'],
    [isTimestampColumn, 'timestamp'],
    [isFlagColumn, 'flag'],
  ] as const
  let seen = 0
  for (const c of t.columns) {
    for (const [is, kind] of kinds) {
      if (!is(c.name)) continue
      seen++
      const want = t.dialect === 'postgres' ? native[kind] : sqlite[kind]
      assert.equal(c.type, want, `${c.table}.${c.name}`)
    }
  }
  assert.ok(seen > 100, `${seen} columns checked`)
})

test(
  'on PostgreSQL the type change keeps every row, and the partial index on a flag',
  { skip: TEST_DATABASE_URL.startsWith('postgres') ? false : 'PostgreSQL only' },
  async () => {
    const schema = `t_${randomBytes(6).toString('hex')}`
    const database = await createDatabase(TEST_DATABASE_URL, { schema, poolSize: 2 })
    try {
      const db = database.db as Kysely<any>
      const migrator = new Migrator({ db, provider: new DirectoryProvider(), migrationTableSchema: schema })
      const names = (await migrator.getMigrations()).map((m) => m.name)
      const at = names.indexOf('2026-11-28T0900_native_pg_types')
      assert.ok(at > 0)
      assert.equal((await migrator.migrateTo(names[at - 1]!)).error, undefined)
      const uuid = '0199aabb-ccdd-7eef-8001-123456789abc'
      const created = '2026-01-15T10:00:00.123Z'
      await db
        .insertInto('users')
        .values({
          uuid,
          username: 'kept',
          is_staff: 1,
          is_active: 0,
          affiliations: '[]',
          created,
          modified: created,
        })
        .execute()
      assert.equal((await migrator.migrateToLatest()).error, undefined)
      const row = await db
        .selectFrom('users')
        .select(['uuid', 'created', 'is_staff', 'is_active', 'is_support'])
        .executeTakeFirstOrThrow()
      assert.deepEqual(row, { uuid, created, is_staff: true, is_active: false, is_support: false })
      const { rows } = await sql<{ def: string }>`
        select pg_get_indexdef(indexrelid) as def from pg_index
        where indexrelid = 'payment_profiles_one_active_idx'::regclass`.execute(db)
      assert.match(rows[0]!.def, /WHERE is_active$/)
    } finally {
      await database.close()
      await dropSchema(TEST_DATABASE_URL, schema)
    }
  },
)
