// What placing and approving an order costs in statements sent to the database: the write paths'
// round trips on PostgreSQL are what bound their rate (docs/performance.md), so their count is
// pinned here and a change that adds one fails. The caller's token and roles are kept in-process
// and the first request of each kind warms them, as in a running server.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { buildTestApp, type TestApp } from '../support/app.js'
import { call } from '../support/client.js'
import { grant, makeUser, type Ref, type UserRef } from '../support/fixtures.js'
import { orderingWorld, type OfferingRef } from '../support/catalog-fixtures.js'
import { counted } from '../support/statements.js'

let t: TestApp
let project: Ref
let offering: OfferingRef
let plan: Ref
let staff: UserRef
let member: UserRef

/** Statements each request sends: PostgreSQL (round trips, `begin` and `commit` included), SQLite. */
const EXPECTED = {
  // One read: the project, the offering and the plan the links name, with the project's
  // organization, the offering's groups and its cost policy. Then on PostgreSQL one statement
  // writes the resource with its slug, the order and its event, and renders the order's record
  // (nothing else to write: no transaction); on SQLite the resource's slug, the resource, the
  // order and the event in one transaction (its `begin` and `commit` are not statements sent
  // anywhere), and the record read after.
  // The offering keeps no accounts: the one read with the order tells, so no statement asks.
  create: { postgres: 2, sqlite: 6 },
  // PostgreSQL: one statement reads the order, decides the approval (permission, organization
  // and project, target state) and writes it with its event, outside a transaction since nothing
  // else is written. SQLite: the order with what the transition checks, then the update and the
  // event in one transaction.
  approve: { postgres: 1, sqlite: 3 },
}

before(async () => {
  t = await buildTestApp({ tokenCacheSeconds: 60 })
  ;({ project, offering, plan, staff } = await orderingWorld(t.ctx, 'Counted'))
  member = await makeUser(t.ctx)
  await grant(t.ctx, member, 'PROJECT.MEMBER', { type: 'project', id: project.id })
})
after(() => t.close())

const place = (token: string, n: number) =>
  call(t.app, 'POST', '/api/marketplace-orders/', {
    token,
    body: {
      project: project.url,
      offering: offering.url,
      plan: plan.url,
      attributes: { name: `counted-${n}` },
    },
  })

test('placing an order costs the statements pinned for its database, and answers the new order', async () => {
  // Warm: the caller's token and roles, the compiled and prepared statements.
  assert.equal((await place(staff.token, 0)).status, 201)
  for (let n = 1; n <= 3; n++) {
    const { statements, answer } = await counted(t.database, () => place(staff.token, n))
    assert.equal(answer.status, 201, answer.text)
    assert.equal(answer.body.attributes.name, `counted-${n}`)
    assert.equal(answer.body.project_uuid, project.uuid)
    // The record answered (rendered with the insert on PostgreSQL) is the one read back.
    const read = await call(t.app, 'GET', `/api/marketplace-orders/${answer.body.uuid}/`, {
      token: staff.token,
    })
    assert.deepEqual(answer.body, read.body)
    assert.equal(statements, EXPECTED.create[t.dialect], `statements of a create on ${t.dialect}`)
  }
})

test('approving an order as its consumer costs the statements pinned for its database', async () => {
  // A project member's orders wait for the consumer's review.
  const pending: string[] = []
  for (let n = 10; n < 14; n++) {
    const r = await place(member.token, n)
    assert.equal(r.status, 201, r.text)
    assert.equal(r.body.state, 'pending-consumer')
    pending.push(r.body.uuid)
  }
  const approve = (uuid: string) =>
    call(t.app, 'POST', `/api/marketplace-orders/${uuid}/approve_by_consumer/`, { token: staff.token })
  assert.equal((await approve(pending[0]!)).status, 200)
  for (const uuid of pending.slice(1)) {
    const { statements, answer } = await counted(t.database, () => approve(uuid))
    assert.equal(answer.status, 200, answer.text)
    assert.deepEqual(answer.body, { detail: 'Order has been approved.' })
    assert.equal(statements, EXPECTED.approve[t.dialect], `statements of an approval on ${t.dialect}`)
  }
  // The approval went through: a second one is refused as the state says.
  const again = await approve(pending[1]!)
  assert.equal(again.status, 409)
})

test('approvals of one order at once: one moves it and tells it, the others are refused and tell nothing', async () => {
  const approve = (uuid: string) =>
    call(t.app, 'POST', `/api/marketplace-orders/${uuid}/approve_by_consumer/`, { token: staff.token })
  for (let n = 20; n < 25; n++) {
    const placed = await place(member.token, n)
    assert.equal(placed.status, 201, placed.text)
    const uuid = placed.body.uuid
    // Both may read the order before either writes: the write moving it from the state read decides.
    const answers = await Promise.all([approve(uuid), approve(uuid), approve(uuid)])
    assert.deepEqual(
      answers.map((a) => a.status).sort(),
      [200, 409, 409],
      answers.map((a) => a.text).join('\n'),
    )
    const told = await t.ctx.db
      .selectFrom('outbox_events')
      .select('envelope')
      .where('object_uuid', '=', uuid)
      .where('type', '=', 'marketplace.order.state_changed')
      .execute()
    assert.equal(told.length, 1, 'one event: the approval that moved the order')
    const read = await call(t.app, 'GET', `/api/marketplace-orders/${uuid}/`, { token: staff.token })
    assert.equal(read.body.state, 'pending-provider')
  }
})

test("an approval by the organization's owner or manager costs the statements pinned; a member is refused; the offering's manager approves as provider", async () => {
  const { customer_id } = await t.ctx.db
    .selectFrom('projects')
    .select('customer_id')
    .where('id', '=', project.id)
    .executeTakeFirstOrThrow()
  const owner = await makeUser(t.ctx)
  await grant(t.ctx, owner, 'CUSTOMER.OWNER', { type: 'customer', id: customer_id })
  const manager = await makeUser(t.ctx)
  await grant(t.ctx, manager, 'CUSTOMER.MANAGER', { type: 'customer', id: customer_id })
  const offeringManager = await makeUser(t.ctx)
  await grant(t.ctx, offeringManager, 'OFFERING.MANAGER', { type: 'offering', id: offering.id })
  const approve = (token: string, uuid: string) =>
    call(t.app, 'POST', `/api/marketplace-orders/${uuid}/approve_by_consumer/`, { token })
  for (const [n, approver] of [owner, manager, owner, manager].entries()) {
    const placed = await place(member.token, 30 + n)
    assert.equal(placed.status, 201, placed.text)
    const uuid = placed.body.uuid
    const refused = await approve(member.token, uuid)
    assert.equal(refused.status, 403, refused.text)
    // The first approval of each warms the caller's token and roles.
    const { statements, answer } = await counted(t.database, () => approve(approver.token, uuid))
    assert.equal(answer.status, 200, answer.text)
    if (n >= 2)
      assert.equal(statements, EXPECTED.approve[t.dialect], `statements of an approval on ${t.dialect}`)
    const read = await call(t.app, 'GET', `/api/marketplace-orders/${uuid}/`, { token: staff.token })
    assert.equal(read.body.state, 'pending-provider')
    assert.equal(read.body.consumer_reviewed_by, approver.username)
    // The provider's review: this offering's orders are then processed by the server (a job to
    // queue with the move, so not one statement), and a member may not review them.
    const provider = (token: string) =>
      call(t.app, 'POST', `/api/marketplace-orders/${uuid}/approve_by_provider/`, { token })
    assert.equal((await provider(member.token)).status, 403)
    assert.equal((await provider(offeringManager.token)).status, 200)
    const after = await call(t.app, 'GET', `/api/marketplace-orders/${uuid}/`, { token: staff.token })
    assert.equal(after.body.state, 'executing')
    assert.equal(after.body.provider_reviewed_by, offeringManager.username)
  }
})

test('an approval tells the same event on both databases: the order, its scopes and the move', async () => {
  const placed = await place(member.token, 40)
  assert.equal(placed.status, 201, placed.text)
  const o = placed.body
  const approved = await call(t.app, 'POST', `/api/marketplace-orders/${o.uuid}/approve_by_consumer/`, {
    token: staff.token,
  })
  assert.equal(approved.status, 200, approved.text)
  const [told, ...more] = await t.ctx.db
    .selectFrom('outbox_events')
    .selectAll()
    .where('object_uuid', '=', o.uuid)
    .where('type', '=', 'marketplace.order.state_changed')
    .execute()
  assert.equal(more.length, 0)
  assert.deepEqual(
    [told!.object_type, told!.offering_uuid, told!.project_uuid, told!.customer_uuid],
    ['order', offering.uuid, project.uuid, o.customer_uuid],
  )
  const envelope = typeof told!.envelope === 'string' ? JSON.parse(told!.envelope) : told!.envelope
  const url = `${t.ctx.config.publicUrl ?? ''}/api/marketplace-orders/${o.uuid}/`
  assert.deepEqual(envelope, {
    specversion: '1.0',
    id: told!.uuid,
    source: `${t.ctx.config.publicUrl ?? ''}/api/`,
    type: 'marketplace.order.state_changed',
    subject: url,
    time: envelope.time,
    datacontenttype: 'application/json',
    data: {
      uuid: o.uuid,
      url,
      object_type: 'order',
      offering_uuid: offering.uuid,
      project_uuid: project.uuid,
      customer_uuid: o.customer_uuid,
      order_type: 'Create',
      state: 'pending-provider',
      resource_uuid: o.marketplace_resource_uuid,
      state_before: 'pending-consumer',
      state_after: 'pending-provider',
      action: 'approve_by_consumer',
    },
  })
  assert.ok(!Number.isNaN(Date.parse(envelope.time)))
})

test('a new resource skips the slug a staff member gave another: the next number is taken', async () => {
  const first = await place(staff.token, 50)
  assert.equal(first.status, 201, first.text)
  const resource = (uuid: string) =>
    call(t.app, 'GET', `/api/marketplace-resources/${uuid}/`, { token: staff.token })
  assert.equal((await resource(first.body.marketplace_resource_uuid)).body.slug, 'counted-50-1')
  // The number the next resource named so would get is taken.
  const set = await call(
    t.app,
    'POST',
    `/api/marketplace-provider-resources/${first.body.marketplace_resource_uuid}/set_slug/`,
    { token: staff.token, body: { slug: 'counted-50-2' } },
  )
  assert.equal(set.status, 200, set.text)
  const second = await place(staff.token, 50)
  assert.equal(second.status, 201, second.text)
  assert.equal((await resource(second.body.marketplace_resource_uuid)).body.slug, 'counted-50-3')
  // The order's record names the resource it was placed with.
  const read = await call(t.app, 'GET', `/api/marketplace-orders/${second.body.uuid}/`, {
    token: staff.token,
  })
  assert.deepEqual(second.body, read.body)
  assert.equal(second.body.resource_name, 'counted-50')
})
