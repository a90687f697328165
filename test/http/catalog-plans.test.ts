import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { sharedTestApp } from '../support/app.js'
import { BASE, client, uuids } from '../support/client.js'
import { makeUser, roleGraph } from '../support/fixtures.js'
import {
  makeOffering,
  makeOfferingManager,
  makePlan,
  makeResource,
  providerGraph,
} from '../support/catalog-fixtures.js'

const t = sharedTestApp()

const PLANS = '/api/marketplace-plans/'

describe('plan creation and validation', () => {
  test('the provider owner creates a plan; prices accept numbers and numeric strings', async () => {
    const p = providerGraph(t.ctx)
    const o = await makeOffering(t.ctx, await p.customer(), { name: 'Plan host' })
    const r = await client(t.app, (await p.owner()).token).post(PLANS, {
      offering: o.url,
      name: 'Gold',
      description: 'Best',
      unit: 'day',
      unit_price: '12.3456789',
      fixed_price: 5,
      activation_price: 0.25,
    })
    assert.equal(r.status, 201)
    assert.deepEqual(r.body, {
      url: `${BASE}${PLANS}${r.body.uuid}/`,
      uuid: r.body.uuid,
      offering: `${BASE}/api/marketplace-provider-offerings/${o.uuid}/`,
      offering_uuid: o.uuid,
      offering_name: 'Plan host',
      name: 'Gold',
      description: 'Best',
      unit: 'day',
      unit_price: '12.3456789',
      fixed_price: '5.0000000',
      activation_price: '0.2500000',
      archived: false,
      article_code: '',
      max_amount: null,
      backend_id: '',
      is_active: true,
      init_price: 0,
      switch_price: 0,
      organization_groups: [],
      components: [],
      prices: {},
      future_prices: {},
      quotas: {},
      resources_count: 0,
      plan_type: null,
      minimal_price: '0.0000000000',
      created: '2026-01-15T10:00:00.000Z',
    })
    const defaults = await client(t.app, (await p.owner()).token).post(PLANS, {
      offering: o.url,
      name: 'Free',
    })
    assert.equal(defaults.status, 201)
    assert.equal(defaults.body.unit, 'month')
    assert.equal(defaults.body.unit_price, '0.0000000')
    const offering = await client(t.app, (await p.owner()).token).get(
      `/api/marketplace-provider-offerings/${o.uuid}/?field=plans`,
    )
    assert.deepEqual(uuids(offering.body.plans), [r.body.uuid, defaults.body.uuid])
  })

  test('bad prices, units and missing fields are 400 naming the field', async () => {
    const p = providerGraph(t.ctx)
    const o = await makeOffering(t.ctx, await p.customer())
    const as = client(t.app, (await p.owner()).token)
    const cases: [Record<string, unknown>, Record<string, string[]>][] = [
      [{ unit_price: -1 }, { unit_price: ['Ensure this value is greater than or equal to 0.'] }],
      [{ fixed_price: '-0.5' }, { fixed_price: ['Ensure this value is greater than or equal to 0.'] }],
      [{ activation_price: 'cheap' }, { activation_price: ['A valid number is required.'] }],
      [{ unit_price: '' }, { unit_price: ['A valid number is required.'] }],
      [
        { unit_price: '1234567890123' },
        { unit_price: ['Ensure that there are no more than 12 digits before the decimal point.'] },
      ],
      [{ unit: 'week' }, { unit: ['"week" is not a valid choice.'] }],
    ]
    for (const [extra, expected] of cases) {
      const r = await as.post(PLANS, { offering: o.url, name: 'P', ...extra })
      assert.equal(r.status, 400, JSON.stringify(extra))
      assert.deepEqual(r.body, expected)
    }
    const noName = await as.post(PLANS, { offering: o.url })
    assert.equal(noName.status, 400)
    assert.deepEqual(noName.body, { name: ['This field is required.'] })
    const badType = await as.post(PLANS, { offering: o.url, name: 'P', unit_price: true })
    assert.equal(badType.status, 400)
    assert.ok(badType.body.unit_price)
    const wrongLink = await as.post(PLANS, { offering: `${BASE}${PLANS}${o.uuid}/`, name: 'P' })
    assert.deepEqual(wrongLink.body, { offering: ['Invalid hyperlink - Incorrect URL match.'] })
  })

  test('managers of the offering create and edit plans; support, consumers and outsiders cannot', async () => {
    const p = providerGraph(t.ctx)
    const g = roleGraph(t.ctx)
    const o = await makeOffering(t.ctx, await p.customer(), { state: 'Active' })
    const om = await makeOfferingManager(t.ctx, o)
    const staff = await makeUser(t.ctx, { staff: true })
    for (const u of [await p.owner(), await p.manager(), om, staff]) {
      const r = await client(t.app, u.token).post(PLANS, { offering: o.url, name: `by ${u.username}` })
      assert.equal(r.status, 201)
      const e = await client(t.app, u.token).patch(`${PLANS}${r.body.uuid}/`, { unit_price: '1.5' })
      assert.equal(e.status, 200)
      assert.equal(e.body.unit_price, '1.5000000')
    }
    const plan = await makePlan(t.ctx, o)
    for (const u of [await p.support(), await g.owner(), await g.member(), await g.outsider()]) {
      assert.equal((await client(t.app, u.token).post(PLANS, { offering: o.url, name: 'x' })).status, 403)
      assert.equal((await client(t.app, u.token).patch(`${PLANS}${plan.uuid}/`, { name: 'x' })).status, 403)
      assert.equal((await client(t.app, u.token).delete(`${PLANS}${plan.uuid}/`)).status, 403)
    }
    // Plans of Draft offerings do not exist for outsiders.
    const draft = await makeOffering(t.ctx, await p.customer(), { state: 'Draft' })
    const r = await client(t.app, (await g.outsider()).token).post(PLANS, { offering: draft.url, name: 'x' })
    assert.equal(r.status, 400)
    assert.deepEqual(r.body, { offering: ['Invalid hyperlink - Object does not exist.'] })
  })

  test('PUT needs the name; the offering of a plan cannot be moved', async () => {
    const p = providerGraph(t.ctx)
    const o = await makeOffering(t.ctx, await p.customer())
    const other = await makeOffering(t.ctx, await p.customer())
    const plan = await makePlan(t.ctx, o, { name: 'Old' })
    const as = client(t.app, (await p.owner()).token)
    const noName = await as.put(`${PLANS}${plan.uuid}/`, { unit: 'hour' })
    assert.equal(noName.status, 400)
    assert.deepEqual(noName.body, { name: ['This field is required.'] })
    const ok = await as.put(`${PLANS}${plan.uuid}/`, { name: 'New', unit: 'hour', archived: true })
    assert.equal(ok.status, 200)
    assert.equal(ok.body.name, 'New')
    assert.equal(ok.body.unit, 'hour')
    assert.equal(ok.body.archived, true)
    const moved = await as.patch(`${PLANS}${plan.uuid}/`, { offering: other.url })
    assert.equal(moved.status, 400)
    assert.deepEqual(moved.body, { offering: ['The offering of a plan cannot be changed.'] })
  })
})

describe('plan visibility, filters and deletion', () => {
  test('plans are visible like their offering', async () => {
    const p = providerGraph(t.ctx)
    const outsider = await makeUser(t.ctx)
    const active = await makeOffering(t.ctx, await p.customer(), { state: 'Active' })
    const draft = await makeOffering(t.ctx, await p.customer(), { state: 'Draft' })
    const seen = await makePlan(t.ctx, active)
    const hidden = await makePlan(t.ctx, draft)
    const as = client(t.app, outsider.token)
    assert.equal((await as.get(`${PLANS}${seen.uuid}/`)).status, 200)
    const no = await as.get(`${PLANS}${hidden.uuid}/`)
    assert.equal(no.status, 404)
    assert.deepEqual(no.body, { detail: 'No Plan matches the given query.' })
    assert.deepEqual(uuids((await as.get(`${PLANS}?offering_uuid=${draft.uuid}`)).body), [])
    const owner = client(t.app, (await p.owner()).token)
    assert.deepEqual(uuids((await owner.get(`${PLANS}?offering_uuid=${draft.uuid}`)).body), [hidden.uuid])
  })

  test('offering_uuid and archived filter the list; o orders by name', async () => {
    const staff = await makeUser(t.ctx, { staff: true })
    const p = providerGraph(t.ctx)
    const o = await makeOffering(t.ctx, await p.customer())
    const b = await makePlan(t.ctx, o, { name: 'b-plan' })
    const a = await makePlan(t.ctx, o, { name: 'a-plan', archived: true })
    const as = client(t.app, staff.token)
    const all = await as.get(`${PLANS}?offering_uuid=${o.uuid}`)
    assert.equal(all.headers['x-result-count'], '2')
    assert.deepEqual(uuids(all.body), [a.uuid, b.uuid])
    assert.deepEqual(uuids((await as.get(`${PLANS}?offering_uuid=${o.uuid}&o=-name`)).body), [b.uuid, a.uuid])
    assert.deepEqual(uuids((await as.get(`${PLANS}?offering_uuid=${o.uuid}&archived=true`)).body), [a.uuid])
    assert.deepEqual(uuids((await as.get(`${PLANS}?offering_uuid=${o.uuid}&archived=false`)).body), [b.uuid])
    const bad = await as.get(`${PLANS}?offering_uuid=xyz`)
    assert.equal(bad.status, 400)
    assert.deepEqual(bad.body, { offering_uuid: ['Enter a valid UUID.'] })
  })

  test('deleting a plan removes it, or archives it while resources use it', async () => {
    const p = providerGraph(t.ctx)
    const g = roleGraph(t.ctx)
    const o = await makeOffering(t.ctx, await p.customer())
    const unused = await makePlan(t.ctx, o)
    const used = await makePlan(t.ctx, o)
    await makeResource(t.ctx, o, await g.project(), { planId: used.id })
    const as = client(t.app, (await p.owner()).token)
    assert.equal((await as.delete(`${PLANS}${unused.uuid}/`)).status, 204)
    assert.equal((await as.get(`${PLANS}${unused.uuid}/`)).status, 404)
    const r = await as.delete(`${PLANS}${used.uuid}/`)
    assert.equal(r.status, 204)
    const kept = await as.get(`${PLANS}${used.uuid}/`)
    assert.equal(kept.status, 200)
    assert.equal(kept.body.archived, true)
  })
})
