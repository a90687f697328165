// A plan's component prices and amounts: written with the plan or by update_prices /
// update_quotas, shown in the plan record with the sums derived from them, and listed by
// /api/marketplace-plan-components/. Also the plan's maximum of resources and its groups.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { sharedTestApp } from '../support/app.js'
import { BASE, client } from '../support/client.js'
import { makeCustomer, makeProject, makeUser } from '../support/fixtures.js'
import {
  makeComponent,
  makeOffering,
  makePlan,
  makeResource,
  providerGraph,
} from '../support/catalog-fixtures.js'

const t = sharedTestApp()

const PLANS = '/api/marketplace-plans/'

/** A provider's offering with a usage, a limit, a fixed, a one-time and a switch component. */
async function pricedOffering() {
  const p = providerGraph(t.ctx)
  const offering = await makeOffering(t.ctx, await p.customer(), { type: 'Marketplace.Slurm' })
  const owner = client(t.app, (await p.owner()).token)
  const add = (billing_type: string, type: string, name: string) =>
    owner.post(`/api/marketplace-provider-offerings/${offering.uuid}/create_offering_component/`, {
      billing_type,
      type,
      name,
      measured_unit: 'units',
    })
  for (const [b, type, name] of [
    ['usage', 'cpu', 'CPU hours'],
    ['limit', 'storage', 'Storage'],
    ['fixed', 'seats', 'Seats'],
    ['one', 'setup', 'Setup'],
    ['few', 'switch', 'Switch fee'],
  ] as const) {
    assert.equal((await add(b, type, name)).status, 201)
  }
  return { p, offering, owner }
}

describe('plan prices', () => {
  test('a plan created with prices and quotas shows them, with the sums derived from them', async () => {
    const { offering, owner } = await pricedOffering()
    const r = await owner.post(PLANS, {
      offering: offering.url,
      name: 'Standard',
      article_code: 'STD',
      backend_id: 'std',
      max_amount: 3,
      prices: { cpu: '0.05', storage: 2, seats: '10.10', setup: '100', switch: 0.5 },
      quotas: { seats: 3 },
    })
    assert.equal(r.status, 201, r.text)
    const plan = r.body
    assert.deepEqual(
      plan.components.map((c: Record<string, unknown>) => [
        c.type,
        c.name,
        c.measured_unit,
        c.amount,
        c.price,
        c.future_price,
      ]),
      [
        ['cpu', 'CPU hours', 'units', 0, '0.0500000000', null],
        ['seats', 'Seats', 'units', 3, '10.1000000000', null],
        ['setup', 'Setup', 'units', 0, '100.0000000000', null],
        ['storage', 'Storage', 'units', 0, '2.0000000000', null],
        ['switch', 'Switch fee', 'units', 0, '0.5000000000', null],
      ],
    )
    assert.deepEqual(plan.prices, {
      cpu: '0.0500000000',
      seats: '10.1000000000',
      setup: '100.0000000000',
      storage: '2.0000000000',
      switch: '0.5000000000',
    })
    assert.deepEqual(plan.quotas, { cpu: 0, seats: 3, setup: 0, storage: 0, switch: 0 })
    assert.deepEqual(plan.future_prices, {})
    assert.equal(plan.init_price, 100)
    assert.equal(plan.switch_price, 0.5)
    assert.equal(plan.plan_type, 'mixed')
    // storage 2 (one unit) + seats 10.10 × 3 + setup 100
    assert.equal(plan.minimal_price, '132.3000000000')
    assert.deepEqual(
      [plan.article_code, plan.backend_id, plan.max_amount, plan.is_active, plan.resources_count],
      ['STD', 'std', 3, true, 0],
    )
    const read = await owner.get(`${PLANS}${plan.uuid}/`)
    assert.deepEqual(read.body, plan)
  })

  test('update_prices sets every price (those not named: 0); unknown types are 400 naming them', async () => {
    const { offering, owner } = await pricedOffering()
    const plan = (
      await owner.post(PLANS, { offering: offering.url, name: 'P', prices: { cpu: 1, storage: 1 } })
    ).body
    const r = await owner.post(`${PLANS}${plan.uuid}/update_prices/`, { prices: { cpu: '0.25' } })
    assert.equal(r.status, 200)
    assert.equal(r.text, '')
    const after = (await owner.get(`${PLANS}${plan.uuid}/`)).body
    assert.equal(after.prices.cpu, '0.2500000000')
    assert.equal(after.prices.storage, '0.0000000000')
    assert.equal(after.plan_type, 'usage-based')
    const unknown = await owner.post(`${PLANS}${plan.uuid}/update_prices/`, {
      prices: { gpu: 1, ram: 2, cpu: 1 },
    })
    assert.equal(unknown.status, 400)
    assert.deepEqual(unknown.body, { prices: ['Invalid components gpu, ram.'] })
    const bad = await owner.post(`${PLANS}${plan.uuid}/update_prices/`, { prices: { cpu: '-1' } })
    assert.deepEqual(bad.body, { prices: { cpu: ['Ensure this value is greater than or equal to 0.'] } })
    const notNumber = await owner.post(`${PLANS}${plan.uuid}/update_prices/`, { prices: { cpu: 'x' } })
    assert.deepEqual(notNumber.body, { prices: { cpu: ['A valid number is required.'] } })
    const missing = await owner.post(`${PLANS}${plan.uuid}/update_prices/`, {})
    assert.deepEqual(missing.body, { prices: ['This field is required.'] })
    assert.equal(
      (await owner.get(`${PLANS}${plan.uuid}/`)).body.prices.cpu,
      '0.2500000000',
      'unchanged by 400s',
    )
  })

  test('update_quotas sets the amounts of fixed components only', async () => {
    const { offering, owner } = await pricedOffering()
    const plan = (await owner.post(PLANS, { offering: offering.url, name: 'Q', prices: { seats: 4 } })).body
    const r = await owner.post(`${PLANS}${plan.uuid}/update_quotas/`, { quotas: { seats: 5 } })
    assert.equal(r.status, 200)
    const after = (await owner.get(`${PLANS}${plan.uuid}/`)).body
    assert.equal(after.quotas.seats, 5)
    assert.equal(after.minimal_price, '20.0000000000')
    const notFixed = await owner.post(`${PLANS}${plan.uuid}/update_quotas/`, { quotas: { cpu: 1 } })
    assert.deepEqual(notFixed.body, { quotas: ['Invalid components cpu.'] })
    const negative = await owner.post(`${PLANS}${plan.uuid}/update_quotas/`, { quotas: { seats: -1 } })
    assert.deepEqual(negative.body, {
      quotas: { seats: ['Ensure this value is greater than or equal to 0.'] },
    })
  })

  test('a new price of a plan in use waits for the next month; until then it is a future price', async () => {
    const { offering, owner } = await pricedOffering()
    const plan = (await owner.post(PLANS, { offering: offering.url, name: 'Used', prices: { cpu: 1 } })).body
    const consumer = await makeCustomer(t.ctx)
    await makeResource(t.ctx, offering, await makeProject(t.ctx, consumer), {
      planId: await planId(plan.uuid),
    })
    t.clock.set('2026-03-20T12:00:00.000Z')
    try {
      assert.equal(
        (await owner.post(`${PLANS}${plan.uuid}/update_prices/`, { prices: { cpu: 3 } })).status,
        200,
      )
      const now = (await owner.get(`${PLANS}${plan.uuid}/`)).body
      assert.equal(now.prices.cpu, '1.0000000000')
      assert.deepEqual(now.future_prices, { cpu: '3.0000000000' })
      assert.equal(
        now.components.find((c: { type: string }) => c.type === 'cpu').future_price,
        '3.0000000000',
      )
      assert.equal(now.resources_count, 1)
      t.clock.set('2026-04-01T00:00:00.000Z')
      const next = (await owner.get(`${PLANS}${plan.uuid}/`)).body
      assert.equal(next.prices.cpu, '3.0000000000')
      assert.deepEqual(next.future_prices, {})
      // Setting the price in effect again leaves nothing to come.
      await owner.post(`${PLANS}${plan.uuid}/update_prices/`, { prices: { cpu: 5 } })
      await owner.post(`${PLANS}${plan.uuid}/update_prices/`, { prices: { cpu: 3 } })
      assert.deepEqual((await owner.get(`${PLANS}${plan.uuid}/`)).body.future_prices, {})
    } finally {
      t.clock.set('2026-01-15T10:00:00.000Z')
    }
  })

  test('who may: whoever may update the offering; 404 for a plan the caller cannot see', async () => {
    const { p, offering, owner } = await pricedOffering()
    const plan = (await owner.post(PLANS, { offering: offering.url, name: 'W' })).body
    const support = await client(t.app, (await p.support()).token).post(
      `${PLANS}${plan.uuid}/update_prices/`,
      {
        prices: { cpu: 1 },
      },
    )
    assert.equal(support.status, 403)
    const draft = await makeOffering(t.ctx, await p.customer(), { state: 'Draft' })
    const hidden = await makePlan(t.ctx, draft)
    const outsider = await client(t.app, (await makeUser(t.ctx)).token).post(
      `${PLANS}${hidden.uuid}/update_quotas/`,
      {
        quotas: {},
      },
    )
    assert.equal(outsider.status, 404)
  })
})

async function planId(uuid: string): Promise<number> {
  const row = await t.ctx.db
    .selectFrom('plans')
    .select('id')
    .where('uuid', '=', uuid)
    .executeTakeFirstOrThrow()
  return row.id
}

describe('the plan record', () => {
  test('is_active: fewer live resources than max_amount; terminated ones do not count', async () => {
    const p = providerGraph(t.ctx)
    const offering = await makeOffering(t.ctx, await p.customer())
    const owner = client(t.app, (await p.owner()).token)
    const plan = (await owner.post(PLANS, { offering: offering.url, name: 'Two', max_amount: 2 })).body
    const project = await makeProject(t.ctx, await makeCustomer(t.ctx))
    const id = await planId(plan.uuid)
    await makeResource(t.ctx, offering, project, { planId: id, state: 'OK' })
    await makeResource(t.ctx, offering, project, { planId: id, state: 'Terminated' })
    let r = (await owner.get(`${PLANS}${plan.uuid}/`)).body
    assert.deepEqual([r.resources_count, r.is_active], [1, true])
    await makeResource(t.ctx, offering, project, { planId: id, state: 'Erred' })
    r = (await owner.get(`${PLANS}${plan.uuid}/`)).body
    assert.deepEqual([r.resources_count, r.is_active], [2, false])
    const unlimited = (await owner.patch(`${PLANS}${plan.uuid}/`, { max_amount: null })).body
    assert.deepEqual([unlimited.max_amount, unlimited.is_active], [null, true])
    const zero = await owner.patch(`${PLANS}${plan.uuid}/`, { max_amount: 0 })
    assert.deepEqual(zero.body, { max_amount: ['Ensure this value is greater than or equal to 1.'] })
  })

  test('organization groups: set, shown as records, cleared', async () => {
    const p = providerGraph(t.ctx)
    const offering = await makeOffering(t.ctx, await p.customer())
    const owner = client(t.app, (await p.owner()).token)
    const staff = client(t.app, (await makeUser(t.ctx, { staff: true })).token)
    const group = (await staff.post('/api/organization-groups/', { name: 'Universities' })).body
    const plan = (await owner.post(PLANS, { offering: offering.url, name: 'G' })).body
    const set = await owner.post(`${PLANS}${plan.uuid}/update_organization_groups/`, {
      organization_groups: [group.url],
    })
    assert.equal(set.status, 200, set.text)
    const shown = (await owner.get(`${PLANS}${plan.uuid}/`)).body.organization_groups
    assert.deepEqual(shown, [
      {
        url: `${BASE}/api/organization-groups/${group.uuid}/`,
        uuid: group.uuid,
        name: 'Universities',
        parent: null,
        parent_uuid: null,
        parent_name: null,
        customers_count: 0,
        created: group.created,
      },
    ])
    const bad = await owner.post(`${PLANS}${plan.uuid}/update_organization_groups/`, {
      organization_groups: [`${BASE}/api/organization-groups/00000000-0000-4000-8000-000000000000/`],
    })
    assert.equal(bad.status, 400)
    assert.ok(bad.body.organization_groups)
    assert.equal((await owner.post(`${PLANS}${plan.uuid}/delete_organization_groups/`)).status, 200)
    assert.deepEqual((await owner.get(`${PLANS}${plan.uuid}/`)).body.organization_groups, [])
  })
})

describe('/api/marketplace-plan-components/', () => {
  test('lists the components of the plans the caller may see, filtered by offering and plan', async () => {
    const { p, offering, owner } = await pricedOffering()
    const a = (await owner.post(PLANS, { offering: offering.url, name: 'A', prices: { cpu: 1 } })).body
    const b = (await owner.post(PLANS, { offering: offering.url, name: 'B', prices: { cpu: 2 } })).body
    const r = await owner.get(`/api/marketplace-plan-components/?plan_uuid=${a.uuid}`)
    assert.equal(r.status, 200)
    assert.equal(r.headers['x-result-count'], '5')
    assert.deepEqual(r.body[0], {
      offering_uuid: offering.uuid,
      offering_name: offering.name,
      plan_uuid: a.uuid,
      plan_name: 'A',
      plan_unit: 'month',
      component_name: 'CPU hours',
      measured_unit: 'units',
      billing_type: 'usage',
      amount: 0,
      price: '1.0000000000',
      future_price: null,
    })
    const both = await owner.get(
      `/api/marketplace-plan-components/?offering_uuid=${offering.uuid}&page_size=50`,
    )
    assert.equal(both.body.length, 10)
    assert.deepEqual(
      both.body
        .filter((c: { component_name: string }) => c.component_name === 'CPU hours')
        .map((c: { plan_uuid: string; price: string }) => [c.plan_uuid, c.price]),
      [
        [a.uuid, '1.0000000000'],
        [b.uuid, '2.0000000000'],
      ],
    )
    // A Draft offering's plans are the provider's alone.
    const draft = await makeOffering(t.ctx, await p.customer(), { state: 'Draft' })
    await makeComponent(t.ctx, draft)
    const hidden = (await owner.post(PLANS, { offering: draft.url, name: 'Hidden' })).body
    const outsider = client(t.app, (await makeUser(t.ctx)).token)
    assert.deepEqual(
      (await outsider.get(`/api/marketplace-plan-components/?plan_uuid=${hidden.uuid}`)).body,
      [],
    )
    assert.equal(
      (await owner.get(`/api/marketplace-plan-components/?plan_uuid=${hidden.uuid}`)).body.length,
      1,
    )
    assert.equal((await outsider.get('/api/marketplace-plan-components/?plan_uuid=bad')).status, 400)
  })
})
