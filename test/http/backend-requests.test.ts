import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { sharedTestApp, buildTestApp } from '../support/app.js'
import { client } from '../support/client.js'
import { makeUser, roleGraph, withStaff } from '../support/fixtures.js'
import {
  makeOffering,
  makeOfferingManager,
  providerGraph,
  type OfferingRef,
} from '../support/catalog-fixtures.js'

const t = sharedTestApp(async (t) => {
  const { staff } = await withStaff(t)
  const provider = providerGraph(t.ctx)
  const offering = await makeOffering(t.ctx, await provider.customer(), { name: 'HPC' })
  return { staff, provider, offering }
})

const BASE = '/api/backend-resource-requests/'

async function create(o: OfferingRef = t.offering) {
  const r = await client(t.app, t.staff.token).post(BASE, { offering: o.uuid })
  assert.equal(r.status, 201, JSON.stringify(r.body))
  return r.body
}

/** Staff post the action `action` of the request `req` (with `body`). */
function staffAction(req: { uuid: string }, action: string, body?: Record<string, unknown>) {
  return client(t.app, t.staff.token).post(`${BASE}${req.uuid}/${action}/`, body)
}

describe('creating backend resource requests', () => {
  test('staff creates a request for an offering and it starts in Sent', async () => {
    const r = await client(t.app, t.staff.token).post(BASE, { offering: t.offering.uuid.replace(/-/g, '') })
    assert.equal(r.status, 201)
    assert.deepEqual(r.body, {
      url: `http://localhost:80${BASE}${r.body.uuid}/`,
      uuid: r.body.uuid,
      created: '2026-01-15T10:00:00.000Z',
      modified: '2026-01-15T10:00:00.000Z',
      started: null,
      finished: null,
      state: 'Sent',
      offering: t.offering.uuid,
      offering_name: 'HPC',
      offering_url: `http://localhost:80/api/marketplace-provider-offerings/${t.offering.uuid}/`,
      error_message: '',
      error_traceback: '',
    })
    const got = await client(t.app, t.staff.token).get(`${BASE}${r.body.uuid}/`)
    assert.deepEqual(got.body, r.body)
  })

  test('a provider owner may not create a request', async () => {
    const owner = client(t.app, (await t.provider.owner()).token)
    assert.equal((await owner.post(BASE, { offering: t.offering.uuid })).status, 403)
    // Staff only is checked before the body: a bad body from a non-staff caller is still 403.
    assert.equal((await owner.post(BASE, {})).status, 403)
    assert.equal((await owner.post(BASE, { offering: 42 })).status, 403)
  })

  test('an unknown or malformed offering is a 400 on offering', async () => {
    const a = await client(t.app, t.staff.token).post(BASE, { offering: 'nope' })
    assert.equal(a.status, 400)
    assert.deepEqual(Object.keys(a.body), ['offering'])
    const b = await client(t.app, t.staff.token).post(BASE, {
      offering: '00000000-0000-0000-0000-000000000000',
    })
    assert.equal(b.status, 400)
    assert.ok(b.body.offering)
  })

  test('anonymous callers get 401', async () => {
    const r = await client(t.app).get(BASE)
    assert.equal(r.status, 401)
  })
})

describe('state transitions', () => {
  test('start_processing, set_done move the request and record the times', async () => {
    const req = await create()
    const as = client(t.app, (await t.provider.manager()).token)
    t.clock.advanceHours(1)
    const a = await as.post(`${BASE}${req.uuid}/start_processing/`)
    assert.equal(a.status, 200)
    assert.deepEqual(a.body, { status: 'Backend resource request has been moved to processing.' })
    let got = await as.get(`${BASE}${req.uuid}/`)
    assert.equal(got.body.state, 'Processing')
    assert.equal(got.body.started, t.clock.now().toISOString())
    assert.equal(got.body.finished, null)
    t.clock.advanceHours(1)
    const b = await as.post(`${BASE}${req.uuid}/set_done/`)
    assert.equal(b.status, 200)
    assert.deepEqual(b.body, { status: 'Backend resource request has been marked as done.' })
    got = await as.get(`${BASE}${req.uuid}/`)
    assert.equal(got.body.state, 'Done')
    assert.equal(got.body.finished, t.clock.now().toISOString())
  })

  test('set_done from Sent is a 409 naming the valid state', async () => {
    const req = await create()
    const r = await staffAction(req, 'set_done')
    assert.equal(r.status, 409)
    assert.deepEqual(r.body, { detail: 'Valid states for operation: Processing.' })
  })

  test('start_processing twice is a 409 the second time', async () => {
    const req = await create()
    const as = client(t.app, t.staff.token)
    assert.equal((await as.post(`${BASE}${req.uuid}/start_processing/`)).status, 200)
    const r = await as.post(`${BASE}${req.uuid}/start_processing/`)
    assert.equal(r.status, 409)
    assert.deepEqual(r.body, { detail: 'Valid states for operation: Sent.' })
  })

  test('set_erred from any state stores the message and traceback', async () => {
    for (const path of [[], ['start_processing'], ['start_processing', 'set_done']]) {
      const req = await create()
      const as = client(t.app, t.staff.token)
      for (const p of path) assert.equal((await as.post(`${BASE}${req.uuid}/${p}/`)).status, 200)
      const r = await as.post(`${BASE}${req.uuid}/set_erred/`, {
        error_message: 'boom',
        error_traceback: 'Traceback: line 1',
      })
      assert.equal(r.status, 200)
      assert.deepEqual(r.body, { status: 'Backend resource request has been marked as erred.' })
      const got = await as.get(`${BASE}${req.uuid}/`)
      assert.equal(got.body.state, 'Erred')
      assert.equal(got.body.error_message, 'boom')
      assert.equal(got.body.error_traceback, 'Traceback: line 1')
      assert.equal(got.body.finished, t.clock.now().toISOString())
    }
  })

  test('set_erred without a body stores empty strings', async () => {
    const req = await create()
    const r = await staffAction(req, 'set_erred')
    assert.equal(r.status, 200)
    const got = await client(t.app, t.staff.token).get(`${BASE}${req.uuid}/`)
    assert.equal(got.body.state, 'Erred')
    assert.equal(got.body.error_message, '')
  })

  test('offering managers and provider owners may act; consumers get 403; unknown uuid 404', async () => {
    const req = await create()
    const manager = await makeOfferingManager(t.ctx, t.offering)
    assert.equal(
      (await client(t.app, manager.token).post(`${BASE}${req.uuid}/start_processing/`)).status,
      200,
    )
    const req2 = await create()
    assert.equal(
      (await client(t.app, (await t.provider.owner()).token).post(`${BASE}${req2.uuid}/start_processing/`))
        .status,
      200,
    )
    const g = roleGraph(t.ctx)
    for (const u of [await g.owner(), await g.admin(), await t.provider.support()]) {
      const r = await client(t.app, u.token).post(`${BASE}${req2.uuid}/set_done/`)
      assert.equal(r.status, 403)
    }
    const r = await client(t.app, t.staff.token).post(`${BASE}00000000-0000-0000-0000-000000000000/set_done/`)
    assert.equal(r.status, 404)
  })

  test('two concurrent start_processing calls: exactly one wins', async () => {
    const req = await create()
    const as = client(t.app, t.staff.token)
    const rs = await Promise.all([
      as.post(`${BASE}${req.uuid}/start_processing/`),
      as.post(`${BASE}${req.uuid}/start_processing/`),
    ])
    assert.deepEqual(rs.map((r) => r.status).sort(), [200, 409])
  })
})

describe('listing', () => {
  test('visible to staff, support and the provider side; consumers see nothing', async () => {
    const t2 = await buildTestApp()
    try {
      const st = await makeUser(t2.ctx, { staff: true })
      const sup = await makeUser(t2.ctx, { support: true })
      const pg = providerGraph(t2.ctx)
      const o = await makeOffering(t2.ctx, await pg.customer())
      const r = await client(t2.app, st.token).post(BASE, { offering: o.uuid })
      const mgr = await makeOfferingManager(t2.ctx, o)
      const cg = roleGraph(t2.ctx)
      for (const u of [st, sup, await pg.owner(), await pg.manager(), mgr]) {
        const l = await client(t2.app, u.token).get(BASE)
        assert.deepEqual(
          l.body.map((x: any) => x.uuid),
          [r.body.uuid],
        )
      }
      for (const u of [await cg.owner(), await cg.admin(), await cg.outsider()]) {
        const l = await client(t2.app, u.token).get(BASE)
        assert.deepEqual(l.body, [])
        assert.equal((await client(t2.app, u.token).get(`${BASE}${r.body.uuid}/`)).status, 404)
      }
    } finally {
      await t2.close()
    }
  })

  test('filters: offering_uuid, state, created/modified/started/finished and ordering', async () => {
    const t2 = await buildTestApp()
    try {
      const st = await makeUser(t2.ctx, { staff: true })
      const pg = providerGraph(t2.ctx)
      const o1 = await makeOffering(t2.ctx, await pg.customer())
      const o2 = await makeOffering(t2.ctx, await pg.customer())
      const as = client(t2.app, st.token)
      const a = (await as.post(BASE, { offering: o1.uuid })).body
      t2.clock.advanceHours(1)
      const b = (await as.post(BASE, { offering: o2.uuid })).body
      t2.clock.advanceHours(1)
      await as.post(`${BASE}${b.uuid}/start_processing/`)
      t2.clock.advanceHours(1)
      const c = (await as.post(BASE, { offering: o1.uuid })).body
      await as.post(`${BASE}${c.uuid}/set_erred/`, { error_message: 'x' })
      const uuids = async (qs: string) => {
        const r = await as.get(`${BASE}?${qs}`)
        assert.equal(r.status, 200, JSON.stringify(r.body))
        return r.body.map((x: any) => x.uuid)
      }
      assert.deepEqual(await uuids(`offering_uuid=${o1.uuid}`), [a.uuid, c.uuid])
      assert.deepEqual(await uuids('state=Sent'), [a.uuid])
      assert.deepEqual(await uuids('state=Sent&state=Processing'), [a.uuid, b.uuid])
      assert.deepEqual(await uuids('created=2026-01-15T11:00:00Z'), [b.uuid, c.uuid])
      assert.deepEqual(await uuids('modified=2026-01-15T12:00:00Z'), [b.uuid, c.uuid])
      assert.deepEqual(await uuids('started=2026-01-15T11:30:00Z'), [b.uuid])
      assert.deepEqual(await uuids('finished=2026-01-15T13:00:00Z'), [c.uuid])
      assert.deepEqual(await uuids('o=-created'), [c.uuid, b.uuid, a.uuid])
      assert.deepEqual(await uuids('o=created'), [a.uuid, b.uuid, c.uuid])
      assert.equal((await as.get(`${BASE}?state=Bogus`)).status, 400)
      assert.equal((await as.get(`${BASE}?created=yesterday`)).status, 400)
      assert.equal((await as.get(`${BASE}?o=state`)).status, 400)
      assert.equal((await as.get(`${BASE}?offering_uuid=zz`)).status, 400)
    } finally {
      await t2.close()
    }
  })
})
