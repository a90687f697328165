// A retrieved order's version row and a list's answers are kept in memory while the database tells
// no change (src/db/change-feed.ts): on PostgreSQL by notification, on a SQLite file by the reading
// connection's data_version. A retrieve or list of unchanged orders then costs no statement.
// Every way an order or what its record shows can change must still be seen at once: this
// process's writes, other processes' (another pool or connection on the same database, raw SQL),
// a record's source renamed, and nothing while the notifications are down. In-memory SQLite (the
// other tests' database) keeps nothing: a retrieve costs its one statement.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'kysely'
import { buildTestApp, TEST_DATABASE_URL, type TestApp } from '../support/app.js'
import { call } from '../support/client.js'
import type { Ref, UserRef } from '../support/fixtures.js'
import { orderingWorld, placeOrder, type OfferingRef } from '../support/catalog-fixtures.js'
import { counted, countedRetrieve, toldChange } from '../support/statements.js'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SQLite from 'better-sqlite3'
import { createDatabase, type Database } from '../../src/db/database.js'
import type { Change } from '../../src/db/change-feed.js'

let t: TestApp
let other: Database | undefined
let project: Ref
let offering: OfferingRef
let plan: Ref
let staff: UserRef

before(async () => {
  t = await buildTestApp({ tokenCacheSeconds: 60 })
  ;({ project, offering, plan, staff } = await orderingWorld(t.ctx, 'Watched'))
  // Another process on the same database: a pool of its own.
  if (t.dialect === 'postgres') other = await createDatabase(TEST_DATABASE_URL, { schema: t.database.schema })
})
after(async () => {
  await other?.close()
  await t.close()
})

async function place(n: number): Promise<{ uuid: string; id: number }> {
  const { uuid } = await placeOrder(t.app, staff.token, { project, offering, plan }, `watched-${n}`)
  const row = await t.ctx.db
    .selectFrom('orders')
    .select('id')
    .where('uuid', '=', uuid)
    .executeTakeFirstOrThrow()
  return { uuid, id: row.id }
}

const retrieve = (uuid: string) => countedRetrieve(t, staff.token, uuid)
const told = (matches: (c: Change) => boolean) => toldChange(t.database, matches)
const aboutOrder = (id: number) => (c: Change) => c !== 'all' && c.table === 'orders' && !!c.ids?.includes(id)

test('a retrieve of an unchanged order costs no statement on PostgreSQL, one on SQLite', async () => {
  const o = await place(1)
  await t.database.changes?.ready()
  await retrieve(o.uuid)
  for (let i = 0; i < 3; i++) {
    const { statements, body } = await retrieve(o.uuid)
    assert.equal(body.uuid, o.uuid)
    assert.equal(statements, t.dialect === 'postgres' ? 0 : 1)
  }
})

test("this process's own write is seen by the next retrieve", async () => {
  const o = await place(2)
  await t.database.changes?.ready()
  assert.equal((await retrieve(o.uuid)).body.state, 'pending-provider')
  await retrieve(o.uuid)
  const r = await call(t.app, 'POST', `/api/marketplace-orders/${o.uuid}/approve_by_provider/`, {
    token: staff.token,
  })
  assert.equal(r.status, 200, r.text)
  const { statements, body } = await retrieve(o.uuid)
  assert.equal(body.state, 'executing')
  assert.ok(statements >= 1, 'read again after the write')
})

test("this process's write to one order keeps what is kept of the others", async (s) => {
  if (!other) return s.skip('PostgreSQL only')
  const a = await place(10)
  const b = await place(11)
  await t.database.changes!.ready()
  await retrieve(a.uuid)
  await retrieve(b.uuid)
  const r = await call(t.app, 'POST', `/api/marketplace-orders/${b.uuid}/approve_by_provider/`, {
    token: staff.token,
  })
  assert.equal(r.status, 200, r.text)
  // Once the write's notifications are back, the other order is still kept; the written one is read.
  await t.database.changes!.ready()
  assert.equal((await retrieve(a.uuid)).statements, 0)
  const written = await retrieve(b.uuid)
  assert.equal(written.body.state, 'executing')
  assert.ok(written.statements >= 1)
})

test('an uncommitted write of this process is neither answered nor keeps a retrieve from the committed state', async (s) => {
  // SQLite has one writer, which the open transaction holds: no other request runs meanwhile.
  if (!other) return s.skip('PostgreSQL only')
  const o = await place(3)
  await t.database.changes?.ready()
  await retrieve(o.uuid)
  await t.ctx.db
    .transaction()
    .execute(async (trx) => {
      await trx.updateTable('orders').set({ state: 'erred' }).where('id', '=', o.id).execute()
      // Another request meanwhile reads the committed state, from the database.
      const { statements, body } = await retrieve(o.uuid)
      assert.equal(body.state, 'pending-provider')
      assert.ok(statements >= 1)
      throw new Error('roll back')
    })
    .catch((e: Error) => assert.equal(e.message, 'roll back'))
  assert.equal((await retrieve(o.uuid)).body.state, 'pending-provider')
})

test("another process's committed change is seen once told; its rolled-back one changes nothing", async (s) => {
  if (!other) return s.skip('PostgreSQL only: SQLite reads the version on every retrieve')
  const o = await place(4)
  await t.database.changes!.ready()
  await retrieve(o.uuid)
  assert.equal((await retrieve(o.uuid)).statements, 0)

  // Rolled back: no notification, the kept row still answers.
  await other.db
    .transaction()
    .execute(async (trx) => {
      await sql`update orders set state = 'erred' where id = ${o.id}`.execute(trx)
      throw new Error('roll back')
    })
    .catch(() => undefined)
  const kept = await retrieve(o.uuid)
  assert.equal(kept.body.state, 'pending-provider')
  assert.equal(kept.statements, 0)

  // Committed: told, and the next retrieve reads it.
  const notified = told(aboutOrder(o.id))
  await sql`update orders set state = 'done' where id = ${o.id}`.execute(other.db)
  await notified
  const after = await retrieve(o.uuid)
  assert.equal(after.body.state, 'done')
  assert.equal(after.statements, 2, 'the version row and the record, read again')
})

test("a change to what an order's record shows (its project renamed elsewhere) is seen once told", async (s) => {
  if (!other) return s.skip('PostgreSQL only')
  const o = await place(5)
  await t.database.changes!.ready()
  await retrieve(o.uuid)
  assert.equal((await retrieve(o.uuid)).statements, 0)
  const notified = told((c) => c !== 'all' && c.table === 'epoch orders')
  await sql`update projects set name = 'Renamed project' where id = ${project.id}`.execute(other.db)
  await notified
  assert.equal((await retrieve(o.uuid)).body.project_name, 'Renamed project')
})

test('an epoch of something else raised elsewhere keeps what is kept of orders', async (s) => {
  if (!other) return s.skip('PostgreSQL only')
  const o = await place(12)
  await t.database.changes!.ready()
  await retrieve(o.uuid)
  await sql`insert into record_epochs (name, n) values ('unrelated', 0) on conflict do nothing`.execute(
    other.db,
  )
  const notified = told((c) => c !== 'all' && c.table === 'epoch unrelated')
  await sql`update record_epochs set n = n + 1 where name = 'unrelated'`.execute(other.db)
  await notified
  assert.equal((await retrieve(o.uuid)).statements, 0)
})

test('while the notifications are down nothing kept is used, and every change is seen', async (s) => {
  if (!other) return s.skip('PostgreSQL only')
  const o = await place(6)
  const feed = t.database.changes!
  await feed.ready()
  await retrieve(o.uuid)
  assert.equal((await retrieve(o.uuid)).statements, 0)
  // Cut the listening connection, as a restart of the database server or a network fault would.
  const lost = told((c) => c === 'all')
  await sql`select pg_terminate_backend(${t.database.notifications!.pid})`.execute(other.db)
  await lost
  // Not told any more: this change is seen because nothing kept is used.
  await sql`update orders set state = 'erred' where id = ${o.id}`.execute(other.db)
  const { body, statements } = await retrieve(o.uuid)
  assert.equal(body.state, 'erred')
  assert.ok(statements >= 1)
  // Back, once listening again: kept and used as before.
  await feed.ready()
  await retrieve(o.uuid)
  assert.equal((await retrieve(o.uuid)).statements, 0)
})

/** A list as staff: its orders' uuids and total, and the statements it sent. */
async function list(query: string): Promise<{ statements: number; uuids: string[]; total: number }> {
  const { statements, answer: r } = await counted(t.database, () =>
    call(t.app, 'GET', `/api/marketplace-orders/?${query}`, { token: staff.token }),
  )
  assert.equal(r.status, 200, r.text)
  return {
    statements,
    uuids: r.body.map((o: { uuid: string }) => o.uuid),
    total: Number(r.headers['x-result-count']),
  }
}

test('a list of unchanged orders costs no statement on PostgreSQL; any order written, here or elsewhere, is seen', async () => {
  const o = await place(7)
  await t.database.changes?.ready()
  const q = `project_uuid=${project.uuid}&o=-created&page_size=5`
  const first = await list(q)
  const again = await list(q)
  assert.deepEqual(again.uuids, first.uuids)
  if (t.dialect === 'postgres') assert.equal(again.statements, 0)
  else assert.ok(again.statements >= 1, 'SQLite reads a list every time')

  // Placed here: counted and listed by the next request.
  const placed = await place(8)
  const afterPlace = await list(q)
  assert.equal(afterPlace.total, first.total + 1)
  assert.equal(afterPlace.uuids[0], placed.uuid)

  // Changed elsewhere (PostgreSQL: another pool): seen once told.
  if (!other) return
  const byState = `project_uuid=${project.uuid}&state=erred`
  const before = await list(byState)
  await list(byState)
  const notified = told(aboutOrder(o.id))
  await sql`update orders set state = 'erred' where id = ${o.id}`.execute(other.db)
  await notified
  const after = await list(byState)
  assert.equal(after.total, before.total + 1)
  assert.ok(after.uuids.includes(o.uuid))
  // Inserted elsewhere: a copy of the order under a new uuid and slug.
  const inserted = told((c) => c !== 'all' && c.table === 'orders' && c.ids?.length === 0)
  await sql`insert into orders select (jsonb_populate_record(null::orders, to_jsonb(o) || jsonb_build_object(
      'id', nextval(pg_get_serial_sequence('orders', 'id')), 'uuid', gen_random_uuid(), 'slug', 'copied'))).*
    from orders o where id = ${o.id}`.execute(other.db)
  await inserted
  assert.equal((await list(byState)).total, after.total + 1)
})

test('a list filtered by names (a resource name, a query text) is kept; a rename, here or elsewhere, is seen at once', async () => {
  const o = await place(9)
  const resource = await t.ctx.db
    .selectFrom('orders')
    .select('resource_id')
    .where('id', '=', o.id)
    .executeTakeFirstOrThrow()
  await t.database.changes?.ready()
  const kept = async (q: string) => {
    const first = await list(q)
    const again = await list(q)
    assert.deepEqual(again.uuids, first.uuids)
    if (t.dialect === 'postgres') assert.equal(again.statements, 0, `${q} kept`)
    else assert.ok(again.statements >= 1, 'in-memory SQLite reads a list every time')
    return again
  }
  const byName = 'resource_name=watched-9'
  const byQuery = 'query=atched-9' // a part of the name (the order's slug is the whole)
  assert.deepEqual((await kept(byName)).uuids, [o.uuid])
  assert.deepEqual((await kept(byQuery)).uuids, [o.uuid])

  // Renamed by this process: seen by the next request.
  await t.ctx.db
    .updateTable('resources')
    .set({ name: 'renamed-9' })
    .where('id', '=', resource.resource_id!)
    .execute()
  assert.deepEqual((await list(byName)).uuids, [])
  assert.deepEqual((await list(byQuery)).uuids, [])
  await t.database.changes?.ready()
  assert.deepEqual((await kept('query=enamed-9')).uuids, [o.uuid])

  // Renamed elsewhere (PostgreSQL: another pool): seen once its epoch is told.
  if (!other) return
  const resourceNames = told((c) => c !== 'all' && c.table === 'epoch resource_names')
  await sql`update resources set name = 'watched-9' where id = ${resource.resource_id}`.execute(other.db)
  await resourceNames
  assert.deepEqual((await list('query=enamed-9')).uuids, [])
  assert.deepEqual((await list(byName)).uuids, [o.uuid])
  // A project renamed elsewhere: its orders found by the new name.
  await kept('query=elsewhere%20lab&page_size=100')
  const projectNames = told((c) => c !== 'all' && c.table === 'epoch project_names')
  await sql`update projects set name = 'Elsewhere lab' where id = ${project.id}`.execute(other.db)
  await projectNames
  assert.ok((await list('query=elsewhere%20lab&page_size=100')).uuids.includes(o.uuid))
})

test('a list filtered by what no change tells (an offering type) is read each time', async () => {
  await place(19)
  await t.database.changes?.ready()
  const q = 'offering_type=Marketplace.Basic'
  await list(q)
  assert.ok((await list(q)).statements >= 1)
})

test('on a SQLite file, unchanged orders cost no statement, and any commit (another connection too) is seen', async (s) => {
  if (t.dialect !== 'sqlite') return s.skip('SQLite only: PostgreSQL is tested above')
  const dir = mkdtempSync(join(tmpdir(), 'kept-'))
  const file = join(dir, 'db.sqlite')
  const f = await buildTestApp({ databaseUrl: `sqlite:${file}`, tokenCacheSeconds: 60 })
  const shell = new SQLite(file)
  try {
    const { project: p, offering: o, plan: pl, staff: admin } = await orderingWorld(f.ctx, 'File')
    const get = async (path: string) => {
      const { statements, answer: r } = await counted(f.database, () =>
        call(f.app, 'GET', path, { token: admin.token }),
      )
      assert.equal(r.status, 200, r.text)
      return { statements, body: r.body }
    }
    const placed = await call(f.app, 'POST', '/api/marketplace-orders/', {
      token: admin.token,
      body: { project: p.url, offering: o.url, plan: pl.url, attributes: { name: 'file-1' } },
    })
    assert.equal(placed.status, 201, placed.text)
    const path = `/api/marketplace-orders/${placed.body.uuid}/`
    await get(path)
    assert.equal((await get(path)).statements, 0)
    const listPath = `/api/marketplace-orders/?project_uuid=${p.uuid}`
    await get(listPath)
    assert.equal((await get(listPath)).statements, 0)

    const searchPath = '/api/marketplace-orders/?query=ile-1'
    assert.equal((await get(searchPath)).body.length, 1)
    assert.equal((await get(searchPath)).statements, 0)

    // Another connection's commit (an operator's shell): seen by the next request.
    shell.prepare("update resources set name = 'renamed' where name = 'file-1'").run()
    assert.equal((await get(searchPath)).body.length, 0)
    shell.prepare("update orders set state = 'erred' where uuid = ?").run(placed.body.uuid)
    const changed = await get(path)
    assert.equal(changed.body.state, 'erred')
    assert.ok(changed.statements >= 1)
    assert.equal((await get(`${listPath}&state=erred`)).body.length, 1)

    // This process's own write: seen at once.
    const second = await call(f.app, 'POST', '/api/marketplace-orders/', {
      token: admin.token,
      body: { project: p.url, offering: o.url, plan: pl.url, attributes: { name: 'file-2' } },
    })
    assert.equal(second.status, 201, second.text)
    assert.equal((await get(listPath)).body.length, 2)
  } finally {
    shell.close()
    await f.close()
    rmSync(dir, { recursive: true, force: true })
  }
})
