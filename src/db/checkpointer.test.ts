// Background WAL checkpoints of a SQLite file (they exist only for a SQLite file, whichever
// database the other tests use): the log is copied by the worker thread, on demand and on its
// timer; the request connection keeps a backstop; closing stops the thread and leaves no log.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { sql } from 'kysely'
import { createDatabase, type Database } from './database.js'
import { BACKSTOP_PAGES, startCheckpointer } from './checkpointer.js'

function tempFile(): { file: string; done: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'marketplace-checkpoint-'))
  return { file: join(dir, 'db.sqlite'), done: () => rmSync(dir, { recursive: true, force: true }) }
}

/** Writes about 2 MB (500 pages) in one transaction; none of it is in the database file yet. */
async function fill(database: Database): Promise<void> {
  await sql`create table if not exists blobs (id integer primary key, body blob)`.execute(database.db)
  await database.db.transaction().execute(async (trx) => {
    for (let i = 0; i < 500; i++) await sql`insert into blobs (body) values (zeroblob(4000))`.execute(trx)
  })
}

const autocheckpoint = async (database: Database) =>
  (await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(database.db)).rows[0]!
    .wal_autocheckpoint

test('a checkpoint run on demand copies the whole log into the file', async (t) => {
  const { file, done } = tempFile()
  t.after(done)
  // An interval far longer than the test: only the explicit run checkpoints.
  const database = await createDatabase(`sqlite:${file}`, { checkpointIntervalMs: 3_600_000 })
  t.after(() => database.close())
  assert.equal(await autocheckpoint(database), BACKSTOP_PAGES)
  await fill(database)
  const before = statSync(file).size
  assert.ok(statSync(`${file}-wal`).size > 2_000_000, 'the rows are in the log')
  const r = await database.checkpoint!()
  assert.ok(r.log >= 500, `log of ${r.log} frames`)
  assert.equal(r.checkpointed, r.log)
  assert.ok(statSync(file).size >= before + 2_000_000, 'the rows are in the database file')
  const { rows } = await sql<{ n: number }>`select count(*) as n from blobs`.execute(database.db)
  assert.equal(rows[0]!.n, 500)
})

test('the thread checkpoints on its own timer', async (t) => {
  const { file, done } = tempFile()
  t.after(done)
  const database = await createDatabase(`sqlite:${file}`, { checkpointIntervalMs: 10 })
  t.after(() => database.close())
  await fill(database)
  // Waits for the copy to show in the file (observed, not timed), giving up after 30 s.
  for (let i = 0; i < 3000 && statSync(file).size < 2_000_000; i++) await delay(10)
  assert.ok(statSync(file).size >= 2_000_000, 'the timer copied the log into the database file')
})

test('closing stops the thread and leaves no log behind; the rows stay', async (t) => {
  const { file, done } = tempFile()
  t.after(done)
  const database = await createDatabase(`sqlite:${file}`, { checkpointIntervalMs: 3_600_000 })
  await fill(database)
  assert.ok(existsSync(`${file}-wal`))
  await database.close()
  assert.equal(existsSync(`${file}-wal`), false)
  await assert.rejects(database.checkpoint!(), /stopped/)
  const again = await createDatabase(`sqlite:${file}`)
  t.after(() => again.close())
  const { rows } = await sql<{ n: number }>`select count(*) as n from blobs`.execute(again.db)
  assert.equal(rows[0]!.n, 500)
})

test('without an interval SQLite checkpoints inside commits, as it does by default', async (t) => {
  const { file, done } = tempFile()
  t.after(done)
  const database = await createDatabase(`sqlite:${file}`)
  t.after(() => database.close())
  assert.equal(database.checkpoint, undefined)
  assert.equal(await autocheckpoint(database), 1000)
  const memory = await createDatabase('sqlite::memory:', { checkpointIntervalMs: 10 })
  t.after(() => memory.close())
  assert.equal(memory.checkpoint, undefined)
})

test('a thread that stops by itself is reported, and the checkpoints asked of it refused', async (t) => {
  const { file, done } = tempFile()
  t.after(done)
  // No such file: the thread cannot open it and ends.
  let stopped!: () => void
  const reported = new Promise<void>((resolve) => (stopped = resolve))
  const checkpointer = startCheckpointer(file, 10, stopped)
  t.after(() => checkpointer.close())
  const refused = assert.rejects(checkpointer.run())
  await reported
  await refused
  await assert.rejects(checkpointer.run())
})
