import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, type IncomingMessage } from 'node:http'
import { buildTestApp, type TestApp } from '../support/app.js'
import { call, client } from '../support/client.js'
import {
  grant,
  makeCustomer,
  makeProject,
  makeUser,
  type Ref,
  type UserRef,
  uniqueName,
} from '../support/fixtures.js'
import {
  makeComponent,
  makeOffering,
  makePlan,
  makeResource,
  type OfferingRef,
} from '../support/catalog-fixtures.js'
import { makeOrganizationGroup } from '../support/cost-policies-fixtures.js'
import { ORDER_FIELDS } from '../../src/areas/orders/schema.js'
import { OFFERING_TYPE_RULES } from '../../src/areas/catalog/offering-types.js'
import * as orderSlugs from '../../src/db/migrations/2026-11-25T0900_order_slugs.js'

let t: TestApp
let consumer: Ref
let project: Ref
let provider: Ref
let users: Record<
  | 'staff'
  | 'owner'
  | 'manager'
  | 'admin'
  | 'member'
  | 'provider'
  | 'offeringManager'
  | 'outsider'
  | 'support',
  UserRef
>
const offerings: Record<string, { offering: OfferingRef; plan: Ref }> = {}

before(async () => {
  t = await buildTestApp()
  consumer = await makeCustomer(t.ctx, 'Consumer org')
  project = await makeProject(t.ctx, consumer, { name: 'Alpha project' })
  provider = await makeCustomer(t.ctx, 'Provider org')
  users = {
    staff: await makeUser(t.ctx, { staff: true, username: 'staff.user' }),
    owner: await makeUser(t.ctx, { username: 'owner.user' }),
    manager: await makeUser(t.ctx),
    admin: await makeUser(t.ctx),
    member: await makeUser(t.ctx),
    provider: await makeUser(t.ctx, { username: 'provider.owner' }),
    offeringManager: await makeUser(t.ctx),
    outsider: await makeUser(t.ctx),
    support: await makeUser(t.ctx, { support: true }),
  }
  await grant(t.ctx, users.owner, 'CUSTOMER.OWNER', { type: 'customer', id: consumer.id })
  await grant(t.ctx, users.manager, 'PROJECT.MANAGER', { type: 'project', id: project.id })
  await grant(t.ctx, users.admin, 'PROJECT.ADMIN', { type: 'project', id: project.id })
  await grant(t.ctx, users.member, 'PROJECT.MEMBER', { type: 'project', id: project.id })
  await grant(t.ctx, users.provider, 'CUSTOMER.OWNER', { type: 'customer', id: provider.id })
  for (const type of ['Marketplace.Basic', 'Marketplace.Slurm', 'Support.OfferingTemplate']) {
    const offering = await makeOffering(t.ctx, provider, { type, name: `${type} offering` })
    // The orders below ask for CPU limits: each offering bills CPU by limit.
    await makeComponent(t.ctx, offering, { type: 'cpu' })
    const plan = await makePlan(t.ctx, offering, { unitPrice: '12.5' })
    offerings[type] = { offering, plan }
  }
  await grant(t.ctx, users.offeringManager, 'OFFERING.MANAGER', {
    type: 'offering',
    id: offerings['Marketplace.Slurm']!.offering.id,
  })
})
after(async () => {
  await t.close()
})

const R = '/api/marketplace-orders'

async function order(
  who: UserRef,
  type = 'Marketplace.Slurm',
  extra: Record<string, unknown> = {},
): Promise<{ uuid: string; state: string; body: any }> {
  const { offering, plan } = offerings[type]!
  const r = await client(t.app, who.token).post(`${R}/`, {
    offering: offering.url,
    plan: plan.url,
    project: project.url,
    attributes: { name: uniqueName('res') },
    limits: { cpu: 2 },
    ...extra,
  })
  assert.equal(r.status, 201, JSON.stringify(r.body))
  return { uuid: r.body.uuid, state: r.body.state, body: r.body }
}

const as = (u: UserRef) => client(t.app, u.token)

describe('create', () => {
  test('a project manager creates an order that waits for consumer approval', async () => {
    const o = await order(users.manager)
    assert.equal(o.state, 'pending-consumer')
    assert.equal(o.body.type, 'Create')
    assert.equal(o.body.project_uuid, project.uuid)
    assert.equal(o.body.customer_uuid, consumer.uuid)
    assert.equal(o.body.provider_uuid, provider.uuid)
    assert.equal(o.body.offering_type, 'Marketplace.Slurm')
    assert.equal(o.body.plan_uuid, offerings['Marketplace.Slurm']!.plan.uuid)
    assert.equal(o.body.cost, '12.5000000000')
    assert.equal(o.body.consumer_reviewed_by, null)
    assert.equal(o.body.created_by_username, users.manager.username)
    assert.deepEqual(o.body.limits, { cpu: 2 })
    assert.ok(o.body.marketplace_resource_uuid)
    assert.equal(o.body.url, `http://localhost:80${R}/${o.uuid}/`)
    const resource = await as(users.manager).get(
      `/api/marketplace-resources/${o.body.marketplace_resource_uuid}/`,
    )
    assert.equal(resource.body.state, 'Creating')
  })

  test('only roles holding ORDER.CREATE on the project or its organization place orders', async () => {
    const customerManager = await makeUser(t.ctx)
    const customerSupport = await makeUser(t.ctx)
    await grant(t.ctx, customerManager, 'CUSTOMER.MANAGER', { type: 'customer', id: consumer.id })
    await grant(t.ctx, customerSupport, 'CUSTOMER.SUPPORT', { type: 'customer', id: consumer.id })
    const { offering, plan } = offerings['Marketplace.Slurm']!
    const body = { offering: offering.url, plan: plan.url, project: project.url, limits: { cpu: 1 } }
    for (const who of [customerManager, customerSupport, users.support]) {
      const r = await as(who).post(`${R}/`, { ...body, attributes: { name: uniqueName('res') } })
      assert.equal(r.status, 403, `${who.username}: ${JSON.stringify(r.body)}`)
      assert.ok(r.body.detail)
    }
    const count = await t.ctx.db
      .selectFrom('orders')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('created_by_id', 'in', [customerManager.id, customerSupport.id, users.support.id])
      .executeTakeFirstOrThrow()
    assert.equal(Number(count.n), 0)
    for (const who of [users.member, users.admin, users.owner, users.staff]) await order(who)
  })

  test('an order gets a slug from its resource name, else its offering name; staff may set one', async () => {
    // The reference's clients refuse an order whose slug does not match ^[-a-zA-Z0-9_]+$.
    const named = await order(users.manager, 'Marketplace.Slurm', { attributes: { name: 'My VM #1 (Déjà)' } })
    assert.equal(named.body.slug, 'my-vm-1-deja')
    const unnamed = await order(users.manager, 'Marketplace.Slurm', { attributes: {} })
    assert.equal(unnamed.body.slug, 'marketplaceslurm-offering')
    const symbols = await order(users.manager, 'Marketplace.Slurm', { attributes: { name: '日本 🙂' } })
    assert.equal(symbols.body.slug, 'marketplaceslurm-offering')
    const mine = await order(users.staff, 'Marketplace.Slurm', { slug: 'chosen_by-staff' })
    assert.equal(mine.body.slug, 'chosen_by-staff')
    const listed = await as(users.staff).get(`${R}/${mine.uuid}/`)
    assert.equal(listed.body.slug, 'chosen_by-staff')
    for (const bad of ['', 'with space', 'dot.ted']) {
      const { offering, plan } = offerings['Marketplace.Slurm']!
      const r = await as(users.staff).post(`${R}/`, {
        offering: offering.url,
        plan: plan.url,
        project: project.url,
        slug: bad,
      })
      assert.equal(r.status, 400, bad)
      assert.ok(r.body.slug, r.text)
    }
  })

  test('orders stored with an empty slug are given one by the migration', async () => {
    const a = await order(users.manager, 'Marketplace.Slurm', { attributes: { name: 'Old one' } })
    const b = await order(users.manager, 'Marketplace.Slurm', { attributes: {} })
    await t.ctx.db.updateTable('orders').set({ slug: '' }).where('uuid', 'in', [a.uuid, b.uuid]).execute()
    await orderSlugs.up(t.ctx.db)
    assert.equal((await as(users.manager).get(`${R}/${a.uuid}/`)).body.slug, 'old-one')
    assert.equal((await as(users.manager).get(`${R}/${b.uuid}/`)).body.slug, 'marketplaceslurm-offering')
  })

  test('the owner creates with consumer approval implied; Slurm still needs the provider', async () => {
    const o = await order(users.owner)
    assert.equal(o.state, 'pending-provider')
    assert.equal(o.body.consumer_reviewed_by, users.owner.username)
    assert.ok(o.body.consumer_reviewed_at)
  })

  test('a support offering skips the provider and executes when the consumer approves', async () => {
    const o = await order(users.owner, 'Support.OfferingTemplate')
    assert.equal(o.state, 'executing')
  })

  test('validation: offering not active, plan of another offering, invisible project, wrong kinds', async () => {
    const paused = await makeOffering(t.ctx, provider, { state: 'Paused' })
    const m = as(users.manager)
    const a = await m.post(`${R}/`, { offering: paused.url, project: project.url })
    assert.equal(a.status, 400)
    assert.deepEqual(a.body, { offering: ['Offering is not available.'] })
    const b = await m.post(`${R}/`, {
      offering: offerings['Marketplace.Slurm']!.offering.url,
      plan: offerings['Marketplace.Basic']!.plan.url,
      project: project.url,
    })
    assert.deepEqual(b.body, { plan: ['This plan is not available for selected offering.'] })
    const other = await makeProject(t.ctx, await makeCustomer(t.ctx))
    const c = await m.post(`${R}/`, {
      offering: offerings['Marketplace.Slurm']!.offering.url,
      project: other.url,
    })
    assert.deepEqual(c.body, { project: ['Invalid hyperlink - Object does not exist.'] })
    const d = await m.post(`${R}/`, { offering: project.url, project: project.url })
    assert.deepEqual(d.body, { offering: ['Invalid hyperlink - Incorrect URL match.'] })
    const f = await m.post(`${R}/`, { project: project.url })
    assert.deepEqual(f.body, { offering: ['This field is required.'] })
    const g = await m.post(`${R}/`, {
      ...{
        offering: offerings['Marketplace.Slurm']!.offering.url,
        project: project.url,
        plan: offerings['Marketplace.Slurm']!.plan.url,
      },
      limits: { cpu: -1 },
    })
    assert.equal(g.status, 400)
    assert.ok(g.body.limits)
    const h = await m.post(`${R}/`, {
      offering: offerings['Marketplace.Slurm']!.offering.url,
      project: project.url,
      plan: offerings['Marketplace.Slurm']!.plan.url,
      slug: 'mine',
    })
    assert.deepEqual(h.body, { slug: ['Only staff can set the slug.'] })
    for (const attributes of ['x', '{"name": "a"}', 3, [{ name: 'a' }], true, null]) {
      const r = await m.post(`${R}/`, {
        offering: offerings['Marketplace.Slurm']!.offering.url,
        project: project.url,
        plan: offerings['Marketplace.Slurm']!.plan.url,
        attributes,
      })
      assert.equal(r.status, 400, JSON.stringify(attributes))
      assert.deepEqual(r.body, { attributes: ['Expected a dictionary of items.'] })
    }
  })

  test('offering and project are enough: the only plan is used; with several, none and no cost', async () => {
    const m = as(users.manager)
    const single = offerings['Marketplace.Slurm']!
    const one = await m.post(`${R}/`, { offering: single.offering.url, project: project.url })
    assert.equal(one.status, 201, JSON.stringify(one.body))
    assert.equal(one.body.plan_uuid, single.plan.uuid)
    assert.equal(one.body.cost, '12.5000000000')
    const resource = await as(users.manager).get(
      `/api/marketplace-resources/${one.body.marketplace_resource_uuid}/`,
    )
    assert.equal(resource.body.plan_uuid, single.plan.uuid)
    // An archived plan is not available, so one available plan remains.
    const withArchived = await makeOffering(t.ctx, provider, { type: 'Marketplace.Slurm' })
    const kept = await makePlan(t.ctx, withArchived, { unitPrice: '3' })
    const gone = await makePlan(t.ctx, withArchived, { unitPrice: '4' })
    await t.ctx.db.updateTable('plans').set({ archived: 1 }).where('id', '=', gone.id).execute()
    const a = await m.post(`${R}/`, { offering: withArchived.url, project: project.url })
    assert.equal(a.status, 201, JSON.stringify(a.body))
    assert.equal(a.body.plan_uuid, kept.uuid)
    const several = await makeOffering(t.ctx, provider, { type: 'Marketplace.Slurm' })
    await makePlan(t.ctx, several, { unitPrice: '1' })
    await makePlan(t.ctx, several, { unitPrice: '2' })
    const b = await m.post(`${R}/`, { offering: several.url, project: project.url })
    assert.equal(b.status, 201, JSON.stringify(b.body))
    assert.equal(b.body.plan, null)
    assert.equal(b.body.plan_uuid, null)
    assert.equal(b.body.cost, null)
    const read = await m.get(`${R}/${b.body.uuid}/`)
    assert.equal(read.body.plan, null)
    assert.equal(read.body.cost, null)
  })

  test('a shared offering restricted to organization groups is refused to customers outside them', async () => {
    const restricted = await makeOffering(t.ctx, provider, { type: 'Marketplace.Slurm', name: 'Grouped' })
    const outsideGroup = await makeOrganizationGroup(t.ctx, [provider])
    await t.ctx.db
      .insertInto('offering_organization_groups')
      .values({ offering_id: restricted.id, organization_group_id: outsideGroup.id })
      .execute()
    const body = { offering: restricted.url, project: project.url }
    const r = await as(users.staff).post(`${R}/`, body)
    assert.equal(r.status, 400)
    assert.deepEqual(r.body, { non_field_errors: ['This offering is not available for ordering.'] })
    // Once the project's organization is in one of the offering's groups, it may order.
    const insideGroup = await makeOrganizationGroup(t.ctx, [consumer])
    await t.ctx.db
      .insertInto('offering_organization_groups')
      .values({ offering_id: restricted.id, organization_group_id: insideGroup.id })
      .execute()
    const ok = await as(users.staff).post(`${R}/`, body)
    assert.equal(ok.status, 201, JSON.stringify(ok.body))
  })

  test("the provider's own projects skip consumer review when the offering says so", async () => {
    const own = await makeProject(t.ctx, provider, { name: 'Provider project' })
    const manager = await makeUser(t.ctx)
    await grant(t.ctx, manager, 'PROJECT.MANAGER', { type: 'project', id: own.id })
    const auto = await makeOffering(t.ctx, provider, {
      type: 'Marketplace.Slurm',
      pluginOptions: { auto_approve_in_service_provider_projects: true },
    })
    const plain = await makeOffering(t.ctx, provider, { type: 'Marketplace.Slurm' })
    const r = await as(manager).post(`${R}/`, { offering: auto.url, project: own.url })
    assert.equal(r.status, 201, JSON.stringify(r.body))
    assert.equal(r.body.state, 'pending-provider')
    assert.equal(r.body.consumer_reviewed_by, manager.username)
    const p = await as(manager).post(`${R}/`, { offering: plain.url, project: own.url })
    assert.equal(p.body.state, 'pending-consumer')
    // Another organization's project still waits for its consumer review.
    const other = await as(users.manager).post(`${R}/`, { offering: auto.url, project: project.url })
    assert.equal(other.body.state, 'pending-consumer')
    // A private offering is not covered by the option.
    const priv = await makeOffering(t.ctx, provider, {
      type: 'Marketplace.Slurm',
      shared: false,
      projectId: own.id,
      pluginOptions: { auto_approve_in_service_provider_projects: true },
    })
    const q = await as(manager).post(`${R}/`, { offering: priv.url, project: own.url })
    assert.equal(q.status, 201, JSON.stringify(q.body))
    assert.equal(q.body.state, 'pending-consumer')
  })

  test('a private offering of another organization cannot be ordered', async () => {
    const priv = await makeOffering(t.ctx, provider, { shared: false, name: 'Private one' })
    const r = await as(users.staff).post(`${R}/`, { offering: priv.url, project: project.url })
    assert.equal(r.status, 400)
    assert.deepEqual(r.body, {
      non_field_errors: ['Offering "Private one" is not allowed in organization "Consumer org".'],
    })
  })

  test('two callers with scopes of the same shape each resolve only their own project and offering', async () => {
    // The look-ups of creation are compiled once per shape of the caller's scopes (one project
    // role here): scopes kept from an earlier caller would show or hide the wrong rows.
    const callers = await Promise.all(
      [1, 2].map(async () => {
        const user = await makeUser(t.ctx)
        const org = await makeCustomer(t.ctx)
        const own = await makeProject(t.ctx, org)
        await grant(t.ctx, user, 'PROJECT.MANAGER', { type: 'project', id: own.id })
        // A private offering of the organization: visible to the people of its project only.
        const priv = await makeOffering(t.ctx, org, { shared: false, projectId: own.id })
        return { user, own, priv, plan: await makePlan(t.ctx, priv) }
      }),
    )
    const [a, b] = callers as [(typeof callers)[0], (typeof callers)[0]]
    const { offering, plan } = offerings['Marketplace.Slurm']!
    for (const [me, other] of [
      [a, b],
      [b, a],
    ] as const) {
      const ok = await as(me.user).post(`${R}/`, {
        offering: offering.url,
        plan: plan.url,
        project: me.own.url,
      })
      assert.equal(ok.status, 201, JSON.stringify(ok.body))
      const theirs = await as(me.user).post(`${R}/`, {
        offering: offering.url,
        plan: plan.url,
        project: other.own.url,
      })
      assert.deepEqual(theirs.body, { project: ['Invalid hyperlink - Object does not exist.'] })
      const mine = await as(me.user).post(`${R}/`, {
        offering: me.priv.url,
        plan: me.plan.url,
        project: me.own.url,
      })
      assert.equal(mine.status, 201, JSON.stringify(mine.body))
      const theirOffering = await as(me.user).post(`${R}/`, {
        offering: other.priv.url,
        plan: other.plan.url,
        project: me.own.url,
      })
      assert.deepEqual(theirOffering.body, { offering: ['Invalid hyperlink - Object does not exist.'] })
    }
  })

  test('a blocked organization and an expired project are refused', async () => {
    const blocked = await makeCustomer(t.ctx)
    await t.ctx.db.updateTable('customers').set({ blocked: 1 }).where('id', '=', blocked.id).execute()
    const p = await makeProject(t.ctx, blocked)
    const { offering, plan } = offerings['Marketplace.Basic']!
    const r = await as(users.staff).post(`${R}/`, { offering: offering.url, plan: plan.url, project: p.url })
    assert.deepEqual(r.body, { non_field_errors: ['Blocked organization is not available.'] })
    const expired = await makeProject(t.ctx, consumer, { name: 'Old', endDate: '2020-01-01' })
    const e = await as(users.staff).post(`${R}/`, {
      offering: offering.url,
      plan: plan.url,
      project: expired.url,
    })
    assert.deepEqual(e.body, { non_field_errors: ["Project 'Old' is expired."] })
  })
})

describe('transitions', () => {
  test('Slurm: consumer approval, provider approval, agent executing and done; resource OK', async () => {
    const o = await order(users.manager)
    assert.equal((await as(users.manager).post(`${R}/${o.uuid}/approve_by_consumer/`)).status, 403)
    assert.equal((await as(users.admin).post(`${R}/${o.uuid}/approve_by_consumer/`)).status, 403)
    const c = await as(users.owner).post(`${R}/${o.uuid}/approve_by_consumer/`)
    assert.equal(c.status, 200)
    assert.deepEqual(c.body, { detail: 'Order has been approved.' })
    assert.equal((await as(users.owner).get(`${R}/${o.uuid}/`)).body.state, 'pending-provider')
    assert.equal((await as(users.owner).post(`${R}/${o.uuid}/approve_by_provider/`)).status, 403)
    assert.equal((await as(users.provider).post(`${R}/${o.uuid}/approve_by_provider/`)).status, 200)
    const executing = (await as(users.provider).get(`${R}/${o.uuid}/`)).body
    assert.equal(executing.state, 'executing')
    assert.equal(executing.provider_reviewed_by, users.provider.username)
    // The agent (provider side) reports the outcome.
    assert.equal((await as(users.offeringManager).post(`${R}/${o.uuid}/set_state_done/`)).status, 200)
    const done = (await as(users.owner).get(`${R}/${o.uuid}/`)).body
    assert.equal(done.state, 'done')
    assert.ok(done.completed_at)
    const res = await as(users.owner).get(`/api/marketplace-resources/${done.marketplace_resource_uuid}/`)
    assert.equal(res.body.state, 'OK')
  })

  test('consumer approval is refused while the organization is blocked or archived, or the project expired', async () => {
    const o = await order(users.manager)
    const approve = () => as(users.owner).post(`${R}/${o.uuid}/approve_by_consumer/`)
    const setCustomer = (values: { blocked?: number; archived?: number }) =>
      t.ctx.db.updateTable('customers').set(values).where('id', '=', consumer.id).execute()
    const setEndDate = (end_date: string | null) =>
      t.ctx.db.updateTable('projects').set({ end_date }).where('id', '=', project.id).execute()
    try {
      await setCustomer({ blocked: 1 })
      const blocked = await approve()
      assert.equal(blocked.status, 400)
      assert.deepEqual(blocked.body, { non_field_errors: ['Blocked organization is not available.'] })
      await setCustomer({ blocked: 0, archived: 1 })
      assert.deepEqual((await approve()).body, {
        non_field_errors: ['Archived organization is not available.'],
      })
      await setCustomer({ archived: 0 })
      await setEndDate('2020-01-01')
      assert.deepEqual((await approve()).body, {
        non_field_errors: ["Project 'Alpha project' is expired."],
      })
      assert.equal((await as(users.owner).get(`${R}/${o.uuid}/`)).body.state, 'pending-consumer')
    } finally {
      await setCustomer({ blocked: 0, archived: 0 })
      await setEndDate(null)
    }
    assert.equal((await approve()).status, 200)
    assert.equal((await as(users.owner).get(`${R}/${o.uuid}/`)).body.state, 'pending-provider')
  })

  test('Basic: the approved order completes at once through the processing job', async () => {
    const o = await order(users.owner, 'Marketplace.Basic')
    assert.equal(o.state, 'pending-provider')
    assert.equal((await as(users.provider).post(`${R}/${o.uuid}/approve_by_provider/`)).status, 200)
    await t.ctx.jobs.drain()
    const done = (await as(users.owner).get(`${R}/${o.uuid}/`)).body
    assert.equal(done.state, 'done')
    assert.equal(
      (await as(users.owner).get(`/api/marketplace-resources/${done.marketplace_resource_uuid}/`)).body.state,
      'OK',
    )
  })

  test('wrong states answer 409 with the valid states', async () => {
    const o = await order(users.owner)
    const r = await as(users.owner).post(`${R}/${o.uuid}/approve_by_consumer/`)
    assert.equal(r.status, 409)
    assert.deepEqual(r.body, { detail: 'Valid states for operation: pending-consumer.' })
    const d = await as(users.provider).post(`${R}/${o.uuid}/set_state_done/`)
    assert.equal(d.status, 409)
    assert.deepEqual(d.body, { detail: 'Valid states for operation: executing.' })
  })

  test('offering types that do not support an action answer 405', async () => {
    const basic = await order(users.owner, 'Marketplace.Basic')
    const r = await as(users.provider).post(`${R}/${basic.uuid}/set_state_executing/`)
    assert.equal(r.status, 405)
    assert.deepEqual(r.body, {
      detail: "The order's offering type Marketplace.Basic does not support this action.",
    })
    const slurm = await order(users.owner)
    const c = await as(users.owner).post(`${R}/${slurm.uuid}/cancel/`)
    assert.equal(c.status, 405)
  })

  test('rejection by consumer stores the message and terminates the new resource', async () => {
    const o = await order(users.manager)
    const r = await as(users.owner).post(`${R}/${o.uuid}/reject_by_consumer/`, {
      error_message: 'not needed',
      error_traceback: 'tb',
    })
    assert.equal(r.status, 200)
    assert.equal(r.text, '')
    const body = (await as(users.owner).get(`${R}/${o.uuid}/`)).body
    assert.equal(body.state, 'rejected')
    assert.equal(body.error_message, 'not needed')
    assert.equal(body.error_traceback, '', 'the traceback is hidden from non-staff')
    assert.equal((await as(users.staff).get(`${R}/${o.uuid}/`)).body.error_traceback, 'tb')
    assert.equal(
      (await as(users.owner).get(`/api/marketplace-resources/${body.marketplace_resource_uuid}/`)).body.state,
      'Terminated',
    )
    assert.equal((await as(users.owner).post(`${R}/${o.uuid}/reject_by_consumer/`)).status, 409)
  })

  test('the creator may reject its own order; provider rejects pending-provider ones', async () => {
    const o = await order(users.member)
    assert.equal((await as(users.member).post(`${R}/${o.uuid}/reject_by_consumer/`)).status, 200)
    const p = await order(users.owner)
    assert.equal((await as(users.member).post(`${R}/${p.uuid}/reject_by_provider/`)).status, 403)
    assert.equal((await as(users.provider).post(`${R}/${p.uuid}/reject_by_provider/`)).status, 200)
    assert.equal((await as(users.provider).get(`${R}/${p.uuid}/`)).body.state, 'rejected')
  })

  test('a canceled Create order terminates its new resource', async () => {
    const o = await order(users.manager, 'Support.OfferingTemplate')
    const resourceUrl = `/api/marketplace-resources/${o.body.marketplace_resource_uuid}/`
    assert.equal((await as(users.manager).get(resourceUrl)).body.state, 'Creating')
    assert.equal((await as(users.manager).post(`${R}/${o.uuid}/cancel/`)).status, 202)
    assert.equal((await as(users.manager).get(`${R}/${o.uuid}/`)).body.state, 'canceled')
    assert.equal((await as(users.manager).get(resourceUrl)).body.state, 'Terminated')
    // A canceled Terminate order changes only the order: the resource stays as it was.
    const { offering, plan } = offerings['Marketplace.Basic']!
    const res = await makeResource(t.ctx, offering, project, { planId: plan.id, state: 'OK' })
    const term = await as(users.owner).post(`/api/marketplace-resources/${res.uuid}/terminate/`, {})
    assert.equal(term.status, 200, term.text)
    assert.equal((await as(users.owner).post(`${R}/${term.body.order_uuid}/cancel/`)).status, 202)
    assert.equal((await as(users.owner).get(`/api/marketplace-resources/${res.uuid}/`)).body.state, 'OK')
  })

  test('consumer approval checks the organization and project before the order state', async () => {
    const o = await order(users.owner)
    assert.equal(o.state, 'pending-provider')
    try {
      await t.ctx.db.updateTable('customers').set({ blocked: 1 }).where('id', '=', consumer.id).execute()
      const r = await as(users.owner).post(`${R}/${o.uuid}/approve_by_consumer/`)
      assert.equal(r.status, 400)
      assert.deepEqual(r.body, { non_field_errors: ['Blocked organization is not available.'] })
    } finally {
      await t.ctx.db.updateTable('customers').set({ blocked: 0 }).where('id', '=', consumer.id).execute()
    }
    assert.equal((await as(users.owner).post(`${R}/${o.uuid}/approve_by_consumer/`)).status, 409)
  })

  test('an erred Create order terminates a resource without a backend id, else leaves it Erred', async () => {
    const resourceState = async (o: { body: any }) =>
      (await as(users.owner).get(`/api/marketplace-resources/${o.body.marketplace_resource_uuid}/`)).body
        .state
    const err = (o: { uuid: string }) =>
      as(users.provider).post(`${R}/${o.uuid}/set_state_erred/`, { error_message: 'x', error_traceback: '' })
    const bare = await order(users.owner)
    assert.equal((await err(bare)).status, 200)
    assert.equal(await resourceState(bare), 'Terminated')
    const known = await order(users.owner)
    const b = await as(users.provider).post(`${R}/${known.uuid}/set_backend_id/`, { backend_id: 'vm-1' })
    assert.equal(b.status, 200, b.text)
    assert.equal((await err(known)).status, 200)
    assert.equal(await resourceState(known), 'Erred')
  })

  test('cancel answers 202 for support offerings and is refused once terminal', async () => {
    const o = await order(users.manager, 'Support.OfferingTemplate')
    const r = await as(users.manager).post(`${R}/${o.uuid}/cancel/`)
    assert.equal(r.status, 202)
    assert.equal(r.text, '')
    assert.equal((await as(users.manager).get(`${R}/${o.uuid}/`)).body.state, 'canceled')
    assert.equal((await as(users.manager).post(`${R}/${o.uuid}/cancel/`)).status, 409)
    assert.equal(
      (
        await as(users.member).post(
          `${R}/${(await order(users.manager, 'Support.OfferingTemplate')).uuid}/cancel/`,
        )
      ).status,
      403,
    )
  })

  test('support staff complete support requests with set_state_done', async () => {
    const o = await order(users.owner, 'Support.OfferingTemplate')
    assert.equal(o.state, 'executing')
    assert.equal((await as(users.support).post(`${R}/${o.uuid}/set_state_done/`)).status, 200)
    assert.equal((await as(users.owner).get(`${R}/${o.uuid}/`)).body.state, 'done')
  })

  test('set_state_erred from any non-terminal state stores the error; terminal is 409', async () => {
    const o = await order(users.owner)
    const r = await as(users.provider).post(`${R}/${o.uuid}/set_state_erred/`, {
      error_message: 'boom',
      error_traceback: 'trace',
    })
    assert.equal(r.status, 200)
    const body = (await as(users.staff).get(`${R}/${o.uuid}/`)).body
    assert.equal(body.state, 'erred')
    assert.equal(body.error_message, 'boom')
    assert.equal(body.error_traceback, 'trace')
    assert.equal((await as(users.provider).post(`${R}/${o.uuid}/set_state_erred/`)).status, 409)
    // erred → executing again for the site agent type
    assert.equal((await as(users.provider).post(`${R}/${o.uuid}/set_state_executing/`)).status, 200)
  })

  test('two concurrent approvals: exactly one succeeds', async () => {
    const o = await order(users.manager)
    const results = await Promise.all([
      call(t.app, 'POST', `${R}/${o.uuid}/approve_by_consumer/`, { token: users.owner.token }),
      call(t.app, 'POST', `${R}/${o.uuid}/approve_by_consumer/`, { token: users.staff.token }),
      call(t.app, 'POST', `${R}/${o.uuid}/approve_by_consumer/`, { token: users.owner.token }),
    ])
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 409, 409])
  })

  test('delete only pending orders; unlink is staff only with a bodiless 403', async () => {
    const o = await order(users.manager)
    assert.equal((await as(users.member).delete(`${R}/${o.uuid}/`)).status, 403)
    assert.equal((await as(users.manager).delete(`${R}/${o.uuid}/`)).status, 204)
    assert.equal((await as(users.manager).get(`${R}/${o.uuid}/`)).status, 404)
    const s = await order(users.owner, 'Support.OfferingTemplate')
    const refused = await as(users.owner).delete(`${R}/${s.uuid}/`)
    assert.equal(refused.status, 409)
    assert.deepEqual(refused.body, {
      detail: 'Valid states for operation: pending-consumer, pending-provider.',
    })
    const u = await as(users.owner).post(`${R}/${s.uuid}/unlink/`)
    assert.equal(u.status, 403)
    assert.equal(u.text, '')
    assert.equal(
      (await as(users.outsider).post(`${R}/00000000-0000-4000-8000-000000000000/unlink/`)).status,
      403,
    )
    assert.equal((await as(users.staff).post(`${R}/${s.uuid}/unlink/`)).status, 204)
    assert.equal((await as(users.staff).get(`${R}/${s.uuid}/`)).status, 404)
  })

  test('set_backend_id is for the provider side and staff', async () => {
    const o = await order(users.owner)
    assert.equal(
      (await as(users.owner).post(`${R}/${o.uuid}/set_backend_id/`, { backend_id: 'x' })).status,
      403,
    )
    const r = await as(users.provider).post(`${R}/${o.uuid}/set_backend_id/`, { backend_id: 'job-42' })
    assert.equal(r.status, 200)
    assert.equal(typeof r.body.status, 'string')
    assert.equal((await as(users.owner).get(`${R}/${o.uuid}/`)).body.backend_id, 'job-42')
    const blank = await as(users.provider).post(`${R}/${o.uuid}/set_backend_id/`, { backend_id: '' })
    assert.equal(blank.status, 400)
    assert.deepEqual(blank.body, { backend_id: ['This field may not be blank.'] })
    assert.equal((await as(users.owner).get(`${R}/${o.uuid}/`)).body.backend_id, 'job-42')
  })

  test('a future start date delays execution until the day comes', async () => {
    const o = await order(users.owner, 'Marketplace.Basic', { start_date: '2026-03-01' })
    await as(users.provider).post(`${R}/${o.uuid}/approve_by_provider/`)
    assert.equal((await as(users.owner).get(`${R}/${o.uuid}/`)).body.state, 'pending-start-date')
    await t.ctx.jobs.drain()
    assert.equal((await as(users.owner).get(`${R}/${o.uuid}/`)).body.state, 'pending-start-date')
    t.clock.set('2026-03-01T00:00:01.000Z')
    await t.ctx.jobs.drain()
    assert.equal((await as(users.owner).get(`${R}/${o.uuid}/`)).body.state, 'done')
    t.clock.set('2026-01-15T10:00:00.000Z')
  })

  test("an order for a project not started yet waits for the project's start", async () => {
    const later = await makeProject(t.ctx, consumer, { name: 'Later project', startDate: '2026-04-01' })
    const { offering, plan } = offerings['Marketplace.Basic']!
    const r = await as(users.owner).post(`${R}/`, {
      offering: offering.url,
      plan: plan.url,
      project: later.url,
      attributes: { name: uniqueName('res') },
    })
    assert.equal(r.status, 201, JSON.stringify(r.body))
    assert.equal(r.body.state, 'pending-project')
    await t.ctx.jobs.drain()
    assert.equal((await as(users.owner).get(`${R}/${r.body.uuid}/`)).body.state, 'pending-project')
    t.clock.set('2026-04-01T00:00:01.000Z')
    await t.ctx.jobs.drain()
    assert.notEqual((await as(users.owner).get(`${R}/${r.body.uuid}/`)).body.state, 'pending-project')
    t.clock.set('2026-01-15T10:00:00.000Z')
  })
})

describe('where a consumer approval leads', () => {
  test("the project's start first, then the order's own start, then execution", async () => {
    const later = await makeProject(t.ctx, consumer, { name: 'Starting project', startDate: '2026-04-01' })
    const placer = await makeUser(t.ctx)
    await grant(t.ctx, placer, 'PROJECT.MANAGER', { type: 'project', id: later.id })
    const place = async (extra: Record<string, unknown> = {}) => {
      const o = await order(placer, 'Support.OfferingTemplate', { project: later.url, ...extra })
      assert.equal(o.state, 'pending-consumer')
      return o.uuid
    }
    const state = async (uuid: string) => (await as(users.owner).get(`${R}/${uuid}/`)).body.state
    const plain = await place()
    const dated = await place({ start_date: '2026-05-01' })
    for (const uuid of [plain, dated]) {
      assert.equal((await as(users.owner).post(`${R}/${uuid}/approve_by_consumer/`)).status, 200)
      assert.equal(await state(uuid), 'pending-project')
    }
    try {
      // The project starts: the support offering needs no provider review, so each goes on to
      // its own start date or executes.
      t.clock.set('2026-04-01T00:00:01.000Z')
      await t.ctx.jobs.drain()
      assert.equal(await state(plain), 'executing')
      assert.equal(await state(dated), 'pending-start-date')
      // An order placed now, once the project has started, waits for its own start only.
      const next = await place({ start_date: '2026-05-01' })
      assert.equal((await as(users.owner).post(`${R}/${next}/approve_by_consumer/`)).status, 200)
      assert.equal(await state(next), 'pending-start-date')
      const now = await place()
      assert.equal((await as(users.owner).post(`${R}/${now}/approve_by_consumer/`)).status, 200)
      assert.equal(await state(now), 'executing')
      t.clock.set('2026-05-01T00:00:01.000Z')
      await t.ctx.jobs.drain()
      assert.equal(await state(dated), 'executing')
      assert.equal(await state(next), 'executing')
    } finally {
      t.clock.set('2026-01-15T10:00:00.000Z')
    }
  })

  test('an approval by someone who cannot see the order is 404, by a member 403; nothing moves', async () => {
    const o = await order(users.manager)
    const outsider = await as(users.outsider).post(`${R}/${o.uuid}/approve_by_consumer/`)
    assert.equal(outsider.status, 404)
    assert.deepEqual(outsider.body, { detail: 'No Order matches the given query.' })
    const member = await as(users.member).post(`${R}/${o.uuid}/approve_by_consumer/`)
    assert.equal(member.status, 403)
    const unknown = await as(users.owner).post(
      `${R}/00000000-0000-4000-8000-000000000000/approve_by_consumer/`,
    )
    assert.equal(unknown.status, 404)
    assert.equal((await as(users.owner).get(`${R}/${o.uuid}/`)).body.state, 'pending-consumer')
  })
})

describe('visibility and filters', () => {
  test('consumers, the provider and offering managers see orders; outsiders get 404', async () => {
    const o = await order(users.manager)
    for (const u of [
      'owner',
      'manager',
      'admin',
      'member',
      'provider',
      'offeringManager',
      'support',
      'staff',
    ] as const) {
      assert.equal((await as(users[u]).get(`${R}/${o.uuid}/`)).status, 200, u)
    }
    assert.equal((await as(users.outsider).get(`${R}/${o.uuid}/`)).status, 404)
    const list = await as(users.outsider).get(`${R}/`)
    assert.deepEqual(list.body, [])
    assert.equal((await client(t.app).get(`${R}/`)).status, 401)
  })

  test('the unfiltered total follows creates and deletes', async () => {
    const s = as(users.staff)
    const total = async () => Number((await s.head(`${R}/`)).headers['x-result-count'])
    const counted = async () =>
      Number(
        (
          await t.ctx.db
            .selectFrom('orders')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      )
    const before = await total()
    assert.equal(before, await counted())
    const o = await order(users.owner, 'Marketplace.Basic')
    assert.equal(await total(), before + 1)
    assert.equal((await s.delete(`${R}/${o.uuid}/`)).status, 204)
    assert.equal(await total(), before)
    assert.equal(before, await counted())
  })

  test('every filter narrows the list', async () => {
    const s = as(users.staff)
    const o = await order(users.owner, 'Marketplace.Basic', { attributes: { name: 'zeta-resource' } })
    const check = async (qs: string, expectIn: boolean) => {
      const r = await s.get(`${R}/?page_size=300&${qs}`)
      assert.equal(r.status, 200, `${qs}: ${JSON.stringify(r.body)}`)
      assert.equal(
        r.body.some((x: { uuid: string }) => x.uuid === o.uuid),
        expectIn,
        qs,
      )
    }
    const { offering } = offerings['Marketplace.Basic']!
    await check(`project_uuid=${project.uuid}`, true)
    await check(`project_uuid=${consumer.uuid}`, false)
    await check(`customer_uuid=${consumer.uuid}`, true)
    await check(`provider_uuid=${provider.uuid}`, true)
    await check(`provider_uuid=${consumer.uuid}`, false)
    await check(`offering_uuid=${offering.uuid}`, true)
    await check(`offering=${offering.url}`, true)
    await check(`offering_slug=nope,marketplace-basic-offering`, true)
    await check(`offering_slug=nope`, false)
    await check(`offering_type=Marketplace.Basic`, true)
    await check(`offering_type=Marketplace.Slurm`, false)
    await check(`state=pending-provider&state=done`, true)
    await check(`state=done`, false)
    await check(`type=Create`, true)
    await check(`type=Terminate`, false)
    await check(`query=zeta-res`, true)
    await check(`query=${o.uuid}`, true)
    await check(`query=Alpha`, true)
    await check(`query=nothing-like-this`, false)
    await check(`resource_name=zeta`, true)
    // The resource name index: case folded, short texts, quotes and LIKE wildcards literal.
    await check(`resource_name=ZETA-RESOURCE`, true)
    await check(`resource_name=ze`, true)
    await check(`resource_name=a-R`, true)
    await check(`resource_name=zeta%25`, false)
    await check(`resource_name=zeta_`, false)
    await check(`resource_name=%22zeta%22`, false)
    await check(`query=TA-RESO`, true)
    await check(`resource_uuid=${o.body.marketplace_resource_uuid}`, true)
    await check(
      `resource=http://localhost/api/marketplace-resources/${o.body.marketplace_resource_uuid}/`,
      true,
    )
    await check(`resource=http://localhost/api/projects/${project.uuid}/`, false)
    await check(`created=2026-01-01T00:00:00Z`, true)
    await check(`created=2027-01-01`, false)
    await check(`modified=2027-01-01T00:00:00Z`, false)
    await check(`can_approve_as_provider=true`, true)
    await check(`can_approve_as_consumer=false`, false)
    await check(`category_uuid=${project.uuid}`, false)
    await check(`parent_offering_uuid=${offering.uuid}`, false)
    await check(`service_manager_uuid=${users.offeringManager.uuid}`, false)
    const bad = await s.get(`${R}/?state=bogus`)
    assert.equal(bad.status, 400)
    assert.deepEqual(bad.body, {
      state: ['Select a valid choice. bogus is not one of the available choices.'],
    })
    assert.equal((await s.get(`${R}/?created=yesterday`)).status, 400)
    assert.equal((await s.get(`${R}/?project_uuid=zz`)).status, 400)
  })

  test('a list of the same kind run again with other values answers for the new values', async () => {
    // List queries are compiled once per kind of filter; each request's values must be its own.
    const s = as(users.staff)
    const slurm = await order(users.owner, 'Marketplace.Slurm', { attributes: { name: 'omega-resource' } })
    const basic = await order(users.owner, 'Marketplace.Basic', { attributes: { name: 'sigma-resource' } })
    const runs: [qs: string, slurmIn: boolean, basicIn: boolean][] = [
      [`offering_uuid=${offerings['Marketplace.Slurm']!.offering.uuid}`, true, false],
      [`offering_uuid=${offerings['Marketplace.Basic']!.offering.uuid}`, false, true],
      ['offering_type=Marketplace.Slurm', true, false],
      ['offering_type=Marketplace.Basic', false, true],
      [`resource_uuid=${slurm.body.marketplace_resource_uuid}`, true, false],
      [`resource_uuid=${basic.body.marketplace_resource_uuid}`, false, true],
      ['resource_name=omega', true, false],
      ['resource_name=sigma', false, true],
      ['resource_name=om', true, false],
      ['resource_name=si', false, true],
      ['query=omega-r', true, false],
      ['query=sigma-r', false, true],
      [`query=${slurm.uuid}`, true, false],
      [`query=${basic.uuid}`, false, true],
      [`service_manager_uuid=${users.offeringManager.uuid}`, true, false],
      [`service_manager_uuid=${users.outsider.uuid}`, false, false],
      [`created=${slurm.body.created}&state=pending-provider`, true, true],
      ['created=2999-01-01&state=pending-provider', false, false],
    ]
    for (const [qs, slurmIn, basicIn] of runs) {
      const r = await s.get(`${R}/?page_size=300&${qs}`)
      assert.equal(r.status, 200, qs)
      const uuids = r.body.map((x: { uuid: string }) => x.uuid)
      assert.equal(uuids.includes(slurm.uuid), slurmIn, `${qs}: Slurm order`)
      assert.equal(uuids.includes(basic.uuid), basicIn, `${qs}: Basic order`)
      assert.equal(Number(r.headers['x-result-count']), uuids.length, `${qs}: total`)
    }
    // Pages of one list: the limit and offset are values too.
    const all = (await s.get(`${R}/?o=-created&page_size=300`)).body.map((x: { uuid: string }) => x.uuid)
    for (const page of [1, 2, 3]) {
      const r = await s.get(`${R}/?o=-created&page_size=1&page=${page}`)
      assert.deepEqual(
        r.body.map((x: { uuid: string }) => x.uuid),
        [all[page - 1]],
        `page ${page}`,
      )
    }
    // Two callers holding one project each see their own project's orders.
    const other = await makeProject(t.ctx, consumer, { name: 'Other project' })
    const otherMember = await makeUser(t.ctx)
    await grant(t.ctx, otherMember, 'PROJECT.MEMBER', { type: 'project', id: other.id })
    const { offering, plan } = offerings['Marketplace.Basic']!
    const created = await s.post(`${R}/`, { offering: offering.url, plan: plan.url, project: other.url })
    assert.equal(created.status, 201)
    const seen = async (who: UserRef) => {
      const r = await as(who).get(`${R}/?page_size=300`)
      return {
        uuids: r.body.map((x: { uuid: string }) => x.uuid),
        total: Number(r.headers['x-result-count']),
      }
    }
    const mine = await seen(users.member)
    const theirs = await seen(otherMember)
    assert.deepEqual(theirs, { uuids: [created.body.uuid], total: 1 })
    assert.ok(mine.uuids.includes(slurm.uuid) && !mine.uuids.includes(created.body.uuid))
    assert.equal(mine.total, mine.uuids.length)
  })

  test('totals of lists by projects and states follow every creation, transition, move and deletion', async () => {
    // Such totals are read from the per-project, per-state counts the triggers keep; each must
    // equal the number of orders the list itself holds.
    const s = as(users.staff)
    const second = await makeProject(t.ctx, consumer, { name: 'Counted project' })
    const check = async (when: string) => {
      const lists: [UserRef, string][] = [
        [users.staff, `project_uuid=${project.uuid}`],
        [users.staff, `project_uuid=${second.uuid}`],
        [users.staff, `project_uuid=${project.uuid}&state=pending-provider&state=pending-consumer`],
        [users.staff, 'state=pending-consumer'],
        [users.staff, 'state=done&state=erred&state=canceled&state=rejected'],
        [users.staff, 'can_approve_as_consumer=false'],
        [users.member, ''],
        [users.member, 'state=pending-provider'],
        [users.manager, 'can_approve_as_consumer=true'],
      ]
      for (const [who, qs] of lists) {
        const r = await as(who).get(`${R}/?page_size=300&${qs}`)
        assert.equal(r.status, 200)
        assert.equal(Number(r.headers['x-result-count']), r.body.length, `${when}: ${who.username} ${qs}`)
      }
    }
    await check('before')
    const made = [await order(users.manager), await order(users.owner), await order(users.manager)]
    await check('after creation')
    await s.post(`${R}/${made[0]!.uuid}/approve_by_consumer/`)
    await as(users.provider).post(`${R}/${made[1]!.uuid}/approve_by_provider/`)
    await s.post(`${R}/${made[2]!.uuid}/reject_by_consumer/`)
    await check('after transitions')
    await t.ctx.db
      .updateTable('orders')
      .set({ project_id: second.id })
      .where('uuid', '=', made[1]!.uuid)
      .execute()
    await check('after a move to another project')
    await t.ctx.db.updateTable('orders').set({ state: 'erred' }).where('uuid', '=', made[1]!.uuid).execute()
    const pending = await order(users.manager)
    assert.equal((await s.delete(`${R}/${pending.uuid}/`)).status, 204)
    await check('after a state change and a deletion')
  })

  test('query: a term matching more than a thousand project names still lists and counts every match', async () => {
    // What a term matches is looked up first; past 1,000 names the list keeps a sub-select instead.
    const now = t.ctx.clock().toISOString()
    await t.ctx.db
      .insertInto('projects')
      .values(
        Array.from({ length: 1001 }, (_, i) => ({
          uuid: t.ctx.newUuid(),
          name: `Crowded ${i}`,
          customer_id: consumer.id,
          description: '',
          slug: `crowded-${i}`,
          created: now,
          modified: now,
        })),
      )
      .execute()
    const crowded = await t.ctx.db
      .selectFrom('projects')
      .select(['id', 'uuid'])
      .where('name', '=', 'Crowded 1000')
      .executeTakeFirstOrThrow()
    const { offering, plan } = offerings['Marketplace.Basic']!
    const s = as(users.staff)
    const made = await s.post(`${R}/`, {
      offering: offering.url,
      plan: plan.url,
      project: `http://localhost:80/api/projects/${crowded.uuid}/`,
    })
    assert.equal(made.status, 201, made.text)
    for (const term of ['crowded', 'CROWDED 1000', 'owded 100']) {
      const r = await s.get(`${R}/?query=${encodeURIComponent(term)}&page_size=300`)
      assert.equal(r.status, 200)
      assert.deepEqual(
        r.body.map((o: { uuid: string }) => o.uuid),
        [made.body.uuid],
        term,
      )
      assert.equal(r.headers['x-result-count'], '1', term)
    }
    assert.deepEqual((await s.get(`${R}/?query=crowded%201001`)).body, [])
  })

  test('query: what a term matched is looked up again after any project name, resource name or slug changes', async () => {
    // Matches are kept between requests; each change below comes from raw SQL (as another process
    // would write it) or from a request, and the next search must see it.
    const s = as(users.staff)
    const found = async (term: string) => {
      const r = await s.get(`${R}/?query=${encodeURIComponent(term)}&page_size=300`)
      assert.equal(r.status, 200, r.text)
      assert.equal(r.headers['x-result-count'], String(r.body.length))
      return r.body.map((o: { uuid: string }) => o.uuid).sort()
    }
    const a = await order(users.owner)
    const b = await order(users.owner)
    assert.deepEqual(await found('kappa-x'), [])
    assert.deepEqual(await found('kappa-x'), [])
    // A resource renamed to match, then away again.
    const resourceOf = (o: { body: any }) => o.body.marketplace_resource_uuid as string
    const rename = (uuid: string, name: string) =>
      t.ctx.db.updateTable('resources').set({ name }).where('uuid', '=', uuid).execute()
    await rename(resourceOf(a), 'the KAPPA-X resource')
    assert.deepEqual(await found('kappa-x'), [a.uuid])
    await rename(resourceOf(a), 'renamed')
    assert.deepEqual(await found('kappa-x'), [])
    // A slug set on an order.
    await t.ctx.db.updateTable('orders').set({ slug: 'kappa-x' }).where('uuid', '=', b.uuid).execute()
    assert.deepEqual(await found('kappa-x'), [b.uuid])
    // A new resource (an order's) named to match.
    const c = await order(users.owner, 'Marketplace.Slurm', { attributes: { name: 'kappa-x-new' } })
    assert.deepEqual(await found('kappa-x'), [b.uuid, c.uuid].sort())
    // A new project whose name matches, with an order in it.
    const now = t.ctx.clock().toISOString()
    const kappa = { uuid: t.ctx.newUuid(), name: 'Kappa-X lab', customer_id: consumer.id }
    await t.ctx.db
      .insertInto('projects')
      .values({ ...kappa, description: '', slug: 'kappa-lab', created: now, modified: now })
      .execute()
    const { offering, plan } = offerings['Marketplace.Basic']!
    const inKappa = await s.post(`${R}/`, {
      offering: offering.url,
      plan: plan.url,
      project: `http://localhost:80/api/projects/${kappa.uuid}/`,
    })
    assert.equal(inKappa.status, 201, inKappa.text)
    assert.deepEqual(await found('kappa-x'), [b.uuid, c.uuid, inKappa.body.uuid].sort())
    // That project renamed away, and the slug changed.
    await t.ctx.db.updateTable('projects').set({ name: 'Lab' }).where('uuid', '=', kappa.uuid).execute()
    await t.ctx.db.updateTable('orders').set({ slug: 'lambda' }).where('uuid', '=', b.uuid).execute()
    assert.deepEqual(await found('kappa-x'), [c.uuid])
    // Without an epoch (its row gone), nothing is kept: every search looks its matches up.
    await t.ctx.db.deleteFrom('record_epochs').where('name', '=', 'resource_names').execute()
    assert.deepEqual(await found('kappa-x'), [c.uuid])
    await rename(resourceOf(a), 'kappa-x again')
    assert.deepEqual(await found('kappa-x'), [a.uuid, c.uuid].sort())
    await t.ctx.db.insertInto('record_epochs').values({ name: 'resource_names', n: 0 }).execute()
  })

  test('can_approve_as_consumer=true lists only what the caller may approve', async () => {
    const o = await order(users.manager)
    const mine = await as(users.owner).get(`${R}/?can_approve_as_consumer=true&page_size=300`)
    assert.ok(mine.body.some((x: { uuid: string }) => x.uuid === o.uuid))
    const manager = await as(users.manager).get(`${R}/?can_approve_as_consumer=true&page_size=300`)
    assert.equal(
      manager.body.some((x: { uuid: string }) => x.uuid === o.uuid),
      false,
    )
  })

  test('ordering by created, cost and state; unknown ordering is 400', async () => {
    const s = as(users.staff)
    const asc = (await s.get(`${R}/?o=created&page_size=300`)).body.map((x: { created: string }) => x.created)
    assert.deepEqual([...asc].sort(), asc)
    const desc = (await s.get(`${R}/?o=-created&page_size=300`)).body.map(
      (x: { created: string }) => x.created,
    )
    assert.deepEqual([...desc].sort().reverse(), desc)
    assert.equal((await s.get(`${R}/?o=cost,-state`)).status, 200)
    assert.equal((await s.get(`${R}/?o=consumer_reviewed_at`)).status, 200)
    assert.equal((await s.get(`${R}/?o=name`)).status, 400)
  })

  test('field limits the record; GET offering/ describes the offering', async () => {
    const o = await order(users.owner)
    const r = await as(users.owner).get(`${R}/${o.uuid}/?field=uuid&field=state`)
    assert.deepEqual(Object.keys(r.body).sort(), ['state', 'uuid'])
    const off = await as(users.owner).get(`${R}/${o.uuid}/offering/`)
    assert.equal(off.status, 200)
    assert.equal(off.body.uuid, offerings['Marketplace.Slurm']!.offering.uuid)
    assert.ok(off.body.url)
  })
})

describe('attachments', () => {
  const pdf = Buffer.from('%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n')
  function multipart(content: Buffer, type: string, field = 'attachment') {
    const boundary = '----marketplace-test'
    const payload = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="a.pdf"\r\nContent-Type: ${type}\r\n\r\n`,
      ),
      content,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ])
    return { payload, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } }
  }

  test('upload a PDF, read it back, delete it; only while pending', async () => {
    const o = await order(users.manager)
    const up = multipart(pdf, 'application/pdf')
    const r = await call(t.app, 'POST', `${R}/${o.uuid}/update_attachment/`, {
      token: users.manager.token,
      ...up,
    })
    assert.equal(r.status, 200, r.text)
    assert.equal(r.body.attachment, `http://localhost:80${R}/${o.uuid}/attachment/`)
    const file = await t.app.inject({
      url: `${R}/${o.uuid}/attachment/`,
      headers: { authorization: `Token ${users.provider.token}` },
    })
    assert.equal(file.statusCode, 200)
    assert.equal(file.headers['content-type'], 'application/pdf')
    assert.deepEqual(file.rawPayload, pdf)
    const hidden = await t.app.inject({
      url: `${R}/${o.uuid}/attachment/`,
      headers: { authorization: `Token ${users.outsider.token}` },
    })
    assert.equal(hidden.statusCode, 404)
    assert.equal((await as(users.manager).get(`${R}/${o.uuid}/`)).body.attachment, r.body.attachment)
    assert.equal((await as(users.manager).post(`${R}/${o.uuid}/delete_attachment/`)).status, 204)
    assert.equal((await as(users.manager).get(`${R}/${o.uuid}/`)).body.attachment, null)
    await as(users.owner).post(`${R}/${o.uuid}/approve_by_consumer/`)
    await as(users.provider).post(`${R}/${o.uuid}/approve_by_provider/`)
    const late = await call(t.app, 'POST', `${R}/${o.uuid}/update_attachment/`, {
      token: users.manager.token,
      ...multipart(pdf, 'application/pdf'),
    })
    assert.equal(late.status, 409)
    assert.equal((await as(users.manager).post(`${R}/${o.uuid}/delete_attachment/`)).status, 409)
  })

  test('a truncated or malformed multipart body is 400 on attachment', async () => {
    const o = await order(users.manager)
    const whole = multipart(pdf, 'application/pdf')
    const boundary = whole.headers['content-type']
    const second = Buffer.from(
      '------marketplace-test\r\nContent-Disposition: form-data; name="other"; filename="b.pdf"\r\n' +
        'Content-Type: application/pdf\r\n\r\n%PDF-\r\n',
    )
    const NOT_A_FILE = {
      attachment: ['The submitted data was not a file. Check the encoding type on the form.'],
    }
    const cases: [string, Buffer, string, unknown][] = [
      ['cut in the file', whole.payload.subarray(0, 130), boundary, NOT_A_FILE],
      [
        'without its closing boundary',
        whole.payload.subarray(0, whole.payload.length - 10),
        boundary,
        NOT_A_FILE,
      ],
      ['without a boundary parameter', whole.payload, 'multipart/form-data', NOT_A_FILE],
      [
        'with a second file',
        Buffer.concat([second, whole.payload]),
        boundary,
        { attachment: ['Only one file may be submitted.'] },
      ],
    ]
    for (const [what, payload, contentType, body] of cases) {
      const r = await call(t.app, 'POST', `${R}/${o.uuid}/update_attachment/`, {
        token: users.manager.token,
        payload,
        headers: { 'content-type': contentType },
      })
      assert.equal(r.status, 400, `${what}: ${r.text}`)
      assert.deepEqual(r.body, body, what)
    }
    const intact = await call(t.app, 'POST', `${R}/${o.uuid}/update_attachment/`, {
      token: users.manager.token,
      ...whole,
    })
    assert.equal(intact.status, 200, intact.text)
  })

  test('non-PDF content and oversize uploads are refused', async () => {
    const o = await order(users.manager)
    const txt = await call(t.app, 'POST', `${R}/${o.uuid}/update_attachment/`, {
      token: users.manager.token,
      ...multipart(Buffer.from('hello'), 'text/plain'),
    })
    assert.equal(txt.status, 400)
    assert.ok(txt.body.attachment)
    const fake = await call(t.app, 'POST', `${R}/${o.uuid}/update_attachment/`, {
      token: users.manager.token,
      ...multipart(Buffer.from('not a pdf'), 'application/pdf'),
    })
    assert.equal(fake.status, 400)
    const small = await buildTestApp({ uploadLimitBytes: 1024 })
    try {
      const c = await makeCustomer(small.ctx)
      const p = await makeProject(small.ctx, c)
      const staff = await makeUser(small.ctx, { staff: true })
      const off = await makeOffering(small.ctx, c, { type: 'Marketplace.Slurm' })
      const created = await client(small.app, staff.token).post(`${R}/`, {
        offering: off.url,
        project: p.url,
      })
      const big = Buffer.concat([pdf, Buffer.alloc(4096, 32)])
      const r = await call(small.app, 'POST', `${R}/${created.body.uuid}/update_attachment/`, {
        token: staff.token,
        ...multipart(big, 'application/pdf'),
      })
      assert.equal(r.status, 413)
    } finally {
      await small.close()
    }
  })
})

describe('callbacks', () => {
  test('every state change is POSTed to callback_url, and failures are retried', async () => {
    const received: { state: string; uuid: string }[] = []
    let failFirst = true
    const server = createServer((req: IncomingMessage, res) => {
      let data = ''
      req.on('data', (c: Buffer) => (data += c.toString()))
      req.on('end', () => {
        if (failFirst) {
          failFirst = false
          res.writeHead(500).end()
          return
        }
        received.push(JSON.parse(data) as { state: string; uuid: string })
        res.writeHead(204).end()
      })
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    try {
      const port = (server.address() as { port: number }).port
      const o = await order(users.owner, 'Marketplace.Basic', {
        callback_url: `http://127.0.0.1:${port}/hook`,
      })
      await as(users.provider).post(`${R}/${o.uuid}/approve_by_provider/`)
      for (let i = 0; i < 5; i++) {
        await t.ctx.jobs.drain()
        t.clock.advance(10_000)
      }
      t.clock.set('2026-01-15T10:00:00.000Z')
      const states = received
        .filter((x) => x.uuid === o.uuid)
        .map((x) => x.state)
        .sort()
      assert.deepEqual(states, ['done', 'executing', 'pending-provider'])
      const body = received[0]!
      assert.deepEqual(Object.keys(body).sort(), ['modified', 'resource_uuid', 'state', 'type', 'uuid'])
      // The creation's own callback carries the new order's resource, type and time as written.
      const created = received.find((x) => x.uuid === o.uuid && x.state === 'pending-provider') as any
      assert.equal(created.type, 'Create')
      assert.equal(created.resource_uuid, o.body.marketplace_resource_uuid)
      assert.ok(created.resource_uuid)
      assert.equal(created.modified, o.body.created)
    } finally {
      server.close()
    }
  })

  test('callback URLs into private networks are refused unless allowed', async () => {
    const strict = await buildTestApp({ callbackAllowPrivate: false, callbackAllowList: ['hooks.internal'] })
    try {
      const c = await makeCustomer(strict.ctx)
      const p = await makeProject(strict.ctx, c)
      const staff = await makeUser(strict.ctx, { staff: true })
      const off = await makeOffering(strict.ctx, c, { type: 'Marketplace.Slurm' })
      const s = client(strict.app, staff.token)
      for (const url of [
        'http://127.0.0.1:8080/x',
        'http://localhost/x',
        'http://10.1.2.3/',
        'http://[::1]/',
        'http://169.254.169.254/latest',
        'ftp://example.com/',
      ]) {
        const r = await s.post(`${R}/`, { offering: off.url, project: p.url, callback_url: url })
        assert.equal(r.status, 400, url)
        assert.ok(r.body.callback_url, url)
      }
      const ok = await s.post(`${R}/`, {
        offering: off.url,
        project: p.url,
        callback_url: 'https://hooks.example.com/order',
      })
      assert.equal(ok.status, 201)
      const listed = await s.post(`${R}/`, {
        offering: off.url,
        project: p.url,
        callback_url: 'http://hooks.internal/order',
      })
      assert.equal(listed.status, 201)
    } finally {
      await strict.close()
    }
  })
})

describe('resource actions', () => {
  test('terminate, switch_plan and update_limits create orders that drive the resource', async () => {
    const { offering, plan } = offerings['Marketplace.Basic']!
    const other = await makePlan(t.ctx, offering, { unitPrice: '20' })
    const res = await makeResource(t.ctx, offering, project, { planId: plan.id, state: 'OK' })
    const o = as(users.owner)
    const sw = await o.post(`/api/marketplace-resources/${res.uuid}/switch_plan/`, { plan: other.url })
    assert.equal(sw.status, 200)
    const update = (await o.get(`${R}/${sw.body.order_uuid}/`)).body
    assert.equal(update.type, 'Update')
    assert.equal(update.old_plan_uuid, plan.uuid)
    assert.equal(update.new_plan_uuid, other.uuid)
    assert.equal(update.new_cost_estimate, '20.0000000000')
    assert.equal(update.old_cost_estimate, 12.5)
    const dup = await o.post(`/api/marketplace-resources/${res.uuid}/update_limits/`, { limits: { cpu: 4 } })
    assert.equal(dup.status, 400)
    assert.deepEqual(dup.body, { non_field_errors: ['Pending order for resource already exists.'] })
    await as(users.provider).post(`${R}/${sw.body.order_uuid}/approve_by_provider/`)
    await t.ctx.jobs.drain()
    const after = (await o.get(`/api/marketplace-resources/${res.uuid}/`)).body
    assert.equal(after.state, 'OK')
    assert.equal(after.plan_uuid, other.uuid)
    const lim = await o.post(`/api/marketplace-resources/${res.uuid}/update_limits/`, { limits: { cpu: 4 } })
    assert.equal(lim.status, 200)
    await as(users.provider).post(`${R}/${lim.body.order_uuid}/approve_by_provider/`)
    await t.ctx.jobs.drain()
    assert.deepEqual((await o.get(`/api/marketplace-resources/${res.uuid}/`)).body.limits, { cpu: 4 })
    for (const attributes of ['x', [1], 3, null]) {
      const bad = await o.post(`/api/marketplace-resources/${res.uuid}/terminate/`, { attributes })
      assert.equal(bad.status, 400, JSON.stringify(attributes))
      assert.deepEqual(bad.body, { attributes: ['Expected a dictionary of items.'] })
    }
    const term = await o.post(`/api/marketplace-resources/${res.uuid}/terminate/`, {})
    assert.equal(term.status, 200)
    assert.equal((await o.get(`${R}/${term.body.order_uuid}/`)).body.type, 'Terminate')
    await as(users.provider).post(`${R}/${term.body.order_uuid}/approve_by_provider/`)
    await t.ctx.jobs.drain()
    assert.equal((await o.get(`/api/marketplace-resources/${res.uuid}/`)).body.state, 'Terminated')
    assert.equal(
      (await as(users.member).post(`/api/marketplace-resources/${res.uuid}/terminate/`, {})).status,
      409,
    )
    assert.equal(
      (await as(users.outsider).post(`/api/marketplace-resources/${res.uuid}/terminate/`, {})).status,
      404,
    )
  })
})

describe('records rendered by the database', () => {
  // List, retrieve and create answer JSON rendered by the database, sent as is. With every field
  // named, the same records are parsed, picked and serialized with the response schema, which
  // coerces each value to its declared type: the two agree only when every rendered field already
  // has its schema's type, on every order, for every kind of caller (tracebacks depend on it) and
  // with odd characters in the text fields.
  const all = `field=${ORDER_FIELDS.join(',')}`

  test('list and retrieve answer the same records with and without a selection of every field', async () => {
    const odd = {
      request_comment: 'quote " backslash \\ newline \n tab \t nul-ish \u0001 line-sep \u2028 é 😀',
      attributes: { name: 'ünïcode "name"', nested: { list: [1, 2.5, null, true] } },
      callback_url: 'https://example.com/hook?a=1&b="x"',
    }
    const created = await order(users.owner, 'Marketplace.Basic', odd)
    for (const [k, v] of Object.entries(odd)) assert.deepEqual(created.body[k], v, k)
    let compared = 0
    for (const who of [
      users.staff,
      users.support,
      users.owner,
      users.member,
      users.provider,
      users.offeringManager,
    ]) {
      const fast = await as(who).get(`${R}/?page_size=100&o=-created`)
      const slow = await as(who).get(`${R}/?page_size=100&o=-created&${all}`)
      assert.equal(fast.status, 200)
      assert.match(String(fast.headers['content-type']), /^application\/json/)
      assert.deepEqual(fast.body, slow.body)
      assert.equal(fast.headers['x-result-count'], slow.headers['x-result-count'])
      for (const o of fast.body as { uuid: string }[]) {
        const one = await as(who).get(`${R}/${o.uuid}/`)
        const oneSlow = await as(who).get(`${R}/${o.uuid}/?${all}`)
        assert.deepEqual(one.body, oneSlow.body)
        assert.deepEqual(one.body, o)
        compared++
      }
    }
    assert.ok(compared > 50, `compared ${compared} orders`)
    const staffList = (await as(users.staff).get(`${R}/?page_size=100`)).body as any[]
    // The data covers what the rendering special-cases.
    assert.ok(staffList.some((o) => o.type === 'Update' && o.old_plan_uuid && o.new_cost_estimate))
    assert.ok(staffList.some((o) => o.error_traceback))
    assert.ok(staffList.some((o) => o.can_terminate) && staffList.some((o) => !o.can_terminate))
    assert.ok(staffList.some((o) => o.request_comment?.includes('\u2028')))
    // The joined parts are the offering's, plan's and project's own values, and can_terminate
    // follows the offering type's rule.
    const fetched = new Map<string, any>()
    const get = async (url: string) => {
      if (!fetched.has(url)) fetched.set(url, (await as(users.staff).get(url)).body)
      return fetched.get(url)
    }
    for (const o of staffList) {
      const off = await get(`/api/marketplace-provider-offerings/${o.offering_uuid}/`)
      assert.equal(o.offering_name, off.name)
      assert.equal(o.offering_type, off.type)
      assert.equal(o.offering_shared, off.shared)
      assert.equal(o.offering_billable, off.billable)
      assert.deepEqual(o.offering_plugin_options, off.plugin_options)
      assert.equal(o.provider_uuid, off.customer_uuid)
      assert.equal(o.category_uuid, off.category_uuid)
      if (o.plan_uuid) {
        const plan = await get(`/api/marketplace-plans/${o.plan_uuid}/`)
        assert.equal(o.plan_name, plan.name)
        assert.equal(o.plan, plan.url)
      }
      const prj = await get(`/api/projects/${o.project_uuid}/`)
      assert.equal(o.project_name, prj.name)
      assert.equal(o.customer_uuid, prj.customer_uuid)
      const cancellable = !!OFFERING_TYPE_RULES[o.offering_type as keyof typeof OFFERING_TYPE_RULES]?.cancel
      const open = ['pending-consumer', 'pending-provider', 'executing'].includes(o.state)
      assert.equal(o.can_terminate, cancellable && open, `can_terminate of ${o.uuid}`)
    }
  })

  test('links use the request host; another host renders other links', async () => {
    const o = await order(users.manager)
    const r = await call(t.app, 'GET', `${R}/${o.uuid}/`, {
      token: users.manager.token,
      headers: { host: 'api.example.org:8443' },
    })
    assert.equal(r.body.url, `http://api.example.org:8443${R}/${o.uuid}/`)
    assert.equal(
      r.body.offering,
      `http://api.example.org:8443/api/marketplace-provider-offerings/${o.body.offering_uuid}/`,
    )
  })

  test('an order the caller may not see is 404 on the rendered path too', async () => {
    const o = await order(users.manager)
    const r = await as(users.outsider).get(`${R}/${o.uuid}/`)
    assert.equal(r.status, 404)
    assert.deepEqual(r.body, { detail: 'No Order matches the given query.' })
    assert.equal((await as(users.outsider).get(`${R}/not-a-uuid/`)).status, 404)
  })
})
