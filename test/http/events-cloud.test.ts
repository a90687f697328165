// The events of cloud resources (cloudA public IPs; cloudB floating IPs, routers and the tenant's
// other objects) and of cloudB migrations, read back through GET /api/events/ with its filters,
// and who sees them.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { TestApp } from '../support/app.js'
import { client, pathOf } from '../support/client.js'
import { makeCustomer, roleGraph, uniqueName, type Ref, type UserRef } from '../support/fixtures.js'
import { makeOffering, makePlan } from '../support/catalog-fixtures.js'
import { cloudBWorld, postCreated } from '../support/cloud-setup.js'
import { moveCloudResource } from '../../src/areas/cloud/states.js'

let t: TestApp
let g: ReturnType<typeof roleGraph>
let staff: UserRef
let owner: UserRef
let member: UserRef
let outsider: UserRef
let project: Ref
let settings: { id: number; uuid: string; url: string }

const as = (u: UserRef) => client(t.app, u.token)
const drain = () => t.ctx.jobs.drain()

before(async () => {
  ;({ t, g, staff, owner, project, settings } = await cloudBWorld())
  member = await g.member()
  outsider = await g.outsider()
})
after(() => t.close())

async function eventsOf(who: UserRef, query = ''): Promise<any[]> {
  const r = await as(who).get(`/api/events/?page_size=300${query}`)
  assert.equal(r.status, 200, JSON.stringify(r.body))
  return r.body
}

async function headPosition(): Promise<number> {
  const r = await as(staff).get('/api/events/?page=last&page_size=1')
  return r.body.length ? r.body[0].position : 0
}

const states = (events: any[]) => events.map((e) => [e.type, e.data.state_before, e.data.state_after])

async function okTenant(): Promise<any> {
  const r = await as(owner).post('/api/cloudB-tenants/', {
    name: uniqueName('tenant'),
    service_settings: settings.url,
    project: project.url,
  })
  assert.equal(r.status, 201, JSON.stringify(r.body))
  await drain()
  return (await as(owner).get(pathOf(r.body.url))).body
}

describe('cloudB objects', () => {
  test("a floating IP's creation and states are told to who sees it, in order", async () => {
    const tenant = await okTenant()
    const from = await headPosition()
    const r = await as(owner).post(`/api/cloudB-tenants/${tenant.uuid}/create_floating_ip/`, {})
    assert.equal(r.status, 201, JSON.stringify(r.body))
    await drain()
    const q = `&after=${from}&object_type=floating_ip&project_uuid=${project.uuid}`
    const seen = await eventsOf(member, q)
    assert.deepEqual(states(seen), [
      ['cloudB.floating_ip.created', null, 'CREATION_SCHEDULED'],
      ['cloudB.floating_ip.state_changed', 'CREATION_SCHEDULED', 'CREATING'],
      ['cloudB.floating_ip.state_changed', 'CREATING', 'OK'],
    ])
    const created = seen[0]
    assert.equal(created.data.uuid, r.body.uuid)
    assert.equal(created.data.url, `http://localhost:80/api/cloudB-floating-ips/${r.body.uuid}/`)
    assert.equal(created.data.object_type, 'floating_ip')
    assert.equal(created.data.resource_type, 'cloudB.FloatingIP')
    assert.equal(created.data.project_uuid, project.uuid)
    assert.equal(created.data.customer_uuid, (await g.customer()).uuid)
    assert.deepEqual(await eventsOf(outsider, q), [])

    // The staff's set_erred is a state change like any other; set_ok back too.
    const from2 = await headPosition()
    assert.equal((await as(staff).post(`/api/cloudB-floating-ips/${r.body.uuid}/set_erred/`, {})).status, 200)
    assert.equal((await as(staff).post(`/api/cloudB-floating-ips/${r.body.uuid}/set_ok/`)).status, 200)
    assert.deepEqual(states(await eventsOf(owner, `&after=${from2}&type=cloudB.floating_ip.state_changed`)), [
      ['cloudB.floating_ip.state_changed', 'OK', 'ERRED'],
      ['cloudB.floating_ip.state_changed', 'ERRED', 'OK'],
    ])
  })

  test('a router deleted tells its deletion; then only staff and support see its events', async () => {
    const tenant = await okTenant()
    const from = await headPosition()
    const router = await postCreated<{ uuid: string }>(t, owner, '/api/cloudB-routers/', {
      tenant: tenant.url,
      name: 'r1',
    })
    await drain()
    assert.equal((await as(owner).delete(`/api/cloudB-routers/${router.uuid}/`)).status, 204)
    await drain()
    const q = `&after=${from}&object_type=router`
    assert.deepEqual(states(await eventsOf(staff, q)), [
      ['cloudB.router.created', null, 'CREATION_SCHEDULED'],
      ['cloudB.router.state_changed', 'CREATION_SCHEDULED', 'CREATING'],
      ['cloudB.router.state_changed', 'CREATING', 'OK'],
      ['cloudB.router.state_changed', 'OK', 'DELETION_SCHEDULED'],
      ['cloudB.router.state_changed', 'DELETION_SCHEDULED', 'DELETING'],
      ['cloudB.router.deleted', 'DELETING', null],
    ])
    assert.deepEqual(await eventsOf(owner, q), [])
  })

  test("an ordered tenant's events, and its objects', name the order's offering; a tenant made directly names none", async () => {
    const provider = await makeCustomer(t.ctx)
    const offering = await makeOffering(t.ctx, provider, {
      type: 'CloudB.Tenant',
      serviceSettingsId: settings.id,
    })
    const plan = await makePlan(t.ctx, offering)
    const from = await headPosition()
    const ordered = await as(owner).post('/api/marketplace-orders/', {
      offering: offering.url,
      plan: plan.url,
      project: project.url,
      attributes: { name: uniqueName('ordered') },
      limits: { cores: 2 },
    })
    assert.equal(ordered.status, 201, JSON.stringify(ordered.body))
    await drain()
    const tenantEvents = await eventsOf(owner, `&after=${from}&object_type=tenant`)
    assert.deepEqual(states(tenantEvents), [
      ['cloudB.tenant.created', null, 'CREATION_SCHEDULED'],
      ['cloudB.tenant.state_changed', 'CREATION_SCHEDULED', 'CREATING'],
      ['cloudB.tenant.state_changed', 'CREATING', 'OK'],
    ])
    const customer = (await g.customer()).uuid
    const scopes = (events: any[]) =>
      events.map((e) => [e.data.offering_uuid, e.data.project_uuid, e.data.customer_uuid])
    const ofOffering = (events: any[]) => events.map(() => [offering.uuid, project.uuid, customer])
    assert.deepEqual(scopes(tenantEvents), ofOffering(tenantEvents))
    const tenant = tenantEvents[0].data.uuid as string
    assert.equal(
      (await as(owner).get(`/api/cloudB-tenants/${tenant}/`)).body.marketplace_offering_uuid,
      offering.uuid,
    )
    // The objects the backend has in it (found after its creation), and one made in it.
    const children = 'network,subnet,security_group,port,floating_ip'
    const fip = await as(owner).post(`/api/cloudB-tenants/${tenant}/create_floating_ip/`, {})
    assert.equal(fip.status, 201, JSON.stringify(fip.body))
    await drain()
    const objects = await eventsOf(owner, `&after=${from}&object_type=${children}`)
    assert.ok(
      objects.some((e) => e.data.object_type === 'network'),
      JSON.stringify(objects),
    )
    assert.ok(objects.some((e) => e.data.uuid === fip.body.uuid))
    assert.deepEqual(scopes(objects), ofOffering(objects))
    // The offering's filter finds them all.
    const byOffering = await eventsOf(
      owner,
      `&after=${from}&offering_uuid=${offering.uuid}&object_type=tenant,${children}`,
    )
    assert.equal(byOffering.length, tenantEvents.length + objects.length)

    // Terminated through the marketplace: the deletions still name the offering (told to staff:
    // the objects are gone).
    const from2 = await headPosition()
    const term = await as(owner).post(
      `/api/marketplace-resources/${ordered.body.marketplace_resource_uuid}/terminate/`,
      {},
    )
    assert.ok([200, 201].includes(term.status), JSON.stringify(term.body))
    await drain()
    const deleted = await eventsOf(staff, `&after=${from2}&type=cloudB.tenant.deleted,cloudB.network.deleted`)
    assert.ok(deleted.length >= 2, JSON.stringify(deleted))
    assert.deepEqual(scopes(deleted), ofOffering(deleted))
    const gone = await eventsOf(staff, `&after=${from2}&object_type=tenant,${children}`)
    assert.deepEqual(scopes(gone), ofOffering(gone))

    // A tenant made without an order belongs to no offering, nor do its objects.
    const from3 = await headPosition()
    await okTenant()
    const plain = await eventsOf(owner, `&after=${from3}&object_type=tenant,${children}`)
    assert.ok(plain.length > 3, JSON.stringify(plain))
    assert.ok(plain.every((e) => e.data.offering_uuid === null))
  })

  test('a refused move and a rolled-back one tell nothing', async () => {
    const tenant = await okTenant()
    const r = await as(owner).post(`/api/cloudB-tenants/${tenant.uuid}/create_floating_ip/`, {})
    assert.equal(r.status, 201, JSON.stringify(r.body))
    await drain()
    const from = await headPosition()
    // Deleting twice: the second is refused (409) while the first waits for its job.
    assert.equal((await as(owner).delete(`/api/cloudB-floating-ips/${r.body.uuid}/`)).status, 204)
    assert.equal((await as(owner).delete(`/api/cloudB-floating-ips/${r.body.uuid}/`)).status, 409)
    const row = await t.ctx.db
      .selectFrom('cloud_resources')
      .select('id')
      .where('uuid', '=', r.body.uuid)
      .executeTakeFirstOrThrow()
    await assert.rejects(
      t.ctx.db.transaction().execute(async (trx) => {
        assert.ok(await moveCloudResource(t.ctx, trx, row.id, null, 'ERRED'))
        throw new Error('the change fails after the move')
      }),
      /the change fails/,
    )
    assert.equal(
      (await as(owner).get(`/api/cloudB-floating-ips/${r.body.uuid}/`)).body.state,
      'DELETION_SCHEDULED',
    )
    assert.deepEqual(states(await eventsOf(staff, `&after=${from}`)), [
      ['cloudB.floating_ip.state_changed', 'OK', 'DELETION_SCHEDULED'],
    ])
  })
})

describe('cloudA public IPs', () => {
  test("a public IP's creation and states are told with its project", async () => {
    const a = { token: staff }
    const aSettings = await postCreated(t, a.token, '/api/service-settings/', {
      name: 'Cloud A',
      type: 'cloudA',
      shared: true,
    })
    const location = await postCreated(t, staff, '/api/cloudA-locations/', {
      name: 'west',
      service_settings: aSettings.url,
    })
    const group = await postCreated(t, staff, '/api/cloudA-resource-groups/', {
      name: 'rg',
      service_settings: aSettings.url,
      location: location.url,
      project: project.url,
    })
    const from = await headPosition()
    const ip = await postCreated(t, owner, '/api/cloudA-public-ips/', {
      name: 'ip',
      service_settings: aSettings.url,
      project: project.url,
      location: location.url,
      resource_group: group.url,
    })
    await drain()
    const seen = await eventsOf(
      member,
      `&after=${from}&project_uuid=${project.uuid}&type=cloudA.public_ip.created,cloudA.public_ip.state_changed`,
    )
    assert.deepEqual(states(seen), [
      ['cloudA.public_ip.created', null, 'CREATION_SCHEDULED'],
      ['cloudA.public_ip.state_changed', 'CREATION_SCHEDULED', 'CREATING'],
      ['cloudA.public_ip.state_changed', 'CREATING', 'OK'],
    ])
    assert.ok(seen.every((e) => e.data.uuid === ip.uuid && e.data.object_type === 'public_ip'))
    assert.deepEqual(await eventsOf(outsider, `&after=${from}&object_type=public_ip`), [])
  })
})

describe('cloudB migrations', () => {
  test("a migration's creation and states are told to its creator (and staff), not to the project", async () => {
    const provider = await makeCustomer(t.ctx)
    const offering = await makeOffering(t.ctx, provider, {
      type: 'CloudB.Tenant',
      serviceSettingsId: settings.id,
    })
    const plan = await makePlan(t.ctx, offering)
    const ordered = await as(owner).post('/api/marketplace-orders/', {
      offering: offering.url,
      plan: plan.url,
      project: project.url,
      attributes: { name: uniqueName('src') },
      limits: { cores: 2 },
    })
    assert.equal(ordered.status, 201, JSON.stringify(ordered.body))
    await drain()
    const from = await headPosition()
    const m = await postCreated<{ uuid: string }>(t, owner, '/api/cloudB-migrations/', {
      src_resource: ordered.body.marketplace_resource_uuid,
      dst_offering: offering.uuid,
      dst_plan: plan.uuid,
    })
    await drain()
    const q = `&after=${from}&object_type=migration`
    const seen = await eventsOf(owner, q)
    assert.deepEqual(states(seen), [
      ['cloudB.migration.created', null, 'CREATION_SCHEDULED'],
      ['cloudB.migration.state_changed', 'CREATION_SCHEDULED', 'CREATING'],
      ['cloudB.migration.state_changed', 'CREATING', 'OK'],
    ])
    assert.equal(seen[0].data.uuid, m.uuid)
    assert.equal(seen[0].data.offering_uuid, offering.uuid)
    assert.equal(seen[0].data.project_uuid, project.uuid)
    // A migration is its creator's: the project's member does not see it, nor its events.
    assert.deepEqual(await eventsOf(member, q), [])
    assert.equal((await as(owner).delete(`/api/cloudB-migrations/${m.uuid}/`)).status, 204)
    assert.deepEqual(states(await eventsOf(staff, `${q}&type=cloudB.migration.deleted`)), [
      ['cloudB.migration.deleted', 'OK', null],
    ])
  })
})
