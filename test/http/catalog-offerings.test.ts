import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { sharedTestApp } from '../support/app.js'
import { BASE, client, uuids } from '../support/client.js'
import { grant, makeCustomer, makeProject, makeUser, roleGraph, type UserRef } from '../support/fixtures.js'
import {
  makeCategory,
  makeOffering,
  makeOfferingManager,
  makePlan,
  makeResource,
  makeServiceProvider,
  makeServiceSettings,
  providerGraph,
} from '../support/catalog-fixtures.js'

const t = sharedTestApp()

const OFFERINGS = '/api/marketplace-provider-offerings/'

/** A provider's and a consumer's role graphs, and an offering of the provider with `values`. */
async function graphsWithOffering(values: Parameters<typeof makeOffering>[2]) {
  const p = providerGraph(t.ctx)
  const g = roleGraph(t.ctx)
  return { p, g, o: await makeOffering(t.ctx, await p.customer(), values) }
}

describe('offering creation', () => {
  test('the provider owner creates a Draft offering with inline plans; the body is the full record', async () => {
    const p = providerGraph(t.ctx)
    const customer = await p.customer()
    const category = await makeCategory(t.ctx, 'Compute')
    const r = await client(t.app, (await p.owner()).token).post(OFFERINGS, {
      name: 'Basic VPS',
      description: 'A small server',
      customer: customer.url,
      category: category.url,
      type: 'Marketplace.Basic',
      plugin_options: { auto_approve_in_service_provider_projects: true },
      terms_of_service: 'Be nice',
      backend_id: 'vps-cluster',
      components: [
        {
          billing_type: 'limit',
          type: 'cpu',
          name: 'CPU',
          measured_unit: 'cores',
          min_value: 1,
          max_value: 64,
        },
        { billing_type: 'fixed', type: 'support', name: 'Support', measured_unit: 'hours' },
      ],
      plans: [
        {
          name: 'Small',
          unit: 'month',
          unit_price: '10.5',
          fixed_price: 3,
          activation_price: '0',
          prices: { cpu: '0.5', support: 20 },
          quotas: { support: 2 },
        },
      ],
    })
    assert.equal(r.status, 201, r.text)
    const uuid = r.body.uuid as string
    const plan = r.body.plans[0]
    const [cpu, support] = r.body.components as { uuid: string }[]
    const component = (c: { uuid: string }, fields: Record<string, unknown>) => ({
      uuid: c.uuid,
      offering_uuid: uuid,
      description: '',
      unit_factor: 1,
      limit_period: null,
      limit_amount: null,
      article_code: '',
      max_value: null,
      min_value: null,
      max_available_limit: null,
      is_boolean: false,
      default_limit: null,
      factor: null,
      is_builtin: false,
      is_prepaid: false,
      overage_component: null,
      min_prepaid_duration: null,
      max_prepaid_duration: null,
      prepaid_duration_step: null,
      min_renewal_duration: null,
      max_renewal_duration: null,
      renewal_duration_step: null,
      ...fields,
    })
    assert.deepEqual(r.body, {
      url: `${BASE}${OFFERINGS}${uuid}/`,
      uuid,
      name: 'Basic VPS',
      description: 'A small server',
      slug: 'basic-vps',
      category: `${BASE}/api/marketplace-categories/${category.uuid}/`,
      category_uuid: category.uuid,
      category_title: 'Compute',
      customer: `${BASE}/api/customers/${customer.uuid}/`,
      customer_uuid: customer.uuid,
      customer_name: customer.name,
      type: 'Marketplace.Basic',
      state: 'Draft',
      shared: true,
      billable: true,
      plugin_options: { auto_approve_in_service_provider_projects: true },
      terms_of_service: 'Be nice',
      image: null,
      thumbnail: null,
      scope: null,
      scope_uuid: null,
      backend_id: 'vps-cluster',
      organization_groups: [],
      project: null,
      parent: null,
      components: [
        component(cpu!, {
          billing_type: 'limit',
          type: 'cpu',
          name: 'CPU',
          measured_unit: 'cores',
          min_value: 1,
          max_value: 64,
        }),
        component(support!, {
          billing_type: 'fixed',
          type: 'support',
          name: 'Support',
          measured_unit: 'hours',
        }),
      ],
      plans: [
        {
          url: `${BASE}/api/marketplace-plans/${plan.uuid}/`,
          uuid: plan.uuid,
          offering: `${BASE}${OFFERINGS}${uuid}/`,
          offering_uuid: uuid,
          offering_name: 'Basic VPS',
          name: 'Small',
          description: '',
          unit: 'month',
          unit_price: '10.5000000',
          fixed_price: '3.0000000',
          activation_price: '0.0000000',
          archived: false,
          article_code: '',
          max_amount: null,
          backend_id: '',
          is_active: true,
          init_price: 0,
          switch_price: 0,
          organization_groups: [],
          components: [
            {
              type: 'cpu',
              name: 'CPU',
              measured_unit: 'cores',
              amount: 0,
              price: '0.5000000000',
              future_price: null,
            },
            {
              type: 'support',
              name: 'Support',
              measured_unit: 'hours',
              amount: 2,
              price: '20.0000000000',
              future_price: null,
            },
          ],
          prices: { cpu: '0.5000000000', support: '20.0000000000' },
          future_prices: {},
          quotas: { cpu: 0, support: 2 },
          resources_count: 0,
          // Two billing types priced; at least one unit of CPU and the support hours of the plan.
          plan_type: 'mixed',
          minimal_price: '40.5000000000',
          created: '2026-01-15T10:00:00.000Z',
        },
      ],
      created: '2026-01-15T10:00:00.000Z',
      modified: '2026-01-15T10:00:00.000Z',
    })
    const again = await client(t.app, (await p.owner()).token).get(`${OFFERINGS}${uuid}/`)
    assert.deepEqual(again.body, r.body)
  })

  test('a service provider manager may create; support, offering managers and consumers may not', async () => {
    const p = providerGraph(t.ctx)
    const customer = await p.customer()
    const body = { name: 'X', customer: customer.url, type: 'Marketplace.Basic' }
    assert.equal((await client(t.app, (await p.manager()).token).post(OFFERINGS, body)).status, 201)
    const denied = await client(t.app, (await p.support()).token).post(OFFERINGS, body)
    assert.equal(denied.status, 403)
    assert.deepEqual(denied.body, { detail: 'You do not have permission to perform this action.' })
    const globalSupport = await makeUser(t.ctx, { support: true })
    assert.equal((await client(t.app, globalSupport.token).post(OFFERINGS, body)).status, 403)
    // Users who cannot see the provider organization get the hyperlink error on `customer`.
    const om = await makeOfferingManager(t.ctx, await makeOffering(t.ctx, customer))
    const g = roleGraph(t.ctx)
    for (const u of [om, await g.owner(), await g.member(), await g.outsider()]) {
      const r = await client(t.app, u.token).post(OFFERINGS, body)
      assert.equal(r.status, 400)
      assert.deepEqual(r.body, { customer: ['Invalid hyperlink - Object does not exist.'] })
    }
  })

  test('staff creates offerings for any service provider', async () => {
    const staff = await makeUser(t.ctx, { staff: true })
    const c = await makeCustomer(t.ctx)
    await makeServiceProvider(t.ctx, c)
    const r = await client(t.app, staff.token).post(OFFERINGS, {
      name: 'Staff made',
      customer: c.url,
      type: 'Support.OfferingTemplate',
      shared: false,
      billable: false,
    })
    assert.equal(r.status, 201)
    assert.equal(r.body.shared, false)
    assert.equal(r.body.billable, false)
  })

  test('an unknown type is 400 on type; a customer that is not a provider is 400 on customer', async () => {
    const staff = await makeUser(t.ctx, { staff: true })
    const as = client(t.app, staff.token)
    const c = await makeCustomer(t.ctx)
    const bad = await as.post(OFFERINGS, { name: 'X', customer: c.url, type: 'Marketplace.Nope' })
    assert.equal(bad.status, 400)
    assert.deepEqual(bad.body, { type: ['"Marketplace.Nope" is not a valid choice.'] })
    const notProvider = await as.post(OFFERINGS, { name: 'X', customer: c.url, type: 'Marketplace.Basic' })
    assert.equal(notProvider.status, 400)
    assert.deepEqual(notProvider.body, { customer: ['Organization is not a service provider.'] })
  })

  test('required fields, wrong link kinds and bad inline plans are 400 naming the field', async () => {
    const p = providerGraph(t.ctx)
    const as = client(t.app, (await p.owner()).token)
    const customer = await p.customer()
    const missing = await as.post(OFFERINGS, { customer: customer.url })
    assert.equal(missing.status, 400)
    assert.deepEqual(missing.body, { name: ['This field is required.'], type: ['This field is required.'] })
    const base = { name: 'X', customer: customer.url, type: 'Marketplace.Basic' }
    const cat = await as.post(OFFERINGS, { ...base, category: customer.url })
    assert.deepEqual(cat.body, { category: ['Invalid hyperlink - Incorrect URL match.'] })
    const shared = await as.post(OFFERINGS, { ...base, shared: 'yes' })
    assert.equal(shared.status, 400)
    assert.deepEqual(shared.body, { shared: ['Must be a valid boolean.'] })
    const slug = await as.post(OFFERINGS, { ...base, slug: 'has spaces' })
    assert.equal(slug.status, 400)
    assert.ok(slug.body.slug)
    const plans = await as.post(OFFERINGS, {
      ...base,
      plans: [{ name: 'ok' }, { name: 'bad', unit_price: -1 }],
    })
    assert.equal(plans.status, 400)
    assert.deepEqual(plans.body, {
      plans: [{}, { unit_price: ['Ensure this value is greater than or equal to 0.'] }],
    })
    const groups = await as.post(OFFERINGS, {
      ...base,
      organization_groups: [`${BASE}/api/organization-groups/00000000-0000-0000-0000-000000000001/`],
    })
    assert.equal(groups.status, 400)
    assert.deepEqual(groups.body, { organization_groups: ['Invalid hyperlink - Object does not exist.'] })
  })

  test('cloud offering types need service settings of their kind as scope', async () => {
    const p = providerGraph(t.ctx)
    const as = client(t.app, (await p.owner()).token)
    const customer = await p.customer()
    const base = { name: 'Tenant', customer: customer.url, type: 'CloudB.Tenant' }
    const none = await as.post(OFFERINGS, base)
    assert.equal(none.status, 400)
    assert.deepEqual(none.body, {
      scope: ['Service settings of kind cloudB are required for CloudB.Tenant offerings.'],
    })
    const a = await makeServiceSettings(t.ctx, { type: 'cloudA' })
    const wrongKind = await as.post(OFFERINGS, { ...base, scope: a.url })
    assert.equal(wrongKind.status, 400)
    assert.deepEqual(wrongKind.body, {
      scope: ['Service settings of kind cloudB are required for CloudB.Tenant offerings.'],
    })
    const foreign = await makeServiceSettings(t.ctx, { type: 'cloudB', shared: false, customerId: null })
    const hidden = await as.post(OFFERINGS, { ...base, scope: foreign.url })
    assert.equal(hidden.status, 400)
    assert.deepEqual(hidden.body, { scope: ['Invalid hyperlink - Object does not exist.'] })
    const b = await makeServiceSettings(t.ctx, { type: 'cloudB', shared: false, customerId: customer.id })
    const ok = await as.post(OFFERINGS, { ...base, scope: b.url })
    assert.equal(ok.status, 201)
    assert.equal(ok.body.scope, `${BASE}/api/service-settings/${b.uuid}/`)
    assert.equal(ok.body.scope_uuid, b.uuid)
  })

  test('organization groups, project and parent links are stored and rendered', async () => {
    const staff = await makeUser(t.ctx, { staff: true })
    const group = await client(t.app, staff.token).post('/api/organization-groups/', { name: 'Universities' })
    assert.equal(group.status, 201)
    const p = providerGraph(t.ctx)
    const customer = await p.customer()
    const project = await makeProject(t.ctx, customer)
    const parent = await makeOffering(t.ctx, customer, { state: 'Active' })
    const r = await client(t.app, (await p.owner()).token).post(OFFERINGS, {
      name: 'Child',
      customer: customer.url,
      type: 'Marketplace.Slurm',
      organization_groups: [group.body.url],
      project: project.url,
      parent: parent.url,
      shared: false,
    })
    assert.equal(r.status, 201)
    assert.deepEqual(r.body.organization_groups, [group.body.url])
    assert.equal(r.body.project, `${BASE}/api/projects/${project.uuid}/`)
    assert.equal(r.body.parent, `${BASE}${OFFERINGS}${parent.uuid}/`)
    const patched = await client(t.app, (await p.owner()).token).patch(`${OFFERINGS}${r.body.uuid}/`, {
      organization_groups: [],
      parent: null,
    })
    assert.equal(patched.status, 200)
    assert.deepEqual(patched.body.organization_groups, [])
    assert.equal(patched.body.parent, null)
  })
})

describe('offering state actions', () => {
  test('activate, pause, unpause and archive move the state and answer a status', async () => {
    const p = providerGraph(t.ctx)
    const o = await makeOffering(t.ctx, await p.customer(), { state: 'Draft' })
    const as = client(t.app, (await p.owner()).token)
    const path = `${OFFERINGS}${o.uuid}/`
    const steps: [string, string, string][] = [
      ['activate', 'Active', 'Offering has been activated.'],
      ['pause', 'Paused', 'Offering has been paused.'],
      ['activate', 'Active', 'Offering has been activated.'],
      ['pause', 'Paused', 'Offering has been paused.'],
      ['unpause', 'Active', 'Offering has been unpaused.'],
      ['archive', 'Archived', 'Offering has been archived.'],
    ]
    for (const [action, state, status] of steps) {
      const r = await as.post(`${path}${action}/`)
      assert.equal(r.status, 200, action)
      assert.deepEqual(r.body, { status })
      assert.equal((await as.get(path)).body.state, state)
    }
  })

  test('each action from a wrong state is 409 naming the valid states', async () => {
    const p = providerGraph(t.ctx)
    const as = client(t.app, (await p.owner()).token)
    const cases: [string, 'Draft' | 'Active' | 'Paused' | 'Archived', string][] = [
      ['activate', 'Active', 'Valid states for operation: Draft, Paused.'],
      ['activate', 'Archived', 'Valid states for operation: Draft, Paused.'],
      ['pause', 'Draft', 'Valid states for operation: Active.'],
      ['pause', 'Paused', 'Valid states for operation: Active.'],
      ['unpause', 'Active', 'Valid states for operation: Paused.'],
      ['unpause', 'Draft', 'Valid states for operation: Paused.'],
      ['archive', 'Archived', 'Valid states for operation: Draft, Active, Paused.'],
    ]
    for (const [action, state, detail] of cases) {
      const o = await makeOffering(t.ctx, await p.customer(), { state })
      const r = await as.post(`${OFFERINGS}${o.uuid}/${action}/`)
      assert.equal(r.status, 409, `${action} from ${state}`)
      assert.deepEqual(r.body, { detail })
    }
  })

  test('two racing activations produce exactly one winner', async () => {
    const p = providerGraph(t.ctx)
    const o = await makeOffering(t.ctx, await p.customer(), { state: 'Draft' })
    const as = client(t.app, (await p.owner()).token)
    const results = await Promise.all([1, 2, 3].map(() => as.post(`${OFFERINGS}${o.uuid}/activate/`)))
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 409, 409])
  })

  test('managers of the provider and of the offering may change state; others may not', async () => {
    const p = providerGraph(t.ctx)
    const g = roleGraph(t.ctx)
    const customer = await p.customer()
    const o = await makeOffering(t.ctx, customer, { state: 'Active' })
    const om = await makeOfferingManager(t.ctx, o)
    const staff = await makeUser(t.ctx, { staff: true })
    const allowed: UserRef[] = [await p.owner(), await p.manager(), om, staff]
    for (const u of allowed) {
      await t.ctx.db.updateTable('offerings').set({ state: 'Active' }).where('id', '=', o.id).execute()
      const r = await client(t.app, u.token).post(`${OFFERINGS}${o.uuid}/pause/`)
      assert.equal(r.status, 200)
    }
    await t.ctx.db.updateTable('offerings').set({ state: 'Active' }).where('id', '=', o.id).execute()
    const globalSupport = await makeUser(t.ctx, { support: true })
    for (const u of [
      await p.support(),
      globalSupport,
      await g.owner(),
      await g.member(),
      await g.outsider(),
    ]) {
      const r = await client(t.app, u.token).post(`${OFFERINGS}${o.uuid}/pause/`)
      assert.equal(r.status, 403)
    }
    // A Draft offering is not visible to outsiders: 404 before any permission check.
    const draft = await makeOffering(t.ctx, customer, { state: 'Draft' })
    const hidden = await client(t.app, (await g.outsider()).token).post(`${OFFERINGS}${draft.uuid}/activate/`)
    assert.equal(hidden.status, 404)
    assert.deepEqual(hidden.body, { detail: 'No Offering matches the given query.' })
  })
})

describe('offering update and delete', () => {
  test('owner, service provider manager and offering manager edit; the type cannot change', async () => {
    const { p, g, o } = await graphsWithOffering({ state: 'Active', name: 'Before' })
    const om = await makeOfferingManager(t.ctx, o)
    const path = `${OFFERINGS}${o.uuid}/`
    for (const [i, u] of [await p.owner(), await p.manager(), om].entries()) {
      t.clock.advance(1000)
      const r = await client(t.app, u.token).patch(path, { description: `edit ${i}` })
      assert.equal(r.status, 200)
      assert.equal(r.body.description, `edit ${i}`)
      assert.equal(r.body.modified, t.clock.now().toISOString())
    }
    for (const u of [await p.support(), await g.member(), await g.outsider()]) {
      assert.equal((await client(t.app, u.token).patch(path, { description: 'no' })).status, 403)
    }
    const as = client(t.app, (await p.owner()).token)
    const type = await as.patch(path, { type: 'Marketplace.Slurm' })
    assert.equal(type.status, 400)
    assert.deepEqual(type.body, { type: ['The type of an offering cannot be changed.'] })
    assert.equal((await as.patch(path, { type: 'Marketplace.Basic' })).status, 200)
    const other = await makeCustomer(t.ctx)
    const cust = await as.patch(path, { customer: other.url })
    assert.deepEqual(cust.body, { customer: ['The provider of an offering cannot be changed.'] })
    const put = await as.put(path, { description: 'no name' })
    assert.equal(put.status, 400)
    assert.deepEqual(put.body, { name: ['This field is required.'] })
    const full = await as.put(path, { name: 'After', shared: true, plugin_options: { a: 1 } })
    assert.equal(full.status, 200)
    assert.equal(full.body.name, 'After')
    assert.deepEqual(full.body.plugin_options, { a: 1 })
  })

  test('only staff and the provider owner delete, and only Draft offerings', async () => {
    const p = providerGraph(t.ctx)
    const customer = await p.customer()
    const draft = await makeOffering(t.ctx, customer, { state: 'Draft' })
    const om = await makeOfferingManager(t.ctx, draft)
    for (const u of [await p.manager(), om]) {
      const r = await client(t.app, u.token).delete(`${OFFERINGS}${draft.uuid}/`)
      assert.equal(r.status, 403)
    }
    const owner = client(t.app, (await p.owner()).token)
    assert.equal((await owner.delete(`${OFFERINGS}${draft.uuid}/`)).status, 204)
    assert.equal((await owner.get(`${OFFERINGS}${draft.uuid}/`)).status, 404)
    const active = await makeOffering(t.ctx, customer, { state: 'Active' })
    const refused = await owner.delete(`${OFFERINGS}${active.uuid}/`)
    assert.equal(refused.status, 409)
    assert.deepEqual(refused.body, { detail: 'Valid states for operation: Draft.' })
    const staff = await makeUser(t.ctx, { staff: true })
    const other = await makeOffering(t.ctx, customer, { state: 'Draft' })
    const plan = await makePlan(t.ctx, other)
    assert.equal((await client(t.app, staff.token).delete(`${OFFERINGS}${other.uuid}/`)).status, 204)
    assert.equal((await client(t.app, staff.token).get(`/api/marketplace-plans/${plan.uuid}/`)).status, 404)
  })

  test('a Draft offering that resources use cannot be deleted', async () => {
    const { p, g, o } = await graphsWithOffering({ state: 'Draft' })
    await makeResource(t.ctx, o, await g.project())
    const r = await client(t.app, (await p.owner()).token).delete(`${OFFERINGS}${o.uuid}/`)
    assert.equal(r.status, 409)
    assert.deepEqual(r.body, { detail: 'Cannot delete offering with existing resources' })
  })
})

describe('offering visibility', () => {
  test('Draft offerings are seen only by the provider, their managers, staff and support', async () => {
    const { p, g, o } = await graphsWithOffering({ state: 'Draft' })
    const om = await makeOfferingManager(t.ctx, o)
    const staff = await makeUser(t.ctx, { staff: true })
    const support = await makeUser(t.ctx, { support: true })
    for (const u of [await p.owner(), await p.manager(), await p.support(), om, staff, support]) {
      const r = await client(t.app, u.token).get(`${OFFERINGS}?uuid=${o.uuid}`)
      assert.deepEqual(uuids(r.body), [o.uuid])
      assert.equal((await client(t.app, u.token).get(`${OFFERINGS}${o.uuid}/`)).status, 200)
    }
    for (const u of [await g.owner(), await g.member(), await g.outsider()]) {
      const r = await client(t.app, u.token).get(`${OFFERINGS}?uuid=${o.uuid}`)
      assert.deepEqual(r.body, [])
      assert.equal(r.headers['x-result-count'], '0')
      assert.equal((await client(t.app, u.token).get(`${OFFERINGS}${o.uuid}/`)).status, 404)
    }
  })

  test('shared Active and Paused offerings are seen by everybody; Archived only by the provider', async () => {
    const p = providerGraph(t.ctx)
    const customer = await p.customer()
    const outsider = await makeUser(t.ctx)
    const active = await makeOffering(t.ctx, customer, { state: 'Active' })
    const paused = await makeOffering(t.ctx, customer, { state: 'Paused' })
    const archived = await makeOffering(t.ctx, customer, { state: 'Archived' })
    const seen = await client(t.app, outsider.token).get(
      `${OFFERINGS}?customer_uuid=${customer.uuid}&o=created`,
    )
    assert.deepEqual(uuids(seen.body), [active.uuid, paused.uuid])
    const owner = await client(t.app, (await p.owner()).token).get(
      `${OFFERINGS}?customer_uuid=${customer.uuid}&o=created`,
    )
    assert.deepEqual(uuids(owner.body), [active.uuid, paused.uuid, archived.uuid])
    assert.equal((await client(t.app).get(OFFERINGS)).status, 401)
  })

  test('private offerings are seen by the provider and by members of their project organization', async () => {
    const p = providerGraph(t.ctx)
    const g = roleGraph(t.ctx)
    const project = await g.project()
    const o = await makeOffering(t.ctx, await p.customer(), {
      state: 'Active',
      shared: false,
      projectId: project.id,
    })
    const otherProject = await makeProject(t.ctx, await g.customer())
    const sibling = await makeUser(t.ctx)
    await grant(t.ctx, sibling, 'PROJECT.MEMBER', { type: 'project', id: otherProject.id })
    for (const u of [await p.owner(), await g.owner(), await g.member(), await g.admin(), sibling]) {
      const r = await client(t.app, u.token).get(`${OFFERINGS}${o.uuid}/`)
      assert.equal(r.status, 200)
    }
    const stranger = await makeUser(t.ctx)
    assert.equal((await client(t.app, stranger.token).get(`${OFFERINGS}${o.uuid}/`)).status, 404)
    // A private Draft offering is hidden from the consumer side.
    const draft = await makeOffering(t.ctx, await p.customer(), {
      state: 'Draft',
      shared: false,
      projectId: project.id,
    })
    assert.equal(
      (await client(t.app, (await g.member()).token).get(`${OFFERINGS}${draft.uuid}/`)).status,
      404,
    )
    // A private offering without a project is the provider's alone.
    const own = await makeOffering(t.ctx, await p.customer(), { state: 'Active', shared: false })
    assert.equal((await client(t.app, (await g.owner()).token).get(`${OFFERINGS}${own.uuid}/`)).status, 404)
  })
})

describe('offering list filters and ordering', () => {
  test('every filter narrows the list', async () => {
    const staff = await makeUser(t.ctx, { staff: true })
    const as = client(t.app, staff.token)
    const c = await makeCustomer(t.ctx)
    await makeServiceProvider(t.ctx, c)
    const cat = await makeCategory(t.ctx)
    const settings = await makeServiceSettings(t.ctx, { type: 'cloudB' })
    const alpha = await makeOffering(t.ctx, c, { name: 'Filter Alpha', categoryId: cat.id })
    const beta = await makeOffering(t.ctx, c, {
      name: 'Filter Beta',
      type: 'Marketplace.Slurm',
      state: 'Paused',
      shared: false,
    })
    const gamma = await makeOffering(t.ctx, c, {
      name: 'Filter Gamma',
      type: 'CloudB.Tenant',
      state: 'Draft',
      serviceSettingsId: settings.id,
    })
    await t.ctx.db
      .updateTable('offerings')
      .set({ billable: 0, parent_id: alpha.id })
      .where('id', '=', gamma.id)
      .execute()
    const q = async (qs: string) =>
      uuids((await as.get(`${OFFERINGS}?customer_uuid=${c.uuid}&o=name&${qs}`)).body)
    assert.deepEqual(await q(''), [alpha.uuid, beta.uuid, gamma.uuid])
    assert.deepEqual(await q('name=ALPHA'), [alpha.uuid])
    assert.deepEqual(await q('name_exact=Filter Beta'), [beta.uuid])
    assert.deepEqual(await q('name_exact=filter beta'), [])
    assert.deepEqual(await q(`category_uuid=${cat.uuid}`), [alpha.uuid])
    assert.deepEqual(await q('type=Marketplace.Slurm&type=CloudB.Tenant'), [beta.uuid, gamma.uuid])
    assert.deepEqual(await q('type=Unknown.Type'), [])
    assert.deepEqual(await q('state=Draft&state=Paused'), [beta.uuid, gamma.uuid])
    assert.deepEqual(await q('shared=false'), [beta.uuid])
    assert.deepEqual(await q('billable=false'), [gamma.uuid])
    assert.deepEqual(await q('billable=maybe'), [alpha.uuid, beta.uuid, gamma.uuid])
    assert.deepEqual(await q(`uuid=${beta.uuid.replace(/-/g, '')}`), [beta.uuid])
    assert.deepEqual(await q('slug=filter-gamma'), [gamma.uuid])
    assert.deepEqual(await q(`scope_uuid=${settings.uuid}`), [gamma.uuid])
    assert.deepEqual(await q(`parent_uuid=${alpha.uuid}`), [gamma.uuid])
    const badState = await as.get(`${OFFERINGS}?state=Open`)
    assert.equal(badState.status, 400)
    assert.deepEqual(badState.body, {
      state: ['Select a valid choice. Open is not one of the available choices.'],
    })
    const badUuid = await as.get(`${OFFERINGS}?customer_uuid=nope`)
    assert.equal(badUuid.status, 400)
    assert.deepEqual(badUuid.body, { customer_uuid: ['Enter a valid UUID.'] })
  })

  test('o orders by name, created, type and state; unknown names are 400', async () => {
    const staff = await makeUser(t.ctx, { staff: true })
    const as = client(t.app, staff.token)
    const c = await makeCustomer(t.ctx)
    const b = await makeOffering(t.ctx, c, { name: 'O-b', type: 'Marketplace.Slurm', state: 'Active' })
    t.clock.advance(1000)
    const a = await makeOffering(t.ctx, c, { name: 'O-a', type: 'Marketplace.Basic', state: 'Paused' })
    const q = async (o: string) => uuids((await as.get(`${OFFERINGS}?customer_uuid=${c.uuid}&o=${o}`)).body)
    assert.deepEqual(await q('name'), [a.uuid, b.uuid])
    assert.deepEqual(await q('-name'), [b.uuid, a.uuid])
    assert.deepEqual(await q('created'), [b.uuid, a.uuid])
    assert.deepEqual(await q('-created'), [a.uuid, b.uuid])
    assert.deepEqual(await q('type'), [a.uuid, b.uuid])
    assert.deepEqual(await q('state'), [b.uuid, a.uuid])
    const bad = await as.get(`${OFFERINGS}?o=price`)
    assert.equal(bad.status, 400)
    assert.deepEqual(bad.body, { o: ['Select a valid choice. price is not one of the available choices.'] })
  })

  test('lists are paginated with Link and X-Result-Count, and answer HEAD', async () => {
    const staff = await makeUser(t.ctx, { staff: true })
    const c = await makeCustomer(t.ctx)
    for (let i = 0; i < 3; i++) await makeOffering(t.ctx, c, { name: `Page ${i}` })
    const as = client(t.app, staff.token)
    const r = await as.get(`${OFFERINGS}?customer_uuid=${c.uuid}&page_size=2&page=2`)
    assert.equal(r.status, 200)
    assert.deepEqual(
      r.body.map((o: { name: string }) => o.name),
      ['Page 2'],
    )
    assert.equal(r.headers['x-result-count'], '3')
    assert.match(String(r.headers.link), /rel="prev"/)
    const head = await as.head(`${OFFERINGS}?customer_uuid=${c.uuid}`)
    assert.equal(head.status, 200)
    assert.equal(head.headers['x-result-count'], '3')
    assert.equal(head.text, '')
    const beyond = await as.get(`${OFFERINGS}?customer_uuid=${c.uuid}&page=9`)
    assert.equal(beyond.status, 404)
    assert.deepEqual(beyond.body, { detail: 'Invalid page.' })
  })

  test('field limits the keys of list items and of a retrieve', async () => {
    const staff = await makeUser(t.ctx, { staff: true })
    const c = await makeCustomer(t.ctx)
    const o = await makeOffering(t.ctx, c)
    const r = await client(t.app, staff.token).get(`${OFFERINGS}?uuid=${o.uuid}&field=uuid&field=state`)
    assert.deepEqual(r.body, [{ uuid: o.uuid, state: 'Active' }])
    const one = await client(t.app, staff.token).get(`${OFFERINGS}${o.uuid}/?field=name,plans`)
    assert.deepEqual(one.body, { name: o.name, plans: [] })
  })
})

describe('offering managers', () => {
  test('the owner grants OFFERING.MANAGER, lists and revokes it; the grant gives edit rights', async () => {
    const p = providerGraph(t.ctx)
    const o = await makeOffering(t.ctx, await p.customer(), { state: 'Draft' })
    const u = await makeUser(t.ctx)
    const owner = client(t.app, (await p.owner()).token)
    const path = `${OFFERINGS}${o.uuid}/`
    assert.equal((await client(t.app, u.token).patch(path, { description: 'x' })).status, 404)
    const added = await owner.post(`${path}add_user/`, { user: u.uuid, role: 'OFFERING.MANAGER' })
    assert.equal(added.status, 201)
    assert.equal(added.body.user_uuid, u.uuid)
    assert.equal(added.body.role_name, 'OFFERING.MANAGER')
    assert.equal(added.body.scope_type, 'offering')
    assert.equal(added.body.scope_uuid, o.uuid)
    assert.equal(added.body.scope_name, o.name)
    const dup = await owner.post(`${path}add_user/`, { user: u.uuid, role: 'OFFERING.MANAGER' })
    assert.equal(dup.status, 400)
    assert.deepEqual(dup.body, { non_field_errors: ['User already has this role in this scope.'] })
    assert.equal((await client(t.app, u.token).patch(path, { description: 'mine' })).status, 200)
    const listed = await owner.get(`${path}list_users/`)
    assert.equal(listed.status, 200)
    assert.deepEqual(
      listed.body.map((g: { user_uuid: string }) => g.user_uuid),
      [u.uuid],
    )
    assert.equal((await client(t.app, u.token).get(`${path}list_users/`)).status, 200)
    const removed = await owner.post(`${path}delete_user/`, { user: u.uuid, role: 'OFFERING.MANAGER' })
    assert.equal(removed.status, 204)
    assert.equal((await client(t.app, u.token).patch(path, { description: 'x' })).status, 404)
    assert.deepEqual((await owner.get(`${path}list_users/`)).body, [])
  })

  test('only offering roles can be granted, and only by the provider organization', async () => {
    const { p, g, o } = await graphsWithOffering({ state: 'Active' })
    const om = await makeOfferingManager(t.ctx, o)
    const u = await makeUser(t.ctx)
    const path = `${OFFERINGS}${o.uuid}/`
    const wrongRole = await client(t.app, (await p.owner()).token).post(`${path}add_user/`, {
      user: u.uuid,
      role: 'CUSTOMER.OWNER',
    })
    assert.equal(wrongRole.status, 400)
    assert.deepEqual(wrongRole.body, { role: ['Role CUSTOMER.OWNER cannot be granted on a offering.'] })
    for (const who of [om, await p.support(), await g.owner()]) {
      const r = await client(t.app, who.token).post(`${path}add_user/`, {
        user: u.uuid,
        role: 'OFFERING.MANAGER',
      })
      assert.equal(r.status, 403)
    }
    assert.equal(
      (
        await client(t.app, (await p.manager()).token).post(`${path}add_user/`, {
          user: u.uuid,
          role: 'OFFERING.MANAGER',
        })
      ).status,
      201,
    )
    // Consumers see the Active offering but not who runs it.
    assert.equal((await client(t.app, (await g.owner()).token).get(`${path}list_users/`)).status, 403)
    const missingUser = await client(t.app, (await p.owner()).token).post(`${path}add_user/`, {
      role: 'OFFERING.MANAGER',
    })
    assert.equal(missingUser.status, 400)
    assert.deepEqual(missingUser.body, { user: ['This field is required.'] })
  })
})
