import { beforeEach, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { sharedTestApp } from '../support/app.js'
import { client } from '../support/client.js'
import {
  customerWithRole,
  grant,
  makeCustomer,
  makeProject,
  makeUser,
  type Ref,
  type UserRef,
  withStaff,
} from '../support/fixtures.js'
import { makeOffering, makeOfferingManager, providerGraph } from '../support/catalog-fixtures.js'
import { makeOrganizationGroup, makePlan, makeResource } from '../support/cost-policies-fixtures.js'
import {
  assertNewResourceAllowed,
  scheduleCostPolicyEvaluation,
} from '../../src/areas/cost-policies/service.js'

const t = sharedTestApp(async (t) => ({
  ...(await withStaff(t)),
  support: await makeUser(t.ctx, { support: true }),
}))

const BASE = '/api/marketplace-offering-estimated-cost-policies/'
const FORBIDDEN = { detail: 'You do not have permission to perform this action.' }
const BOTH =
  'Cannot set apply_to_all=True when organization_groups are specified. Choose one approach: either apply_to_all or specific organization_groups.'

/** A provider organization with an owner, an offering, its manager and a service provider manager. */
async function provider() {
  const g = providerGraph(t.ctx)
  const org = await g.customer()
  const offering = await makeOffering(t.ctx, org)
  const owner = await g.owner()
  const offeringManager = await makeOfferingManager(t.ctx, offering)
  return { org, offering, owner, offeringManager, spManager: await g.manager() }
}

async function createPolicy(token: string, body: Record<string, unknown>) {
  return client(t.app, token).post(BASE, {
    actions: 'notify_organization_owners',
    limit_cost: 100,
    apply_to_all: true,
    ...body,
  })
}

describe('cost policy records', () => {
  test('staff creates a policy; the record carries every field of 2.3', async () => {
    const p = await provider()
    const r = await client(t.app, t.staff.token).post(BASE, {
      scope: p.offering.url,
      actions: 'notify_organization_owners,block_creation_of_new_resources',
      limit_cost: 500,
      apply_to_all: true,
      options: { notify_organization_owners: { note: 'x' } },
    })
    assert.equal(r.status, 201, JSON.stringify(r.body))
    assert.deepEqual(r.body, {
      uuid: r.body.uuid,
      url: `http://localhost:80${BASE}${r.body.uuid}/`,
      scope: `http://localhost:80/api/marketplace-provider-offerings/${p.offering.uuid}/`,
      scope_name: p.offering.name,
      scope_uuid: p.offering.uuid,
      actions: 'notify_organization_owners,block_creation_of_new_resources',
      created: t.clock.now().toISOString(),
      created_by_full_name: (
        await t.ctx.db
          .selectFrom('users')
          .select('full_name')
          .where('id', '=', t.staff.id)
          .executeTakeFirstOrThrow()
      ).full_name,
      created_by_username: t.staff.username,
      has_fired: false,
      fired_datetime: null,
      options: { notify_organization_owners: { note: 'x' } },
      limit_cost: 500,
      period: 2,
      period_name: '1 month',
      organization_groups: [],
      apply_to_all: true,
      affected_resources_count: 0,
      current_cost: 0,
    })
    const got = await client(t.app, t.staff.token).get(`${BASE}${r.body.uuid}/`)
    assert.equal(got.status, 200)
    assert.deepEqual(got.body, r.body)
  })

  test('period takes 1 to 4 with their names; other values are 400', async () => {
    const p = await provider()
    const names = { 1: 'Total', 2: '1 month', 3: '3 month', 4: '12 month' }
    for (const [period, name] of Object.entries(names)) {
      const r = await createPolicy(t.staff.token, { scope: p.offering.url, period: Number(period) })
      assert.equal(r.status, 201)
      assert.equal(r.body.period, Number(period))
      assert.equal(r.body.period_name, name)
    }
    const asString = await createPolicy(t.staff.token, { scope: p.offering.url, period: '3' })
    assert.equal(asString.body.period, 3)
    const bad = await createPolicy(t.staff.token, { scope: p.offering.url, period: 5 })
    assert.equal(bad.status, 400)
    assert.deepEqual(bad.body, { period: ['"5" is not a valid choice.'] })
  })

  test('scope, actions and limit_cost are required; limit_cost is an integer', async () => {
    const r = await client(t.app, t.staff.token).post(BASE, {})
    assert.equal(r.status, 400)
    assert.deepEqual(r.body, {
      scope: ['This field is required.'],
      actions: ['This field is required.'],
      limit_cost: ['This field is required.'],
    })
    const p = await provider()
    const frac = await createPolicy(t.staff.token, { scope: p.offering.url, limit_cost: 1.5 })
    assert.equal(frac.status, 400)
    assert.deepEqual(frac.body, { limit_cost: ['A valid integer is required.'] })
  })

  test('unknown actions are refused naming the value', async () => {
    const p = await provider()
    const r = await createPolicy(t.staff.token, {
      scope: p.offering.url,
      actions: 'notify_organization_owners,terminate_resources',
    })
    assert.equal(r.status, 400)
    assert.deepEqual(r.body, {
      actions: ['notify_organization_owners,terminate_resources includes unavailable actions.'],
    })
    const blank = await createPolicy(t.staff.token, { scope: p.offering.url, actions: ' , ' })
    assert.deepEqual(blank.body, { actions: ['This field may not be blank.'] })
  })

  test('options must be an object; a JSON string holding one is accepted', async () => {
    const p = await provider()
    for (const options of [[1], 'not json', 3, '[1]']) {
      const r = await createPolicy(t.staff.token, { scope: p.offering.url, options })
      assert.equal(r.status, 400)
      assert.deepEqual(r.body, { options: ['Options must be a dictionary.'] })
    }
    const ok = await createPolicy(t.staff.token, { scope: p.offering.url, options: '{"a": 1}' })
    assert.equal(ok.status, 201)
    assert.deepEqual(ok.body.options, { a: 1 })
  })

  test('scope must be an offering URL', async () => {
    const p = await provider()
    const wrongKind = await createPolicy(t.staff.token, { scope: p.org.url })
    assert.equal(wrongKind.status, 400)
    assert.deepEqual(wrongKind.body, { scope: ['Invalid hyperlink - Incorrect URL match.'] })
    const unknown = await createPolicy(t.staff.token, {
      scope: 'http://localhost/api/marketplace-provider-offerings/00000000-0000-4000-8000-000000000000/',
    })
    assert.deepEqual(unknown.body, { scope: ['Invalid hyperlink - Object does not exist.'] })
  })

  test('the GET actions/ record lists the available actions with descriptions', async () => {
    const r = await client(t.app, t.support.token).get(`${BASE}actions/`)
    assert.equal(r.status, 200)
    assert.equal(r.body.actions, 'notify_organization_owners,block_creation_of_new_resources')
    assert.deepEqual(Object.keys(r.body.options), [
      'notify_organization_owners',
      'block_creation_of_new_resources',
    ])
    for (const d of Object.values(r.body.options)) assert.equal(typeof d, 'string')
    for (const k of [
      'uuid',
      'url',
      'scope',
      'limit_cost',
      'period',
      'has_fired',
      'organization_groups',
      'apply_to_all',
    ]) {
      assert.equal(r.body[k], null, k)
    }
    assert.equal((await client(t.app).get(`${BASE}actions/`)).status, 401)
  })
})

describe('apply_to_all and organization_groups', () => {
  test('the minimal request (scope, actions, limit_cost) makes a policy for every customer', async () => {
    const p = await provider()
    const r = await client(t.app, t.staff.token).post(BASE, {
      scope: p.offering.url,
      actions: 'notify_organization_owners',
      limit_cost: 100,
    })
    assert.equal(r.status, 201, JSON.stringify(r.body))
    assert.equal(r.body.apply_to_all, true)
    assert.deepEqual(r.body.organization_groups, [])
    assert.deepEqual((await client(t.app, t.staff.token).get(`${BASE}${r.body.uuid}/`)).body, r.body)
  })

  test('both is a non-field 400; neither, however spelled, covers every customer', async () => {
    const p = await provider()
    const group = await makeOrganizationGroup(t.ctx)
    const both = await createPolicy(t.staff.token, {
      scope: p.offering.url,
      apply_to_all: true,
      organization_groups: [group.url],
    })
    assert.equal(both.status, 400)
    assert.deepEqual(both.body, { non_field_errors: [BOTH] })
    for (const neither of [
      { apply_to_all: false },
      { apply_to_all: undefined, organization_groups: [] },
      { apply_to_all: false, organization_groups: [] },
    ]) {
      const r = await createPolicy(t.staff.token, { scope: p.offering.url, ...neither })
      assert.equal(r.status, 201, JSON.stringify(neither))
      assert.equal(r.body.apply_to_all, true, JSON.stringify(neither))
      assert.deepEqual(r.body.organization_groups, [])
    }
    const groups = await createPolicy(t.staff.token, {
      scope: p.offering.url,
      apply_to_all: false,
      organization_groups: [group.url],
    })
    assert.equal(groups.status, 201)
    assert.deepEqual(groups.body.organization_groups, [group.url])
    assert.equal(groups.body.apply_to_all, false)
  })

  test('on update missing keys fall back to the stored values', async () => {
    const p = await provider()
    const group = await makeOrganizationGroup(t.ctx)
    const created = await createPolicy(t.staff.token, {
      scope: p.offering.url,
      apply_to_all: false,
      organization_groups: [group.url],
    })
    const url = `${BASE}${created.body.uuid}/`
    const as = client(t.app, t.staff.token)
    const flip = await as.patch(url, { apply_to_all: true })
    assert.equal(flip.status, 400)
    assert.deepEqual(flip.body, { non_field_errors: [BOTH] })
    const back = await as.patch(url, { organization_groups: [group.url] })
    assert.equal(back.status, 200)
    assert.equal(back.body.apply_to_all, false)
    // Clearing the groups leaves no customer named: the policy now covers every customer.
    const clear = await as.patch(url, { organization_groups: [] })
    assert.equal(clear.status, 200)
    assert.equal(clear.body.apply_to_all, true)
    assert.deepEqual(clear.body.organization_groups, [])
    const narrow = await as.patch(url, { organization_groups: [group.url] })
    assert.deepEqual(narrow.body, { non_field_errors: [BOTH] })
    const switched = await as.patch(url, { apply_to_all: false, organization_groups: [group.url] })
    assert.equal(switched.status, 200)
    assert.equal(switched.body.apply_to_all, false)
    assert.deepEqual(switched.body.organization_groups, [group.url])
    const limitOnly = await as.patch(url, { limit_cost: 7 })
    assert.equal(limitOnly.status, 200)
    assert.equal(limitOnly.body.limit_cost, 7)
    assert.equal(limitOnly.body.apply_to_all, false)
    assert.deepEqual(limitOnly.body.organization_groups, [group.url])
  })

  test('organization group links are validated', async () => {
    const p = await provider()
    const r = await createPolicy(t.staff.token, {
      scope: p.offering.url,
      apply_to_all: false,
      organization_groups: ['http://localhost/api/organization-groups/00000000-0000-4000-8000-000000000000/'],
    })
    assert.equal(r.status, 400)
    assert.deepEqual(r.body, { organization_groups: ['Invalid hyperlink - Object does not exist.'] })
  })
})

describe('who may manage and see cost policies', () => {
  test('the provider owner and the offering manager create; others get 400 on scope', async () => {
    const p = await provider()
    for (const u of [p.owner, p.offeringManager]) {
      const r = await createPolicy(u.token, { scope: p.offering.url })
      assert.equal(r.status, 201, JSON.stringify(r.body))
      assert.equal(r.body.created_by_username, u.username)
    }
    const { user: consumer } = await customerWithRole(t.ctx, 'CUSTOMER.OWNER')
    for (const u of [p.spManager, t.support, consumer, await makeUser(t.ctx)]) {
      const r = await createPolicy(u.token, { scope: p.offering.url })
      assert.equal(r.status, 400)
      assert.deepEqual(r.body, { scope: ['User is not allowed to configure policies.'] })
    }
    assert.equal((await client(t.app).post(BASE, {})).status, 401)
  })

  test('update and delete: managers 200/204, visible non-managers 403, others 404', async () => {
    const p = await provider()
    const created = await createPolicy(t.staff.token, { scope: p.offering.url })
    const url = `${BASE}${created.body.uuid}/`
    for (const u of [p.spManager, t.support]) {
      const r = await client(t.app, u.token).patch(url, { limit_cost: 1 })
      assert.equal(r.status, 403)
      assert.deepEqual(r.body, FORBIDDEN)
      assert.equal((await client(t.app, u.token).delete(url)).status, 403)
    }
    const outsider = await makeUser(t.ctx)
    const r404 = await client(t.app, outsider.token).patch(url, { limit_cost: 1 })
    assert.equal(r404.status, 404)
    assert.deepEqual(r404.body, { detail: 'No OfferingEstimatedCostPolicy matches the given query.' })
    assert.equal((await client(t.app, outsider.token).delete(url)).status, 404)
    const patched = await client(t.app, p.offeringManager.token).patch(url, { limit_cost: 42, period: 4 })
    assert.equal(patched.status, 200)
    assert.equal(patched.body.limit_cost, 42)
    assert.equal(patched.body.period_name, '12 month')
    const put = await client(t.app, p.owner.token).put(url, {
      scope: p.offering.url,
      actions: 'block_creation_of_new_resources',
      limit_cost: 10,
      apply_to_all: true,
    })
    assert.equal(put.status, 200)
    assert.equal(put.body.actions, 'block_creation_of_new_resources')
    assert.equal(put.body.period, 4)
    const putPartial = await client(t.app, p.owner.token).put(url, { limit_cost: 10 })
    assert.equal(putPartial.status, 400)
    const del = await client(t.app, p.owner.token).delete(url)
    assert.equal(del.status, 204)
    assert.equal((await client(t.app, t.staff.token).get(url)).status, 404)
  })

  test('moving a policy to an offering the caller does not manage is refused on scope', async () => {
    const p = await provider()
    const q = await provider()
    const created = await createPolicy(p.owner.token, { scope: p.offering.url })
    const r = await client(t.app, p.owner.token).patch(`${BASE}${created.body.uuid}/`, {
      scope: q.offering.url,
    })
    assert.equal(r.status, 400)
    assert.deepEqual(r.body, { scope: ['User is not allowed to configure policies.'] })
  })

  test('staff and support see all; provider people see their offerings; consumers see none', async () => {
    const p = await provider()
    const q = await provider()
    const mine = await createPolicy(t.staff.token, { scope: p.offering.url })
    const theirs = await createPolicy(t.staff.token, { scope: q.offering.url })
    const scoped = async (u: UserRef) => {
      const r = await client(t.app, u.token).get(`${BASE}?page_size=300`)
      assert.equal(r.status, 200)
      return r.body
        .map((x: { uuid: string }) => x.uuid)
        .filter((x: string) => [mine.body.uuid, theirs.body.uuid].includes(x))
    }
    for (const u of [t.staff, t.support])
      assert.deepEqual((await scoped(u)).sort(), [mine.body.uuid, theirs.body.uuid].sort())
    for (const u of [p.owner, p.offeringManager, p.spManager])
      assert.deepEqual(await scoped(u), [mine.body.uuid])
    const consumer = await makeUser(t.ctx)
    const project = await makeProject(t.ctx, await makeCustomer(t.ctx))
    await grant(t.ctx, consumer, 'PROJECT.ADMIN', { type: 'project', id: project.id })
    assert.deepEqual(await scoped(consumer), [])
    assert.equal((await client(t.app, consumer.token).get(`${BASE}${mine.body.uuid}/`)).status, 404)
    assert.equal((await client(t.app, p.spManager.token).get(`${BASE}${mine.body.uuid}/`)).status, 200)
    assert.equal((await client(t.app, p.spManager.token).get(`${BASE}${theirs.body.uuid}/`)).status, 404)
  })
})

describe('cost policy list', () => {
  test('scope (offering URL) and scope_uuid filter; other kinds of URL give an empty list', async () => {
    const p = await provider()
    const q = await provider()
    const a = await createPolicy(t.staff.token, { scope: p.offering.url })
    t.clock.advance(1000)
    const b = await createPolicy(t.staff.token, { scope: p.offering.url })
    await createPolicy(t.staff.token, { scope: q.offering.url })
    const uuids = async (qs: string) => {
      const r = await client(t.app, t.staff.token).get(`${BASE}?${qs}`)
      assert.equal(r.status, 200)
      return r.body.map((x: { uuid: string }) => x.uuid)
    }
    // Default order: newest first.
    assert.deepEqual(await uuids(`scope=${encodeURIComponent(p.offering.url)}`), [b.body.uuid, a.body.uuid])
    assert.deepEqual(await uuids(`scope=/api/marketplace-provider-offerings/${p.offering.uuid}/`), [
      b.body.uuid,
      a.body.uuid,
    ])
    assert.deepEqual(await uuids(`scope_uuid=${p.offering.uuid}`), [b.body.uuid, a.body.uuid])
    assert.deepEqual(await uuids(`scope=${encodeURIComponent(p.org.url)}`), [])
    const bad = await client(t.app, t.staff.token).get(`${BASE}?scope_uuid=xyz`)
    assert.equal(bad.status, 400)
    assert.deepEqual(bad.body, { scope_uuid: ['Enter a valid UUID.'] })
    const fields = await client(t.app, t.staff.token).get(
      `${BASE}?scope_uuid=${p.offering.uuid}&field=uuid&field=limit_cost`,
    )
    assert.deepEqual(fields.body[0], { uuid: b.body.uuid, limit_cost: 100 })
    assert.equal(fields.headers['x-result-count'], '2')
  })
})

// ---- the policy at work ----

interface Setup {
  p: Awaited<ReturnType<typeof provider>>
  owner2: UserRef
  plan: Ref
  consumer: Ref
  project: Ref
}

/** A policy on the setup's offering, created by staff. */
function offeringPolicy(s: Setup, body: Record<string, unknown>) {
  return createPolicy(t.staff.token, { scope: s.p.offering.url, ...body })
}

async function setup(monthly = 100): Promise<Setup> {
  const p = await provider()
  const owner2 = await makeUser(t.ctx)
  await grant(t.ctx, owner2, 'CUSTOMER.OWNER', { type: 'customer', id: p.org.id })
  const plan = await makePlan(t.ctx, p.offering, { unit: 'month', unitPrice: monthly })
  const consumer = await makeCustomer(t.ctx)
  const project = await makeProject(t.ctx, consumer)
  return { p, owner2, plan, consumer, project }
}

async function addResources(
  s: Setup,
  n: number,
  extra: { customer?: Ref; project?: Ref; state?: string; created?: string } = {},
) {
  for (let i = 0; i < n; i++) {
    await makeResource(t.ctx, {
      offering: s.p.offering,
      plan: s.plan,
      customer: extra.customer ?? s.consumer,
      project: extra.project ?? s.project,
      state: extra.state,
      created: extra.created,
    })
  }
}

/** What the orders area does when a resource changes: schedule in its transaction, then the worker runs. */
async function resourcesChanged(offering: Ref) {
  await t.ctx.db.transaction().execute((trx) => scheduleCostPolicyEvaluation(t.ctx, trx, offering.id))
  await t.ctx.jobs.drain()
}

async function policy(uuid: string) {
  const r = await client(t.app, t.staff.token).get(`${BASE}${uuid}/`)
  assert.equal(r.status, 200)
  return r.body
}

async function notifications(policyUuid: string) {
  const rows = await t.ctx.db
    .selectFrom('events')
    .select(['event_type', 'recipient_user_id', 'message', 'created'])
    .where('event_type', '=', 'policy_notification')
    .orderBy('id')
    .execute()
  return rows.filter((r) => r.message.includes(policyUuid))
}

async function blocked(s: Setup, customer = s.consumer): Promise<string | null> {
  try {
    await assertNewResourceAllowed(t.ctx, t.ctx.db, { offeringId: s.p.offering.id, customerId: customer.id })
    return null
  } catch (e) {
    return JSON.stringify((e as { body: unknown }).body)
  }
}

describe('a policy fires when the estimated cost goes above its limit', () => {
  beforeEach(() => t.clock.set('2026-01-15T10:00:00.000Z'))

  test('at or below the limit nothing happens; strictly above it fires once, notifies every owner and blocks', async () => {
    const s = await setup(100)
    const created = await createPolicy(s.p.owner.token, {
      scope: s.p.offering.url,
      actions: 'notify_organization_owners,block_creation_of_new_resources',
      limit_cost: 300,
    })
    const uuid = created.body.uuid as string
    await addResources(s, 3)
    await resourcesChanged(s.p.offering)
    let p = await policy(uuid)
    assert.equal(p.has_fired, false, 'cost 300 equals the limit: no firing')
    assert.equal(p.fired_datetime, null)
    assert.equal(p.affected_resources_count, 3)
    assert.equal(p.current_cost, 300)
    assert.deepEqual(await notifications(uuid), [])
    assert.equal(await blocked(s), null)

    t.clock.advanceHours(1)
    await addResources(s, 1)
    await resourcesChanged(s.p.offering)
    p = await policy(uuid)
    assert.equal(p.has_fired, true, 'cost 400 is above 300')
    assert.equal(p.fired_datetime, t.clock.now().toISOString())
    assert.equal(p.affected_resources_count, 4)
    assert.equal(p.current_cost, 400)
    const sent = await notifications(uuid)
    assert.deepEqual(sent.map((n) => n.recipient_user_id).sort(), [s.p.owner.id, s.owner2.id].sort())
    assert.match(
      sent[0]!.message,
      new RegExp(
        `Policy ${uuid} of offering "${s.p.offering.name}" has fired: the estimated cost 400.00 exceeds the limit 300.`,
      ),
    )
    assert.equal(
      await blocked(s),
      JSON.stringify({
        non_field_errors: [
          `Creation of new resources for this offering is not available due to the policy ${uuid} (limit 300).`,
        ],
      }),
    )

    // More changes in the same period: no second firing, no second notification.
    t.clock.advanceHours(1)
    await addResources(s, 1)
    await resourcesChanged(s.p.offering)
    p = await policy(uuid)
    assert.equal(p.has_fired, true)
    assert.equal(p.fired_datetime, new Date(Date.parse('2026-01-15T11:00:00.000Z')).toISOString())
    assert.equal((await notifications(uuid)).length, 2)
  })

  test('terminated resources, other offerings and blocked or archived customers do not count', async () => {
    const s = await setup(100)
    const created = await offeringPolicy(s, {
      limit_cost: 150,
      actions: 'block_creation_of_new_resources',
    })
    await addResources(s, 1)
    await addResources(s, 3, { state: 'Terminated' })
    const blockedOrg = await makeCustomer(t.ctx)
    await t.ctx.db.updateTable('customers').set({ blocked: 1 }).where('id', '=', blockedOrg.id).execute()
    const archivedOrg = await makeCustomer(t.ctx)
    await t.ctx.db.updateTable('customers').set({ archived: 1 }).where('id', '=', archivedOrg.id).execute()
    await addResources(s, 1, { customer: blockedOrg, project: await makeProject(t.ctx, blockedOrg) })
    await addResources(s, 1, { customer: archivedOrg, project: await makeProject(t.ctx, archivedOrg) })
    const elsewhere = await setup(1000)
    await addResources(elsewhere, 2)
    await resourcesChanged(s.p.offering)
    assert.equal((await policy(created.body.uuid)).has_fired, false)
    await addResources(s, 1, { state: 'Creating' })
    await resourcesChanged(s.p.offering)
    assert.equal((await policy(created.body.uuid)).has_fired, true)
  })

  test('creating a policy evaluates it at once', async () => {
    const s = await setup(100)
    await addResources(s, 2)
    const created = await offeringPolicy(s, { limit_cost: 199 })
    assert.equal(created.body.has_fired, false)
    await t.ctx.jobs.drain()
    const p = await policy(created.body.uuid)
    assert.equal(p.has_fired, true)
    assert.equal(p.fired_datetime, t.clock.now().toISOString())
  })

  test('a policy with organization groups counts and blocks only the customers of those groups', async () => {
    const s = await setup(100)
    const inGroup = s.consumer
    const outside = await makeCustomer(t.ctx)
    const group = await makeOrganizationGroup(t.ctx, [inGroup])
    const created = await offeringPolicy(s, {
      apply_to_all: false,
      organization_groups: [group.url],
      actions: 'block_creation_of_new_resources',
      limit_cost: 150,
    })
    await addResources(s, 5, { customer: outside, project: await makeProject(t.ctx, outside) })
    await addResources(s, 1)
    await resourcesChanged(s.p.offering)
    assert.equal((await policy(created.body.uuid)).has_fired, false, 'only 100 from the group')
    await addResources(s, 1)
    await resourcesChanged(s.p.offering)
    assert.equal((await policy(created.body.uuid)).has_fired, true)
    assert.ok(await blocked(s, inGroup))
    assert.equal(await blocked(s, outside), null)
  })

  test('a notify-only policy does not block', async () => {
    const s = await setup(100)
    const created = await offeringPolicy(s, {
      limit_cost: 50,
      actions: 'notify_organization_owners',
    })
    await addResources(s, 1)
    await resourcesChanged(s.p.offering)
    assert.equal((await policy(created.body.uuid)).has_fired, true)
    assert.equal(await blocked(s), null)
  })

  test('the period decides which months count: Total sums since creation, 1 month only the current one', async () => {
    const s = await setup(100)
    await addResources(s, 1, { created: '2025-11-20T00:00:00.000Z' })
    const total = await offeringPolicy(s, { limit_cost: 250, period: 1 })
    const month = await offeringPolicy(s, { limit_cost: 250, period: 2 })
    const quarter = await offeringPolicy(s, { limit_cost: 250, period: 3 })
    const year = await offeringPolicy(s, { limit_cost: 299, period: 4 })
    await t.ctx.jobs.drain()
    assert.equal((await policy(total.body.uuid)).has_fired, true, 'Nov+Dec+Jan = 300')
    assert.equal((await policy(month.body.uuid)).has_fired, false, 'Jan = 100')
    assert.equal((await policy(quarter.body.uuid)).has_fired, true, 'Nov..Jan = 300')
    assert.equal((await policy(year.body.uuid)).has_fired, true, 'Nov..Jan = 300 > 299')
  })

  test('the estimate adds prices in decimal: 4 + 0.015 a month for three months is 12.05, above 12', async () => {
    const p = await provider()
    const plan = await makePlan(t.ctx, p.offering, { unit: 'month', unitPrice: 4, fixedPrice: 0.015 })
    const consumer = await makeCustomer(t.ctx)
    const project = await makeProject(t.ctx, consumer)
    await makeResource(t.ctx, {
      offering: p.offering,
      plan,
      customer: consumer,
      project,
      created: '2025-11-20T00:00:00.000Z',
    })
    const quarter = await createPolicy(t.staff.token, { scope: p.offering.url, limit_cost: 12, period: 3 })
    await t.ctx.jobs.drain()
    assert.equal((await policy(quarter.body.uuid)).has_fired, true)
    const [sent] = await notifications(quarter.body.uuid)
    // Binary floats summed 12.044999999999998 and reported 12.04.
    assert.match(sent!.message, /the estimated cost 12\.05 exceeds the limit 12\./)
  })

  test('scheduling is a no-op for an offering without policies', async () => {
    const s = await setup(100)
    const before = await t.ctx.db
      .selectFrom('jobs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
    await t.ctx.db.transaction().execute((trx) => scheduleCostPolicyEvaluation(t.ctx, trx, s.p.offering.id))
    const after = await t.ctx.db
      .selectFrom('jobs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
    assert.equal(Number(after.n), Number(before.n))
  })
})

describe('a fired policy resets', () => {
  beforeEach(() => t.clock.set('2026-01-15T10:00:00.000Z'))

  test('raising the limit above the cost resets has_fired and keeps fired_datetime; creation is allowed again', async () => {
    const s = await setup(100)
    await addResources(s, 2)
    const created = await createPolicy(s.p.owner.token, {
      scope: s.p.offering.url,
      limit_cost: 150,
      actions: 'notify_organization_owners,block_creation_of_new_resources',
    })
    await t.ctx.jobs.drain()
    const fired = await policy(created.body.uuid)
    assert.equal(fired.has_fired, true)
    assert.ok(await blocked(s))
    t.clock.advanceHours(2)
    const raised = await client(t.app, s.p.owner.token).patch(`${BASE}${created.body.uuid}/`, {
      limit_cost: 200,
    })
    assert.equal(raised.status, 200)
    await t.ctx.jobs.drain()
    const reset = await policy(created.body.uuid)
    assert.equal(reset.has_fired, false, 'cost 200 is no longer above 200')
    assert.equal(reset.fired_datetime, fired.fired_datetime)
    assert.equal(await blocked(s), null)
    // Lowering it again fires again, with a new notification.
    await client(t.app, s.p.owner.token).patch(`${BASE}${created.body.uuid}/`, { limit_cost: 199 })
    await t.ctx.jobs.drain()
    const again = await policy(created.body.uuid)
    assert.equal(again.has_fired, true)
    assert.equal(again.fired_datetime, t.clock.now().toISOString())
    assert.equal((await notifications(created.body.uuid)).length, 4)
  })

  test('terminating resources brings the cost back under the limit and resets', async () => {
    const s = await setup(100)
    await addResources(s, 3)
    const created = await offeringPolicy(s, { limit_cost: 250 })
    await t.ctx.jobs.drain()
    assert.equal((await policy(created.body.uuid)).has_fired, true)
    await t.ctx.db
      .updateTable('resources')
      .set({ state: 'Terminated' })
      .where('offering_id', '=', s.p.offering.id)
      .execute()
    await resourcesChanged(s.p.offering)
    assert.equal((await policy(created.body.uuid)).has_fired, false)
  })

  test('a new period resets the policy at the month start and it fires once for the new period', async () => {
    const s = await setup(100)
    await addResources(s, 2)
    const created = await offeringPolicy(s, {
      limit_cost: 150,
      actions: 'notify_organization_owners,block_creation_of_new_resources',
    })
    await t.ctx.jobs.drain()
    const january = await policy(created.body.uuid)
    assert.equal(january.fired_datetime, '2026-01-15T10:00:00.000Z')
    assert.equal((await notifications(created.body.uuid)).length, 2)

    // Still January: the re-check queued for the month start is not due yet.
    t.clock.set('2026-01-31T23:59:59.000Z')
    await t.ctx.jobs.drain()
    assert.equal((await policy(created.body.uuid)).fired_datetime, '2026-01-15T10:00:00.000Z')

    // February: the queued re-check resets the January firing and fires for February.
    t.clock.set('2026-02-01T00:00:00.000Z')
    await t.ctx.jobs.drain()
    const february = await policy(created.body.uuid)
    assert.equal(february.has_fired, true)
    assert.equal(february.fired_datetime, '2026-02-01T00:00:00.000Z')
    assert.equal((await notifications(created.body.uuid)).length, 4)

    // A new month where the cost is under the limit: reset and stays reset.
    await t.ctx.db
      .updateTable('resources')
      .set({ state: 'Terminated' })
      .where('offering_id', '=', s.p.offering.id)
      .execute()
    t.clock.set('2026-03-01T00:00:00.000Z')
    await t.ctx.jobs.drain()
    const march = await policy(created.body.uuid)
    assert.equal(march.has_fired, false)
    assert.equal(march.fired_datetime, '2026-02-01T00:00:00.000Z')
    assert.equal(await blocked(s), null)
    assert.equal((await notifications(created.body.uuid)).length, 4)
  })

  test('a stale firing from an earlier period is reset even before the scheduled re-check', async () => {
    const s = await setup(100)
    await addResources(s, 1, { created: '2025-12-10T00:00:00.000Z' })
    const created = await offeringPolicy(s, { limit_cost: 150, period: 1 })
    await t.ctx.jobs.drain()
    assert.equal((await policy(created.body.uuid)).has_fired, true, 'Total: Dec + Jan = 200')
    await client(t.app, t.staff.token).patch(`${BASE}${created.body.uuid}/`, { period: 2 })
    await t.ctx.jobs.drain()
    assert.equal((await policy(created.body.uuid)).has_fired, false, '1 month: Jan = 100')
  })
})

describe('a fired blocking policy refuses new Create orders', () => {
  beforeEach(() => t.clock.set('2026-01-15T10:00:00.000Z'))

  test('orders count as they are created; above the limit the next Create order is 400 naming the policy; deleting one lifts the block', async () => {
    const s = await setup(100)
    const buyer = await makeUser(t.ctx)
    await grant(t.ctx, buyer, 'CUSTOMER.OWNER', { type: 'customer', id: s.consumer.id })
    const created = await createPolicy(s.p.owner.token, {
      scope: s.p.offering.url,
      actions: 'block_creation_of_new_resources',
      limit_cost: 150,
    })
    const uuid = created.body.uuid as string
    await t.ctx.jobs.drain()
    const orderBody = { offering: s.p.offering.url, plan: s.plan.url, project: s.project.url }
    const first = await client(t.app, buyer.token).post('/api/marketplace-orders/', orderBody)
    assert.equal(first.status, 201, JSON.stringify(first.body))
    await t.ctx.jobs.drain()
    assert.equal((await policy(uuid)).has_fired, false, '100 is not above 150')
    const second = await client(t.app, buyer.token).post('/api/marketplace-orders/', orderBody)
    assert.equal(second.status, 201, JSON.stringify(second.body))
    await t.ctx.jobs.drain()
    assert.equal((await policy(uuid)).has_fired, true, '200 is above 150')

    const refused = await client(t.app, buyer.token).post('/api/marketplace-orders/', orderBody)
    assert.equal(refused.status, 400)
    assert.deepEqual(refused.body, {
      non_field_errors: [
        `Creation of new resources for this offering is not available due to the policy ${uuid} (limit 150).`,
      ],
    })
    // Staff are refused too: the block is about the offering's cost, not the caller.
    const byStaff = await client(t.app, t.staff.token).post('/api/marketplace-orders/', orderBody)
    assert.equal(byStaff.status, 400)
    const orders = await t.ctx.db
      .selectFrom('orders')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('offering_id', '=', s.p.offering.id)
      .executeTakeFirstOrThrow()
    assert.equal(Number(orders.n), 2, 'refused orders leave no rows')

    // Another offering of the same provider is not affected.
    const otherOffering = await makeOffering(t.ctx, s.p.org)
    const otherPlan = await makePlan(t.ctx, otherOffering, { unitPrice: 1000 })
    const elsewhere = await client(t.app, buyer.token).post('/api/marketplace-orders/', {
      offering: otherOffering.url,
      plan: otherPlan.url,
      project: s.project.url,
    })
    assert.equal(elsewhere.status, 201, JSON.stringify(elsewhere.body))

    // Deleting a pending order terminates its resource: the cost drops back, the block lifts.
    const del = await client(t.app, buyer.token).delete(`/api/marketplace-orders/${second.body.uuid}/`)
    assert.equal(del.status, 204, JSON.stringify(del.body))
    await t.ctx.jobs.drain()
    assert.equal((await policy(uuid)).has_fired, false)
    const allowed = await client(t.app, buyer.token).post('/api/marketplace-orders/', orderBody)
    assert.equal(allowed.status, 201, JSON.stringify(allowed.body))
  })

  test('a canceled or rejected Create order terminates its resource: the estimate drops and the block lifts', async () => {
    const s = await setup(100)
    const buyer = await makeUser(t.ctx)
    await grant(t.ctx, buyer, 'CUSTOMER.OWNER', { type: 'customer', id: s.consumer.id })
    const created = await createPolicy(s.p.owner.token, {
      scope: s.p.offering.url,
      actions: 'block_creation_of_new_resources',
      limit_cost: 250,
    })
    const uuid = created.body.uuid as string
    const orderBody = { offering: s.p.offering.url, plan: s.plan.url, project: s.project.url }
    const placed: { uuid: string; marketplace_resource_uuid: string }[] = []
    for (let i = 0; i < 3; i++) {
      const r = await client(t.app, buyer.token).post('/api/marketplace-orders/', orderBody)
      assert.equal(r.status, 201, JSON.stringify(r.body))
      assert.equal(r.body.state, 'pending-provider')
      placed.push(r.body)
    }
    await t.ctx.jobs.drain()
    let p = await policy(uuid)
    assert.deepEqual([p.affected_resources_count, p.current_cost, p.has_fired], [3, 300, true])
    assert.equal((await client(t.app, buyer.token).post('/api/marketplace-orders/', orderBody)).status, 400)
    const resourceState = async (o: { marketplace_resource_uuid: string }) =>
      (await client(t.app, buyer.token).get(`/api/marketplace-resources/${o.marketplace_resource_uuid}/`))
        .body.state

    // The consumer cancels the first while the provider has not looked at it yet.
    const cancel = await client(t.app, buyer.token).post(`/api/marketplace-orders/${placed[0]!.uuid}/cancel/`)
    assert.equal(cancel.status, 202, cancel.text)
    assert.equal(await resourceState(placed[0]!), 'Terminated')
    await t.ctx.jobs.drain()
    p = await policy(uuid)
    assert.deepEqual([p.affected_resources_count, p.current_cost, p.has_fired], [2, 200, false])

    // The provider rejects the second.
    const reject = await client(t.app, s.p.owner.token).post(
      `/api/marketplace-orders/${placed[1]!.uuid}/reject_by_provider/`,
    )
    assert.equal(reject.status, 200, reject.text)
    assert.equal(await resourceState(placed[1]!), 'Terminated')
    await t.ctx.jobs.drain()
    p = await policy(uuid)
    assert.deepEqual([p.affected_resources_count, p.current_cost], [1, 100])

    // The third is approved and canceled while executing, before it is processed: it is never
    // provisioned, and its resource is terminated too.
    const approve = await client(t.app, s.p.owner.token).post(
      `/api/marketplace-orders/${placed[2]!.uuid}/approve_by_provider/`,
    )
    assert.equal(approve.status, 200, approve.text)
    const order = async () =>
      (await client(t.app, buyer.token).get(`/api/marketplace-orders/${placed[2]!.uuid}/`)).body.state
    assert.equal(await order(), 'executing')
    assert.equal(
      (await client(t.app, buyer.token).post(`/api/marketplace-orders/${placed[2]!.uuid}/cancel/`)).status,
      202,
    )
    await t.ctx.jobs.drain()
    assert.equal(await order(), 'canceled')
    assert.equal(await resourceState(placed[2]!), 'Terminated')
    p = await policy(uuid)
    assert.deepEqual([p.affected_resources_count, p.current_cost], [0, 0])

    // New orders are taken again, and one that completes counts.
    const next = await client(t.app, buyer.token).post('/api/marketplace-orders/', orderBody)
    assert.equal(next.status, 201, JSON.stringify(next.body))
    await client(t.app, s.p.owner.token).post(
      `/api/marketplace-orders/${next.body.uuid}/approve_by_provider/`,
    )
    await t.ctx.jobs.drain()
    assert.equal(await resourceState(next.body), 'OK')
    assert.equal((await policy(uuid)).current_cost, 100)
  })

  test('a policy made by the minimal request counts every customer and blocks any', async () => {
    const s = await setup(100)
    const created = await client(t.app, s.p.owner.token).post(BASE, {
      scope: s.p.offering.url,
      actions: 'block_creation_of_new_resources',
      limit_cost: 150,
    })
    assert.equal(created.status, 201, JSON.stringify(created.body))
    const uuid = created.body.uuid as string
    const other = await makeCustomer(t.ctx)
    await addResources(s, 1)
    await resourcesChanged(s.p.offering)
    assert.equal((await policy(uuid)).has_fired, false, '100 is not above 150')
    await addResources(s, 1, { customer: other, project: await makeProject(t.ctx, other) })
    await resourcesChanged(s.p.offering)
    assert.equal((await policy(uuid)).has_fired, true, 'two customers: 200 is above 150')
    const newcomer = await makeCustomer(t.ctx)
    const refused = await client(t.app, t.staff.token).post('/api/marketplace-orders/', {
      offering: s.p.offering.url,
      plan: s.plan.url,
      project: (await makeProject(t.ctx, newcomer)).url,
    })
    assert.equal(refused.status, 400)
    assert.deepEqual(refused.body, {
      non_field_errors: [
        `Creation of new resources for this offering is not available due to the policy ${uuid} (limit 150).`,
      ],
    })
  })

  test('a policy limited to organization groups blocks only their customers', async () => {
    const s = await setup(100)
    const group = await makeOrganizationGroup(t.ctx, [s.consumer])
    const created = await offeringPolicy(s, {
      actions: 'block_creation_of_new_resources',
      limit_cost: 50,
      apply_to_all: false,
      organization_groups: [group.url],
    })
    await addResources(s, 1)
    await resourcesChanged(s.p.offering)
    assert.equal((await policy(created.body.uuid)).has_fired, true)
    const outsider = await makeCustomer(t.ctx)
    const outsiderProject = await makeProject(t.ctx, outsider)
    const inScope = await client(t.app, t.staff.token).post('/api/marketplace-orders/', {
      offering: s.p.offering.url,
      plan: s.plan.url,
      project: s.project.url,
    })
    assert.equal(inScope.status, 400)
    assert.match(inScope.body.non_field_errors[0], new RegExp(created.body.uuid))
    const outOfScope = await client(t.app, t.staff.token).post('/api/marketplace-orders/', {
      offering: s.p.offering.url,
      plan: s.plan.url,
      project: outsiderProject.url,
    })
    assert.equal(outOfScope.status, 201, JSON.stringify(outOfScope.body))
  })
})

describe('plan price changes', () => {
  beforeEach(() => t.clock.set('2026-01-15T10:00:00.000Z'))

  test('raising a plan price re-evaluates the offering policies', async () => {
    const s = await setup(100)
    await addResources(s, 2)
    const created = await offeringPolicy(s, { limit_cost: 250 })
    await t.ctx.jobs.drain()
    assert.equal((await policy(created.body.uuid)).has_fired, false)
    const r = await client(t.app, t.staff.token).patch(`/api/marketplace-plans/${s.plan.uuid}/`, {
      unit_price: '130',
    })
    assert.equal(r.status, 200, JSON.stringify(r.body))
    await t.ctx.jobs.drain()
    assert.equal((await policy(created.body.uuid)).has_fired, true, '2 × 130 = 260 > 250')
  })
})
