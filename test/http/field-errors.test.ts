// One 400 names every bad field of a write, as DRF does: the body's schema errors and the
// business rules' errors (hyperlinks, ranges, callback URLs, plan units) together; a rule that
// needs a field's value does not run when the schema already refused that field.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { sharedTestApp } from '../support/app.js'
import { client } from '../support/client.js'
import { makeCustomer, makeProject, withStaff } from '../support/fixtures.js'
import { makeComponent, makeOffering, makePlan, providerGraph } from '../support/catalog-fixtures.js'

const ORDERS = '/api/marketplace-orders/'
const PLANS = '/api/marketplace-plans/'
const BAD_OFFERING = 'http://localhost/api/marketplace-provider-offerings/00000000000000000000000000000000/'

const t = sharedTestApp(async (t) => {
  const c = await makeCustomer(t.ctx)
  const project = await makeProject(t.ctx, c)
  const { staff } = await withStaff(t)
  const offering = await makeOffering(t.ctx, c, { type: 'Marketplace.Basic' })
  await makeComponent(t.ctx, offering, { type: 'cpu' })
  return { staff, project, offering }
})

/** Staff posts an order for the file's offering and project, with `fields` over them. */
const postOrder = (fields: Record<string, unknown>) =>
  client(t.app, t.staff.token).post(ORDERS, { offering: t.offering.url, project: t.project.url, ...fields })

const orderCount = async () =>
  Number(
    (
      await t.ctx.db
        .selectFrom('orders')
        .select((e) => e.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  )

/** The response is a 400 whose body is exactly `errors`. */
function refusedWith(r: { status: number; body: unknown }, errors: Record<string, unknown>) {
  assert.equal(r.status, 400)
  assert.deepEqual(r.body, errors)
}

describe('order create: one 400 for every bad field', () => {
  test('a bad offering link, a negative limit and an ftp callback are named together', async () => {
    const before = await orderCount()
    const r = await postOrder({
      offering: BAD_OFFERING,
      limits: { cpu: -1 },
      callback_url: 'ftp://example.com/hook',
    })
    refusedWith(r, {
      limits: { cpu: ['Ensure this value is greater than or equal to 0.'] },
      offering: ['Invalid hyperlink - Object does not exist.'],
      callback_url: ['Only http and https callback URLs are allowed.'],
    })
    assert.equal(await orderCount(), before, 'nothing is written')
  })

  test('a field the schema refused is not checked again by its rule', async () => {
    const r = await postOrder({
      offering: 5,
      project: 'http://localhost/api/projects/nope/',
      callback_url: 7,
    })
    refusedWith(r, {
      offering: ['Not a valid string.'],
      callback_url: ['Not a valid string.'],
      project: ['Invalid hyperlink - Incorrect URL match.'],
    })
  })

  test('the rules alone, without schema errors, are named together too', async () => {
    const r = await postOrder({
      offering: BAD_OFFERING,
      type: 'Update',
      callback_url: 'http://user:secret@example.com/',
    })
    refusedWith(r, {
      type: ['Update and Terminate orders are created through the resource actions.'],
      offering: ['Invalid hyperlink - Object does not exist.'],
      callback_url: ['Callback URLs may not carry credentials.'],
    })
  })

  test('a body with thousands of bad entries answers the first 100 of them', async () => {
    const limits = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, -1]))
    const r = await postOrder({ limits })
    assert.equal(r.status, 400)
    assert.deepEqual(Object.keys(r.body), ['limits'])
    assert.equal(Object.keys(r.body.limits).length, 100)
    assert.deepEqual(r.body.limits.k0, ['Ensure this value is greater than or equal to 0.'])
  })

  test('a valid order is still created', async () => {
    const r = await postOrder({
      limits: { cpu: 2 },
      callback_url: 'https://hooks.example.com/order',
    })
    assert.equal(r.status, 201, JSON.stringify(r.body))
  })
})

describe('plan create and update: one 400 for every bad field', () => {
  test('a negative unit_price and an unknown unit are named together', async () => {
    const p = providerGraph(t.ctx)
    const o = await makeOffering(t.ctx, await p.customer())
    const r = await client(t.app, (await p.owner()).token).post(PLANS, {
      offering: o.url,
      name: 'Gold',
      unit_price: -1,
      unit: 'year',
    })
    refusedWith(r, {
      unit: ['"year" is not a valid choice.'],
      unit_price: ['Ensure this value is greater than or equal to 0.'],
    })
  })

  test('schema errors (a missing name) and rule errors (a bad offering link, a bad price) together', async () => {
    const p = providerGraph(t.ctx)
    const r = await client(t.app, (await p.owner()).token).post(PLANS, {
      offering: BAD_OFFERING,
      fixed_price: 'cheap',
    })
    refusedWith(r, {
      name: ['This field is required.'],
      offering: ['Invalid hyperlink - Object does not exist.'],
      fixed_price: ['A valid number is required.'],
    })
  })

  test('PATCH and PUT name every bad field; a refused body is still 400 before the plan is looked up', async () => {
    const p = providerGraph(t.ctx)
    const o = await makeOffering(t.ctx, await p.customer())
    const plan = await makePlan(t.ctx, o)
    const as = client(t.app, (await p.owner()).token)
    const patch = await as.patch(`${PLANS}${plan.uuid}/`, { unit_price: -1, unit: 'year', name: '' })
    refusedWith(patch, {
      name: ['This field may not be blank.'],
      unit: ['"year" is not a valid choice.'],
      unit_price: ['Ensure this value is greater than or equal to 0.'],
    })
    const put = await as.put(`${PLANS}${plan.uuid}/`, { name: 'Gold', unit: 'year', activation_price: '-2' })
    refusedWith(put, {
      unit: ['"year" is not a valid choice.'],
      activation_price: ['Ensure this value is greater than or equal to 0.'],
    })
    const missing = await as.patch(`${PLANS}00000000000000000000000000000000/`, { name: '' })
    refusedWith(missing, { name: ['This field may not be blank.'] })
    const missingValid = await as.patch(`${PLANS}00000000000000000000000000000000/`, { unit: 'year' })
    assert.equal(missingValid.status, 404)
  })
})
