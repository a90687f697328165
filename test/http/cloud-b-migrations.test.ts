import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { TestApp } from '../support/app.js'
import { client } from '../support/client.js'
import { roleGraph, type Ref, type UserRef, uniqueName } from '../support/fixtures.js'
import { makeCustomer } from '../support/fixtures.js'
import { makeOffering, makePlan } from '../support/catalog-fixtures.js'
import { cloudBWorld } from '../support/cloud-setup.js'

let t: TestApp
let g: ReturnType<typeof roleGraph>
let staff: UserRef
let owner: UserRef
let project: Ref
let settings: { id: number; uuid: string; url: string }
let offering: Ref
let plan: Ref

const MIGRATIONS = '/api/cloudB-migrations/'
const as = (u: UserRef | null) => client(t.app, u?.token ?? null)
const drain = () => t.ctx.jobs.drain()

before(async () => {
  ;({ t, g, staff, owner, project, settings } = await cloudBWorld())
  const provider = await makeCustomer(t.ctx)
  offering = await makeOffering(t.ctx, provider, { type: 'CloudB.Tenant', serviceSettingsId: settings.id })
  plan = await makePlan(t.ctx, offering)
})
after(async () => {
  await t.close()
})

async function orderTenant(name: string, limits: Record<string, number> = { cores: 4 }) {
  const r = await as(owner).post('/api/marketplace-orders/', {
    offering: offering.url,
    plan: plan.url,
    project: project.url,
    attributes: { name },
    limits,
  })
  assert.equal(r.status, 201, JSON.stringify(r.body))
  assert.equal(r.body.state, 'executing')
  await drain()
  const o = await as(owner).get(`/api/marketplace-orders/${r.body.uuid}/`)
  return o.body
}

describe('CloudB.Tenant orders', () => {
  test('a Create order makes a tenant and ends done; Update and Terminate follow', async () => {
    const order = await orderTenant('ordered')
    assert.equal(order.state, 'done', JSON.stringify(order))
    const resource = (await as(owner).get(`/api/marketplace-resources/${order.marketplace_resource_uuid}/`))
      .body
    assert.equal(resource.state, 'OK')
    assert.ok(resource.scope.includes('/api/cloudB-tenants/'))
    const tenant = (await as(owner).get(`/api/cloudB-tenants/${resource.resource_uuid}/`)).body
    assert.equal(tenant.state, 'OK')
    assert.equal(tenant.name, 'ordered')
    assert.deepEqual(tenant.limits, { cores: 4 })
    assert.equal(tenant.marketplace_resource_uuid, resource.uuid)
    assert.equal(tenant.marketplace_offering_uuid, offering.uuid)
    assert.equal(tenant.marketplace_resource_state, 'OK')

    const up = await as(owner).post(`/api/marketplace-resources/${resource.uuid}/update_limits/`, {
      limits: { cores: 8 },
    })
    assert.ok([200, 201].includes(up.status), JSON.stringify(up.body))
    await drain()
    const updated = (await as(owner).get(`/api/cloudB-tenants/${tenant.uuid}/`)).body
    assert.deepEqual(updated.limits, { cores: 8 })
    assert.equal(updated.state, 'OK')
    const upOrder = (await as(owner).get(`/api/marketplace-orders/${up.body.order_uuid}/`)).body
    assert.equal(upOrder.state, 'done')

    const term = await as(owner).post(`/api/marketplace-resources/${resource.uuid}/terminate/`, {})
    assert.ok([200, 201].includes(term.status), JSON.stringify(term.body))
    await drain()
    const termOrder = (await as(owner).get(`/api/marketplace-orders/${term.body.order_uuid}/`)).body
    assert.equal(termOrder.state, 'done')
    assert.equal((await as(owner).get(`/api/cloudB-tenants/${tenant.uuid}/`)).status, 404)
  })

  test('a backend failure makes the order erred', async () => {
    await as(staff).patch(`/api/service-settings/${settings.uuid}/`, {
      options: { fail_next: ['create_tenant'] },
    })
    const order = await orderTenant('failing')
    assert.equal(order.state, 'erred')
    assert.equal(order.error_message, 'Emulated failure of create_tenant.')
  })
})

describe('migrations', () => {
  async function sourceResource() {
    const order = await orderTenant(uniqueName('src'))
    assert.equal(order.state, 'done')
    return order.marketplace_resource_uuid as string
  }

  test('create validates its fields and the mappings', async () => {
    const src = await sourceResource()
    const missing = await as(owner).post(MIGRATIONS, {})
    assert.equal(missing.status, 400)
    for (const k of ['src_resource', 'dst_offering', 'dst_plan']) assert.ok(missing.body[k], k)
    const badMappings = await as(owner).post(MIGRATIONS, {
      src_resource: src,
      dst_offering: offering.uuid,
      dst_plan: plan.uuid,
      mappings: { subnets: [{ src_cidr: 'x', dst_cidr: '8.8.8.0/24' }] },
    })
    assert.equal(badMappings.status, 400)
    assert.deepEqual(badMappings.body, {
      mappings: {
        subnets: [
          { src_cidr: ['Invalid CIDR format.'], dst_cidr: ['Destination CIDR must be a private range.'] },
        ],
      },
    })
    const otherPlan = await makePlan(t.ctx, await makeOffering(t.ctx, await makeCustomer(t.ctx)))
    const wrongPlan = await as(owner).post(MIGRATIONS, {
      src_resource: src,
      dst_offering: offering.uuid,
      dst_plan: otherPlan.uuid,
    })
    assert.equal(wrongPlan.status, 400)
    assert.ok(wrongPlan.body.dst_plan)
    const blank = await as(owner).post(MIGRATIONS, {
      src_resource: src,
      dst_offering: offering.uuid,
      dst_plan: plan.uuid,
      name: '',
      description: '',
    })
    assert.equal(blank.status, 400)
    assert.deepEqual(blank.body, {
      name: ['This field may not be blank.'],
      description: ['This field may not be blank.'],
    })
    const member = await g.member()
    const denied = await as(member).post(MIGRATIONS, {
      src_resource: src,
      dst_offering: offering.uuid,
      dst_plan: plan.uuid,
    })
    assert.equal(denied.status, 400)
    assert.deepEqual(denied.body, {
      non_field_errors: ['User does not have enough permissions to migrate resource.'],
    })
  })

  test('a migration runs through its states and copies the networking', async () => {
    const src = await sourceResource()
    const srcTenantUuid = (await as(owner).get(`/api/marketplace-resources/${src}/`)).body.resource_uuid
    const nets = (await as(owner).get(`/api/cloudB-networks/?tenant_uuid=${srcTenantUuid}`)).body
    const s = await as(owner).post('/api/cloudB-subnets/', {
      network: nets[0].url,
      name: 'app',
      cidr: '10.7.0.0/24',
    })
    assert.equal(s.status, 201)
    await drain()
    const r = await as(owner).post(MIGRATIONS, {
      src_resource: src,
      dst_offering: offering.uuid,
      dst_plan: plan.uuid,
      mappings: { subnets: [{ src_cidr: '10.7.0.0/24', dst_cidr: '10.9.0.0/24' }] },
    })
    assert.equal(r.status, 201, JSON.stringify(r.body))
    // The spec's create result (2.13): mappings and src_resource, with the migration's uuid and url.
    assert.deepEqual(Object.keys(r.body).sort(), ['mappings', 'src_resource', 'url', 'uuid'])
    assert.equal(r.body.src_resource, src)
    assert.deepEqual(r.body.mappings.subnets, [{ src_cidr: '10.7.0.0/24', dst_cidr: '10.9.0.0/24' }])
    const scheduled = (await as(owner).get(r.body.url.replace(/^https?:\/\/[^/]+/, ''))).body
    assert.equal(scheduled.state, 'CREATION_SCHEDULED')
    assert.equal(scheduled.src_resource_uuid, src)
    assert.equal(scheduled.dst_resource_uuid, null)
    await t.ctx.jobs.runOne()
    const creating = (await as(owner).get(`${MIGRATIONS}${r.body.uuid}/`)).body
    assert.equal(creating.state, 'CREATING')
    assert.ok(creating.dst_resource_uuid)
    assert.equal(creating.dst_resource_state, 'Creating')
    await drain()
    const done = (await as(owner).get(`${MIGRATIONS}${r.body.uuid}/`)).body
    assert.equal(done.state, 'OK', done.error_message)
    assert.equal(done.dst_resource_state, 'OK')
    assert.equal(done.dst_offering_uuid, offering.uuid)
    const dstTenant = (await as(owner).get(`/api/marketplace-resources/${done.dst_resource_uuid}/`)).body
      .resource_uuid
    const dstSubnets = (await as(owner).get(`/api/cloudB-subnets/?tenant_uuid=${dstTenant}`)).body
    assert.ok(dstSubnets.some((x: any) => x.cidr === '10.9.0.0/24'))

    const bySrc = (await as(owner).get(`${MIGRATIONS}?src_resource_uuid=${src}`)).body
    assert.deepEqual(
      bySrc.map((m: any) => m.uuid),
      [r.body.uuid],
    )
    const byDst = (await as(owner).get(`${MIGRATIONS}?dst_resource_uuid=${done.dst_resource_uuid}`)).body
    assert.equal(byDst.length, 1)
    assert.equal((await as(await g.outsider()).get(`${MIGRATIONS}${r.body.uuid}/`)).status, 404)

    const patched = await as(owner).patch(`${MIGRATIONS}${r.body.uuid}/`, { error_message: 'note' })
    assert.equal(patched.status, 200)
    assert.equal(patched.body.error_message, 'note')
    const put = await as(owner).put(`${MIGRATIONS}${r.body.uuid}/`, {
      mappings: { skip_connection_extnet: true },
      error_message: '',
      error_traceback: '',
    })
    assert.equal(put.status, 200)
    assert.equal(put.body.mappings.skip_connection_extnet, true)
    const badPut = await as(owner).patch(`${MIGRATIONS}${r.body.uuid}/`, { mappings: { networks: 'x' } })
    assert.equal(badPut.status, 400)
    // PUT sends the whole writable set, of which mappings is required; PATCH stays partial.
    for (const body of [{}, undefined, { error_message: 'x', error_traceback: 'y' }]) {
      const incomplete = await as(owner).put(`${MIGRATIONS}${r.body.uuid}/`, body)
      assert.equal(incomplete.status, 400, JSON.stringify(body))
      assert.deepEqual(incomplete.body, { mappings: ['This field is required.'] })
    }
    const unchanged = await as(owner).get(`${MIGRATIONS}${r.body.uuid}/`)
    assert.equal(unchanged.body.error_message, '')
    assert.equal((await as(owner).patch(`${MIGRATIONS}${r.body.uuid}/`, {})).status, 200)
    assert.equal((await as(owner).delete(`${MIGRATIONS}${r.body.uuid}/`)).status, 204)
    assert.equal((await as(owner).get(`${MIGRATIONS}${r.body.uuid}/`)).status, 404)
  })

  test('a failing destination makes the migration ERRED', async () => {
    const src = await sourceResource()
    await as(staff).patch(`/api/service-settings/${settings.uuid}/`, {
      options: { fail_next: ['create_tenant'] },
    })
    const r = await as(owner).post(MIGRATIONS, {
      src_resource: src,
      dst_offering: offering.uuid,
      dst_plan: plan.uuid,
    })
    assert.equal(r.status, 201)
    await drain()
    const m = (await as(owner).get(`${MIGRATIONS}${r.body.uuid}/`)).body
    assert.equal(m.state, 'ERRED')
    assert.match(m.error_message, /Emulated failure of create_tenant/)
    // The destination never reached the backend: its erred Create order terminates it.
    assert.equal(m.dst_resource_state, 'Terminated')
  })
})
