// Cost from usage: an offering's estimated cost (what its cost policies compare with their limit)
// counts usage-billed components from the reported usage × the plan's price, limit-billed ones from
// the resource's limits × price, fixed ones from the plan. The numbers are docs/cost-policies.md's
// worked example.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { sharedTestApp } from '../support/app.js'
import { client } from '../support/client.js'
import { makeCustomer, makeProject, makeUser, type Ref, type UserRef } from '../support/fixtures.js'
import {
  makeComponent,
  makeOffering,
  makePlan,
  makeResource,
  providerGraph,
} from '../support/catalog-fixtures.js'

const POLICIES = '/api/marketplace-offering-estimated-cost-policies/'
const SET = '/api/marketplace-component-usages/set_usage/'

const t = sharedTestApp(async (t) => {
  t.clock.set('2026-11-20T12:00:00.000Z')
  const staff = await makeUser(t.ctx, { staff: true })
  const consumer = await makeCustomer(t.ctx, 'Lab')
  const project = await makeProject(t.ctx, consumer)
  return { staff, consumer, project }
})

/**
 * The worked example's offering: plan "Compute" at 5 a month with cpu (usage) at 0.05 a
 * core-hour, storage (limit) at 0.02 a GB and support (fixed) at 10, one a month; and a resource
 * with 500 GB of storage, created in October.
 */
async function example(): Promise<{ owner: UserRef; offering: Ref; resource: Ref }> {
  const g = providerGraph(t.ctx)
  const org = await g.customer()
  const owner = await g.owner()
  const offering = await makeOffering(t.ctx, org, { name: 'Cluster', type: 'Marketplace.Slurm' })
  await makeComponent(t.ctx, offering, { type: 'cpu', billingType: 'usage', measuredUnit: 'core-hours' })
  await makeComponent(t.ctx, offering, { type: 'storage', billingType: 'limit', measuredUnit: 'GB' })
  await makeComponent(t.ctx, offering, { type: 'support', billingType: 'fixed' })
  const plan = await makePlan(t.ctx, offering, { name: 'Compute', unit: 'month', unitPrice: '5' })
  const as = client(t.app, owner.token)
  const prices = await as.post(`/api/marketplace-plans/${plan.uuid}/update_prices/`, {
    prices: { cpu: '0.05', storage: '0.02', support: '10' },
  })
  assert.equal(prices.status, 200, prices.text)
  const quotas = await as.post(`/api/marketplace-plans/${plan.uuid}/update_quotas/`, {
    quotas: { support: 1 },
  })
  assert.equal(quotas.status, 200, quotas.text)
  const resource = await makeResource(t.ctx, offering, t.project, {
    planId: plan.id,
    limits: { storage: 500 },
    created: '2026-10-10T09:00:00.000Z',
  })
  return { owner, offering, resource }
}

async function policy(owner: UserRef, offering: Ref, limit: number, period = 2) {
  const r = await client(t.app, owner.token).post(POLICIES, {
    scope: offering.url,
    actions: 'notify_organization_owners',
    limit_cost: limit,
    period,
  })
  assert.equal(r.status, 201, r.text)
  return r.body.uuid as string
}

const read = async (owner: UserRef, uuid: string) =>
  (await client(t.app, owner.token).get(`${POLICIES}${uuid}/`)).body as {
    current_cost: number
    has_fired: boolean
  }

async function reportCpu(owner: UserRef, resource: Ref, amount: string, date = '2026-11-01T00:00:00+00:00') {
  const r = await client(t.app, owner.token).post(SET, {
    usages: [{ type: 'cpu', amount, recurring: false }],
    resource: resource.uuid.replace(/-/g, ''),
    date,
  })
  assert.equal(r.status, 201, r.text)
}

describe('the estimate from usage, limits and fixed components', () => {
  test('the worked example: 5 + 10 + 500 × 0.02 + 1234.5 × 0.05 = 86.73 this month', async () => {
    const { owner, offering, resource } = await example()
    const month = await policy(owner, offering, 1000)
    const quarter = await policy(owner, offering, 1000, 3)
    // Before any report: the plan, the fixed component and the limit.
    assert.equal((await read(owner, month)).current_cost, 25)
    await reportCpu(owner, resource, '1234.50')
    assert.equal((await read(owner, month)).current_cost, 86.73)
    // Three months: October and November at 25 each, and November's usage.
    assert.equal((await read(owner, quarter)).current_cost, 111.73)
    // October's usage counts in the quarter, not in the month.
    await reportCpu(owner, resource, '100', '2026-10-01T00:00:00+00:00')
    assert.equal((await read(owner, month)).current_cost, 86.73)
    assert.equal((await read(owner, quarter)).current_cost, 116.73)
    // A report replacing November's changes the estimate.
    await reportCpu(owner, resource, '20')
    assert.equal((await read(owner, month)).current_cost, 26)
  })

  test('a terminated resource costs nothing, its usage included', async () => {
    const { owner, offering, resource } = await example()
    const p = await policy(owner, offering, 1000)
    await reportCpu(owner, resource, '10')
    await t.ctx.db
      .updateTable('resources')
      .set({ state: 'Terminated' })
      .where('id', '=', resource.id)
      .execute()
    assert.equal((await read(owner, p)).current_cost, 0)
  })
})

describe('a cost policy fires on reported usage', () => {
  test('a limit below the cost of the reported usage fires; one above does not', async () => {
    const { owner, offering, resource } = await example()
    const below = await policy(owner, offering, 86)
    const above = await policy(owner, offering, 87)
    await t.ctx.jobs.drain()
    assert.equal((await read(owner, below)).has_fired, false, 'not before the report: 25')
    await reportCpu(owner, resource, '1234.50')
    await t.ctx.jobs.drain()
    assert.equal((await read(owner, below)).has_fired, true)
    assert.equal((await read(owner, above)).has_fired, false)
    const events = await t.ctx.db
      .selectFrom('events')
      .select('message')
      .where('event_type', '=', 'policy_notification')
      .where('message', 'like', `%${below}%`)
      .execute()
    assert.equal(events.length, 1)
    assert.match(events[0]!.message, /estimated cost 86\.73 exceeds the limit 86/)
    // A smaller report in the period brings the cost under the limit: the policy resets.
    await reportCpu(owner, resource, '1')
    await t.ctx.jobs.drain()
    assert.equal((await read(owner, below)).has_fired, false)
  })

  test("the provider's set_limits re-evaluates: limits are priced", async () => {
    const { owner, offering, resource } = await example()
    const p = await policy(owner, offering, 100)
    await t.ctx.jobs.drain()
    assert.equal((await read(owner, p)).has_fired, false)
    const r = await client(t.app, owner.token).post(
      `/api/marketplace-provider-resources/${resource.uuid}/set_limits/`,
      {
        limits: { storage: 5000 },
      },
    )
    assert.equal(r.status, 200, r.text)
    await t.ctx.jobs.drain()
    // 5 + 10 + 5000 × 0.02 = 115
    assert.deepEqual(await read(owner, p), { ...(await read(owner, p)), current_cost: 115, has_fired: true })
  })
})
