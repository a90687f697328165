// What the order list's `query` search and the stale site agent services list cost in statements
// sent to the database. Both keep an answer between requests (what a text matches, the stale
// total; db/epochs.ts) while epochs raised by triggers hold, and on PostgreSQL those epochs are
// read by a statement the request sends anyway. On PostgreSQL a search's matches and its list are
// also kept in memory while the change feed tells no change of the orders or of those epochs, and
// a services list while it tells no write to the services, processors or identities and no
// service has gone stale since: asked again, they cost no statement. The counts are pinned here, warm and after a write
// that raises an epoch, and each answer is checked against writes made through raw SQL, as another
// process would make them (on PostgreSQL the test waits for this process's write to be told back,
// `settled`, so that the count does not depend on the notification's timing). The caller's token
// and roles are kept in-process and the first request warms them, as in a running server.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'kysely'
import { buildTestApp, TEST_DATABASE_URL, type TestApp } from '../support/app.js'
import { createDatabase } from '../../src/db/database.js'
import type { Change } from '../../src/db/change-feed.js'
import { call } from '../support/client.js'
import { counted, toldChange } from '../support/statements.js'
import { makeCustomer, makeProject, makeUser, type Ref, type UserRef } from '../support/fixtures.js'
import { makeOffering, makePlan, providerGraph } from '../support/catalog-fixtures.js'

let t: TestApp
let consumer: Ref
let alpha: Ref
let beta: Ref
let staff: UserRef

/** Statements each request sends: PostgreSQL (round trips), SQLite (in memory: nothing kept in memory). */
const EXPECTED = {
  // PostgreSQL: nothing changed since the same search, which is kept. SQLite: the epochs, the
  // total, the page.
  search: { postgres: 0, sqlite: 3 },
  // After a write that raised an epoch: the epochs (and, when they moved, what the text matches:
  // one statement on PostgreSQL; on SQLite the epochs, then the order slugs, project names and
  // resource names apart), the total, the page.
  searchAgain: { postgres: 3, sqlite: 6 },
  // After a write the page's records show besides (a name, a slug): their records rendered again.
  searchAgainRendered: { postgres: 4, sqlite: 7 },
  // A uuid asked again: kept on PostgreSQL (a new order is told, so one with that uuid would be
  // seen); SQLite looks it up every time (the order may be created at any time).
  searchUuid: { postgres: 0, sqlite: 5 },
  // PostgreSQL: the page with the total and its epoch (one statement), the page's processors, and
  // when the next service goes stale (until then the answer is kept). SQLite: the epoch, the total
  // (of the services gone stale since the one kept, or all), the page, the processors.
  stale: { postgres: 3, sqlite: 4 },
  // PostgreSQL: nothing written and no service gone stale since the same list: kept.
  staleKept: { postgres: 0, sqlite: 4 },
  // No stale service: the page (empty) with the total (and on PostgreSQL the next stale time); on
  // SQLite the epoch and the total.
  staleNone: { postgres: 2, sqlite: 2 },
  // The last page needs the total first: the total with its epoch, the page, the processors (and
  // on PostgreSQL the next stale time with each, kept apart).
  staleLast: { postgres: 5, sqlite: 4 },
}

const ORDERS = '/api/marketplace-orders/'
const SERVICES = '/api/marketplace-site-agent-services/'

before(async () => {
  // The caller's token kept for longer than the clock is moved here.
  t = await buildTestApp({ tokenCacheSeconds: 10 * 24 * 3600 })
  consumer = await makeCustomer(t.ctx, 'Consumer org')
  alpha = await makeProject(t.ctx, consumer, { name: 'Alpha lab' })
  beta = await makeProject(t.ctx, consumer, { name: 'Beta lab' })
  staff = await makeUser(t.ctx, { staff: true })
})
after(() => t.close())

/** `run`'s answer, its statement count checked against what is pinned for `kind`. */
async function pinned<T>(kind: keyof typeof EXPECTED, run: () => Promise<T>): Promise<T> {
  const { statements, answer } = await counted(t.database, run)
  assert.equal(statements, EXPECTED[kind][t.dialect], `statements of ${kind} on ${t.dialect}`)
  return answer
}

const get = (url: string) => call(t.app, 'GET', url, { token: staff.token })

/** PostgreSQL: this process's writes told back, so kept answers are used again (see change-feed.ts). */
const settled = async () => t.database.changes?.ready()

test('the query search costs the statements pinned, and finds what a write changed at once', async () => {
  const provider = await makeCustomer(t.ctx, 'Provider org')
  const offering = await makeOffering(t.ctx, provider, { type: 'Marketplace.Basic', name: 'Searched' })
  const plan = await makePlan(t.ctx, offering, { unitPrice: '10' })
  const place = async (project: Ref, name: string) => {
    const r = await call(t.app, 'POST', ORDERS, {
      token: staff.token,
      body: { project: project.url, offering: offering.url, plan: plan.url, attributes: { name } },
    })
    assert.equal(r.status, 201, r.text)
    return r.body.uuid as string
  }
  const a1 = await place(alpha, 'kappa-one')
  const a2 = await place(alpha, 'kappa-two')
  const b1 = await place(beta, 'other-one')
  await settled()
  /** The uuids the search finds; the total header must agree. */
  const found = async (text: string) => {
    const r = await get(`${ORDERS}?query=${encodeURIComponent(text)}`)
    assert.equal(r.status, 200, r.text)
    assert.equal(r.headers['x-result-count'], String(r.body.length))
    return r.body.map((o: { uuid: string }) => o.uuid).sort()
  }
  // The first search looks up what the text matches (and warms the caller's token and roles).
  assert.deepEqual(await found('kappa'), [a1, a2].sort())
  for (let i = 0; i < 3; i++) {
    assert.deepEqual(await pinned('search', () => found('kappa')), [a1, a2].sort())
  }
  // A project renamed through SQL, its epoch then put back as if no trigger had raised it: the
  // matches kept are used and the rename is not seen (what the epochs are there for).
  const db = t.ctx.db
  await db.updateTable('projects').set({ name: 'Kappa lab' }).where('id', '=', beta.id).execute()
  await settled()
  const projectNames = db.updateTable('record_epochs').where('name', '=', 'project_names')
  await projectNames.set((eb) => ({ n: eb('n', '-', 1) })).execute()
  await settled()
  assert.deepEqual(await found('kappa'), [a1, a2].sort())
  // The epoch raised, as the trigger did: the project's order is found at once.
  await projectNames.set((eb) => ({ n: eb('n', '+', 1) })).execute()
  await settled()
  assert.deepEqual(await pinned('searchAgainRendered', () => found('kappa')), [a1, a2, b1].sort())
  assert.deepEqual(await pinned('search', () => found('kappa')), [a1, a2, b1].sort())
  // A write the search does not read (a project's modified time) keeps what it matched.
  await db.updateTable('projects').set({ modified: t.clock.now().toISOString() }).execute()
  await settled()
  assert.deepEqual(await pinned('search', () => found('kappa')), [a1, a2, b1].sort())
  // Renamed away: no longer found.
  await db.updateTable('projects').set({ name: 'Lab' }).where('id', '=', beta.id).execute()
  await settled()
  assert.deepEqual(await pinned('searchAgainRendered', () => found('kappa')), [a1, a2].sort())
  // A project inserted through SQL, named to match (it has no orders): looked up again.
  const now = t.clock.now().toISOString()
  await db
    .insertInto('projects')
    .values({
      uuid: t.ctx.newUuid(),
      name: 'Kappa annex',
      customer_id: consumer.id,
      description: '',
      slug: 'kappa-annex',
      created: now,
      modified: now,
    })
    .execute()
  await settled()
  assert.deepEqual(await pinned('searchAgain', () => found('kappa')), [a1, a2].sort())
  assert.deepEqual(await pinned('search', () => found('kappa')), [a1, a2].sort())
  // A resource renamed away through SQL.
  await db.updateTable('resources').set({ name: 'renamed' }).where('name', '=', 'kappa-two').execute()
  await settled()
  assert.deepEqual(await pinned('searchAgainRendered', () => found('kappa')), [a1])
  // An order's slug set through SQL (the order's own version moves too: its record is rendered
  // again, the rest of the page is not).
  await db.updateTable('orders').set({ slug: 'kappa' }).where('uuid', '=', b1).execute()
  await settled()
  assert.deepEqual(await pinned('searchAgainRendered', () => found('kappa')), [a1, b1].sort())
  // A uuid (the first search renders the order's record again).
  assert.deepEqual(await found(a2), [a2])
  for (let i = 0; i < 2; i++) assert.deepEqual(await pinned('searchUuid', () => found(a2)), [a2])
})

/** A site agent identity (as staff) of a new Slurm offering named `offering`. */
async function agentIdentity(offering: string, name: string) {
  const o = await makeOffering(t.ctx, await providerGraph(t.ctx).customer(), {
    type: 'Marketplace.Slurm',
    name: offering,
  })
  const identity = await call(t.app, 'POST', '/api/marketplace-site-agent-identities/', {
    token: staff.token,
    body: { name, offering: o.url, version: '1.0' },
  })
  assert.equal(identity.status, 201, identity.text)
  return identity
}

test('the stale services list costs the statements pinned, and its total follows every write at once', async () => {
  const identity = await agentIdentity('Cluster', 'agent-counted')
  const made: string[] = []
  for (const name of ['s0', 's1', 's2', 's3']) {
    const r = await call(
      t.app,
      'POST',
      `/api/marketplace-site-agent-identities/${identity.body.uuid}/register_service/`,
      {
        token: staff.token,
        body: { name },
      },
    )
    assert.equal(r.status, 201, r.text)
    made.push(r.body.uuid)
    t.clock.advanceHours(1)
  }
  /** The names of the stale services listed; the total header must agree. */
  const stale = async (qs = '') => {
    const r = await get(`${SERVICES}?stale=true${qs}`)
    assert.equal(r.status, 200, r.text)
    assert.equal(Number(r.headers['x-result-count']), r.body.length)
    return r.body.map((s: { name: string }) => s.name)
  }
  await settled()
  // Hour 4: none is stale yet (24 hours without a write).
  assert.deepEqual(await pinned('staleNone', () => stale()), [])
  t.clock.advanceHours(20.5) // 24.5: s0 is stale
  assert.deepEqual(await pinned('stale', () => stale()), ['s0'])
  assert.deepEqual(await pinned('staleKept', () => stale()), ['s0'])
  t.clock.advanceHours(0.25) // 24.75: time passed, but s1 goes stale at 25
  assert.deepEqual(await pinned('staleKept', () => stale()), ['s0'])
  t.clock.advanceHours(0.75) // 25.5: s1 too, counted on from the total kept
  assert.deepEqual(await pinned('stale', () => stale()), ['s0', 's1'])
  // A service written through SQL: fresh again at once.
  const fresh = t.clock.now().toISOString()
  const db = t.ctx.db
  await db.updateTable('site_agent_services').set({ modified: fresh }).where('uuid', '=', made[0]!).execute()
  await settled()
  assert.deepEqual(await pinned('stale', () => stale()), ['s1'])
  assert.deepEqual(await pinned('staleKept', () => stale()), ['s1'])
  // One made stale through SQL.
  const old = '2026-01-01T00:00:00.000Z'
  const services = db.updateTable('site_agent_services')
  await services.set({ modified: old }).where('uuid', '=', made[3]!).execute()
  await settled()
  assert.deepEqual(await pinned('stale', () => stale()), ['s1', 's3'])
  // Another, its epoch then put back as if no trigger had raised it: the total kept is carried
  // on and disagrees with the page (what the epoch is there for); raised again, they agree.
  await services.set({ modified: old }).where('uuid', '=', made[2]!).execute()
  await settled()
  const epoch = db.updateTable('record_epochs').where('name', '=', 'site_agent_services')
  await epoch.set((eb) => ({ n: eb('n', '-', 1) })).execute()
  await settled()
  const carried = await get(`${SERVICES}?stale=true`)
  assert.equal(carried.headers['x-result-count'], '2')
  assert.deepEqual(
    carried.body.map((x: { name: string }) => x.name),
    ['s1', 's2', 's3'],
  )
  await epoch.set((eb) => ({ n: eb('n', '+', 1) })).execute()
  await settled()
  assert.deepEqual(await pinned('stale', () => stale()), ['s1', 's2', 's3'])
  // One deleted.
  await db.deleteFrom('site_agent_services').where('uuid', '=', made[1]!).execute()
  await settled()
  assert.deepEqual(await pinned('stale', () => stale()), ['s2', 's3'])
  // Of another filter, none; the last page counts first; a page past the last is 404.
  assert.deepEqual(await pinned('staleNone', () => stale('&mode=report')), [])
  assert.deepEqual(await pinned('staleLast', () => stale('&page=last')), ['s2', 's3'])
  const past = await get(`${SERVICES}?stale=true&page=2`)
  assert.equal(past.status, 404, past.text)
  assert.deepEqual(past.body, { detail: 'Invalid page.' })
  // The clock set back: the total kept is not carried backwards.
  t.clock.advanceHours(-30)
  assert.deepEqual(await pinned('stale', () => stale()), ['s2', 's3'])
  // Forward again: no service went stale between the two times (s0 was written at 25.5), so the
  // answer read at the earlier one holds.
  t.clock.advanceHours(30)
  assert.deepEqual(await pinned('staleKept', () => stale()), ['s2', 's3'])
})

test('a kept services list shows a processor or an identity written, here or by another process, at once', async () => {
  const identity = await agentIdentity('Told cluster', 'agent-told')
  const service = await call(
    t.app,
    'POST',
    `/api/marketplace-site-agent-identities/${identity.body.uuid}/register_service/`,
    { token: staff.token, body: { name: 'told' } },
  )
  assert.equal(service.status, 201, service.text)
  const path = `${SERVICES}?identity_uuid=${identity.body.uuid}`
  const listed = async () => {
    const { statements, answer: r } = await counted(t.database, () => get(path))
    assert.equal(r.status, 200, r.text)
    return { statements, services: r.body as any[] }
  }
  await settled()
  assert.deepEqual((await listed()).services[0].processors, [])
  const again = await listed()
  if (t.dialect === 'postgres') assert.equal(again.statements, 0, 'kept')

  // This process: a processor registered is listed by the next request.
  const proc = await call(t.app, 'POST', `${SERVICES}${service.body.uuid}/register_processor/`, {
    token: staff.token,
    body: { name: 'slurm', backend_type: 'SLURM', backend_version: '23.02' },
  })
  assert.equal(proc.status, 201, proc.text)
  assert.deepEqual(
    (await listed()).services[0].processors.map((p: any) => [p.name, p.backend_version]),
    [['slurm', '23.02']],
  )
  if (t.dialect !== 'postgres') return
  // Another process (a pool of its own): a processor's and an identity's writes, seen once told.
  const other = await createDatabase(TEST_DATABASE_URL, { schema: t.database.schema })
  try {
    const records = (c: Change) => c !== 'all' && c.table === 'epoch site_agent_records'
    await settled()
    await listed()
    assert.equal((await listed()).statements, 0, 'kept')
    let told = toldChange(t.database, records)
    await sql`update site_agent_processors set backend_version = '24.05' where uuid = ${proc.body.uuid}`.execute(
      other.db,
    )
    await told
    assert.equal((await listed()).services[0].processors[0].backend_version, '24.05')
    told = toldChange(t.database, records)
    await sql`update site_agent_identities set name = 'agent-renamed' where uuid = ${identity.body.uuid}`.execute(
      other.db,
    )
    await told
    assert.equal((await listed()).services[0].identity_name, 'agent-renamed')
    // A service written elsewhere: its own epoch.
    told = toldChange(t.database, (c) => c !== 'all' && c.table === 'epoch site_agent_services')
    await sql`update site_agent_services set name = 'told-renamed' where uuid = ${service.body.uuid}`.execute(
      other.db,
    )
    await told
    assert.equal((await listed()).services[0].name, 'told-renamed')
  } finally {
    await other.close()
  }
})
