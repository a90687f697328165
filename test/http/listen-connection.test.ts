// On PostgreSQL a process keeps one LISTEN connection (src/db/notifications.ts), shared by the
// change feed that keeps unchanged orders' answers in memory and by the event streams' wake-ups.
// Both must still work after that connection is cut (a restart of the database server, a network
// fault) and opened again. The app's connections are told apart from other processes' by the
// `application_name` its database URL gives them; the poll that backs up the wake-ups is set to an
// hour, so an event that arrives at all arrived by notification.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { request as httpRequest, type ClientRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { sql } from 'kysely'
import { buildTestApp, TEST_DATABASE_URL, type TestApp } from '../support/app.js'
import type { Ref, UserRef } from '../support/fixtures.js'
import { orderingWorld, placeOrder, type OfferingRef } from '../support/catalog-fixtures.js'
import { countedRetrieve, toldChange } from '../support/statements.js'
import { createDatabase, type Database } from '../../src/db/database.js'
import type { Change } from '../../src/db/change-feed.js'

const ON_POSTGRES = TEST_DATABASE_URL.startsWith('postgres')
const APPLICATION_NAME = `marketplace-test-${randomBytes(6).toString('hex')}`

let t: TestApp
let other: Database | undefined
let port: number
let project: Ref
let offering: OfferingRef
let plan: Ref
let staff: UserRef

before(async () => {
  const url = new URL(TEST_DATABASE_URL)
  if (ON_POSTGRES) url.searchParams.set('application_name', APPLICATION_NAME)
  t = await buildTestApp({
    eventPollMs: 3_600_000,
    tokenCacheSeconds: 60,
    ...(ON_POSTGRES ? { databaseUrl: url.toString() } : {}),
  })
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  port = (t.app.server.address() as AddressInfo).port
  ;({ project, offering, plan, staff } = await orderingWorld(t.ctx, 'Listened'))
  // Another process on the same database (no application name of the app's).
  if (ON_POSTGRES) other = await createDatabase(TEST_DATABASE_URL, { schema: t.database.schema })
})
after(async () => {
  await other?.close()
  await t.close()
})

/** An open event stream: the events it delivered, and a wait for one. */
function openStream(query: string): Promise<{ waitFor(uuid: string): Promise<void>; close(): void }> {
  const seen = new Set<string>()
  const waiting = new Map<string, () => void>()
  let req!: ClientRequest
  return new Promise((resolve, reject) => {
    req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path: `/api/events/stream/${query}`,
        headers: { authorization: `Token ${staff.token}`, accept: 'text/event-stream' },
      },
      (res) => {
        if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}`))
        let buffer = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => {
          buffer += chunk
          let data: RegExpExecArray | null
          while ((data = /^data: (.*)\n/m.exec(buffer))) {
            buffer = buffer.slice(data.index + data[0].length)
            const uuid = (JSON.parse(data[1]!) as { data: { uuid: string } }).data.uuid
            seen.add(uuid)
            waiting.get(uuid)?.()
          }
        })
        resolve({
          waitFor: (uuid) => (seen.has(uuid) ? Promise.resolve() : new Promise((r) => waiting.set(uuid, r))),
          close: () => req.destroy(),
        })
      },
    )
    req.on('error', () => undefined)
    req.end()
  })
}

const place = async (n: number): Promise<string> =>
  (await placeOrder(t.app, staff.token, { project, offering, plan }, `listened-${n}`)).uuid

const retrieve = (uuid: string) => countedRetrieve(t, staff.token, uuid)
const told = (matches: (c: Change) => boolean) => toldChange(t.database, matches)

/**
 * The app's connections whose last statement is one a listening connection sends (a LISTEN, or the
 * change feed's fence): the pid and the statement. The pool's connections send neither.
 */
async function listening(): Promise<{ pid: number; query: string }[]> {
  const r = await sql<{ pid: number; query: string }>`
    select pid, query from pg_stat_activity
    where application_name = ${APPLICATION_NAME}
      and (query ilike 'listen %' or query = 'select pg_notify($1, $2)')`.execute(other!.db)
  return r.rows
}

test('the listening connection sends its queries one at a time, however many are asked for at once', async (s) => {
  if (!other) return s.skip('PostgreSQL only')
  // pg warns (once a process, so this test comes first) when a query is given to a client that
  // is running one; pg 9 refuses it. Fences' notifications, LISTEN and UNLISTEN come at any time.
  const warnings: string[] = []
  const onWarning = (w: Error) => warnings.push(w.message)
  process.on('warning', onWarning)
  s.after(() => process.off('warning', onWarning))
  const notifications = t.database.notifications!
  const heard: string[] = []
  let all!: () => void
  const allHeard = new Promise<void>((resolve) => (all = resolve))
  const stop = notifications.listen('marketplace_test_burst', {
    notification: (payload) => {
      heard.push(payload)
      if (heard.length === 20) all()
    },
    connected: () => {
      for (let i = 0; i < 20; i++) void notifications.notify('marketplace_test_burst', String(i))
    },
  })
  await allHeard
  stop()
  // Sent in the order asked for, and heard in that order.
  assert.deepEqual(
    heard,
    Array.from({ length: 20 }, (_, i) => String(i)),
  )
  await new Promise((resolve) => setImmediate(resolve))
  assert.deepEqual(
    warnings.filter((m) => m.includes('already executing a query')),
    [],
  )
})

test('a PostgreSQL process listens on one connection, and both its uses survive the loss of it', async (s) => {
  if (!other) return s.skip('PostgreSQL only')
  const notifications = t.database.notifications!
  const changes = t.database.changes!
  // Both uses subscribed: the change feed (kept answers) and an event stream's wake-ups.
  const stream = await openStream('?type=marketplace.order.created')
  s.after(() => stream.close())
  const first = await place(1)
  await stream.waitFor(first)
  await changes.ready()
  await retrieve(first)
  assert.equal((await retrieve(first)).statements, 0)
  const before = await listening()
  assert.equal(before.length, 1, JSON.stringify(before))
  assert.equal(before[0]!.pid, notifications.pid)

  // Cut it, as a restart of the database server or a network fault would.
  const lostPid = notifications.pid
  assert.ok(lostPid)
  const lost = told((c) => c === 'all')
  await sql`select pg_terminate_backend(${lostPid})`.execute(other.db)
  await lost
  // Nothing kept is used while it is down.
  assert.ok((await retrieve(first)).statements >= 1)
  await changes.ready()

  // Opened again: one connection, LISTENing on both channels in one statement.
  const rows = await listening()
  assert.equal(rows.length, 1, JSON.stringify(rows))
  assert.equal(rows[0]!.pid, notifications.pid)
  assert.notEqual(rows[0]!.pid, lostPid)
  assert.match(rows[0]!.query, /\bmarketplace_changes\b/)
  assert.match(rows[0]!.query, /\bmarketplace_events\b/)

  // The event stream is woken by the new connection's notifications.
  const second = await place(2)
  await stream.waitFor(second)
  // The change feed keeps answers again, and hears of another process's change.
  await changes.ready()
  await retrieve(second)
  assert.equal((await retrieve(second)).statements, 0)
  const id = await other.db
    .selectFrom('orders')
    .select('id')
    .where('uuid', '=', second)
    .executeTakeFirstOrThrow()
  const notified = told((c) => c !== 'all' && c.table === 'orders' && !!c.ids?.includes(id.id))
  await sql`update orders set state = 'erred' where id = ${id.id}`.execute(other.db)
  await notified
  assert.equal((await retrieve(second)).body.state, 'erred')
})
