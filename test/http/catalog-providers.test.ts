import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { sharedTestApp } from '../support/app.js'
import { client } from '../support/client.js'
import { grant, makeCustomer, makeUser, customerWithRole } from '../support/fixtures.js'
import { makeCategory, makeOffering, makeServiceProvider } from '../support/catalog-fixtures.js'
import { seedDemo } from '../../src/seed.js'

const t = sharedTestApp()

describe('service providers', () => {
  test('an owner makes its customer a service provider; a second registration is 400', async () => {
    const { customer, user: owner } = await customerWithRole(t.ctx, 'CUSTOMER.OWNER')
    const as = client(t.app, owner.token)
    const r = await as.post('/api/marketplace-service-providers/', {
      customer: customer.url,
      description: 'We sell compute',
    })
    assert.equal(r.status, 201)
    assert.equal(r.body.customer, `http://localhost:80/api/customers/${customer.uuid}/`)
    assert.equal(r.body.customer_uuid, customer.uuid)
    assert.equal(r.body.customer_name, customer.name)
    assert.equal(r.body.description, 'We sell compute')
    assert.equal(r.body.image, null)
    assert.equal(r.body.url, `http://localhost:80/api/marketplace-service-providers/${r.body.uuid}/`)
    assert.equal(r.body.created, '2026-01-15T10:00:00.000Z')
    const dup = await as.post('/api/marketplace-service-providers/', { customer: customer.url })
    assert.equal(dup.status, 400)
    assert.deepEqual(dup.body, { customer: ['service provider with this customer already exists.'] })
  })

  test('a service provider manager, an outsider and support cannot register a provider', async () => {
    const { customer: customer, user: manager } = await customerWithRole(t.ctx, 'CUSTOMER.MANAGER')
    const r = await client(t.app, manager.token).post('/api/marketplace-service-providers/', {
      customer: customer.url,
    })
    assert.equal(r.status, 403)
    assert.deepEqual(r.body, { detail: 'You do not have permission to perform this action.' })
    const outsider = await makeUser(t.ctx)
    const o = await client(t.app, outsider.token).post('/api/marketplace-service-providers/', {
      customer: customer.url,
    })
    assert.equal(o.status, 400)
    assert.deepEqual(o.body, { customer: ['Invalid hyperlink - Object does not exist.'] })
    const support = await makeUser(t.ctx, { support: true })
    const s = await client(t.app, support.token).post('/api/marketplace-service-providers/', {
      customer: customer.url,
    })
    assert.equal(s.status, 403)
  })

  test('two racing registrations of one customer give one provider and one 400', async () => {
    const customer = await makeCustomer(t.ctx)
    const staff = await makeUser(t.ctx, { staff: true })
    const as = client(t.app, staff.token)
    const results = await Promise.all(
      [1, 2].map(() => as.post('/api/marketplace-service-providers/', { customer: customer.url })),
    )
    assert.deepEqual(results.map((r) => r.status).sort(), [201, 400])
    const list = await as.get(`/api/marketplace-service-providers/?customer_uuid=${customer.uuid}`)
    assert.equal(list.body.length, 1)
  })

  test('staff registers any customer; the customer field is required and must be a customer URL', async () => {
    const staff = await makeUser(t.ctx, { staff: true })
    const as = client(t.app, staff.token)
    const missing = await as.post('/api/marketplace-service-providers/', {})
    assert.equal(missing.status, 400)
    assert.deepEqual(missing.body, { customer: ['This field is required.'] })
    const wrong = await as.post('/api/marketplace-service-providers/', {
      customer: 'http://localhost/api/projects/00000000-0000-0000-0000-000000000000/',
    })
    assert.equal(wrong.status, 400)
    assert.deepEqual(wrong.body, { customer: ['Invalid hyperlink - Incorrect URL match.'] })
    const c = await makeCustomer(t.ctx)
    assert.equal((await as.post('/api/marketplace-service-providers/', { customer: c.url })).status, 201)
  })

  test('every authenticated user lists and retrieves providers; anonymous callers get 401', async () => {
    const c = await makeCustomer(t.ctx, 'Zeta Provider')
    const sp = await makeServiceProvider(t.ctx, c)
    const u = await makeUser(t.ctx)
    const list = await client(t.app, u.token).get(
      `/api/marketplace-service-providers/?customer_uuid=${c.uuid}`,
    )
    assert.equal(list.status, 200)
    assert.equal(list.headers['x-result-count'], '1')
    assert.equal(list.body[0].uuid, sp.uuid)
    const byName = await client(t.app, u.token).get('/api/marketplace-service-providers/?name=zeta')
    assert.deepEqual(
      byName.body.map((p: { uuid: string }) => p.uuid),
      [sp.uuid],
    )
    const one = await client(t.app, u.token).get(`/api/marketplace-service-providers/${sp.uuid}/?field=uuid`)
    assert.equal(one.status, 200)
    assert.deepEqual(one.body, { uuid: sp.uuid })
    assert.equal((await client(t.app).get('/api/marketplace-service-providers/')).status, 401)
    const missing = await client(t.app, u.token).get('/api/marketplace-service-providers/nope/')
    assert.equal(missing.status, 404)
    assert.deepEqual(missing.body, { detail: 'No ServiceProvider matches the given query.' })
  })

  test('the owner edits the description; others get 403', async () => {
    const c = await makeCustomer(t.ctx)
    const sp = await makeServiceProvider(t.ctx, c)
    const owner = await makeUser(t.ctx)
    await grant(t.ctx, owner, 'CUSTOMER.OWNER', { type: 'customer', id: c.id })
    const other = await makeUser(t.ctx)
    const path = `/api/marketplace-service-providers/${sp.uuid}/`
    assert.equal((await client(t.app, other.token).patch(path, { description: 'x' })).status, 403)
    const ok = await client(t.app, owner.token).patch(path, {
      description: 'Updated',
      image: 'https://img/x.png',
    })
    assert.equal(ok.status, 200)
    assert.equal(ok.body.description, 'Updated')
    assert.equal(ok.body.image, 'https://img/x.png')
    const otherCustomer = await makeCustomer(t.ctx)
    const moved = await client(t.app, owner.token).put(path, {
      customer: otherCustomer.url,
      description: 'y',
    })
    assert.equal(moved.status, 400)
    assert.deepEqual(moved.body, { customer: ['Invalid hyperlink - Object does not exist.'] })
    const staff = await makeUser(t.ctx, { staff: true })
    const byStaff = await client(t.app, staff.token).put(path, { customer: otherCustomer.url })
    assert.equal(byStaff.status, 400)
    assert.deepEqual(byStaff.body, { customer: ['The customer of a provider cannot be changed.'] })
    assert.equal((await client(t.app, staff.token).put(path, { customer: c.url })).status, 200)
  })

  test('a provider with live offerings cannot be removed; archived ones do not block', async () => {
    const c = await makeCustomer(t.ctx)
    const sp = await makeServiceProvider(t.ctx, c)
    const o = await makeOffering(t.ctx, c, { state: 'Active' })
    const owner = await makeUser(t.ctx)
    await grant(t.ctx, owner, 'CUSTOMER.OWNER', { type: 'customer', id: c.id })
    const as = client(t.app, owner.token)
    const refused = await as.delete(`/api/marketplace-service-providers/${sp.uuid}/`)
    assert.equal(refused.status, 409)
    assert.deepEqual(refused.body, { detail: 'Cannot delete service provider with existing offerings' })
    await t.ctx.db.updateTable('offerings').set({ state: 'Archived' }).where('id', '=', o.id).execute()
    const ok = await as.delete(`/api/marketplace-service-providers/${sp.uuid}/`)
    assert.equal(ok.status, 204)
    assert.equal((await as.get(`/api/marketplace-service-providers/${sp.uuid}/`)).status, 404)
  })
})

describe('categories', () => {
  test('staff creates, edits and deletes categories; others only read', async () => {
    const staff = await makeUser(t.ctx, { staff: true })
    const u = await makeUser(t.ctx)
    const as = client(t.app, staff.token)
    const denied = await client(t.app, u.token).post('/api/marketplace-categories/', { title: 'HPC' })
    assert.equal(denied.status, 403)
    const support = await makeUser(t.ctx, { support: true })
    const bySupport = await client(t.app, support.token).post('/api/marketplace-categories/', {
      title: 'HPC',
    })
    assert.equal(bySupport.status, 403)
    const noTitle = await as.post('/api/marketplace-categories/', { description: 'x' })
    assert.equal(noTitle.status, 400)
    assert.deepEqual(noTitle.body, { title: ['This field is required.'] })
    const r = await as.post('/api/marketplace-categories/', { title: 'HPC', description: 'Compute' })
    assert.equal(r.status, 201)
    assert.deepEqual(
      { ...r.body, uuid: undefined },
      {
        url: `http://localhost:80/api/marketplace-categories/${r.body.uuid}/`,
        uuid: undefined,
        title: 'HPC',
        description: 'Compute',
        icon: null,
        offering_count: 0,
        created: '2026-01-15T10:00:00.000Z',
      },
    )
    const path = `/api/marketplace-categories/${r.body.uuid}/`
    assert.equal((await client(t.app, u.token).get(path)).status, 200)
    assert.equal((await client(t.app, u.token).patch(path, { title: 'x' })).status, 403)
    const put = await as.put(path, { title: 'HPC clusters' })
    assert.equal(put.status, 200)
    assert.equal(put.body.title, 'HPC clusters')
    const blank = await as.patch(path, { title: '' })
    assert.equal(blank.status, 400)
    assert.deepEqual(blank.body, { title: ['This field may not be blank.'] })
    assert.equal((await client(t.app, u.token).delete(path)).status, 403)
    assert.equal((await as.delete(path)).status, 204)
    assert.equal((await as.get(path)).status, 404)
  })

  test('offering_count counts Active shared offerings; a category in use cannot be deleted', async () => {
    const staff = await makeUser(t.ctx, { staff: true })
    const cat = await makeCategory(t.ctx, 'Storage zz')
    const c = await makeCustomer(t.ctx)
    await makeOffering(t.ctx, c, { categoryId: cat.id, state: 'Active' })
    await makeOffering(t.ctx, c, { categoryId: cat.id, state: 'Draft' })
    await makeOffering(t.ctx, c, { categoryId: cat.id, state: 'Active', shared: false })
    const r = await client(t.app, staff.token).get('/api/marketplace-categories/?title=storage%20zz')
    assert.equal(r.status, 200)
    assert.equal(r.body.length, 1)
    assert.equal(r.body[0].offering_count, 1)
    const del = await client(t.app, staff.token).delete(`/api/marketplace-categories/${cat.uuid}/`)
    assert.equal(del.status, 409)
    assert.deepEqual(del.body, { detail: 'Cannot delete category with existing offerings' })
  })

  test('categories are ordered by title unless o says otherwise', async () => {
    const u = await makeUser(t.ctx)
    await makeCategory(t.ctx, 'ordering-b')
    await makeCategory(t.ctx, 'ordering-a')
    const asc = await client(t.app, u.token).get('/api/marketplace-categories/?title=ordering-')
    assert.deepEqual(
      asc.body.map((c: { title: string }) => c.title),
      ['ordering-a', 'ordering-b'],
    )
    const desc = await client(t.app, u.token).get('/api/marketplace-categories/?title=ordering-&o=-title')
    assert.deepEqual(
      desc.body.map((c: { title: string }) => c.title),
      ['ordering-b', 'ordering-a'],
    )
    const bad = await client(t.app, u.token).get('/api/marketplace-categories/?o=nope')
    assert.equal(bad.status, 400)
    assert.deepEqual(bad.body, { o: ['Select a valid choice. nope is not one of the available choices.'] })
  })
})

describe('offering types', () => {
  test('lists every offering type with what it allows, as a plain array', async () => {
    const u = await makeUser(t.ctx)
    const r = await client(t.app, u.token).get('/api/marketplace-offering-types/')
    assert.equal(r.status, 200)
    assert.deepEqual(
      r.body.map((x: { type: string }) => x.type),
      ['Marketplace.Basic', 'Marketplace.Slurm', 'Support.OfferingTemplate', 'CloudB.Tenant'],
    )
    const slurm = r.body.find((x: { type: string }) => x.type === 'Marketplace.Slurm')
    assert.deepEqual(slurm, {
      type: 'Marketplace.Slurm',
      label: 'Site agent (SLURM)',
      description:
        'Provider approval always required; then driven by an external site agent through set_state_*.',
      provider_approval_required: true,
      processed_by: 'agent',
      allowed_actions: [
        'approve_by_consumer',
        'approve_by_provider',
        'reject_by_consumer',
        'reject_by_provider',
        'set_state_erred',
        'set_state_executing',
        'set_state_done',
      ],
    })
    const basic = r.body.find((x: { type: string }) => x.type === 'Marketplace.Basic')
    assert.ok(basic.allowed_actions.includes('cancel'))
    assert.ok(!basic.allowed_actions.includes('set_state_executing'))
    assert.equal((await client(t.app).get('/api/marketplace-offering-types/')).status, 401)
  })
})

describe('demo data', () => {
  test('seed-demo makes the demo provider a provider with Active Basic and Slurm offerings and plans', async () => {
    const demo = (await seedDemo(t.ctx)) as {
      tokens: Record<string, string>
      customers: { provider: string }
      service_provider: string
      offerings: { basic: { offering: string; plan: string }; slurm: { offering: string; plan: string } }
    }
    const again = (await seedDemo(t.ctx)) as typeof demo
    assert.deepEqual(again.offerings, demo.offerings)
    const member = client(t.app, demo.tokens['demo-member'])
    const sp = await member.get(`/api/marketplace-service-providers/${demo.service_provider}/`)
    assert.equal(sp.status, 200)
    assert.equal(sp.body.customer_uuid, demo.customers.provider)
    for (const [key, type] of [
      ['basic', 'Marketplace.Basic'],
      ['slurm', 'Marketplace.Slurm'],
    ] as const) {
      const o = await member.get(`/api/marketplace-provider-offerings/${demo.offerings[key].offering}/`)
      assert.equal(o.status, 200)
      assert.equal(o.body.type, type)
      assert.equal(o.body.state, 'Active')
      assert.deepEqual(
        o.body.plans.map((p: { uuid: string }) => p.uuid),
        [demo.offerings[key].plan],
      )
    }
  })

  test('the demo HPC offering has no components until its provider loads them; seeding again keeps them', async () => {
    const demo = (await seedDemo(t.ctx)) as {
      tokens: Record<string, string>
      offerings: { slurm: { offering: string; plan: string } }
    }
    const provider = client(t.app, demo.tokens['demo-provider'])
    const path = `/api/marketplace-provider-offerings/${demo.offerings.slurm.offering}/`
    assert.deepEqual((await provider.get(`${path}?field=components`)).body, { components: [] })
    // What the site agent's waldur_site_load_components does for a configured cpu component.
    const loaded = await provider.post(`${path}create_offering_component/`, {
      billing_type: 'usage',
      type: 'cpu',
      name: 'CPU',
      measured_unit: 'k-Hours',
      limit_amount: 10,
    })
    assert.equal(loaded.status, 201, loaded.text)
    await seedDemo(t.ctx)
    const after = (await provider.get(`${path}?field=components`)).body.components
    assert.deepEqual(
      after.map((c: { type: string; uuid: string }) => [c.type, c.uuid]),
      [['cpu', loaded.body.uuid]],
    )
    const plan = (await provider.get(`/api/marketplace-plans/${demo.offerings.slurm.plan}/`)).body
    assert.deepEqual(plan.prices, { cpu: '0.0000000000' })
  })
})
