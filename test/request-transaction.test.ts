// A request's own transaction on either database: what runs inside it commits or rolls back as
// one; a service's transaction inside it is a savepoint, and a statement that fails inside it
// leaves it usable (PostgreSQL would otherwise refuse every later statement).
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { sql, type Kysely } from 'kysely'
import { createDatabase, dialectOf, dropSchema, type Database } from '../src/db/database.js'
import { TEST_DATABASE_URL } from './support/app.js'

const pg = dialectOf(TEST_DATABASE_URL) === 'postgres'
const schema = pg ? `r_${randomBytes(6).toString('hex')}` : undefined
let database: Database
let db: Kysely<any>

before(async () => {
  database = await createDatabase(TEST_DATABASE_URL, { schema, poolSize: 3 })
  db = database.db
  await sql`create table rt (name varchar(20) primary key)`.execute(db)
})
after(async () => {
  await database.close()
  if (schema) await dropSchema(TEST_DATABASE_URL, schema)
})

async function names(): Promise<string[]> {
  const rows = await db.selectFrom('rt').select('name').orderBy('name').execute()
  return rows.map((r) => r.name as string)
}

const insert = (name: string) => db.insertInto('rt').values({ name }).execute()

test('a service transaction that fails and a statement that fails undo only themselves; the rest commits as one', async () => {
  const tx = await database.beginRequest()
  await tx.run(async () => {
    await insert('a')
    await assert.rejects(
      db.transaction().execute(async (trx) => {
        await trx.insertInto('rt').values({ name: 'b' }).execute()
        throw new Error('the service gives up')
      }),
      /gives up/,
    )
    await assert.rejects(insert('a'))
    await db.transaction().execute((trx) => trx.insertInto('rt').values({ name: 'c' }).execute())
    await insert('d')
    // The request reads what it wrote.
    assert.deepEqual(await names(), ['a', 'c', 'd'])
  })
  await tx.commit()
  assert.equal(tx.open, false)
  assert.deepEqual(await names(), ['a', 'c', 'd'])
  await sql`delete from rt`.execute(db)
})

test('a rolled back request leaves nothing, and the database serves others as before', async () => {
  const tx = await database.beginRequest()
  await tx.run(async () => {
    await insert('x')
    await db.transaction().execute((trx) => trx.insertInto('rt').values({ name: 'y' }).execute())
  })
  await tx.rollback()
  await tx.rollback()
  assert.deepEqual(await names(), [])
  // Work the request left running once it is over is no longer part of it.
  await tx.run(() => insert('z'))
  assert.deepEqual(await names(), ['z'])
})

test(
  'the PostgreSQL pool holds poolSize connections at most: one more request gets the connection the first gives back',
  { skip: pg ? false : 'PostgreSQL only (SQLite has no pool)' },
  async () => {
    const backend = async () =>
      (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db)).rows[0]!.pid
    const held = await Promise.all([1, 2, 3].map(() => database.beginRequest()))
    const pids = await Promise.all(held.map((tx) => tx.run(backend)))
    assert.equal(new Set(pids).size, 3)
    // A fourth connection would be a new backend; the pool of 3 hands over the first one instead.
    const fourth = database.beginRequest()
    await held[0]!.commit()
    const tx = await fourth
    assert.equal(await tx.run(backend), pids[0])
    await Promise.all([tx, held[1]!, held[2]!].map((t) => t.commit()))
  },
)

test(
  "PostgreSQL connections keep generic plans, unless the URL's own options say otherwise; the schema stays",
  { skip: pg ? false : 'PostgreSQL only (a server setting)' },
  async () => {
    const setting = async (d: Kysely<any>) =>
      (
        await sql<{ mode: string; path: string }>`select current_setting('plan_cache_mode') as mode,
          current_setting('search_path') as path`.execute(d)
      ).rows[0]!
    assert.deepEqual(await setting(db), { mode: 'force_generic_plan', path: schema })
    const sep = TEST_DATABASE_URL.includes('?') ? '&' : '?'
    const own = await createDatabase(
      `${TEST_DATABASE_URL}${sep}options=${encodeURIComponent('-c plan_cache_mode=auto')}`,
      { schema, poolSize: 1 },
    )
    try {
      assert.deepEqual(await setting(own.db), { mode: 'auto', path: schema })
    } finally {
      await own.close()
    }
  },
)
