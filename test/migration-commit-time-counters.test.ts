// The rows every write of a kind updates (the epochs of order searches and stale services, the
// orders' total): on PostgreSQL they are updated when the writing transaction commits
// (migration 2026-12-07T1000_commit_time_counters), so another transaction can update them while
// a write is still open, and they end as the writes' statements would have left them: the total
// exact (rows inserted and deleted, in several statements, a savepoint rolled back), each epoch
// raised once by a transaction that wrote. SQLite keeps the same totals and epochs.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { sql } from 'kysely'
import { buildTestApp, TEST_DATABASE_URL, type TestApp } from './support/app.js'
import type { Ref } from './support/fixtures.js'
import { createOrderColumns, ownOfferingWorld, type OfferingRef } from './support/catalog-fixtures.js'
import { beforeMigration } from './support/migration.js'
import { createDatabase, type Database } from '../src/db/database.js'

const MIGRATION = '2026-12-07T1000_commit_time_counters'

let t: TestApp
let other: Database | undefined
let customer: Ref
let project: Ref
let offering: OfferingRef

before(async () => {
  t = await buildTestApp()
  ;({ customer, project, offering } = await ownOfferingWorld(t.ctx))
  // Another process on the same database: a pool of its own.
  if (t.dialect === 'postgres') other = await createDatabase(TEST_DATABASE_URL, { schema: t.database.schema })
})
after(async () => {
  await other?.close()
  await t.close()
})

let n = 0
const orderRow = (slug = `slug-${++n}`) => ({
  uuid: t.ctx.newUuid(),
  ...createOrderColumns({ customer, project, offering }, slug),
  created: new Date().toISOString(),
  modified: new Date().toISOString(),
})

async function counters(): Promise<{ total: number; slugs: number; orders: number }> {
  const db = t.ctx.db
  const total = await db
    .selectFrom('row_counts')
    .select('n')
    .where('name', '=', 'orders')
    .executeTakeFirstOrThrow()
  const slugs = await db
    .selectFrom('record_epochs')
    .select('n')
    .where('name', '=', 'order_slugs')
    .executeTakeFirstOrThrow()
  const orders = await db
    .selectFrom('orders')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow()
  return { total: Number(total.n), slugs: Number(slugs.n), orders: Number(orders.n) }
}

test('the orders total stays exact and a transaction that writes raises the slugs epoch once', async () => {
  const start = await counters()
  assert.equal(start.total, start.orders)
  await t.ctx.db.transaction().execute(async (trx) => {
    // Two orders in one statement, one more in another, one of them deleted again.
    await trx.insertInto('orders').values([orderRow(), orderRow()]).execute()
    const { id } = await trx.insertInto('orders').values(orderRow()).returning('id').executeTakeFirstOrThrow()
    await trx.deleteFrom('orders').where('id', '=', id).execute()
    // A savepoint rolled back takes its order (and its share of the total) with it.
    await sql`savepoint s`.execute(trx)
    await trx.insertInto('orders').values(orderRow()).execute()
    await sql`rollback to savepoint s`.execute(trx)
  })
  const after = await counters()
  assert.equal(after.orders, start.orders + 2)
  assert.equal(after.total, after.orders)
  assert.equal(after.slugs, start.slugs + (t.dialect === 'postgres' ? 1 : 4))
  // A transaction rolled back changes nothing.
  await assert.rejects(
    t.ctx.db.transaction().execute(async (trx) => {
      await trx.insertInto('orders').values(orderRow()).execute()
      throw new Error('rolled back')
    }),
  )
  assert.deepEqual(await counters(), after)
  // An insert and a delete that cancel out in one transaction leave the total as it was.
  await t.ctx.db.transaction().execute(async (trx) => {
    const { id } = await trx
      .insertInto('orders')
      .values(orderRow(''))
      .returning('id')
      .executeTakeFirstOrThrow()
    await trx.deleteFrom('orders').where('id', '=', id).execute()
  })
  assert.deepEqual(await counters(), after)
})

test('on PostgreSQL a write still open leaves the total and the epochs free for other writes', async (s) => {
  if (!other) return s.skip('PostgreSQL only')
  const start = await counters()
  const trx = await t.ctx.db.startTransaction().execute()
  try {
    await trx.insertInto('orders').values(orderRow()).execute()
    // Another transaction takes the rows' locks at once instead of waiting for this one.
    await other.db.transaction().execute(async (o) => {
      await sql`set local lock_timeout = '200ms'`.execute(o)
      await sql`select n from row_counts where name = 'orders' for update`.execute(o)
      await sql`select n from record_epochs where name = 'order_slugs' for update`.execute(o)
    })
    await trx.commit().execute()
  } catch (e) {
    await trx.rollback().execute()
    throw e
  }
  const after = await counters()
  assert.equal(after.total, start.total + 1)
  assert.equal(after.slugs, start.slugs + 1)
})

test('on PostgreSQL the migration defers the triggers, and its down puts the statement triggers back', () =>
  beforeMigration(MIGRATION, async ({ db, pg, migrateToLatest, migrateBack }) => {
    if (!pg) return
    const deferred = async () =>
      (
        await sql<{ n: number }>`select count(*)::int as n from pg_trigger
          where tgdeferrable and tginitdeferred and (tgname like '%\\_epoch\\_%' or tgname = 'orders_count_apply')
          and tgrelid::regclass::text in ('projects', 'resources', 'orders', 'site_agent_services')`.execute(
          db,
        )
      ).rows[0]!.n
    assert.equal(await deferred(), 0)
    await migrateToLatest()
    assert.equal(await deferred(), 13)
    await migrateBack()
    assert.equal(await deferred(), 0)
  }))
