// The SQLite driver: write transactions of requests that arrive together share one commit, each
// answered only once that commit is done; a failing one leaves the others alone; reads outside a
// transaction never see what is not committed; a trailing LIMIT is written out as numbers.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SQLite from 'better-sqlite3'
import { CompiledQuery, sql, type Compilable, type Kysely } from 'kysely'
import { createDatabase } from './database.js'
import { inlineLimit, withoutLowerInLike } from './sqlite-driver.js'
import { containsPattern, ilike } from './sql.js'
import { reusable } from './compiled.js'

type Db = Kysely<any>

function tempFile(): { file: string; done: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'marketplace-driver-'))
  return { file: join(dir, 'db.sqlite'), done: () => rmSync(dir, { recursive: true, force: true }) }
}

async function open(t: { after: (fn: () => unknown) => void }, kind: 'file' | 'memory') {
  let url = 'sqlite::memory:'
  let file: string | null = null
  if (kind === 'file') {
    const f = tempFile()
    t.after(f.done)
    file = f.file
    url = `sqlite:${file}`
  }
  const database = await createDatabase(url)
  t.after(() => database.close())
  const db = database.db as unknown as Db
  await sql`create table items (id integer primary key, name text not null unique)`.execute(db)
  return { database, db, file }
}

const names = async (db: Db) =>
  (await db.selectFrom('items').select('name').orderBy('id').execute()).map((r) => r.name as string)

const insert = (db: Db, name: string) => db.insertInto('items').values({ name }).execute()

/** Resolves once the current microtasks have run (a commit waits for setImmediate). */
const microtasks = () => new Promise<void>((resolve) => queueMicrotask(resolve))

for (const kind of ['file', 'memory'] as const) {
  test(`${kind}: transactions started together share one commit and finish after it`, async (t) => {
    const { database, db } = await open(t, kind)
    const before = { ...database.commitStats!() }
    const finished: string[] = []
    await Promise.all(
      ['a', 'b', 'c'].map((name) =>
        db
          .transaction()
          .execute(async (trx) => {
            await insert(trx, name)
            await trx.selectFrom('items').selectAll().execute()
          })
          .then(() => finished.push(name)),
      ),
    )
    assert.deepEqual(finished.sort(), ['a', 'b', 'c'])
    assert.deepEqual(await names(db), ['a', 'b', 'c'])
    const after = database.commitStats!()
    assert.equal(after.commits - before.commits, 1)
    assert.equal(after.writes - before.writes, 3)
  })

  test(`${kind}: a transaction that fails is rolled back alone`, async (t) => {
    const { database, db } = await open(t, kind)
    const before = database.commitStats!().commits
    const results = await Promise.allSettled([
      db.transaction().execute((trx) => insert(trx, 'kept')),
      db.transaction().execute(async (trx) => {
        await insert(trx, 'undone')
        throw new Error('refused')
      }),
      // A constraint violation inside a transaction: only that transaction fails.
      db.transaction().execute(async (trx) => {
        await insert(trx, 'also undone')
        await insert(trx, 'kept')
      }),
      db.transaction().execute((trx) => insert(trx, 'kept too')),
    ])
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'rejected', 'fulfilled'],
    )
    assert.equal((results[1] as PromiseRejectedResult).reason.message, 'refused')
    assert.match(String((results[2] as PromiseRejectedResult).reason), /UNIQUE/)
    assert.deepEqual(await names(db), ['kept', 'kept too'])
    assert.equal(database.commitStats!().commits - before, 1)
  })

  test(`${kind}: a read outside a transaction never sees what is not committed`, async (t) => {
    const { db } = await open(t, kind)
    let ran!: () => void
    const callbackDone = new Promise<void>((resolve) => (ran = resolve))
    const pending = db.transaction().execute(async (trx) => {
      await insert(trx, 'x')
      ran()
    })
    await callbackDone
    await microtasks()
    // The transaction's work is done and waits for its commit: a file's reads run on their own
    // connection and see the last commit; an in-memory database commits first, then reads.
    assert.deepEqual(await names(db), kind === 'file' ? [] : ['x'])
    await pending
    assert.deepEqual(await names(db), ['x'])
  })

  test(`${kind}: single write statements join the commit and answer their rows`, async (t) => {
    const { database, db } = await open(t, kind)
    const before = database.commitStats!().commits
    const rows = await Promise.all(
      ['p', 'q'].map((name) =>
        db.insertInto('items').values({ name }).returning(['id', 'name']).executeTakeFirstOrThrow(),
      ),
    )
    assert.deepEqual(
      rows.map((r) => r.name),
      ['p', 'q'],
    )
    assert.equal(database.commitStats!().commits - before, 1)
    const updated = await db
      .updateTable('items')
      .set({ name: 'r' })
      .where('name', '=', 'q')
      .executeTakeFirst()
    assert.equal(updated.numUpdatedRows, 1n)
    await assert.rejects(insert(db, 'p'), /UNIQUE/)
    assert.deepEqual(await names(db), ['p', 'r'])
  })

  test(`${kind}: a controlled transaction with savepoints`, async (t) => {
    const { db } = await open(t, kind)
    const trx = await db.startTransaction().execute()
    await insert(trx, 'outer')
    const sp = await trx.savepoint('inner').execute()
    await insert(sp, 'inner')
    await sp.rollbackToSavepoint('inner').execute()
    await insert(trx, 'after')
    await trx.commit().execute()
    const undone = await db.startTransaction().execute()
    await insert(undone, 'never')
    await undone.rollback().execute()
    assert.deepEqual(await names(db), ['outer', 'after'])
  })

  test(`${kind}: a commit that fails fails every transaction of it, and keeps nothing`, async (t) => {
    const { db } = await open(t, kind)
    // A deferred foreign key is checked at COMMIT: one dangling reference makes the commit fail.
    await sql`create table refs (id integer primary key,
      item_id integer references items(id) deferrable initially deferred)`.execute(db)
    const results = await Promise.allSettled([
      db.transaction().execute((trx) => insert(trx, 'good')),
      db.transaction().execute((trx) => trx.insertInto('refs').values({ item_id: 999 }).execute()),
    ])
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected'],
    )
    assert.match(String((results[0] as PromiseRejectedResult).reason), /FOREIGN KEY/)
    assert.deepEqual(await names(db), [])
    // The next transaction starts afresh.
    await insert(db, 'next')
    assert.deepEqual(await names(db), ['next'])
  })
}

for (const kind of ['file', 'memory'] as const) {
  test(`${kind}: a compiled statement runs on the driver outside a transaction, and in the transaction given`, async (t) => {
    const { db, file } = await open(t, kind)
    const count = reusable(
      (d: any) => d.selectFrom('items').select(sql<number>`count(*)`.as('n')) as Compilable<{ n: number }>,
    )
    const n = async (d: any) => Number((await count(d, [], [])).rows[0]!.n)
    await insert(db, 'a')
    // Outside a transaction Kysely's executor is not used at all.
    const through = t.mock.method(db, 'executeQuery', () => {
      throw new Error('through Kysely')
    })
    assert.equal(await n(db), 1)
    through.mock.restore()
    await db.transaction().execute(async (trx) => {
      await insert(trx, 'b')
      assert.equal(await n(trx), 2, 'the transaction sees its own write')
      if (file) assert.equal(await n(db), 1, 'a read outside it does not')
    })
    assert.equal(await n(db), 2)
  })
}

test('file: a batch commits at the latest with its 64th transaction', async (t) => {
  const { database, db } = await open(t, 'file')
  const before = database.commitStats!().commits
  await Promise.all(
    Array.from({ length: 130 }, (_, i) => db.transaction().execute((trx) => insert(trx, `n${i}`))),
  )
  assert.equal(database.commitStats!().commits - before, 3)
  assert.equal((await names(db)).length, 130)
})

test('file: another connection sees a transaction only once it is answered', async (t) => {
  const { db, file } = await open(t, 'file')
  const other = new SQLite(file!, { readonly: true })
  t.after(() => other.close())
  const count = () => (other.prepare('select count(*) as n from items').get() as { n: number }).n
  const seen: number[] = []
  await db.transaction().execute(async (trx) => {
    await insert(trx, 'y')
    seen.push(count())
  })
  seen.push(count())
  assert.deepEqual(seen, [0, 1])
})

test('file: a failed write still ends its transaction, so other connections may write', async (t) => {
  const { db, file } = await open(t, 'file')
  await insert(db, 'taken')
  const other = new SQLite(file!, { timeout: 0 })
  t.after(() => other.close())
  // The only statement of its batch, refused: the batch is still committed (and its lock let go).
  await assert.rejects(insert(db, 'taken'), /UNIQUE/)
  await new Promise((resolve) => setImmediate(resolve))
  await new Promise((resolve) => setImmediate(resolve))
  other.exec(`begin immediate; insert into items (name) values ('from another connection'); commit`)
  assert.deepEqual(await names(db), ['taken', 'from another connection'])
})

test('file: reads after a schema change see the new columns', async (t) => {
  const { db } = await open(t, 'file')
  await insert(db, 'z')
  assert.deepEqual(await db.selectFrom('items').selectAll().execute(), [{ id: 1, name: 'z' }])
  await sql`alter table items add column note text`.execute(db)
  assert.deepEqual(await db.selectFrom('items').selectAll().execute(), [{ id: 1, name: 'z', note: null }])
})

test('file: pragmas run on the writing connection', async (t) => {
  const { db } = await open(t, 'file')
  await sql`pragma cache_size = 1234`.execute(db)
  const { rows } = await sql<{ cache_size: number }>`pragma cache_size`.execute(db)
  assert.equal(rows[0]!.cache_size, 1234)
})

test('a trailing LIMIT and OFFSET are written as numbers; anything else is left bound', () => {
  const q = (text: string, parameters: unknown[]) => CompiledQuery.raw(text, parameters)
  assert.deepEqual(inlineLimit(q('select a from t where b = ? limit ? offset ?', ['x', 10, 20])), {
    sql: 'select a from t where b = ? limit 10 offset 20',
    parameters: ['x'],
  })
  assert.deepEqual(inlineLimit(q('select a from t limit ?', [1])), {
    sql: 'select a from t limit 1',
    parameters: [],
  })
  for (const [text, parameters] of [
    ['select a from t limit ?', ['1; drop table t']],
    ['select a from t limit ?', [1.5]],
    ['select a from t limit ? offset ?', [10, -1]],
    ['select a from (select a from t limit ?) where a = ?', [1, 2]],
  ] as const) {
    const query = q(text, [...parameters])
    assert.equal(inlineLimit(query), query)
  }
})

test('file: lists with LIMIT and OFFSET page through the rows', async (t) => {
  const { db } = await open(t, 'file')
  for (const name of ['a', 'b', 'c', 'd', 'e']) await insert(db, name)
  const page = (limit: number, offset: number) =>
    db
      .selectFrom('items')
      .select('name')
      .orderBy('id')
      .limit(limit)
      .offset(offset)
      .execute()
      .then((rows) => rows.map((r) => r.name))
  assert.deepEqual(await page(2, 0), ['a', 'b'])
  assert.deepEqual(await page(2, 2), ['c', 'd'])
  assert.deepEqual(await page(2, 4), ['e'])
})

test('lower() is dropped before LIKE only, and LIKE still ignores case', async (t) => {
  assert.equal(
    withoutLowerInLike(`select 1 from "t" where lower("t"."name") like ? escape '\\' and lower("x") = ?`),
    `select 1 from "t" where "t"."name" like ? escape '\\' and lower("x") = ?`,
  )
  const { db } = await open(t, 'file')
  for (const name of ['Alpha Project', 'beta', 'GAMMA-alpha']) await insert(db, name)
  const matching = async (pattern: string) =>
    (
      await db.selectFrom('items').select('name').where(ilike('items.name', pattern)).orderBy('id').execute()
    ).map((r) => r.name)
  assert.deepEqual(await matching(containsPattern('ALPHA')), ['Alpha Project', 'GAMMA-alpha'])
  assert.deepEqual(await matching(containsPattern('a-A')), ['GAMMA-alpha'])
  assert.deepEqual(await matching(containsPattern('%')), [])
})
