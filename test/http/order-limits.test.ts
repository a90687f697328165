// Limits are checked against the offering's components wherever a resource's limits are set: a
// Create order and an update_limits order (catalog's checkLimits). Also a plan's maximum of
// resources at order creation.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { sharedTestApp } from '../support/app.js'
import { client } from '../support/client.js'
import { grant, makeCustomer, makeProject, makeUser } from '../support/fixtures.js'
import { makeComponent, makeOffering, makePlan, makeResource } from '../support/catalog-fixtures.js'

const ORDERS = '/api/marketplace-orders/'

const t = sharedTestApp(async (t) => {
  const consumer = await makeCustomer(t.ctx)
  const project = await makeProject(t.ctx, consumer)
  const owner = await makeUser(t.ctx)
  await grant(t.ctx, owner, 'CUSTOMER.OWNER', { type: 'customer', id: consumer.id })
  return { project, owner }
})

/** An Active offering billing cpu by limit (1..16, 40 in all), ram by limit, hours by usage. */
async function hpc() {
  const offering = await makeOffering(t.ctx, await makeCustomer(t.ctx), { type: 'Marketplace.Slurm' })
  await makeComponent(t.ctx, offering, { type: 'cpu', minValue: 1, maxValue: 16, maxAvailableLimit: 40 })
  await makeComponent(t.ctx, offering, { type: 'ram' })
  await makeComponent(t.ctx, offering, { type: 'hours', billingType: 'usage' })
  await makeComponent(t.ctx, offering, { type: 'licence', billingType: 'one', isPrepaid: true })
  await makeComponent(t.ctx, offering, { type: 'setup', billingType: 'one' })
  const plan = await makePlan(t.ctx, offering)
  return { offering, plan }
}

const place = (o: { offering: { url: string }; plan: { url: string } }, limits: unknown) =>
  client(t.app, t.owner.token).post(ORDERS, {
    offering: o.offering.url,
    plan: o.plan.url,
    project: t.project.url,
    limits,
  })

describe('limits of a Create order', () => {
  test('limit-based and prepaid one-time components take limits within their bounds', async () => {
    const o = await hpc()
    const r = await place(o, { cpu: 16, ram: 1000, licence: 2 })
    assert.equal(r.status, 201, r.text)
    assert.deepEqual(r.body.limits, { cpu: 16, ram: 1000, licence: 2 })
    assert.equal((await place(o, {})).status, 201, 'no limits at all is fine')
  })

  test('types that are not limit components are 400, all named', async () => {
    const o = await hpc()
    const r = await place(o, { cpu: 2, gpu: 1, hours: 10, setup: 1 })
    assert.equal(r.status, 400)
    assert.deepEqual(r.body, { limits: ['Invalid types: gpu, hours, setup'] })
  })

  test('below the minimum or above the maximum is 400 under the component', async () => {
    const o = await hpc()
    const over = await place(o, { cpu: 17, ram: 1 })
    assert.equal(over.status, 400)
    assert.deepEqual(over.body, { limits: { cpu: ['The limit 17 value cannot be more than 16.'] } })
    const under = await place(o, { cpu: 0 })
    assert.deepEqual(under.body, { limits: { cpu: ['The limit 0 value cannot be less than 1.'] } })
    const negative = await place(o, { cpu: -1 })
    assert.deepEqual(negative.body, { limits: { cpu: ['Ensure this value is greater than or equal to 0.'] } })
  })

  test('an offering without components takes no limits', async () => {
    const offering = await makeOffering(t.ctx, await makeCustomer(t.ctx))
    const plan = await makePlan(t.ctx, offering)
    const r = await place({ offering, plan }, { cpu: 1 })
    assert.deepEqual([r.status, r.body], [400, { limits: ['Invalid types: cpu'] }])
  })

  test("max_available_limit is shared by the offering's live resources", async () => {
    const o = await hpc()
    const other = await makeProject(t.ctx, await makeCustomer(t.ctx))
    await makeResource(t.ctx, o.offering, other, { limits: { cpu: 16 } })
    await makeResource(t.ctx, o.offering, other, { limits: { cpu: 16 }, state: 'Terminated' })
    await makeResource(t.ctx, o.offering, other, { limits: { cpu: 10 }, state: 'Erred' })
    // 26 held: 14 left.
    const over = await place(o, { cpu: 15 })
    assert.equal(over.status, 400)
    assert.deepEqual(over.body, {
      limits: {
        cpu: [
          'Requested cpu cannot be provisioned due to offering safety limit. You can allocate up to 14 of cpu.',
        ],
      },
    })
    assert.equal((await place(o, { cpu: 14 })).status, 201)
    // The order's new resource (Creating) holds its 14 now.
    assert.equal((await place(o, { cpu: 1 })).status, 400)
  })
})

describe('limits of an update_limits order', () => {
  test('checked as at creation; the resource itself does not count against the offering total', async () => {
    const o = await hpc()
    const resource = await makeResource(t.ctx, o.offering, t.project, {
      planId: o.plan.id,
      limits: { cpu: 16 },
    })
    const other = await makeProject(t.ctx, await makeCustomer(t.ctx))
    await makeResource(t.ctx, o.offering, other, { limits: { cpu: 24 } })
    const as = client(t.app, t.owner.token)
    const path = `/api/marketplace-resources/${resource.uuid}/update_limits/`
    const unknown = await as.post(path, { limits: { gpu: 1 } })
    assert.deepEqual([unknown.status, unknown.body], [400, { limits: ['Invalid types: gpu'] }])
    const over = await as.post(path, { limits: { cpu: 20 } })
    assert.deepEqual(over.body, { limits: { cpu: ['The limit 20 value cannot be more than 16.'] } })
    // 24 held by the other resource: this one may keep 16 (its own 16 is not counted twice).
    const same = await as.post(path, { limits: { cpu: 16, ram: 64 } })
    assert.equal(same.status, 200, same.text)
    const order = (await as.get(`${ORDERS}${same.body.order_uuid}/`)).body
    assert.deepEqual([order.type, order.limits], ['Update', { cpu: 16, ram: 64 }])
  })
})

describe("a plan's maximum of resources", () => {
  test('an order for a plan at its maximum is 400 on plan', async () => {
    const o = await hpc()
    await t.ctx.db.updateTable('plans').set({ max_amount: 1 }).where('id', '=', o.plan.id).execute()
    assert.equal((await place(o, { cpu: 1 })).status, 201)
    const full = await place(o, { cpu: 1 })
    assert.equal(full.status, 400)
    assert.deepEqual(full.body, { plan: ['Plan is not available because limit has been reached.'] })
  })
})
