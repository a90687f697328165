// Column types: native on PostgreSQL (uuid, timestamptz, boolean, numeric, jsonb), as read from
// information_schema.columns; SQLite keeps text, integers and numeric. Every column named like a
// uuid, a timestamp or a flag has its kind's type, so a column added later without the helpers
// of db/migrations/_helpers.ts fails here.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { sql } from 'kysely'
import { buildTestApp, type TestApp } from './support/app.js'
import {
  isFlagColumn,
  isTimestampColumn,
  isUuidColumn,
} from '../src/db/migrations/2026-11-28T0900_native_pg_types.js'

let t: TestApp
let columns: { table: string; name: string; type: string }[]

before(async () => {
  t = await buildTestApp()
  if (t.dialect === 'postgres') {
    const { rows } = await sql<{ table: string; name: string; type: string }>`
      select table_name as "table", column_name as name, data_type as type
      from information_schema.columns
      where table_schema = current_schema() and table_name not like 'kysely\\_%'`.execute(t.ctx.db)
    columns = rows
  } else {
    const { rows } = await sql<{ table: string; name: string; type: string }>`
      select m.name as "table", p.name as name, lower(p.type) as type
      from sqlite_master m join pragma_table_info(m.name) p
      where m.type = 'table' and m.name not like 'kysely\\_%' escape '\\'
        and m.name not like 'sqlite\\_%' escape '\\' and m.name not like '%fts%'`.execute(t.ctx.db)
    columns = rows
  }
})
after(() => t.close())

const typeOf = (table: string, name: string) => {
  const c = columns.find((x) => x.table === table && x.name === name)
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
  const expected: [string, string, keyof typeof native][] = [
    ['orders', 'uuid', 'uuid'],
    ['users', 'uuid', 'uuid'],
    ['orders', 'created', 'timestamp'],
    ['orders', 'completed_at', 'timestamp'],
    ['jobs', 'run_at', 'timestamp'],
    ['user_roles', 'expiration_time', 'timestamp'],
    ['cost_policies', 'fired_datetime', 'timestamp'],
    ['users', 'is_staff', 'flag'],
    ['offerings', 'shared', 'flag'],
    ['payment_profiles', 'is_active', 'flag'],
    ['cloud_b_subnets', 'enable_dhcp', 'flag'],
    ['orders', 'cost', 'decimal'],
    ['plans', 'unit_price', 'decimal'],
    ['orders', 'attributes', 'json'],
    ['jobs', 'payload', 'json'],
  ]
  for (const [table, name, kind] of expected) {
    assert.equal(typeOf(table, name), want[kind], `${table}.${name}`)
  }
})

test('every column named as a uuid, a timestamp or a flag has its kind of column', () => {
  const kinds = [
    [isUuidColumn, 'uuid'],
    [isTimestampColumn, 'timestamp'],
    [isFlagColumn, 'flag'],
  ] as const
  let seen = 0
  for (const c of columns) {
    for (const [is, kind] of kinds) {
      if (!is(c.name)) continue
      seen++
      const want = t.dialect === 'postgres' ? native[kind] : sqlite[kind]
      assert.equal(c.type, want, `${c.table}.${c.name}`)
    }
  }
  assert.ok(seen > 100, `${seen} columns checked`)
})
