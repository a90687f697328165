import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { buildTestApp, sharedTestApp, type TestApp } from '../support/app.js'
import { client } from '../support/client.js'
import { makeUser, roleGraph, type UserRef } from '../support/fixtures.js'
import {
  makeOffering,
  makeOfferingManager,
  providerGraph,
  type OfferingRef,
} from '../support/catalog-fixtures.js'

const IDS = '/api/marketplace-site-agent-identities/'
const SVC = '/api/marketplace-site-agent-services/'
const PROCS = '/api/marketplace-site-agent-processors/'
const STATS = '/api/marketplace-site-agent-stats/'
const HOST = 'http://localhost:80'

/** On app `t`: the staff user, a provider and its Slurm offering, with `t` itself. */
async function provide(t: TestApp) {
  const staff = await makeUser(t.ctx, { staff: true })
  const provider = providerGraph(t.ctx)
  const offering = await makeOffering(t.ctx, await provider.customer(), {
    name: 'Cluster',
    type: 'Marketplace.Slurm',
  })
  return { t, staff, provider, offering }
}

async function setup() {
  return provide(await buildTestApp())
}

/** `setup`'s app, users and offering, shared by a suite's tests: made before them, closed after. */
const sharedSetup = () => sharedTestApp(provide)

/** Runs `body` on a fresh app (`setup`) with the staff user's client `as`; the app is closed after it. */
async function onFreshApp(
  body: (s: Awaited<ReturnType<typeof setup>> & { as: ReturnType<typeof client> }) => Promise<void>,
) {
  const s = await setup()
  try {
    await body({ ...s, as: client(s.t.app, s.staff.token) })
  } finally {
    await s.t.close()
  }
}

async function identity(t: TestApp, user: UserRef, offering: OfferingRef, name = 'agent-1') {
  const r = await client(t.app, user.token).post(IDS, { name, offering: offering.url, version: '1.0' })
  assert.equal(r.status, 201, JSON.stringify(r.body))
  return r.body
}

async function service(t: TestApp, user: UserRef, ident: { uuid: string }, name: string, mode?: string) {
  const r = await client(t.app, user.token).post(`${IDS}${ident.uuid}/register_service/`, { name, mode })
  assert.ok(r.status === 201 || r.status === 200, JSON.stringify(r.body))
  return r.body
}

/** The names of the services listed with this query string; the total header must agree. */
async function serviceNames(t: TestApp, user: UserRef, qs: string): Promise<string[]> {
  const r = await client(t.app, user.token).get(`${SVC}?${qs}`)
  assert.equal(r.status, 200, JSON.stringify(r.body))
  assert.equal(Number(r.headers['x-result-count']), r.body.length, `${qs}: total`)
  return r.body.map((x: { name: string }) => x.name)
}

describe('agent identities', () => {
  const s = sharedSetup()

  test('a provider owner creates an identity for the offering and reads it back', async () => {
    const owner = await s.provider.owner()
    const r = await client(s.t.app, owner.token).post(IDS, {
      name: 'agent-a',
      offering: s.offering.url,
      version: '0.7.1',
      last_polled_at: '2026-01-15T09:00:00Z',
    })
    assert.equal(r.status, 201)
    assert.deepEqual(r.body, {
      uuid: r.body.uuid,
      url: `${HOST}${IDS}${r.body.uuid}/`,
      name: 'agent-a',
      offering: s.offering.uuid,
      offering_uuid: s.offering.uuid,
      offering_name: 'Cluster',
      version: '0.7.1',
      dependencies: [],
      config_file_path: null,
      config_file_content: null,
      last_restarted: '2026-01-15T10:00:00.000Z',
      last_polled_at: '2026-01-15T09:00:00.000Z',
      created: '2026-01-15T10:00:00.000Z',
      modified: '2026-01-15T10:00:00.000Z',
      created_by: owner.uuid,
      services: [],
    })
    const got = await client(s.t.app, owner.token).get(`${IDS}${r.body.uuid}/`)
    assert.deepEqual(got.body, r.body)
  })

  test('service-provider managers and offering managers may manage; consumers may not', async () => {
    const mgr = await s.provider.manager()
    const omgr = await makeOfferingManager(s.t.ctx, s.offering)
    const a = await identity(s.t, mgr, s.offering, 'by-manager')
    const b = await identity(s.t, omgr, s.offering, 'by-offering-manager')
    const patched = await client(s.t.app, omgr.token).patch(`${IDS}${a.uuid}/`, { version: '2.0' })
    assert.equal(patched.status, 200)
    assert.equal(patched.body.version, '2.0')
    const g = roleGraph(s.t.ctx)
    const outsider = await g.owner()
    const c = await client(s.t.app, outsider.token).post(IDS, { name: 'x', offering: s.offering.url })
    assert.equal(c.status, 403)
    assert.equal((await client(s.t.app, outsider.token).get(`${IDS}${b.uuid}/`)).status, 404)
    assert.deepEqual((await client(s.t.app, outsider.token).get(IDS)).body, [])
    const del = await client(s.t.app, mgr.token).delete(`${IDS}${b.uuid}/`)
    assert.equal(del.status, 204)
    assert.equal((await client(s.t.app, mgr.token).get(`${IDS}${b.uuid}/`)).status, 404)
  })

  test('an offering of a type site agents do not serve is a 400 on offering', async () => {
    const o = await makeOffering(s.t.ctx, await s.provider.customer(), { type: 'Support.OfferingTemplate' })
    const r = await client(s.t.app, s.staff.token).post(IDS, { name: 'x', offering: o.url })
    assert.equal(r.status, 400)
    assert.deepEqual(r.body, {
      offering: ['Offering type Support.OfferingTemplate is not served by site agents.'],
    })
  })

  test('register_service creates with 201, re-registers with 200 and sets the state Active', async () => {
    const ident = await identity(s.t, s.staff, s.offering, 'agent-reg')
    const as = client(s.t.app, s.staff.token)
    const a = await as.post(`${IDS}${ident.uuid}/register_service/`, {
      name: 'orders',
      mode: 'order_process',
    })
    assert.equal(a.status, 201)
    assert.deepEqual(a.body, {
      uuid: a.body.uuid,
      url: `${HOST}${SVC}${a.body.uuid}/`,
      identity: ident.uuid,
      identity_name: 'agent-reg',
      name: 'orders',
      mode: 'order_process',
      state: 'Active',
      statistics: {},
      created: s.t.clock.now().toISOString(),
      modified: s.t.clock.now().toISOString(),
      processors: [],
    })
    await s.t.ctx.db
      .updateTable('site_agent_services')
      .set({ state: 2 })
      .where('uuid', '=', a.body.uuid)
      .execute()
    s.t.clock.advanceHours(1)
    const b = await as.post(`${IDS}${ident.uuid}/register_service/`, { name: 'orders', mode: 'report' })
    assert.equal(b.status, 200)
    assert.equal(b.body.uuid, a.body.uuid)
    assert.equal(b.body.state, 'Active')
    assert.equal(b.body.mode, 'report')
    assert.equal(b.body.modified, s.t.clock.now().toISOString())
  })
})

describe('services', () => {
  const s = sharedSetup()
  /** A service registered by staff on a new identity of the suite's offering. */
  async function staffService(agent: string, name: string) {
    return service(s.t, s.staff, await identity(s.t, s.staff, s.offering, agent), name)
  }

  test('register_processor creates (201) then updates (200) by name', async () => {
    const ident = await identity(s.t, s.staff, s.offering, 'agent-p')
    const svc = await service(s.t, s.staff, ident, 'proc-svc')
    const as = client(s.t.app, (await s.provider.owner()).token)
    const a = await as.post(`${SVC}${svc.uuid}/register_processor/`, { name: 'slurm', backend_type: 'SLURM' })
    assert.equal(a.status, 201)
    assert.deepEqual(a.body, {
      uuid: a.body.uuid,
      url: `${HOST}/api/marketplace-site-agent-processors/${a.body.uuid}/`,
      service: svc.uuid,
      service_name: 'proc-svc',
      name: 'slurm',
      last_run: s.t.clock.now().toISOString(),
      backend_type: 'SLURM',
      backend_version: null,
      created: s.t.clock.now().toISOString(),
      modified: s.t.clock.now().toISOString(),
    })
    s.t.clock.advanceHours(1)
    const b = await as.post(`${SVC}${svc.uuid}/register_processor/`, {
      name: 'slurm',
      backend_type: 'LDAP',
      backend_version: '23.02',
    })
    assert.equal(b.status, 200)
    assert.equal(b.body.uuid, a.body.uuid)
    assert.equal(b.body.backend_type, 'LDAP')
    assert.equal(b.body.backend_version, '23.02')
    assert.equal(b.body.last_run, s.t.clock.now().toISOString())
    const got = await as.get(`${SVC}${svc.uuid}/`)
    assert.deepEqual(got.body.processors, [
      {
        uuid: a.body.uuid,
        url: a.body.url,
        name: 'slurm',
        last_run: b.body.last_run,
        backend_type: 'LDAP',
        backend_version: '23.02',
        created: a.body.created,
        modified: b.body.modified,
      },
    ])
    const missing = await as.post(`${SVC}${svc.uuid}/register_processor/`, { name: 'x' })
    assert.equal(missing.status, 400)
    assert.ok(missing.body.backend_type)
  })

  test('register_processor refuses a blank name or backend_type', async () => {
    const svc = await staffService('agent-blank', 'blank-svc')
    const as = client(s.t.app, s.staff.token)
    const BLANK = ['This field may not be blank.']
    const cases: [Record<string, unknown>, Record<string, string[]>][] = [
      [{ name: 'proc-blank', backend_type: '' }, { backend_type: BLANK }],
      [{ name: '', backend_type: 'SLURM' }, { name: BLANK }],
      [
        { name: '', backend_type: '' },
        { name: BLANK, backend_type: BLANK },
      ],
    ]
    for (const [body, errors] of cases) {
      const r = await as.post(`${SVC}${svc.uuid}/register_processor/`, body)
      assert.equal(r.status, 400, JSON.stringify(body))
      assert.deepEqual(r.body, errors)
    }
    assert.deepEqual((await as.get(`${SVC}${svc.uuid}/`)).body.processors, [])
  })

  test('set_statistics replaces the statistics and answers the service', async () => {
    const svc = await staffService('agent-s', 'stats-svc')
    const as = client(s.t.app, s.staff.token)
    const a = await as.post(`${SVC}${svc.uuid}/set_statistics/`, { statistics: { a: 1, b: [1, 2] } })
    assert.equal(a.status, 200)
    assert.deepEqual(a.body.statistics, { a: 1, b: [1, 2] })
    assert.equal(a.body.uuid, svc.uuid)
    const b = await as.post(`${SVC}${svc.uuid}/set_statistics/`, { statistics: { c: 'x' } })
    assert.deepEqual(b.body.statistics, { c: 'x' })
    const missing = await as.post(`${SVC}${svc.uuid}/set_statistics/`, {})
    assert.equal(missing.status, 400)
    assert.ok(missing.body.statistics)
  })

  test('set_statistics takes an object: anything else is 400 on statistics and keeps the stored one', async () => {
    const svc = await staffService('agent-s2', 'stats-svc-2')
    const as = client(s.t.app, s.staff.token)
    await as.post(`${SVC}${svc.uuid}/set_statistics/`, { statistics: { jobs: 3 } })
    for (const statistics of ['x', '{"a": 1}', 3, [1, 2], null, true]) {
      const r = await as.post(`${SVC}${svc.uuid}/set_statistics/`, { statistics })
      assert.equal(r.status, 400, JSON.stringify(statistics))
      assert.deepEqual(r.body, { statistics: ['Expected a dictionary of items.'] })
    }
    assert.deepEqual((await as.get(`${SVC}${svc.uuid}/`)).body.statistics, { jobs: 3 })
  })

  test('consumers get 404 and an empty list; support reads; anonymous gets 401', async () => {
    const ident = await identity(s.t, s.staff, s.offering, 'agent-v')
    const svc = await service(s.t, s.staff, ident, 'vis-svc')
    const g = roleGraph(s.t.ctx)
    const consumer = await g.owner()
    assert.equal((await client(s.t.app, consumer.token).get(`${SVC}${svc.uuid}/`)).status, 404)
    assert.deepEqual((await client(s.t.app, consumer.token).get(SVC)).body, [])
    assert.equal(
      (await client(s.t.app, consumer.token).post(`${SVC}${svc.uuid}/set_statistics/`, { statistics: {} }))
        .status,
      404,
    )
    const support = await makeUser(s.t.ctx, { support: true })
    assert.equal((await client(s.t.app, support.token).get(`${SVC}${svc.uuid}/`)).status, 200)
    const denied = await client(s.t.app, support.token).post(`${SVC}${svc.uuid}/set_statistics/`, {
      statistics: {},
    })
    assert.equal(denied.status, 403)
    assert.equal((await client(s.t.app).get(SVC)).status, 401)
  })

  test('DELETE removes the service and its processors', async () => {
    const ident = await identity(s.t, s.staff, s.offering, 'agent-d')
    const svc = await service(s.t, s.staff, ident, 'del-svc')
    const as = client(s.t.app, (await s.provider.manager()).token)
    await as.post(`${SVC}${svc.uuid}/register_processor/`, { name: 'p', backend_type: 'SLURM' })
    const r = await as.delete(`${SVC}${svc.uuid}/`)
    assert.equal(r.status, 204)
    assert.equal((await as.get(`${SVC}${svc.uuid}/`)).status, 404)
    const left = await s.t.ctx.db.selectFrom('site_agent_processors').selectAll().execute()
    assert.equal(left.filter((p) => p.name === 'p').length, 0)
    const consumer = await roleGraph(s.t.ctx).owner()
    const svc2 = await service(s.t, s.staff, ident, 'del-svc-2')
    assert.equal((await client(s.t.app, consumer.token).delete(`${SVC}${svc2.uuid}/`)).status, 404)
  })
})

describe('service filters', () => {
  test('identity_uuid, mode, modified_after/before, stale and state filter the list', () =>
    onFreshApp(async ({ t, staff, offering, as }) => {
      const i1 = await identity(t, staff, offering, 'one')
      const i2 = await identity(t, staff, offering, 'two')
      const old = await service(t, staff, i1, 'old', 'report')
      t.clock.advanceHours(25)
      await service(t, staff, i1, 'a', 'order_process')
      t.clock.advanceHours(1)
      const b = await service(t, staff, i2, 'b', 'order_process')
      await t.ctx.db.updateTable('site_agent_services').set({ state: 3 }).where('uuid', '=', b.uuid).execute()
      await t.ctx.db
        .updateTable('site_agent_services')
        .set({ state: 2 })
        .where('uuid', '=', old.uuid)
        .execute()
      const names = (qs: string) => serviceNames(t, staff, qs)
      assert.deepEqual(await names(''), ['old', 'a', 'b'])
      assert.deepEqual(await names(`identity_uuid=${i1.uuid}`), ['old', 'a'])
      assert.deepEqual(await names(`identity_uuid=${i2.uuid}`), ['b'])
      assert.deepEqual(await names('mode=order_process'), ['a', 'b'])
      assert.deepEqual(await names('mode=nothing'), [])
      assert.deepEqual(await names('modified_after=2026-01-16T11:00:00Z'), ['b'])
      assert.deepEqual(await names('modified_before=2026-01-16T11:00:00Z'), ['old'])
      assert.deepEqual(await names('stale=true'), ['old'])
      assert.deepEqual(await names('stale=false'), ['a', 'b'])
      assert.deepEqual(await names('state=Active'), ['a'])
      assert.deepEqual(await names('state=1'), ['a'])
      assert.deepEqual(await names('state=Idle&state=3'), ['old', 'b'])
      assert.deepEqual(await names('state=Error'), ['b'])
      assert.equal((await as.get(`${SVC}?state=Sleeping`)).status, 400)
      assert.equal((await as.get(`${SVC}?modified_after=soon`)).status, 400)
      assert.equal((await as.get(`${SVC}?identity_uuid=xyz`)).status, 400)
      // One day later "a" and "b" become stale too.
      t.clock.advanceHours(25)
      assert.deepEqual(await names('stale=true'), ['old', 'a', 'b'])
      assert.deepEqual(await names('stale=false'), [])
    }))
})

describe('stale total', () => {
  test('follows the clock and every write to a service, request after request', () =>
    // The total of stale services is kept between requests and moved forward with the clock;
    // every case below checks it against the services listed.
    onFreshApp(async ({ t, staff, offering, as }) => {
      const ident = await identity(t, staff, offering, 'agent-s')
      const made = []
      for (const [i, name] of ['s0', 's1', 's2', 's3'].entries()) {
        made.push(await service(t, staff, ident, name, i % 2 ? 'report' : 'order_process'))
        t.clock.advanceHours(1)
      }
      const stale = (qs = '') => serviceNames(t, staff, `stale=true${qs}`)
      // s0 was modified at hour 0, s3 at hour 3; the clock is at hour 4.
      assert.deepEqual(await stale(), [])
      t.clock.advanceHours(20.5) // 24.5: s0 is stale
      assert.deepEqual(await stale(), ['s0'])
      assert.deepEqual(await stale(), ['s0'])
      t.clock.advanceHours(1) // 25.5: s1 too
      assert.deepEqual(await stale(), ['s0', 's1'])
      assert.deepEqual(await stale('&mode=report'), ['s1'])
      t.clock.advanceHours(2) // 27.5: all four
      assert.deepEqual(await stale(), ['s0', 's1', 's2', 's3'])
      assert.deepEqual(await stale('&mode=report'), ['s1', 's3'])
      // A write through the API makes s0 fresh again.
      const set = await as.post(`${SVC}${made[0].uuid}/set_statistics/`, { statistics: { jobs: 1 } })
      assert.equal(set.status, 200, JSON.stringify(set.body))
      assert.deepEqual(await stale(), ['s1', 's2', 's3'])
      // Raw SQL, as another process: s2 fresh, then a new service written as long stale.
      const fresh = t.ctx.clock().toISOString()
      await t.ctx.db
        .updateTable('site_agent_services')
        .set({ modified: fresh })
        .where('uuid', '=', made[2].uuid)
        .execute()
      assert.deepEqual(await stale(), ['s1', 's3'])
      const s4 = await service(t, staff, ident, 's4', 'report')
      await t.ctx.db
        .updateTable('site_agent_services')
        .set({ modified: '2026-01-01T00:00:00.000Z' })
        .where('uuid', '=', s4.uuid)
        .execute()
      assert.deepEqual(await stale(), ['s1', 's3', 's4'])
      assert.deepEqual(await stale('&mode=report'), ['s1', 's3', 's4'])
      // A deleted service, and the clock set back.
      assert.equal((await as.delete(`${SVC}${made[1].uuid}/`)).status, 204)
      assert.deepEqual(await stale(), ['s3', 's4'])
      t.clock.advanceHours(-3) // 24.5: only s0's time has passed, and s0 is fresh
      assert.deepEqual(await stale(), ['s4'])
    }))
})

describe('cleanup_stale', () => {
  test('non-staff get 403 before the body is validated', () =>
    onFreshApp(async ({ t, provider }) => {
      const owner = await provider.owner()
      const r = await client(t.app, owner.token).post(`${SVC}cleanup_stale/`, { older_than_hours: 0 })
      assert.equal(r.status, 403)
      const support = await makeUser(t.ctx, { support: true })
      assert.equal((await client(t.app, support.token).post(`${SVC}cleanup_stale/`, {})).status, 403)
    }))

  test('dry run (the default) reports without deleting; a real run deletes', () =>
    onFreshApp(async ({ t, staff, offering, as }) => {
      const ident = await identity(t, staff, offering, 'agent-c')
      const old = await service(t, staff, ident, 'old')
      await as.post(`${SVC}${old.uuid}/register_processor/`, { name: 'p', backend_type: 'SLURM' })
      t.clock.advanceHours(25)
      const fresh = await service(t, staff, ident, 'fresh')
      const dry = await as.post(`${SVC}cleanup_stale/`)
      assert.equal(dry.status, 200)
      assert.deepEqual(dry.body, {
        deleted_count: 1,
        dry_run: true,
        items: [
          {
            uuid: old.uuid,
            name: 'old',
            identity_name: 'agent-c',
            state: '1',
            modified: '2026-01-15T10:00:00.000Z',
          },
        ],
      })
      assert.equal((await as.get(`${SVC}${old.uuid}/`)).status, 200)
      const explicitDry = await as.post(`${SVC}cleanup_stale/`, { dry_run: true, older_than_hours: 1 })
      assert.equal(explicitDry.body.deleted_count, 1)
      const bad = await as.post(`${SVC}cleanup_stale/`, { older_than_hours: 0 })
      assert.equal(bad.status, 400)
      assert.deepEqual(bad.body, { older_than_hours: ['Ensure this value is greater than or equal to 1.'] })
      const wide = await as.post(`${SVC}cleanup_stale/`, { dry_run: true, older_than_hours: 48 })
      assert.deepEqual(wide.body, { deleted_count: 0, dry_run: true, items: [] })
      const real = await as.post(`${SVC}cleanup_stale/`, { dry_run: false })
      assert.equal(real.status, 200)
      assert.equal(real.body.deleted_count, 1)
      assert.equal(real.body.dry_run, false)
      assert.equal(real.body.items[0].uuid, old.uuid)
      assert.equal((await as.get(`${SVC}${old.uuid}/`)).status, 404)
      assert.equal((await as.get(`${SVC}${fresh.uuid}/`)).status, 200)
    }))
})

describe('cleanup_stale bounds', () => {
  test('an older_than_hours no date can be computed from is 400 naming it, not 500', () =>
    onFreshApp(async ({ as }) => {
      for (const hours of [1e15, 1e300, Number.MAX_SAFE_INTEGER, 1_000_001]) {
        const r = await as.post(`${SVC}cleanup_stale/`, { older_than_hours: hours })
        assert.equal(r.status, 400, String(hours))
        assert.deepEqual(r.body, {
          older_than_hours: ['Ensure this value is less than or equal to 1000000.'],
        })
      }
      const widest = await as.post(`${SVC}cleanup_stale/`, { older_than_hours: 1_000_000 })
      assert.equal(widest.status, 200)
      assert.equal(widest.body.dry_run, true)
    }))
})

describe('idle sweep', () => {
  test('an Active service whose processors last ran 10 minutes ago becomes Idle; without processors it stays', () =>
    onFreshApp(async ({ t, staff, offering, as }) => {
      const ident = await identity(t, staff, offering, 'agent-i')
      const withProc = await service(t, staff, ident, 'with-proc')
      const noProc = await service(t, staff, ident, 'no-proc')
      await as.post(`${SVC}${withProc.uuid}/register_processor/`, { name: 'p', backend_type: 'SLURM' })
      t.clock.advance(5 * 60 * 1000)
      await t.ctx.jobs.drain()
      assert.equal((await as.get(`${SVC}${withProc.uuid}/`)).body.state, 'Active')
      t.clock.advance(5 * 60 * 1000)
      await t.ctx.jobs.drain()
      const idle = await as.get(`${SVC}${withProc.uuid}/`)
      assert.equal(idle.body.state, 'Idle')
      assert.equal(idle.body.modified, t.clock.now().toISOString())
      assert.equal((await as.get(`${SVC}${noProc.uuid}/`)).body.state, 'Active')
      // Re-registering makes it Active again; a fresh processor run keeps it Active at the next sweep.
      await service(t, staff, ident, 'with-proc')
      await as.post(`${SVC}${withProc.uuid}/register_processor/`, { name: 'p', backend_type: 'SLURM' })
      t.clock.advance(5 * 60 * 1000)
      await t.ctx.jobs.drain()
      assert.equal((await as.get(`${SVC}${withProc.uuid}/`)).body.state, 'Active')
      t.clock.advance(5 * 60 * 1000)
      await t.ctx.jobs.drain()
      assert.equal((await as.get(`${SVC}${withProc.uuid}/`)).body.state, 'Idle')
    }))
})

describe('agents as the newest clients drive them', () => {
  test('an agent registers with the offering uuid, lists its processors and reads the stats', () =>
    onFreshApp(async (s) => {
      const owner = await s.provider.owner()
      const agent = client(s.t.app, owner.token)
      const r = await agent.post(IDS, { name: 'agent-u', offering: s.offering.uuid })
      assert.equal(r.status, 201, JSON.stringify(r.body))
      assert.equal(r.body.offering, s.offering.uuid)
      assert.equal(r.body.offering_uuid, s.offering.uuid)
      assert.equal(r.body.created_by, owner.uuid)
      assert.deepEqual(r.body.services, [])
      // PUT takes the uuid too (hyphenless as well); an unknown uuid is 400 on offering.
      const put = await agent.put(`${IDS}${r.body.uuid}/`, {
        name: 'agent-u',
        offering: s.offering.uuid.replaceAll('-', ''),
      })
      assert.equal(put.status, 200, JSON.stringify(put.body))
      assert.equal(put.body.offering_uuid, s.offering.uuid)
      const bad = await agent.post(IDS, { name: 'x', offering: '00000000-0000-4000-8000-000000000000' })
      assert.equal(bad.status, 400)
      assert.ok(Array.isArray(bad.body.offering), JSON.stringify(bad.body))

      const svc = await service(s.t, owner, r.body, 'orders', 'order_process')
      const other = await service(s.t, owner, r.body, 'report', 'report')
      for (const [sv, name, type] of [
        [svc, 'slurm-a', 'SLURM'],
        [svc, 'slurm-b', 'SLURM'],
        [other, 'ldap', 'LDAP'],
      ] as const) {
        const p = await agent.post(`${SVC}${sv.uuid}/register_processor/`, { name, backend_type: type })
        assert.equal(p.status, 201, JSON.stringify(p.body))
      }
      const ident = await agent.get(`${IDS}${r.body.uuid}/`)
      assert.deepEqual(
        ident.body.services.map((x: { name: string; processors: unknown[] }) => [
          x.name,
          x.processors.length,
        ]),
        [
          ['orders', 2],
          ['report', 1],
        ],
      )

      const procs = await agent.get(`${PROCS}?service_uuid=${svc.uuid}&page_size=1`)
      assert.equal(procs.status, 200, JSON.stringify(procs.body))
      assert.equal(procs.headers['x-result-count'], '2')
      assert.match(String(procs.headers.link), /service_uuid=/)
      assert.deepEqual(Object.keys(procs.body[0]).sort(), [
        'backend_type',
        'backend_version',
        'created',
        'last_run',
        'modified',
        'name',
        'service',
        'service_name',
        'url',
        'uuid',
      ])
      assert.equal(procs.body[0].name, 'slurm-a')
      assert.equal(procs.body[0].service, svc.uuid)
      assert.equal(procs.body[0].service_name, 'orders')
      const byOffering = await agent.get(`${PROCS}?offering_uuid=${s.offering.uuid}`)
      assert.deepEqual(
        byOffering.body.map((p: { name: string }) => p.name),
        ['slurm-a', 'slurm-b', 'ldap'],
      )
      assert.equal((await agent.get(`${PROCS}?service_uuid=nope`)).status, 400)
      // Consumers see none; anonymous is 401.
      const consumer = await makeUser(s.t.ctx)
      assert.deepEqual((await client(s.t.app, consumer.token).get(PROCS)).body, [])
      assert.equal((await client(s.t.app).get(PROCS)).status, 401)

      // Stats: staff and support only.
      assert.equal((await agent.get(STATS)).status, 403)
      s.t.clock.advanceHours(2)
      await agent.post(`${SVC}${other.uuid}/register_processor/`, { name: 'ldap', backend_type: 'LDAP' })
      const st = await client(s.t.app, s.staff.token).get(STATS)
      assert.equal(st.status, 200, JSON.stringify(st.body))
      assert.deepEqual(st.body, {
        identities: {
          total: 1,
          by_offering: [{ offering__uuid: s.offering.uuid, offering__name: 'Cluster', count: 1 }],
        },
        services: { total: 2, by_state: { active: 2, idle: 0, error: 0 }, stale_count: 0 },
        processors: {
          total: 3,
          by_backend_type: [
            { backend_type: 'LDAP', count: 1 },
            { backend_type: 'SLURM', count: 2 },
          ],
          stale_count: 2,
        },
      })
      s.t.clock.advanceHours(25)
      const later = await client(s.t.app, s.staff.token).get(STATS)
      assert.equal(later.body.services.stale_count, 2)
      assert.equal(later.body.processors.stale_count, 3)
    }))
})

describe('the site agent registering as its client does', () => {
  const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

  test('create then PUT with the whole body: every field is kept and read back', () =>
    onFreshApp(async (s) => {
      const owner = await s.provider.owner()
      const agent = client(s.t.app, owner.token)
      const name = `agent-${s.offering.uuid}`
      const deps = [
        { package: 'waldur-site-agent-slurm', version: '1.0.6rc17' },
        { package: 'waldur-api-client', version: '8.1.0rc19' },
      ]
      const first = await agent.post(IDS, {
        offering: s.offering.uuid.replaceAll('-', ''),
        name,
        version: '1.0.6rc17',
        dependencies: deps,
        config_file_path: '',
        config_file_content: '',
        last_restarted: '2026-01-15T09:59:30.123456+00:00',
      })
      assert.equal(first.status, 201, JSON.stringify(first.body))
      const r = first.body
      assert.match(r.offering, UUID_RE)
      assert.equal(r.offering, s.offering.uuid)
      assert.match(r.created_by, UUID_RE)
      assert.equal(r.created_by, owner.uuid)
      assert.deepEqual(r.dependencies, deps)
      assert.equal(r.config_file_path, '')
      assert.equal(r.config_file_content, '')
      assert.equal(r.last_restarted, '2026-01-15T09:59:30.123Z')
      assert.equal(r.version, '1.0.6rc17')

      // The next start: the agent finds its identity by name and PUTs the whole body again.
      s.t.clock.advanceHours(1)
      const found = await agent.get(`${IDS}?name=${name}`)
      assert.deepEqual(
        found.body.map((i: { uuid: string }) => i.uuid),
        [r.uuid],
      )
      const put = await agent.put(`${IDS}${r.uuid}/`, {
        offering: s.offering.uuid,
        name,
        version: '1.0.7',
        dependencies: [deps[1]],
        config_file_path: '/etc/waldur/agent.yaml',
        config_file_content: 'offerings: []\n',
        last_restarted: '2026-01-15T10:59:00Z',
      })
      assert.equal(put.status, 200, JSON.stringify(put.body))
      const got = (await agent.get(`${IDS}${r.uuid}/`)).body
      assert.deepEqual(got, put.body)
      assert.equal(got.version, '1.0.7')
      assert.deepEqual(got.dependencies, [deps[1]])
      assert.equal(got.config_file_path, '/etc/waldur/agent.yaml')
      assert.equal(got.config_file_content, 'offerings: []\n')
      assert.equal(got.last_restarted, '2026-01-15T10:59:00.000Z')
      assert.equal(got.created, r.created)
      assert.equal(got.modified, s.t.clock.now().toISOString())
      assert.equal(got.created_by, owner.uuid, 'the creator stays the one who registered it')

      // A PATCH leaves what it does not name.
      const patched = await agent.patch(`${IDS}${r.uuid}/`, { config_file_content: null })
      assert.equal(patched.status, 200, JSON.stringify(patched.body))
      assert.equal(patched.body.config_file_content, null)
      assert.deepEqual(patched.body.dependencies, [deps[1]])
      assert.equal(patched.body.last_restarted, '2026-01-15T10:59:00.000Z')
      assert.equal(patched.body.config_file_path, '/etc/waldur/agent.yaml')
    }))

  test('a bad path, date-time or dependency list is 400 naming each field; nothing is written', () =>
    onFreshApp(async (s) => {
      const owner = await s.provider.owner()
      const agent = client(s.t.app, owner.token)
      const bad = await agent.post(IDS, {
        offering: s.offering.uuid,
        name: 'agent-bad',
        config_file_path: 'etc/agent.yaml',
        last_restarted: 'yesterday',
        last_polled_at: 'soon',
      })
      assert.equal(bad.status, 400)
      assert.deepEqual(bad.body, {
        config_file_path: ['Path should be absolute (start with /).'],
        last_restarted: ['Datetime has wrong format. Use ISO 8601.'],
        last_polled_at: ['Datetime has wrong format. Use ISO 8601.'],
      })
      const traversal = await agent.post(IDS, {
        offering: s.offering.uuid,
        name: 'agent-bad',
        config_file_path: '/etc/../root/agent.yaml',
      })
      assert.equal(traversal.status, 400)
      assert.deepEqual(traversal.body, { config_file_path: ['Path contains invalid directory traversal.'] })
      for (const dependencies of [
        { package: 'x', version: '1' },
        [{ package: 'x' }],
        ['x'],
        [{ package: 1, version: '1' }],
      ]) {
        const r = await agent.post(IDS, { offering: s.offering.uuid, name: 'agent-bad', dependencies })
        assert.equal(r.status, 400, JSON.stringify(dependencies))
        assert.ok(r.body.dependencies, JSON.stringify(r.body))
      }
      const nulled = await agent.post(IDS, {
        offering: s.offering.uuid,
        name: 'agent-bad',
        last_restarted: null,
      })
      assert.equal(nulled.status, 400)
      assert.ok(nulled.body.last_restarted, JSON.stringify(nulled.body))
      assert.deepEqual((await agent.get(`${IDS}?name=agent-bad`)).body, [])
      // An update checks the same rules and keeps the stored values.
      const ok = await agent.post(IDS, {
        offering: s.offering.uuid,
        name: 'agent-ok',
        config_file_path: '/a',
      })
      assert.equal(ok.status, 201)
      const put = await agent.patch(`${IDS}${ok.body.uuid}/`, { config_file_path: 'relative' })
      assert.equal(put.status, 400)
      assert.equal((await agent.get(`${IDS}${ok.body.uuid}/`)).body.config_file_path, '/a')
    }))

  test('identities filter by name, version, last restart and having no services', () =>
    onFreshApp(async (s) => {
      const as = client(s.t.app, s.staff.token)
      const make = async (name: string, version: string, lastRestarted: string) => {
        const r = await as.post(IDS, {
          offering: s.offering.uuid,
          name,
          version,
          last_restarted: lastRestarted,
        })
        assert.equal(r.status, 201, JSON.stringify(r.body))
        return r.body
      }
      const a = await make('agent-f1', '1.0', '2026-01-10T00:00:00Z')
      await make('agent-f2', '2.0', '2026-01-14T00:00:00Z')
      await service(s.t, s.staff, a, 'orders')
      const names = async (qs: string) => {
        const r = await as.get(`${IDS}?${qs}`)
        assert.equal(r.status, 200, JSON.stringify(r.body))
        return r.body.map((i: { name: string }) => i.name)
      }
      assert.deepEqual(await names('version=2.0'), ['agent-f2'])
      assert.deepEqual(await names('last_restarted=2026-01-12T00:00:00Z'), ['agent-f2'])
      assert.deepEqual(await names('orphaned=true'), ['agent-f2'])
      assert.deepEqual(await names('orphaned=false'), ['agent-f1'])
      assert.deepEqual(await names('name=agent-f1&orphaned=false'), ['agent-f1'])
      assert.equal((await as.get(`${IDS}?last_restarted=soon`)).status, 400)
    }))

  test('processors filter by backend type and version and by last run', () =>
    onFreshApp(async (s) => {
      const as = client(s.t.app, s.staff.token)
      const ident = await identity(s.t, s.staff, s.offering, 'agent-pf')
      const svc = await service(s.t, s.staff, ident, 'orders')
      const register = async (name: string, backend_type: string, backend_version?: string) => {
        const r = await as.post(`${SVC}${svc.uuid}/register_processor/`, {
          name,
          backend_type,
          backend_version,
        })
        assert.equal(r.status, 201, JSON.stringify(r.body))
      }
      await register('early', 'SLURM', '23.02')
      s.t.clock.advanceHours(2)
      await register('late', 'SLURM', '24.05')
      await register('ldap', 'LDAP')
      const names = async (qs: string) =>
        (await as.get(`${PROCS}?${qs}`)).body.map((p: { name: string }) => p.name)
      assert.deepEqual(await names('backend_type=SLURM'), ['early', 'late'])
      assert.deepEqual(await names('backend_version=24.05'), ['late'])
      const hourAgo = new Date(s.t.clock.now().getTime() - 3600_000).toISOString()
      assert.deepEqual(await names(`last_run=${hourAgo}`), ['late', 'ldap'])
      assert.deepEqual(await names(`last_run_before=${hourAgo}`), ['early'])
      assert.equal((await as.get(`${PROCS}?last_run_before=x`)).status, 400)
    }))

  test('stats count services by state, stale services and processors; support reads, others 403', () =>
    onFreshApp(async (s) => {
      const as = client(s.t.app, s.staff.token)
      const other = await makeOffering(s.t.ctx, await s.provider.customer(), {
        name: 'Archive',
        type: 'Marketplace.Basic',
      })
      const a = await identity(s.t, s.staff, s.offering, 'agent-s1')
      const b = await identity(s.t, s.staff, s.offering, 'agent-s2')
      await identity(s.t, s.staff, other, 'agent-s3')
      const idle = await service(s.t, s.staff, a, 'idle')
      const erred = await service(s.t, s.staff, a, 'erred')
      await service(s.t, s.staff, b, 'active')
      await s.t.ctx.db
        .updateTable('site_agent_services')
        .set({ state: 2 })
        .where('uuid', '=', idle.uuid)
        .execute()
      await s.t.ctx.db
        .updateTable('site_agent_services')
        .set({ state: 3 })
        .where('uuid', '=', erred.uuid)
        .execute()
      await as.post(`${SVC}${idle.uuid}/register_processor/`, { name: 'p', backend_type: 'SLURM' })
      s.t.clock.advanceHours(25)
      await service(s.t, s.staff, b, 'fresh')
      const st = await as.get(STATS)
      assert.equal(st.status, 200, JSON.stringify(st.body))
      assert.deepEqual(st.body, {
        identities: {
          total: 3,
          by_offering: [
            { offering__uuid: other.uuid, offering__name: 'Archive', count: 1 },
            { offering__uuid: s.offering.uuid, offering__name: 'Cluster', count: 2 },
          ],
        },
        services: { total: 4, by_state: { active: 2, idle: 1, error: 1 }, stale_count: 3 },
        processors: { total: 1, by_backend_type: [{ backend_type: 'SLURM', count: 1 }], stale_count: 1 },
      })
      const support = await makeUser(s.t.ctx, { support: true })
      assert.deepEqual((await client(s.t.app, support.token).get(STATS)).body, st.body)
      const manager = await makeOfferingManager(s.t.ctx, s.offering)
      assert.equal((await client(s.t.app, manager.token).get(STATS)).status, 403)
      assert.equal((await client(s.t.app).get(STATS)).status, 401)
    }))
})
