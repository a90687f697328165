import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { sharedTestApp } from '../support/app.js'
import { BASE, client, uuids } from '../support/client.js'
import { grant, makeCustomer, makeProject, makeUser, roleGraph } from '../support/fixtures.js'
import {
  makeCategory,
  makeOffering,
  makeOfferingManager,
  makePlan,
  makeResource,
  makeServiceSettings,
  providerGraph,
} from '../support/catalog-fixtures.js'
import { registerResourceScope, resourceRecord, offeringRecord } from '../../src/areas/catalog/service.js'

const t = sharedTestApp()

const RESOURCES = '/api/marketplace-resources/'

describe('marketplace resources', () => {
  test('a resource record carries its offering, plan, project, customer, provider and category', async () => {
    const p = providerGraph(t.ctx)
    const g = roleGraph(t.ctx)
    const provider = await p.customer()
    // The provider graph's organization is a service provider already.
    await t.ctx.db
      .updateTable('service_providers')
      .set({ description: 'We run clusters.' })
      .where('customer_id', '=', provider.id)
      .execute()
    const cat = await makeCategory(t.ctx, 'Resources cat')
    const o = await makeOffering(t.ctx, provider, {
      name: 'Res offering',
      categoryId: cat.id,
      pluginOptions: { account_name_generation_policy: 'project_slug' },
    })
    await t.ctx.db
      .updateTable('offerings')
      .set({ backend_id: 'cluster-1', description: 'An HPC cluster' })
      .where('id', '=', o.id)
      .execute()
    const plan = await makePlan(t.ctx, o, { name: 'Res plan' })
    const project = await g.project()
    const customer = await g.customer()
    const r = await makeResource(t.ctx, o, project, {
      name: 'my-vm',
      planId: plan.id,
      backendId: 'vm-1',
      attributes: { name: 'my-vm', size: 2 },
      limits: { cpu: 4 },
      slug: 'my-vm-1',
    })
    const res = await client(t.app, (await g.owner()).token).get(`${RESOURCES}${r.uuid}/`)
    assert.equal(res.status, 200)
    const projectRow = await t.ctx.db
      .selectFrom('projects')
      .select(['slug'])
      .where('id', '=', project.id)
      .executeTakeFirstOrThrow()
    const slugs = await t.ctx.db
      .selectFrom('customers')
      .select(['id', 'slug'])
      .where('id', 'in', [customer.id, provider.id])
      .execute()
    const slugOf = (id: number) => slugs.find((x) => x.id === id)!.slug
    const created = '2026-01-15T10:00:00.000Z'
    assert.deepEqual(res.body, {
      url: `${BASE}${RESOURCES}${r.uuid}/`,
      uuid: r.uuid,
      name: 'my-vm',
      slug: 'my-vm-1',
      description: '',
      offering: `${BASE}/api/marketplace-provider-offerings/${o.uuid}/`,
      offering_uuid: o.uuid,
      offering_name: 'Res offering',
      offering_type: 'Marketplace.Basic',
      offering_description: 'An HPC cluster',
      offering_slug: 'res-offering',
      offering_image: null,
      offering_thumbnail: null,
      offering_shared: true,
      offering_billable: true,
      offering_plugin_options: { account_name_generation_policy: 'project_slug' },
      offering_backend_id: 'cluster-1',
      offering_state: 'Active',
      offering_components: [],
      plan: `${BASE}/api/marketplace-plans/${plan.uuid}/`,
      plan_uuid: plan.uuid,
      plan_name: 'Res plan',
      plan_unit: 'month',
      plan_description: '',
      project: `${BASE}/api/projects/${project.uuid}/`,
      project_uuid: project.uuid,
      project_name: project.name,
      project_slug: projectRow.slug,
      project_description: '',
      project_end_date: null,
      project_end_date_requested_by: null,
      project_effective_end_date: null,
      project_is_in_grace_period: false,
      customer: `${BASE}/api/customers/${customer.uuid}/`,
      customer_uuid: customer.uuid,
      customer_name: customer.name,
      customer_slug: slugOf(customer.id),
      provider_uuid: provider.uuid,
      provider_name: provider.name,
      provider_slug: slugOf(provider.id),
      provider_description: 'We run clusters.',
      category_uuid: cat.uuid,
      category_title: 'Resources cat',
      category_icon: null,
      state: 'OK',
      attributes: { name: 'my-vm', size: 2 },
      limits: { cpu: 4 },
      backend_id: 'vm-1',
      effective_id: '',
      backend_metadata: {},
      resource_type: '',
      scope: null,
      resource_uuid: null,
      end_date: null,
      end_date_requested_by: null,
      end_date_updated_at: null,
      resource_effective_end_date: null,
      renewal_date: null,
      paused: false,
      downscaled: false,
      restrict_member_access: false,
      usage_limit_restriction: '',
      is_usage_based: false,
      is_limit_based: false,
      current_usages: {},
      limit_usage: {},
      report: [],
      endpoints: [],
      error_message: '',
      error_traceback: '',
      options: null,
      available_actions: ['terminate', 'switch_plan', 'update_limits'],
      can_terminate: true,
      username: null,
      user_requires_reconsent: false,
      has_api_keys: false,
      last_sync: created,
      order_in_progress: null,
      creation_order: null,
      created,
      modified: created,
    })
    // A list shows the same record, without the orders.
    const listed = await client(t.app, (await g.owner()).token).get(`${RESOURCES}?uuid=${r.uuid}`)
    const { order_in_progress: _o, creation_order: _c, ...rest } = res.body
    assert.deepEqual(listed.body, [rest])
    // As a write answers it (no caller): nothing to terminate with.
    assert.deepEqual(await resourceRecord(t.ctx, BASE, r.id), { ...rest, can_terminate: false })
  })

  test('fields without a value are left out: no category, no parent offering, no service settings', async () => {
    const staff = await makeUser(t.ctx, { staff: true })
    const o = await makeOffering(t.ctx, await makeCustomer(t.ctx))
    const r = await makeResource(t.ctx, o, await makeProject(t.ctx, await makeCustomer(t.ctx)))
    const body = (await client(t.app, staff.token).get(`${RESOURCES}${r.uuid}/`)).body
    for (const absent of [
      'category_uuid',
      'category_title',
      'category_icon',
      'parent_offering_uuid',
      'parent_offering_name',
      'parent_offering_slug',
      'service_settings_uuid',
      'parent_uuid',
      'parent_name',
    ]) {
      assert.equal(absent in body, false, absent)
    }
    assert.equal(body.plan, null)
    assert.equal(body.plan_unit, null)
    const parent = await makeOffering(t.ctx, await makeCustomer(t.ctx), { name: 'Parent offering' })
    const settings = await makeServiceSettings(t.ctx)
    await t.ctx.db
      .updateTable('offerings')
      .set({ parent_id: parent.id, service_settings_id: settings.id })
      .where('id', '=', o.id)
      .execute()
    const linked = (await client(t.app, staff.token).get(`${RESOURCES}${r.uuid}/`)).body
    assert.equal(linked.parent_offering_uuid, parent.uuid)
    assert.equal(linked.parent_offering_name, 'Parent offering')
    assert.equal(linked.parent_offering_slug, 'parent-offering')
    assert.equal(linked.service_settings_uuid, settings.uuid)
  })

  test('consumers, provider people, offering managers, staff and support see a resource; others do not', async () => {
    const p = providerGraph(t.ctx)
    const g = roleGraph(t.ctx)
    const o = await makeOffering(t.ctx, await p.customer())
    const r = await makeResource(t.ctx, o, await g.project())
    const om = await makeOfferingManager(t.ctx, o)
    const seeing = [
      await g.owner(),
      await g.admin(),
      await g.manager(),
      await g.member(),
      await p.owner(),
      await p.manager(),
      await p.support(),
      om,
      await makeUser(t.ctx, { staff: true }),
      await makeUser(t.ctx, { support: true }),
    ]
    for (const u of seeing) {
      const as = client(t.app, u.token)
      assert.equal((await as.get(`${RESOURCES}${r.uuid}/`)).status, 200, u.username)
      assert.deepEqual(uuids((await as.get(`${RESOURCES}?offering_uuid=${o.uuid}`)).body), [r.uuid])
    }
    // A member of another project of the same organization is not a consumer of this resource.
    const sibling = await makeUser(t.ctx)
    await grant(t.ctx, sibling, 'PROJECT.ADMIN', {
      type: 'project',
      id: (await makeProject(t.ctx, await g.customer())).id,
    })
    const otherOm = await makeOfferingManager(t.ctx, await makeOffering(t.ctx, await p.customer()))
    for (const u of [await g.outsider(), sibling, otherOm]) {
      const as = client(t.app, u.token)
      const no = await as.get(`${RESOURCES}${r.uuid}/`)
      assert.equal(no.status, 404)
      assert.deepEqual(no.body, { detail: 'No Resource matches the given query.' })
      const list = await as.get(`${RESOURCES}?offering_uuid=${o.uuid}`)
      assert.deepEqual(list.body, [])
      assert.equal(list.headers['x-result-count'], '0')
    }
    assert.equal((await client(t.app).get(RESOURCES)).status, 401)
  })

  test('every filter narrows the list; bad values are 400 on the parameter', async () => {
    const staff = await makeUser(t.ctx, { staff: true })
    const as = client(t.app, staff.token)
    const providerA = await makeCustomer(t.ctx)
    const providerB = await makeCustomer(t.ctx)
    const cat = await makeCategory(t.ctx)
    const oa = await makeOffering(t.ctx, providerA, { categoryId: cat.id })
    const ob = await makeOffering(t.ctx, providerB)
    const consumer = await makeCustomer(t.ctx)
    const p1 = await makeProject(t.ctx, consumer)
    const p2 = await makeProject(t.ctx, await makeCustomer(t.ctx))
    const r1 = await makeResource(t.ctx, oa, p1, { name: 'Filter alpha', state: 'OK', backendId: 'b-1' })
    t.clock.advance(1000)
    const r2 = await makeResource(t.ctx, ob, p1, { name: 'Filter beta', state: 'Erred' })
    t.clock.advance(1000)
    const r3 = await makeResource(t.ctx, oa, p2, { name: 'Filter gamma', state: 'Creating' })
    // Each parameter once: a repeated single-valued parameter is a 400 of its own.
    const scoped = [r1.uuid, r2.uuid, r3.uuid]
    const q = async (qs: string) =>
      uuids((await as.get(`${RESOURCES}?o=created&${qs}`)).body).filter((u) => scoped.includes(u))
    const o = async (qs: string) => uuids((await as.get(`${RESOURCES}?name=filter&${qs}`)).body)
    assert.deepEqual(await q('name=filter'), [r1.uuid, r2.uuid, r3.uuid])
    assert.deepEqual(await q(`project_uuid=${p1.uuid}`), [r1.uuid, r2.uuid])
    assert.deepEqual(await q(`customer_uuid=${consumer.uuid}`), [r1.uuid, r2.uuid])
    assert.deepEqual(await q(`offering_uuid=${ob.uuid}`), [r2.uuid])
    assert.deepEqual(await q(`provider_uuid=${providerA.uuid}`), [r1.uuid, r3.uuid])
    assert.deepEqual(await q(`category_uuid=${cat.uuid}`), [r1.uuid, r3.uuid])
    assert.deepEqual(await q('state=OK&state=Creating'), [r1.uuid, r3.uuid])
    assert.deepEqual(await q('name=BETA'), [r2.uuid])
    assert.deepEqual(await q('query=gamma'), [r3.uuid])
    assert.deepEqual(await q(`query=${r2.uuid.replace(/-/g, '')}`), [r2.uuid])
    assert.deepEqual(await q('backend_id=b-1'), [r1.uuid])
    assert.deepEqual(await o('o=-created'), [r3.uuid, r2.uuid, r1.uuid])
    assert.deepEqual(await o('o=name'), [r1.uuid, r2.uuid, r3.uuid])
    assert.deepEqual(await o('o=state'), [r3.uuid, r2.uuid, r1.uuid])
    const badState = await as.get(`${RESOURCES}?state=Running`)
    assert.equal(badState.status, 400)
    assert.deepEqual(badState.body, {
      state: ['Select a valid choice. Running is not one of the available choices.'],
    })
    const badUuid = await as.get(`${RESOURCES}?provider_uuid=1`)
    assert.deepEqual(badUuid.body, { provider_uuid: ['Enter a valid UUID.'] })
    const badO = await as.get(`${RESOURCES}?o=cost`)
    assert.deepEqual(badO.body, { o: ['Select a valid choice. cost is not one of the available choices.'] })
  })

  test('the list is newest first by default and paginated', async () => {
    const staff = await makeUser(t.ctx, { staff: true })
    const o = await makeOffering(t.ctx, await makeCustomer(t.ctx))
    const project = await makeProject(t.ctx, await makeCustomer(t.ctx))
    const first = await makeResource(t.ctx, o, project)
    t.clock.advance(1000)
    const second = await makeResource(t.ctx, o, project)
    const r = await client(t.app, staff.token).get(`${RESOURCES}?offering_uuid=${o.uuid}&page_size=1`)
    assert.equal(r.status, 200)
    assert.deepEqual(uuids(r.body), [second.uuid])
    assert.equal(r.headers['x-result-count'], '2')
    assert.match(String(r.headers.link), /rel="next"/)
    const page2 = await client(t.app, staff.token).get(
      `${RESOURCES}?offering_uuid=${o.uuid}&page_size=1&page=2`,
    )
    assert.deepEqual(uuids(page2.body), [first.uuid])
  })

  test('a registered scope kind renders scope and resource_uuid', async () => {
    registerResourceScope('test-settings', { path: 'service-settings', table: 'service_settings' })
    const staff = await makeUser(t.ctx, { staff: true })
    const settings = await makeServiceSettings(t.ctx)
    const o = await makeOffering(t.ctx, await makeCustomer(t.ctx))
    const project = await makeProject(t.ctx, await makeCustomer(t.ctx))
    const r = await makeResource(t.ctx, o, project, { scopeType: 'test-settings', scopeId: settings.id })
    const unknown = await makeResource(t.ctx, o, project, { scopeType: 'unregistered', scopeId: 1 })
    const as = client(t.app, staff.token)
    const one = await as.get(`${RESOURCES}${r.uuid}/?field=scope&field=resource_uuid`)
    assert.deepEqual(one.body, {
      scope: `${BASE}/api/service-settings/${settings.uuid}/`,
      resource_uuid: settings.uuid,
    })
    const other = await as.get(`${RESOURCES}${unknown.uuid}/?field=scope&field=resource_uuid`)
    assert.deepEqual(other.body, { scope: null, resource_uuid: null })
  })

  test('resources are read-only here: no create, update or delete', async () => {
    const staff = await makeUser(t.ctx, { staff: true })
    const o = await makeOffering(t.ctx, await makeCustomer(t.ctx))
    const r = await makeResource(t.ctx, o, await makeProject(t.ctx, await makeCustomer(t.ctx)))
    const as = client(t.app, staff.token)
    const post = await as.post(RESOURCES, { name: 'x' })
    assert.equal(post.status, 405)
    assert.deepEqual(post.body, { detail: 'Method "POST" not allowed.' })
    assert.equal((await as.patch(`${RESOURCES}${r.uuid}/`, { name: 'x' })).status, 405)
    assert.equal((await as.delete(`${RESOURCES}${r.uuid}/`)).status, 405)
  })
})

describe('service functions for other areas', () => {
  test('offeringRecord returns the public offering detail object', async () => {
    const staff = await makeUser(t.ctx, { staff: true })
    const o = await makeOffering(t.ctx, await makeCustomer(t.ctx))
    await makePlan(t.ctx, o)
    const viaHttp = await client(t.app, staff.token).get(`/api/marketplace-provider-offerings/${o.uuid}/`)
    assert.deepEqual(await offeringRecord(t.ctx, BASE, o.id), viaHttp.body)
  })
})
