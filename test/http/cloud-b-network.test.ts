import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { TestApp } from '../support/app.js'
import { client, pathOf } from '../support/client.js'
import { roleGraph, type Ref, type UserRef, uniqueName } from '../support/fixtures.js'
import { cloudBWorld } from '../support/cloud-setup.js'

let t: TestApp
let g: ReturnType<typeof roleGraph>
let staff: UserRef
let owner: UserRef
let project: Ref
let settings: { uuid: string; url: string }

const FIPS = '/api/cloudB-floating-ips/'
const ROUTERS = '/api/cloudB-routers/'
const as = (u: UserRef | null) => client(t.app, u?.token ?? null)
const drain = () => t.ctx.jobs.drain()

before(async () => {
  ;({ t, g, staff, owner, project, settings } = await cloudBWorld())
})
after(async () => {
  await t.close()
})

async function setOptions(options: Record<string, unknown>) {
  const r = await as(staff).patch(`/api/service-settings/${settings.uuid}/`, { options })
  assert.equal(r.status, 200, JSON.stringify(r.body))
}

async function okTenant(name = uniqueName('tenant')) {
  const r = await as(owner).post('/api/cloudB-tenants/', {
    name,
    service_settings: settings.url,
    project: project.url,
    limits: { cores: 10 },
  })
  assert.equal(r.status, 201, JSON.stringify(r.body))
  assert.equal(r.body.state, 'CREATION_SCHEDULED')
  await drain()
  const got = await as(owner).get(pathOf(r.body.url))
  assert.equal(got.body.state, 'OK', JSON.stringify(got.body))
  return got.body
}

async function list(path: string, who: UserRef = owner) {
  const r = await as(who).get(path)
  assert.equal(r.status, 200, JSON.stringify(r.body))
  return r.body as any[]
}

async function okFip(tenant: any) {
  const r = await as(owner).post(`/api/cloudB-tenants/${tenant.uuid}/create_floating_ip/`, {})
  assert.equal(r.status, 201, JSON.stringify(r.body))
  await drain()
  return (await as(owner).get(pathOf(r.body.url))).body
}

async function okPort(tenant: any, name = 'vm-port') {
  const nets = await list(`/api/cloudB-networks/?tenant_uuid=${tenant.uuid}`)
  const r = await as(owner).post('/api/cloudB-ports/', { network: nets[0].url, name })
  assert.equal(r.status, 201, JSON.stringify(r.body))
  await drain()
  return (await as(owner).get(pathOf(r.body.url))).body
}

describe('tenants and their networking', () => {
  test('a tenant is created by a job and brings its network, subnet and security group', async () => {
    const tenant = await okTenant()
    assert.equal(tenant.resource_type, 'cloudB.Tenant')
    assert.deepEqual(tenant.limits, { cores: 10 })
    assert.match(tenant.backend_id, /^tenant-\d+$/)
    assert.equal(tenant.service_settings_uuid, settings.uuid)
    assert.equal(tenant.project_uuid, project.uuid)
    const nets = await list(`/api/cloudB-networks/?tenant=${encodeURIComponent(tenant.url)}`)
    assert.equal(nets.length, 1)
    assert.equal(nets[0].tenant_uuid, tenant.uuid)
    const subnets = await list(`/api/cloudB-subnets/?tenant_uuid=${tenant.uuid}`)
    assert.equal(subnets.length, 1)
    assert.equal(subnets[0].cidr, '192.168.42.0/24')
    assert.equal(subnets[0].gateway_ip, '192.168.42.1')
    assert.equal(subnets[0].ip_version, 4)
    const groups = await list(`/api/cloudB-security-groups/?tenant_uuid=${tenant.uuid}`)
    assert.equal(groups.length, 1)
    assert.equal(groups[0].name, 'default')
    assert.ok(groups[0].rules.some((r: any) => r.from_port === 22 && r.to_port === 22))
  })

  test('a subnet and a port are created through the API', async () => {
    const tenant = await okTenant()
    const nets = await list(`/api/cloudB-networks/?tenant_uuid=${tenant.uuid}`)
    const bad = await as(owner).post('/api/cloudB-subnets/', { network: nets[0].url, name: 's', cidr: 'x' })
    assert.equal(bad.status, 400)
    assert.deepEqual(bad.body, { cidr: ['Invalid CIDR format.'] })
    const s = await as(owner).post('/api/cloudB-subnets/', {
      network: nets[0].url,
      name: 'app',
      cidr: '10.5.0.9/24',
    })
    assert.equal(s.status, 201, JSON.stringify(s.body))
    assert.equal(s.body.cidr, '10.5.0.0/24')
    await drain()
    const subnet = (await as(owner).get(pathOf(s.body.url))).body
    assert.equal(subnet.state, 'OK')
    assert.equal(subnet.gateway_ip, '10.5.0.1')
    const p = await as(owner).post('/api/cloudB-ports/', {
      network: nets[0].url,
      subnet: subnet.url,
      name: 'p1',
    })
    assert.equal(p.status, 201, JSON.stringify(p.body))
    await drain()
    const port = (await as(owner).get(pathOf(p.body.url))).body
    assert.equal(port.state, 'OK')
    assert.equal(port.subnet_uuid, subnet.uuid)
    assert.equal(port.subnet_cidr, '10.5.0.0/24')
    assert.equal(port.fixed_ips[0].ip_address, '10.5.0.2')
    assert.match(port.mac_address, /^fa:16:3e:/)
    assert.equal(port.runtime_state, 'DOWN')
  })

  test('security group rule ports are limited to 1-65535', async () => {
    const tenant = await okTenant()
    const r = await as(owner).post('/api/cloudB-security-groups/', {
      tenant: tenant.url,
      name: 'web',
      rules: [{ protocol: 'tcp', from_port: 0, to_port: 70000 }],
    })
    assert.equal(r.status, 400)
    assert.deepEqual(r.body, {
      rules: [
        {
          from_port: ['Ensure this value is greater than or equal to 1.'],
          to_port: ['Ensure this value is less than or equal to 65535.'],
        },
      ],
    })
    const ok = await as(owner).post('/api/cloudB-security-groups/', {
      tenant: tenant.url,
      name: 'web',
      rules: [{ protocol: 'tcp', from_port: 80, to_port: 443, cidr: '0.0.0.0/0' }],
    })
    assert.equal(ok.status, 201, JSON.stringify(ok.body))
    assert.equal(ok.body.rules[0].from_port, 80)
  })

  test('a failed tenant creation is ERRED with the error recorded', async () => {
    await setOptions({ fail_next: ['create_tenant'] })
    const r = await as(owner).post('/api/cloudB-tenants/', {
      name: 'doomed',
      service_settings: settings.url,
      project: project.url,
    })
    await drain()
    const got = (await as(owner).get(pathOf(r.body.url))).body
    assert.equal(got.state, 'ERRED')
    assert.equal(got.error_message, 'Emulated failure of create_tenant.')
    assert.ok(got.error_traceback)
  })

  test('PUT of a tenant needs its name; PATCH changes what it is given', async () => {
    const tenant = await okTenant()
    const url = `/api/cloudB-tenants/${tenant.uuid}/`
    for (const body of [{}, undefined, { description: 'd', limits: { cores: 4 } }]) {
      const r = await as(owner).put(url, body)
      assert.equal(r.status, 400, JSON.stringify(body))
      assert.deepEqual(r.body, { name: ['This field is required.'] })
    }
    assert.equal((await as(owner).get(url)).body.state, 'OK', 'nothing was scheduled')
    const put = await as(owner).put(url, { name: 'renamed', description: 'd' })
    assert.equal(put.status, 200, JSON.stringify(put.body))
    assert.equal(put.body.state, 'UPDATE_SCHEDULED')
    await drain()
    const patched = await as(owner).patch(url, { limits: { cores: 4 } })
    assert.equal(patched.status, 200, JSON.stringify(patched.body))
    await drain()
    const got = (await as(owner).get(url)).body
    assert.equal(got.name, 'renamed')
    assert.equal(got.description, 'd')
    assert.deepEqual(got.limits, { cores: 4 })
  })

  test('the tenants list takes no tenant filter: tenant and tenant_uuid are ignored there', async () => {
    const tenant = await okTenant()
    for (const qs of [
      'tenant_uuid=not-a-uuid',
      `tenant=${encodeURIComponent('http://x/api/customers/1/')}`,
    ]) {
      const all = await list(`/api/cloudB-tenants/?${qs}`)
      assert.ok(
        all.some((x) => x.uuid === tenant.uuid),
        qs,
      )
    }
  })

  test('cloud objects are visible to project and customer members only', async () => {
    await okTenant()
    const outsider = await g.outsider()
    assert.equal((await list('/api/cloudB-tenants/', outsider)).length, 0)
    assert.ok((await list('/api/cloudB-tenants/', await g.member())).length > 0)
    assert.ok((await list('/api/cloudB-networks/', await g.member())).length > 0)
  })
})

describe('floating IPs', () => {
  test('create_floating_ip allocates an address in DOWN state', async () => {
    const tenant = await okTenant()
    const fip = await okFip(tenant)
    assert.equal(fip.state, 'OK')
    assert.equal(fip.runtime_state, 'DOWN')
    assert.match(fip.address, /^198\.18\./)
    assert.equal(fip.backend_network_id, 'ext-net-1')
    assert.equal(fip.tenant_uuid, tenant.uuid)
    assert.equal(fip.port, null)
    assert.deepEqual(fip.port_fixed_ips, [])
  })

  test('attach makes it ACTIVE and not free; detach makes it DOWN and free', async () => {
    const tenant = await okTenant()
    const fip = await okFip(tenant)
    const port = await okPort(tenant)
    const r = await as(owner).post(`${FIPS}${fip.uuid}/attach_to_port/`, { port: port.url })
    assert.equal(r.status, 200)
    assert.equal(r.text, '')
    assert.equal((await as(owner).get(`${FIPS}${fip.uuid}/`)).body.state, 'UPDATE_SCHEDULED')
    await drain()
    let got = (await as(owner).get(`${FIPS}${fip.uuid}/`)).body
    assert.equal(got.state, 'OK')
    assert.equal(got.runtime_state, 'ACTIVE')
    assert.equal(got.port, port.url)
    assert.deepEqual(got.port_fixed_ips, port.fixed_ips)
    const busy = await list(`${FIPS}?free=false&tenant_uuid=${tenant.uuid}`)
    assert.deepEqual(
      busy.map((f) => f.uuid),
      [fip.uuid],
    )
    assert.equal((await list(`${FIPS}?free=true&tenant_uuid=${tenant.uuid}`)).length, 0)
    assert.equal((await list(`${FIPS}?runtime_state=ACTIVE&tenant_uuid=${tenant.uuid}`)).length, 1)
    const d = await as(owner).post(`${FIPS}${fip.uuid}/detach_from_port/`)
    assert.equal(d.status, 200)
    await drain()
    got = (await as(owner).get(`${FIPS}${fip.uuid}/`)).body
    assert.equal(got.runtime_state, 'DOWN')
    assert.equal(got.port, null)
    assert.equal((await list(`${FIPS}?free=true&tenant_uuid=${tenant.uuid}`)).length, 1)
    const again = await as(owner).post(`${FIPS}${fip.uuid}/detach_from_port/`)
    assert.equal(again.status, 400)
    assert.ok(again.body.port)
  })

  test('attach checks state, port state and tenant', async () => {
    const tenant = await okTenant()
    const other = await okTenant()
    const fip = await okFip(tenant)
    const foreign = await okPort(other)
    const r = await as(owner).post(`${FIPS}${fip.uuid}/attach_to_port/`, { port: foreign.url })
    assert.equal(r.status, 400)
    assert.ok(r.body.non_field_errors[0].includes('is expected to belong to the same tenant'))
    const missing = await as(owner).post(`${FIPS}${fip.uuid}/attach_to_port/`, {})
    assert.equal(missing.status, 400)
    const nets = await list(`/api/cloudB-networks/?tenant_uuid=${tenant.uuid}`)
    const pending = await as(owner).post('/api/cloudB-ports/', { network: nets[0].url, name: 'new' })
    const r2 = await as(owner).post(`${FIPS}${fip.uuid}/attach_to_port/`, { port: pending.body.url })
    assert.equal(r2.status, 409)
    assert.match(r2.body.detail, /expected to have \[OK\] state/)
    await drain()
    const port = await okPort(tenant, 'p2')
    await as(owner).post(`${FIPS}${fip.uuid}/attach_to_port/`, { port: port.url })
    const twice = await as(owner).post(`${FIPS}${fip.uuid}/attach_to_port/`, { port: port.url })
    assert.equal(twice.status, 409)
    assert.deepEqual(twice.body, { detail: 'Valid states for operation: OK.' })
    await drain()
  })

  test('a failed attach leaves the floating IP ERRED and unattached', async () => {
    const tenant = await okTenant()
    const fip = await okFip(tenant)
    const port = await okPort(tenant)
    await setOptions({ fail_next: ['attach_floating_ip'] })
    await as(owner).post(`${FIPS}${fip.uuid}/attach_to_port/`, { port: port.url })
    await drain()
    const got = (await as(owner).get(`${FIPS}${fip.uuid}/`)).body
    assert.equal(got.state, 'ERRED')
    assert.equal(got.error_message, 'Emulated failure of attach_floating_ip.')
    assert.equal(got.port, null)
    assert.equal(got.runtime_state, 'DOWN')
  })

  test('update_description saves and pushes the description', async () => {
    const tenant = await okTenant()
    const fip = await okFip(tenant)
    const r = await as(owner).post(`${FIPS}${fip.uuid}/update_description/`, { description: 'for the web' })
    assert.equal(r.status, 200)
    assert.equal(r.text, '')
    await drain()
    const got = (await as(owner).get(`${FIPS}${fip.uuid}/`)).body
    assert.equal(got.description, 'for the web')
    assert.equal(got.state, 'OK')
    const blank = await as(owner).post(`${FIPS}${fip.uuid}/update_description/`, { description: '' })
    assert.equal(blank.status, 400)
    assert.deepEqual(blank.body, { description: ['This field may not be blank.'] })
    assert.equal((await as(owner).get(`${FIPS}${fip.uuid}/`)).body.state, 'OK', 'nothing was scheduled')
  })

  test('list filters', async () => {
    const tenant = await okTenant()
    const a = await okFip(tenant)
    const b = await okFip(tenant)
    const byTenant = await list(`${FIPS}?tenant_uuid=${tenant.uuid}`)
    assert.deepEqual(byTenant.map((f) => f.uuid).sort(), [a.uuid, b.uuid].sort())
    assert.equal((await list(`${FIPS}?tenant=${encodeURIComponent(tenant.url)}`)).length, 2)
    assert.equal((await list(`${FIPS}?tenant=${encodeURIComponent(settings.url)}`)).length, 0)
    assert.deepEqual(
      (await list(`${FIPS}?address=${a.address}`)).map((f) => f.uuid),
      [a.uuid],
    )
    assert.equal((await list(`${FIPS}?external_ip=1.2.3.4&tenant_uuid=${tenant.uuid}`)).length, 0)
    assert.equal((await list(`${FIPS}?uuid=${a.uuid}`)).length, 1)
    assert.equal((await list(`${FIPS}?state=OK&tenant_uuid=${tenant.uuid}`)).length, 2)
    assert.equal((await list(`${FIPS}?state=ERRED&tenant_uuid=${tenant.uuid}`)).length, 0)
    assert.equal((await as(owner).get(`${FIPS}?state=bogus`)).status, 400)
    assert.ok((await list(`${FIPS}?project_uuid=${project.uuid}`)).length >= 2)
    assert.ok((await list(`${FIPS}?customer_uuid=${(await g.customer()).uuid}`)).length >= 2)
    assert.ok((await list(`${FIPS}?service_settings_uuid=${settings.uuid}`)).length >= 2)
    assert.equal((await list(`${FIPS}?backend_id=${a.backend_id}`)).length, 1)
    assert.ok((await list(`${FIPS}?can_manage=true`)).length >= 2)
    assert.equal((await list(`${FIPS}?can_manage=true`, await g.member())).length, 0)
    const fields = await as(owner).get(`${FIPS}${a.uuid}/?field=address&field=runtime_state`)
    assert.deepEqual(Object.keys(fields.body).sort(), ['address', 'runtime_state'])
    const head = await as(owner).head(`${FIPS}?tenant_uuid=${tenant.uuid}`)
    assert.equal(head.headers['x-result-count'], '2')
  })

  test('create and update are not offered; pull, delete and unlink', async () => {
    const tenant = await okTenant()
    const fip = await okFip(tenant)
    assert.equal((await as(owner).post(FIPS, {})).status, 405)
    assert.equal((await as(owner).patch(`${FIPS}${fip.uuid}/`, {})).status, 405)
    const pull = await as(owner).post(`${FIPS}${fip.uuid}/pull/`)
    assert.equal(pull.status, 202)
    assert.equal(pull.text, '')
    await drain()
    assert.equal((await as(owner).post(`${FIPS}${fip.uuid}/unlink/`)).status, 403)
    const member = await g.member()
    assert.equal((await as(member).delete(`${FIPS}${fip.uuid}/`)).status, 403)
    const del = await as(owner).delete(`${FIPS}${fip.uuid}/`)
    assert.equal(del.status, 204)
    assert.equal((await as(owner).get(`${FIPS}${fip.uuid}/`)).body.state, 'DELETION_SCHEDULED')
    assert.equal((await as(owner).delete(`${FIPS}${fip.uuid}/`)).status, 409)
    await drain()
    assert.equal((await as(owner).get(`${FIPS}${fip.uuid}/`)).status, 404)
    const stuck = await okFip(tenant)
    await as(owner).delete(`${FIPS}${stuck.uuid}/`)
    const u = await as(staff).post(`${FIPS}${stuck.uuid}/unlink/`)
    assert.equal(u.status, 204)
    assert.equal((await as(owner).get(`${FIPS}${stuck.uuid}/`)).status, 404)
    await drain()
  })

  test('pull_floating_ips imports what the backend has', async () => {
    const tenant = await okTenant()
    await okFip(tenant)
    const r = await as(owner).post(`/api/cloudB-tenants/${tenant.uuid}/pull_floating_ips/`)
    assert.equal(r.status, 202)
    await drain()
    assert.equal((await list(`${FIPS}?tenant_uuid=${tenant.uuid}`)).length, 1)
    const pending = await as(owner).post('/api/cloudB-tenants/', {
      name: 'x',
      service_settings: settings.url,
      project: project.url,
    })
    const c = await as(owner).post(`/api/cloudB-tenants/${pending.body.uuid}/create_floating_ip/`, {})
    assert.equal(c.status, 409)
    await drain()
  })
})

describe('routers', () => {
  async function okRouter(tenant: any) {
    const r = await as(owner).post(ROUTERS, { tenant: tenant.url, name: 'r1' })
    assert.equal(r.status, 201, JSON.stringify(r.body))
    assert.deepEqual(Object.keys(r.body).sort(), [
      'name',
      'project',
      'service_settings',
      'tenant',
      'url',
      'uuid',
    ])
    assert.equal(r.body.tenant, tenant.url)
    await drain()
    const got = (await as(owner).get(`${ROUTERS}${r.body.uuid}/`)).body
    assert.equal(got.state, 'OK')
    return got
  }

  test('create validates the tenant', async () => {
    const r = await as(owner).post(ROUTERS, { name: 'r' })
    assert.equal(r.status, 400)
    const bad = await as(owner).post(ROUTERS, { tenant: settings.url, name: 'r' })
    assert.deepEqual(bad.body, { tenant: ['Invalid hyperlink - Incorrect URL match.'] })
  })

  test('interfaces: exactly one of subnet or port', async () => {
    const tenant = await okTenant()
    const router = await okRouter(tenant)
    const subnets = await list(`/api/cloudB-subnets/?tenant_uuid=${tenant.uuid}`)
    const port = await okPort(tenant)
    const none = await as(owner).post(`${ROUTERS}${router.uuid}/add_router_interface/`, {})
    assert.equal(none.status, 400)
    assert.deepEqual(none.body, {
      non_field_errors: ['Either subnet or port must be specified, but not both.'],
    })
    const both = await as(owner).post(`${ROUTERS}${router.uuid}/add_router_interface/`, {
      subnet: subnets[0].url,
      port: port.url,
    })
    assert.equal(both.status, 400)
    const r = await as(owner).post(`${ROUTERS}${router.uuid}/add_router_interface/`, {
      subnet: subnets[0].url,
    })
    assert.equal(r.status, 200)
    assert.equal(r.text, '')
    await drain()
    let got = (await as(owner).get(`${ROUTERS}${router.uuid}/`)).body
    assert.equal(got.state, 'OK', got.error_message)
    assert.equal(got.ports.length, 1)
    assert.equal(got.ports[0].subnet_uuid, subnets[0].uuid)
    assert.equal(got.ports[0].device_owner, 'network:router_interface')
    assert.equal(got.ports[0].fixed_ips[0].ip_address, '192.168.42.1')
    assert.equal(got.ports[0].subnet_cidr, '192.168.42.0/24')
    assert.ok(got.fixed_ips.some((f: any) => f.ip_address === '192.168.42.1'))
    const viaPort = await as(owner).post(`${ROUTERS}${router.uuid}/add_router_interface/`, { port: port.url })
    assert.equal(viaPort.status, 200)
    await drain()
    got = (await as(owner).get(`${ROUTERS}${router.uuid}/`)).body
    assert.equal(got.ports.length, 2)
    const owned = await as(owner).post(`${ROUTERS}${router.uuid}/add_router_interface/`, { port: port.url })
    assert.equal(owned.status, 400)
    assert.ok(owned.body.port[0].startsWith('Port cannot have an owner'))
    const rm = await as(owner).post(`${ROUTERS}${router.uuid}/remove_router_interface/`, {
      subnet: subnets[0].url,
    })
    assert.equal(rm.status, 200)
    await drain()
    got = (await as(owner).get(`${ROUTERS}${router.uuid}/`)).body
    assert.equal(got.ports.length, 1)
    const rm2 = await as(owner).post(`${ROUTERS}${router.uuid}/remove_router_interface/`, {
      port: port.url,
      subnet: subnets[0].url,
    })
    assert.equal(rm2.status, 400)
    await as(owner).post(`${ROUTERS}${router.uuid}/remove_router_interface/`, { port: port.url })
    await drain()
    assert.equal((await as(owner).get(`${ROUTERS}${router.uuid}/`)).body.ports.length, 0)
    const freed = (await as(owner).get(pathOf(port.url))).body
    assert.equal(freed.device_owner, '')
  })

  test('set_routes validates destinations and nexthops and answers the routes', async () => {
    const tenant = await okTenant()
    const router = await okRouter(tenant)
    const bad = await as(owner).post(`${ROUTERS}${router.uuid}/set_routes/`, {
      routes: [{ destination: '10.0.0.0/33', nexthop: 'nope' }],
    })
    assert.equal(bad.status, 400)
    assert.deepEqual(bad.body, {
      routes: [{ destination: ['Invalid CIDR format.'], nexthop: ['Enter a valid IPv4 or IPv6 address.'] }],
    })
    const own = await as(owner).post(`${ROUTERS}${router.uuid}/set_routes/`, {
      routes: [{ destination: '10.0.0.0/24', nexthop: router.fixed_ips[0].ip_address }],
    })
    assert.equal(own.status, 400)
    assert.ok(own.body.non_field_errors[0].includes('is used by router'))
    const r = await as(owner).post(`${ROUTERS}${router.uuid}/set_routes/`, {
      routes: [
        { destination: '10.1.2.3/16', nexthop: '192.168.42.10' },
        { destination: '2001:db8::/32', nexthop: '2001:DB8::1' },
      ],
    })
    assert.equal(r.status, 200)
    assert.deepEqual(r.body, {
      routes: [
        { destination: '10.1.0.0/16', nexthop: '192.168.42.10' },
        { destination: '2001:db8::/32', nexthop: '2001:db8::1' },
      ],
    })
    await drain()
    const got = (await as(owner).get(`${ROUTERS}${router.uuid}/`)).body
    assert.equal(got.state, 'OK')
    assert.deepEqual(got.routes, r.body.routes)
    const cleared = await as(owner).post(`${ROUTERS}${router.uuid}/set_routes/`, { routes: [] })
    assert.deepEqual(cleared.body, { routes: [] })
    const busy = await as(owner).post(`${ROUTERS}${router.uuid}/set_routes/`, { routes: [] })
    assert.equal(busy.status, 409)
    await drain()
  })

  test('list filters, pull, delete', async () => {
    const tenant = await okTenant()
    const router = await okRouter(tenant)
    assert.deepEqual(
      (await list(`${ROUTERS}?tenant_uuid=${tenant.uuid}`)).map((r) => r.uuid),
      [router.uuid],
    )
    assert.equal((await list(`${ROUTERS}?tenant=${encodeURIComponent(tenant.url)}`)).length, 1)
    assert.equal((await list(`${ROUTERS}?tenant_uuid=${tenant.uuid}&name=r`)).length, 1)
    assert.equal((await list(`${ROUTERS}?tenant_uuid=${tenant.uuid}&name_exact=r`)).length, 0)
    assert.equal((await list(`${ROUTERS}?tenant_uuid=${tenant.uuid}&state=OK`)).length, 1)
    assert.equal((await as(owner).post(`${ROUTERS}${router.uuid}/pull/`)).status, 202)
    await drain()
    assert.equal((await as(owner).put(`${ROUTERS}${router.uuid}/`, {})).status, 405)
    assert.equal((await as(owner).delete(`${ROUTERS}${router.uuid}/`)).status, 204)
    await drain()
    assert.equal((await as(owner).get(`${ROUTERS}${router.uuid}/`)).status, 404)
  })

  test('a failed router creation is ERRED', async () => {
    const tenant = await okTenant()
    await setOptions({ fail_next: ['create_router'] })
    const r = await as(owner).post(ROUTERS, { tenant: tenant.url, name: 'bad' })
    await drain()
    const got = (await as(owner).get(`${ROUTERS}${r.body.uuid}/`)).body
    assert.equal(got.state, 'ERRED')
    assert.equal(got.error_message, 'Emulated failure of create_router.')
  })
})

describe('set_ok and set_erred', () => {
  test('staff set floating IPs and routers ERRED and back to OK; owners get 403', async () => {
    const tenant = await okTenant()
    const fip = await okFip(tenant)
    const created = await as(owner).post(ROUTERS, { tenant: tenant.url, name: 'r-state' })
    assert.equal(created.status, 201, JSON.stringify(created.body))
    await drain()
    for (const path of [`${FIPS}${fip.uuid}/`, `${ROUTERS}${created.body.uuid}/`]) {
      assert.equal((await as(owner).post(`${path}set_erred/`, {})).status, 403)
      assert.equal((await as(owner).post(`${path}set_ok/`)).status, 403)
      const e = await as(staff).post(`${path}set_erred/`, { error_message: 'Lost.', error_traceback: 'tb' })
      assert.equal(e.status, 200, JSON.stringify(e.body))
      assert.deepEqual(e.body, { detail: 'Resource state has been set to ERRED.' })
      let got = (await as(staff).get(path)).body
      assert.equal(got.state, 'ERRED', path)
      assert.equal(got.error_message, 'Lost.')
      const ok = await as(staff).post(`${path}set_ok/`)
      assert.deepEqual(ok.body, { detail: 'Resource state has been set to OK.' })
      got = (await as(staff).get(path)).body
      assert.equal(got.state, 'OK', path)
      assert.equal(got.error_message, '')
    }
  })
})

describe('fields the newest clients read', () => {
  test('routers show their external gateway; networks nest their subnets', async () => {
    const tenant = await okTenant()
    const created = await as(owner).post(ROUTERS, { tenant: tenant.url, name: 'r-gw' })
    assert.equal(created.status, 201, JSON.stringify(created.body))
    await drain()
    const router = (await as(owner).get(`${ROUTERS}${created.body.uuid}/`)).body
    assert.equal(router.has_external_gateway, true)
    assert.equal(router.external_fixed_ips.length, 1)
    assert.equal(typeof router.external_fixed_ips[0].ip_address, 'string')
    assert.deepEqual(
      router.external_fixed_ips.map((f: { ip_address: string }) => f.ip_address),
      router.offering_external_ips,
    )
    assert.equal(router.external_network_name, tenant.external_network_id)
    assert.equal(router.external_network_uuid, null)
    const nets = await list(`/api/cloudB-networks/?tenant_uuid=${tenant.uuid}`)
    const subnets = await list(`/api/cloudB-subnets/?tenant_uuid=${tenant.uuid}`)
    assert.deepEqual(nets[0].subnets, [
      {
        uuid: subnets[0].uuid,
        url: subnets[0].url,
        name: subnets[0].name,
        description: subnets[0].description,
        cidr: '192.168.42.0/24',
        gateway_ip: '192.168.42.1',
        allocation_pools: subnets[0].allocation_pools,
        ip_version: 4,
        enable_dhcp: subnets[0].enable_dhcp,
      },
    ])
  })

  test('ports list their floating IPs, admin state and status', async () => {
    const tenant = await okTenant()
    const port = await okPort(tenant)
    assert.deepEqual(port.floating_ips, [])
    assert.equal(port.admin_state_up, true)
    assert.equal(port.status, port.runtime_state)
    const fip = await okFip(tenant)
    const r = await as(owner).post(`${FIPS}${fip.uuid}/attach_to_port/`, { port: port.url })
    assert.equal(r.status, 200, r.text)
    await drain()
    const got = (await as(owner).get(pathOf(port.url))).body
    assert.deepEqual(got.floating_ips, [fip.url])
    assert.equal(got.status, got.runtime_state)
  })

  test('tenants show their quotas with real usage', async () => {
    const tenant = await okTenant()
    await okFip(tenant)
    const got = (await as(owner).get(pathOf(tenant.url))).body
    const q = Object.fromEntries(
      got.quotas.map((x: { name: string; limit: number; usage: number }) => [x.name, [x.limit, x.usage]]),
    )
    assert.deepEqual(q.cores, [10, 0])
    assert.deepEqual(q.network_count, [-1, 1])
    assert.deepEqual(q.subnet_count, [-1, 1])
    assert.deepEqual(q.floating_ip_count, [-1, 1])
    assert.deepEqual(q.router_count, [-1, 0])
  })
})
