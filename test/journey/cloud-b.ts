import assert from 'node:assert/strict'
import { answer } from './client.js'
import type { Journey, Link, User, World } from './world.js'

interface Tenant {
  uuid: string
  url: string
}

/** A cloudB account shared with an organization's project, set up outside the contract areas. */
async function cloudScene(w: World) {
  const staff = await w.user({ staff: true })
  const organization = await w.customer()
  const project = await w.project(organization)
  const owner = await w.user()
  await w.grant(owner, 'CUSTOMER.OWNER', organization)
  const settings = await w.http<Link>('POST', '/api/service-settings/', staff, {
    name: 'Cloud B south',
    type: 'cloudB',
    shared: true,
  })
  assert.equal(settings.status, 201, JSON.stringify(settings.body))
  return { owner, project, settings: settings.body }
}

/** A tenant in that account, provisioned (with its network, subnet and security group). */
async function tenantScene(w: World) {
  const { owner, project, settings } = await cloudScene(w)
  const tenant = await w.http<Tenant>('POST', '/api/cloudB-tenants/', owner, {
    name: 'web-tenant',
    service_settings: settings.url,
    project: project.url,
  })
  assert.equal(tenant.status, 201, JSON.stringify(tenant.body))
  await w.drain()
  return { owner, tenant: tenant.body }
}

/** The first of a list outside the contract areas. */
async function first<T>(w: World, user: User, path: string): Promise<T> {
  const r = await w.http<T[]>('GET', path, user)
  assert.equal(r.status, 200, JSON.stringify(r.body))
  assert.ok(r.body[0], path)
  return r.body[0]
}

/** A port on the tenant's network, provisioned. */
async function port(w: World, owner: User, tenant: Tenant, name: string) {
  const network = await first<{ url: string }>(w, owner, `/api/cloudB-networks/?tenant_uuid=${tenant.uuid}`)
  const r = await w.http<{ uuid: string; url: string }>('POST', '/api/cloudB-ports/', owner, {
    network: network.url,
    name,
  })
  assert.equal(r.status, 201, JSON.stringify(r.body))
  await w.drain()
  return r.body
}

export const cloudBJourneys: Journey[] = [
  {
    name: 'a tenant owner attaches a cloudB floating IP to a port and detaches it again',
    async run(w) {
      const { owner, tenant } = await tenantScene(w)
      const allocated = await w.http<{ uuid: string }>(
        'POST',
        `/api/cloudB-tenants/${tenant.uuid}/create_floating_ip/`,
        owner,
        {},
      )
      assert.equal(allocated.status, 201, JSON.stringify(allocated.body))
      await w.drain()
      const vmPort = await port(w, owner, tenant, 'vm-eth0')
      const cloud = w.api(owner)
      const path = { params: { path: { uuid: allocated.body.uuid } } }

      const free = await answer(
        200,
        cloud.GET('/api/cloudB-floating-ips/', {
          params: { query: { tenant_uuid: tenant.uuid, free: true } },
        }),
      )
      assert.deepEqual(
        free.map((f) => [f.uuid, f.runtime_state]),
        [[allocated.body.uuid, 'DOWN']],
      )
      await answer(
        200,
        cloud.POST('/api/cloudB-floating-ips/{uuid}/attach_to_port/', {
          ...path,
          body: { port: vmPort.url },
        }),
      )
      await w.drain()
      const attached = await answer(200, cloud.GET('/api/cloudB-floating-ips/{uuid}/', path))
      assert.equal(attached.state, 'OK')
      assert.equal(attached.runtime_state, 'ACTIVE')
      assert.equal(attached.port, vmPort.url)
      assert.equal(attached.port_fixed_ips?.length, 1)

      await answer(200, cloud.POST('/api/cloudB-floating-ips/{uuid}/detach_from_port/', path))
      await w.drain()
      const detached = await answer(200, cloud.GET('/api/cloudB-floating-ips/{uuid}/', path))
      assert.equal(detached.runtime_state, 'DOWN')
      assert.equal(detached.port, null)
    },
  },
  {
    name: 'a tenant owner creates a cloudB router, connects a subnet and a port, sets static routes and disconnects them',
    async run(w) {
      const { owner, tenant } = await tenantScene(w)
      const subnet = await first<{ uuid: string; url: string }>(
        w,
        owner,
        `/api/cloudB-subnets/?tenant_uuid=${tenant.uuid}`,
      )
      const lbPort = await port(w, owner, tenant, 'lb-eth0')
      const cloud = w.api(owner)

      const created = await answer(
        201,
        cloud.POST('/api/cloudB-routers/', { body: { tenant: tenant.url, name: 'edge' } }),
      )
      assert.equal(created.tenant, tenant.url)
      await w.drain()
      const path = { params: { path: { uuid: created.uuid } } }
      const router = await answer(200, cloud.GET('/api/cloudB-routers/{uuid}/', path))
      assert.equal(router.state, 'OK')

      // An interface added or removed by subnet or by port, then the job that carries it out.
      const addInterface = async (body: { subnet: string } | { port: string }) => {
        await answer(200, cloud.POST('/api/cloudB-routers/{uuid}/add_router_interface/', { ...path, body }))
        await w.drain()
      }
      const removeInterface = async (body: { subnet: string } | { port: string }) => {
        await answer(
          200,
          cloud.POST('/api/cloudB-routers/{uuid}/remove_router_interface/', { ...path, body }),
        )
        await w.drain()
      }

      await addInterface({ subnet: subnet.url })
      await addInterface({ port: lbPort.url })
      const connected = await answer(200, cloud.GET('/api/cloudB-routers/{uuid}/', path))
      assert.equal(connected.ports?.length, 2)
      assert.ok(connected.ports?.some((p) => p.subnet_uuid === subnet.uuid))

      const routes = await answer(
        200,
        cloud.POST('/api/cloudB-routers/{uuid}/set_routes/', {
          ...path,
          body: { routes: [{ destination: '10.20.0.0/16', nexthop: '192.168.42.10' }] },
        }),
      )
      assert.deepEqual(routes.routes, [{ destination: '10.20.0.0/16', nexthop: '192.168.42.10' }])
      await w.drain()
      const routed = await answer(200, cloud.GET('/api/cloudB-routers/{uuid}/', path))
      assert.deepEqual(routed.routes, routes.routes)

      await removeInterface({ subnet: subnet.url })
      await removeInterface({ port: lbPort.url })
      const disconnected = await answer(200, cloud.GET('/api/cloudB-routers/{uuid}/', path))
      assert.deepEqual(disconnected.ports, [])
    },
  },
  {
    name: 'a tenant ordered through the marketplace is migrated to another tenant; the migration is read and its mappings replaced and amended',
    async run(w) {
      const { owner, project, settings } = await cloudScene(w)
      const provider = await w.provider()
      const offering = await w.offering(provider, { type: 'CloudB.Tenant', serviceSettings: settings })
      const plan = await w.plan(offering, 50)
      const order = await answer(
        201,
        w.api(owner).POST('/api/marketplace-orders/', {
          body: {
            offering: offering.url,
            plan: plan.url,
            project: project.url,
            type: 'Create',
            attributes: { name: 'analytics' },
            limits: { cores: 4 },
          },
        }),
      )
      await w.drain()
      const ordered = await answer(
        200,
        w.api(owner).GET('/api/marketplace-orders/{uuid}/', { params: { path: { uuid: order.uuid! } } }),
      )
      assert.equal(ordered.state, 'done')
      const source = ordered.marketplace_resource_uuid!
      const cloud = w.api(owner)

      const created = await answer(
        201,
        cloud.POST('/api/cloudB-migrations/', {
          body: {
            src_resource: source,
            dst_offering: offering.uuid,
            dst_plan: plan.uuid,
            mappings: {
              subnets: [{ src_cidr: '192.168.42.0/24', dst_cidr: '10.30.0.0/24' }],
              skip_connection_extnet: false,
              sync_instance_ports: false,
            },
          },
        }),
      )
      assert.equal(created.src_resource, source)
      assert.deepEqual(created.mappings?.subnets, [{ src_cidr: '192.168.42.0/24', dst_cidr: '10.30.0.0/24' }])
      // The reference's create result has no uuid: a client finds the migration by its source.
      const bySource = await answer(
        200,
        cloud.GET('/api/cloudB-migrations/', { params: { query: { src_resource_uuid: source } } }),
      )
      assert.equal(bySource.length, 1)
      const uuid = bySource[0]!.uuid
      const path = { params: { path: { uuid } } }
      assert.equal(bySource[0]!.state, 'CREATION_SCHEDULED')
      await w.drain()
      const migrated = await answer(200, cloud.GET('/api/cloudB-migrations/{uuid}/', path))
      assert.equal(migrated.state, 'OK', migrated.error_message)
      assert.equal(migrated.src_resource_uuid, source)
      assert.equal(migrated.dst_offering_uuid, offering.uuid)
      assert.equal(migrated.dst_resource_state, 'OK')
      const replaced = await answer(
        200,
        cloud.PUT('/api/cloudB-migrations/{uuid}/', {
          ...path,
          body: { mappings: { skip_connection_extnet: true, sync_instance_ports: true } },
        }),
      )
      assert.equal(replaced.mappings.skip_connection_extnet, true)
      assert.equal(replaced.mappings.sync_instance_ports, true)
      const amended = await answer(
        200,
        cloud.PATCH('/api/cloudB-migrations/{uuid}/', {
          ...path,
          body: { error_message: 'checked by the operator' },
        }),
      )
      assert.equal(amended.error_message, 'checked by the operator')
      assert.equal(amended.mappings.skip_connection_extnet, true)
    },
  },
]
