import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { buildTestApp, type TestApp } from '../support/app.js'
import { call, client } from '../support/client.js'
import {
  makeCustomer,
  makeProject,
  roleGraph,
  type Ref,
  type UserRef,
  uniqueName,
} from '../support/fixtures.js'
import { makeCategory, makeOffering, makePlan, makeResource } from '../support/catalog-fixtures.js'
import { postCreated } from '../support/cloud-setup.js'

let t: TestApp
let g: ReturnType<typeof roleGraph>
let staff: UserRef
let settings: { uuid: string; url: string }
let location: { uuid: string; url: string }
let group: { uuid: string; url: string }
let project: Ref

const IPS = '/api/cloudA-public-ips/'
const as = (u: UserRef | null) => client(t.app, u?.token ?? null)

before(async () => {
  t = await buildTestApp()
  g = roleGraph(t.ctx)
  staff = await g.staff()
  project = await g.project()
  settings = await makeSettings({ name: 'Cloud A west' })
  location = await makeLocation(settings, 'westeurope')
  group = await makeGroup(settings, location, project, 'rg-main')
})
after(async () => {
  await t.close()
})

async function makeSettings(extra: Record<string, unknown> = {}) {
  return postCreated(t, staff, '/api/service-settings/', {
    name: uniqueName('Settings'),
    type: 'cloudA',
    shared: true,
    ...extra,
  })
}

async function makeLocation(s: { url: string }, name: string) {
  return postCreated(t, staff, '/api/cloudA-locations/', { name, service_settings: s.url })
}

async function makeGroup(s: { url: string }, loc: { url: string }, p: Ref, name: string) {
  return postCreated(t, staff, '/api/cloudA-resource-groups/', {
    name,
    service_settings: s.url,
    location: loc.url,
    project: p.url,
  })
}

function body(extra: Record<string, unknown> = {}) {
  return {
    name: uniqueName('ip'),
    description: 'front door',
    service_settings: settings.url,
    project: project.url,
    location: location.url,
    resource_group: group.url,
    ...extra,
  }
}

async function createIp(who: UserRef = staff, extra: Record<string, unknown> = {}) {
  const r = await as(who).post(IPS, body(extra))
  assert.equal(r.status, 201, JSON.stringify(r.body))
  return r.body
}

/** The IP as staff read it once every queued job has run. */
async function settled(uuid: string) {
  await t.ctx.jobs.drain()
  return as(staff).get(`${IPS}${uuid}/`)
}

/** The IP as staff read it after staff asked for a pull (202) and the pull job ran. */
async function pulled(uuid: string) {
  assert.equal((await as(staff).post(`${IPS}${uuid}/pull/`)).status, 202)
  return (await settled(uuid)).body
}

/** A public IP driven to OK through the create job. */
async function okIp(extra: Record<string, unknown> = {}) {
  const ip = await createIp(staff, extra)
  const r = await settled(ip.uuid)
  assert.equal(r.body.state, 'OK', JSON.stringify(r.body))
  return r.body
}

async function setOptions(s: { uuid: string }, options: Record<string, unknown>) {
  const r = await as(staff).patch(`/api/service-settings/${s.uuid}/`, { options })
  assert.equal(r.status, 200, JSON.stringify(r.body))
}

describe('public IP create and lifecycle', () => {
  test('create answers 201 at once in CREATION_SCHEDULED with the full record', async () => {
    const owner = await g.owner()
    const customer = await g.customer()
    const b = body({ name: 'pip-web' })
    const r = await as(owner).post(IPS, b)
    assert.equal(r.status, 201, JSON.stringify(r.body))
    const ip = r.body
    const base = 'http://localhost:80/api'
    assert.deepEqual(ip, {
      url: `${base}/cloudA-public-ips/${ip.uuid}/`,
      uuid: ip.uuid,
      name: 'pip-web',
      description: 'front door',
      service_name: ip.service_name,
      service_settings: settings.url,
      service_settings_uuid: settings.uuid,
      service_settings_state: 'OK',
      service_settings_error_message: '',
      project: project.url,
      project_name: project.name,
      project_uuid: project.uuid,
      customer: `${base}/customers/${customer.uuid}/`,
      customer_uuid: customer.uuid,
      customer_name: customer.name,
      customer_native_name: '',
      customer_abbreviation: '',
      error_message: '',
      error_traceback: '',
      resource_type: 'cloudA.PublicIP',
      state: 'CREATION_SCHEDULED',
      created: '2026-01-15T10:00:00.000Z',
      modified: '2026-01-15T10:00:00.000Z',
      backend_id: '',
      access_url: null,
      marketplace_offering_uuid: null,
      marketplace_offering_name: null,
      marketplace_offering_type: null,
      marketplace_offering_plugin_options: null,
      marketplace_category_uuid: null,
      marketplace_category_name: null,
      marketplace_resource_uuid: null,
      marketplace_plan_uuid: null,
      marketplace_resource_state: null,
      is_usage_based: false,
      is_limit_based: false,
      location: location.url,
      resource_group: group.url,
    })
    assert.equal(ip.service_name.startsWith('Cloud A west'), true)
  })

  test('the create job moves CREATION_SCHEDULED → CREATING → OK and allocates an address', async () => {
    const ip = await createIp()
    const r = await settled(ip.uuid)
    assert.equal(r.body.state, 'OK')
    assert.match(r.body.backend_id, /^public-ip-\d+$/)
    const row = await t.ctx.db
      .selectFrom('cloud_a_public_ips')
      .innerJoin('cloud_resources', 'cloud_resources.id', 'cloud_a_public_ips.resource_id')
      .select('ip_address')
      .where('cloud_resources.uuid', '=', ip.uuid)
      .executeTakeFirstOrThrow()
    assert.match(row.ip_address, /^198\.18\.\d+\.\d+$/)
    // The external_ip filter finds it by that address.
    const found = await as(staff).get(`${IPS}?external_ip=${row.ip_address}`)
    assert.deepEqual(
      found.body.map((x: { uuid: string }) => x.uuid),
      [ip.uuid],
    )
  })

  test('deterministic ids: a fresh settings allocates public-ip-1 and 198.18.0.1', async () => {
    const s = await makeSettings()
    const loc = await makeLocation(s, 'northeurope')
    const rg = await makeGroup(s, loc, project, 'rg-det')
    const ip = await createIp(staff, { service_settings: s.url, location: loc.url, resource_group: rg.url })
    const r = await settled(ip.uuid)
    assert.equal(r.body.backend_id, 'public-ip-1')
    const found = await as(staff).get(`${IPS}?external_ip=198.18.0.1&service_settings_uuid=${s.uuid}`)
    assert.equal(found.body.length, 1)
  })

  test('an injected backend failure leaves the IP ERRED with error_message and traceback', async () => {
    const s = await makeSettings({ options: { fail_next: ['create_public_ip'] } })
    const loc = await makeLocation(s, 'eastus')
    const rg = await makeGroup(s, loc, project, 'rg-fail')
    const ip = await createIp(staff, { service_settings: s.url, location: loc.url, resource_group: rg.url })
    const r = await settled(ip.uuid)
    assert.equal(r.body.state, 'ERRED')
    assert.equal(r.body.error_message, 'Emulated failure of create_public_ip.')
    assert.ok(r.body.error_traceback.includes('Emulated failure'))
    // The failure was consumed: the next create succeeds.
    const settingsNow = await as(staff).get(`/api/service-settings/${s.uuid}/`)
    assert.deepEqual(settingsNow.body.options, { driver: 'emulator' })
    const second = await createIp(staff, {
      service_settings: s.url,
      location: loc.url,
      resource_group: rg.url,
    })
    assert.equal((await settled(second.uuid)).body.state, 'OK')
    // Pulling the erred one fails (it never reached the backend): no backend id → 400.
    const pull = await as(staff).post(`${IPS}${ip.uuid}/pull/`)
    assert.equal(pull.status, 400)
    assert.deepEqual(pull.body, { non_field_errors: ['Resource does not have backend ID.'] })
  })

  test('fail_next as a count fails that many operations; fail_all fails every one', async () => {
    const s = await makeSettings({ options: { fail_next: 1 } })
    const loc = await makeLocation(s, 'westus')
    const rg = await makeGroup(s, loc, project, 'rg-count')
    const links = { service_settings: s.url, location: loc.url, resource_group: rg.url }
    const a = await createIp(staff, links)
    assert.equal((await settled(a.uuid)).body.state, 'ERRED')
    await setOptions(s, { fail_all: true })
    const b = await createIp(staff, links)
    const erred = (await settled(b.uuid)).body
    assert.equal(erred.state, 'ERRED')
    assert.equal(erred.error_message, 'Emulated failure of create_public_ip.')
  })

  test('an unknown driver name in stored options errs the step', async () => {
    const s = await makeSettings()
    const loc = await makeLocation(s, 'centralus')
    const rg = await makeGroup(s, loc, project, 'rg-drv')
    const ip = await createIp(staff, { service_settings: s.url, location: loc.url, resource_group: rg.url })
    await t.ctx.db
      .updateTable('service_settings')
      .set({ options: JSON.stringify({ driver: 'gone' }) })
      .where('uuid', '=', s.uuid)
      .execute()
    const r = (await settled(ip.uuid)).body
    assert.equal(r.state, 'ERRED')
    assert.equal(r.error_message, 'Unknown cloudA driver "gone".')
  })
})

describe('public IP validation', () => {
  test('anonymous callers get 401 everywhere', async () => {
    for (const [m, u] of [
      ['GET', IPS],
      ['POST', IPS],
      ['GET', `${IPS}00000000-0000-0000-0000-000000000000/`],
      ['POST', `${IPS}00000000-0000-0000-0000-000000000000/pull/`],
      ['POST', `${IPS}00000000-0000-0000-0000-000000000000/unlink/`],
      ['GET', '/api/cloudA-locations/'],
      ['GET', '/api/cloudA-resource-groups/'],
    ] as const) {
      const r = await call(t.app, m, u, m === 'POST' ? { body: {} } : {})
      assert.equal(r.status, 401, `${m} ${u}`)
      assert.deepEqual(r.body, { detail: 'Authentication credentials were not provided.' })
    }
  })

  test('missing fields are 400 on each field', async () => {
    const r = await as(staff).post(IPS, {})
    assert.equal(r.status, 400)
    for (const f of ['name', 'service_settings', 'project', 'location', 'resource_group']) {
      assert.deepEqual(r.body[f], ['This field is required.'], f)
    }
  })

  test('one 400 names every bad field: schema errors, the name rule and the links together', async () => {
    const r = await as(staff).post(
      IPS,
      body({
        name: '1abc',
        description: 5,
        project: '/api/projects/00000000000000000000000000000000/',
        resource_group: '/api/cloudA-locations/00000000000000000000000000000000/',
      }),
    )
    assert.equal(r.status, 400)
    assert.deepEqual(r.body, {
      description: ['Not a valid string.'],
      name: ['The name can contain only letters, numbers, underscore, period and hyphens.'],
      project: ['Invalid hyperlink - Object does not exist.'],
      resource_group: ['Invalid hyperlink - Incorrect URL match.'],
    })
  })

  test('names must start with a letter and hold only letters, digits, _ . -', async () => {
    for (const name of ['1abc', 'has space', '-x', 'a']) {
      const r = await as(staff).post(IPS, body({ name }))
      assert.equal(r.status, 400, name)
      assert.deepEqual(r.body, {
        name: ['The name can contain only letters, numbers, underscore, period and hyphens.'],
      })
    }
    const long = await as(staff).post(IPS, body({ name: 'a'.repeat(81) }))
    assert.deepEqual(long.body, { name: ['Ensure this field has no more than 80 characters.'] })
    assert.equal((await as(staff).post(IPS, body({ name: 'a'.repeat(80) }))).status, 201)
    assert.equal((await as(staff).post(IPS, body({ name: 'ab' }))).status, 201)
  })

  test('hyperlinks of the wrong kind or unknown are 400 on that field', async () => {
    const unknown = '00000000-0000-0000-0000-000000000001'
    // Each field: a link of another kind, then an unknown one of its own path.
    const links: [string, string, string][] = [
      ['service_settings', project.url, 'service-settings'],
      ['project', settings.url, 'projects'],
      ['location', group.url, 'cloudA-locations'],
      ['resource_group', location.url, 'cloudA-resource-groups'],
    ]
    const cases = links.flatMap(([field, otherKind, path]): [string, string, string][] => [
      [field, otherKind, 'Invalid hyperlink - Incorrect URL match.'],
      [field, `http://localhost:80/api/${path}/${unknown}/`, 'Invalid hyperlink - Object does not exist.'],
    ])
    for (const [field, value, message] of cases) {
      const r = await as(staff).post(IPS, body({ [field]: value }))
      assert.equal(r.status, 400, `${field} ${value}`)
      assert.deepEqual(r.body, { [field]: [message] }, `${field} ${value}`)
    }
  })

  test('service settings of the other kind are refused', async () => {
    const b = await as(staff).post('/api/service-settings/', { name: 'B', type: 'cloudB', shared: true })
    const r = await as(staff).post(IPS, body({ service_settings: b.body.url }))
    assert.equal(r.status, 400)
    assert.deepEqual(r.body, { service_settings: ['Service settings of kind cloudA are required.'] })
  })

  test('location and resource group must belong to the given service settings', async () => {
    const other = await makeSettings()
    const loc = await makeLocation(other, 'japaneast')
    const rg = await makeGroup(other, loc, project, 'rg-other')
    const r = await as(staff).post(IPS, body({ location: loc.url, resource_group: rg.url }))
    assert.equal(r.status, 400)
    assert.deepEqual(r.body, {
      location: ['The location must belong to the given service settings.'],
      resource_group: ['The resource group must belong to the given service settings.'],
    })
  })

  test('the project must be one the caller may manage', async () => {
    const member = await g.member()
    const r = await as(member).post(IPS, body())
    assert.equal(r.status, 400)
    assert.deepEqual(r.body, { project: ['You do not have permission to manage resources in this project.'] })
    // A project the caller cannot see is an unknown hyperlink.
    const outsider = await g.outsider()
    const o = await as(outsider).post(IPS, body())
    assert.equal(o.status, 400)
    assert.deepEqual(o.body.project, ['Invalid hyperlink - Object does not exist.'])
    // Project managers and admins may.
    for (const u of [await g.manager(), await g.admin()]) {
      assert.equal((await as(u).post(IPS, body())).status, 201)
    }
  })

  test('private service settings of another customer are invisible', async () => {
    const other = await makeCustomer(t.ctx)
    const s = await makeSettings({
      shared: false,
      customer: `http://localhost:80/api/customers/${other.uuid}/`,
    })
    const owner = await g.owner()
    const r = await as(owner).post(IPS, body({ service_settings: s.url }))
    assert.equal(r.status, 400)
    assert.deepEqual(r.body.service_settings, ['Invalid hyperlink - Object does not exist.'])
  })
})

describe('public IP list and retrieve', () => {
  let a: any
  let b: any
  let otherProject: Ref
  before(async () => {
    otherProject = await makeProject(t.ctx, await makeCustomer(t.ctx, 'Zeta Org'), { name: 'Zeta project' })
    const rg2 = await makeGroup(settings, location, otherProject, 'rg-zeta')
    a = await okIp({ name: 'alpha-filter', description: 'first filterable' })
    b = await okIp({
      name: 'beta-filter',
      description: 'second',
      project: otherProject.url,
      resource_group: rg2.url,
    })
  })

  const uuids = async (who: UserRef, qs: string) => {
    const r = await as(who).get(`${IPS}?${qs}`)
    assert.equal(r.status, 200, JSON.stringify(r.body))
    return (r.body as { uuid: string }[]).map((x) => x.uuid)
  }
  /** The filter's result restricted to the two IPs of this block (other tests add more). */
  const has = async (qs: string, expected: string[]) => {
    const got = (await uuids(staff, `${qs}&page_size=300`)).filter((u) => u === a.uuid || u === b.uuid)
    assert.deepEqual(got.sort(), [...expected].sort(), qs)
  }

  test('every filter of spec 4.8', async () => {
    const customer = await g.customer()
    await has('name=alpha', [a.uuid])
    await has('name_exact=beta-filter', [b.uuid])
    await has('name_exact=beta', [])
    await has('description=filterable', [a.uuid])
    await has(`backend_id=${a.backend_id}`, [a.uuid])
    await has(`customer=${customer.uuid}`, [a.uuid])
    await has(`customer_uuid=${customer.uuid.replace(/-/g, '')}`, [a.uuid])
    await has('customer_name=zeta', [b.uuid])
    await has('customer_native_name=nothing-like-this', [])
    await has('customer_abbreviation=', [a.uuid, b.uuid])
    await has(`project=${project.uuid}`, [a.uuid])
    await has(`project_uuid=${otherProject.uuid}`, [b.uuid])
    await has('project_name=Zeta', [b.uuid])
    await has(`service_settings_uuid=${settings.uuid}`, [a.uuid, b.uuid])
    await has('service_settings_name=Cloud A west', [a.uuid, b.uuid])
    await has('service_settings_name=nope', [])
    await has('state=OK', [a.uuid, b.uuid])
    await has('state=ERRED&state=CREATING', [])
    await has('state=Erred&state=OK', [a.uuid, b.uuid])
    await has(`uuid=${b.uuid}`, [b.uuid])
    await has(`resource_group=${group.url}`, [a.uuid])
    await has(`resource_group=${location.url}`, [])
    await has('resource_group=not-a-url', [])
    await has(`resource_group_uuid=${group.uuid}`, [a.uuid])
    await has('external_ip=10.0.0.1', [])
    await has('can_manage=true', [a.uuid, b.uuid])
  })

  test('invalid filter values are 400 on the parameter', async () => {
    for (const [qs, key, msg] of [
      ['customer_uuid=xyz', 'customer_uuid', 'Enter a valid UUID.'],
      ['project=xyz', 'project', 'Enter a valid UUID.'],
      ['resource_group_uuid=xyz', 'resource_group_uuid', 'Enter a valid UUID.'],
      ['state=bogus', 'state', 'Select a valid choice. bogus is not one of the available choices.'],
      ['o=bogus', 'o', 'Select a valid choice. bogus is not one of the available choices.'],
    ]) {
      const r = await as(staff).get(`${IPS}?${qs}`)
      assert.equal(r.status, 400, qs)
      assert.deepEqual(r.body, { [key!]: [msg] })
    }
  })

  test('visibility: project and customer members see their IPs, outsiders none, support all', async () => {
    for (const u of [await g.owner(), await g.member(), await g.admin()]) {
      const got = await uuids(u, 'name=-filter')
      assert.deepEqual(got, [a.uuid])
    }
    assert.deepEqual(await uuids(await g.outsider(), 'name=-filter'), [])
    assert.deepEqual((await uuids(await g.support(), 'name=-filter')).sort(), [a.uuid, b.uuid].sort())
    const hidden = await as(await g.outsider()).get(`${IPS}${a.uuid}/`)
    assert.equal(hidden.status, 404)
    assert.deepEqual(hidden.body, { detail: 'No PublicIP matches the given query.' })
  })

  test('can_manage keeps what the caller may change', async () => {
    assert.deepEqual(await uuids(await g.member(), 'name=-filter&can_manage=true'), [])
    assert.deepEqual(await uuids(await g.manager(), 'name=-filter&can_manage=true'), [a.uuid])
    assert.deepEqual(await uuids(await g.member(), 'name=-filter&can_manage=false'), [a.uuid])
  })

  test('ordering, pagination headers, field selection and HEAD', async () => {
    assert.deepEqual(await uuids(staff, 'name=-filter&o=-name'), [b.uuid, a.uuid])
    assert.deepEqual(await uuids(staff, 'name=-filter&o=name'), [a.uuid, b.uuid])
    const r = await as(staff).get(`${IPS}?name=-filter&page_size=1&field=uuid&field=state`)
    assert.equal(r.headers['x-result-count'], '2')
    assert.match(String(r.headers.link), /rel="next"/)
    assert.deepEqual(r.body, [{ uuid: a.uuid, state: 'OK' }])
    const one = await as(staff).get(`${IPS}${a.uuid}/?field=name&field=location`)
    assert.deepEqual(one.body, { name: 'alpha-filter', location: location.url })
    const head = await as(staff).head(`${IPS}?name=-filter`)
    assert.equal(head.status, 200)
    assert.equal(head.headers['x-result-count'], '2')
    const hex = await as(staff).get(`${IPS}${a.uuid.replace(/-/g, '')}/`)
    assert.equal(hex.status, 200)
  })

  test('the marketplace block comes from the resource whose scope is the IP', async () => {
    const provider = await makeCustomer(t.ctx, 'Provider A')
    const category = await makeCategory(t.ctx, 'Networking')
    const offering = await makeOffering(t.ctx, provider, {
      name: 'Public IPs',
      type: 'cloudA.PublicIP',
      categoryId: category.id,
      pluginOptions: { tier: 'gold' },
    })
    const plan = await makePlan(t.ctx, offering)
    const ip = await okIp()
    const row = await t.ctx.db
      .selectFrom('cloud_resources')
      .select('id')
      .where('uuid', '=', ip.uuid)
      .executeTakeFirstOrThrow()
    const res = await makeResource(t.ctx, offering, project, {
      planId: plan.id,
      scopeType: 'cloudA.PublicIP',
      scopeId: row.id,
    })
    const r = (await as(staff).get(`${IPS}${ip.uuid}/`)).body
    assert.equal(r.marketplace_offering_uuid, offering.uuid)
    assert.equal(r.marketplace_offering_name, 'Public IPs')
    assert.equal(r.marketplace_offering_type, 'cloudA.PublicIP')
    assert.deepEqual(r.marketplace_offering_plugin_options, { tier: 'gold' })
    assert.equal(r.marketplace_category_uuid, category.uuid)
    assert.equal(r.marketplace_category_name, 'Networking')
    assert.equal(r.marketplace_resource_uuid, res.uuid)
    assert.equal(r.marketplace_plan_uuid, plan.uuid)
    assert.equal(r.marketplace_resource_state, 'OK')
    // And the marketplace resource links back to the IP.
    const mr = await as(staff).get(`/api/marketplace-resources/${res.uuid}/`)
    assert.equal(mr.body.scope, `http://localhost:80/api/cloudA-public-ips/${ip.uuid}/`)
  })
})

describe('public IP update', () => {
  test('PATCH changes only description, location and resource_group, then an update job runs', async () => {
    const ip = await okIp({ name: 'patch-me' })
    const loc2 = await makeLocation(settings, 'uksouth')
    const rg2 = await makeGroup(settings, loc2, project, 'rg-patch')
    const r = await as(await g.manager()).patch(`${IPS}${ip.uuid}/`, {
      description: 'changed',
      location: loc2.url,
      resource_group: rg2.url,
      name: 'ignored-name',
    })
    assert.equal(r.status, 200, JSON.stringify(r.body))
    assert.equal(r.body.state, 'UPDATE_SCHEDULED')
    assert.equal(r.body.name, 'patch-me')
    assert.equal(r.body.description, 'changed')
    assert.equal(r.body.location, loc2.url)
    assert.equal(r.body.resource_group, rg2.url)
    // While scheduled, another change is refused.
    const again = await as(staff).patch(`${IPS}${ip.uuid}/`, { description: 'x' })
    assert.equal(again.status, 409)
    assert.deepEqual(again.body, { detail: 'Valid states for operation: OK.' })
    const done = (await settled(ip.uuid)).body
    assert.equal(done.state, 'OK')
    assert.equal(done.description, 'changed')
  })

  test('PUT takes the six fields; service settings and project stay', async () => {
    const ip = await okIp({ name: 'put-me' })
    const other = await makeProject(t.ctx, await g.customer())
    const r = await as(staff).put(`${IPS}${ip.uuid}/`, body({ name: 'put-renamed', project: other.url }))
    assert.equal(r.status, 200, JSON.stringify(r.body))
    assert.equal(r.body.name, 'put-renamed')
    assert.equal(r.body.project, project.url)
    assert.equal(r.body.state, 'UPDATE_SCHEDULED')
    const missing = await as(staff).put(`${IPS}${ip.uuid}/`, { description: 'only' })
    assert.equal(missing.status, 400)
    assert.deepEqual(missing.body.name, ['This field is required.'])
    assert.equal((await settled(ip.uuid)).body.state, 'OK')
    const bad = await as(staff).put(`${IPS}${ip.uuid}/`, body({ name: '9lives' }))
    assert.equal(bad.status, 400)
  })

  test('an update failure leaves the IP ERRED', async () => {
    const s = await makeSettings()
    const loc = await makeLocation(s, 'brazilsouth')
    const rg = await makeGroup(s, loc, project, 'rg-upd')
    const ip = await okIp({ service_settings: s.url, location: loc.url, resource_group: rg.url })
    await setOptions(s, { fail_next: ['update_public_ip'] })
    assert.equal((await as(staff).patch(`${IPS}${ip.uuid}/`, { description: 'boom' })).status, 200)
    const r = (await settled(ip.uuid)).body
    assert.equal(r.state, 'ERRED')
    assert.equal(r.error_message, 'Emulated failure of update_public_ip.')
    // ERRED is not updatable (409) but a pull recovers it.
    assert.equal((await as(staff).patch(`${IPS}${ip.uuid}/`, { description: 'x' })).status, 409)
    const recovered = await pulled(ip.uuid)
    assert.equal(recovered.state, 'OK')
    assert.equal(recovered.error_message, '')
  })

  test('validation of PATCH hyperlinks; members may not change; outsiders do not see', async () => {
    const ip = await okIp()
    const other = await makeSettings()
    const loc = await makeLocation(other, 'koreacentral')
    const r = await as(staff).patch(`${IPS}${ip.uuid}/`, { location: loc.url })
    assert.equal(r.status, 400)
    assert.deepEqual(r.body, { location: ['The location must belong to the given service settings.'] })
    const wrong = await as(staff).patch(`${IPS}${ip.uuid}/`, { resource_group: project.url })
    assert.deepEqual(wrong.body, { resource_group: ['Invalid hyperlink - Incorrect URL match.'] })
    const member = await as(await g.member()).patch(`${IPS}${ip.uuid}/`, { description: 'x' })
    assert.equal(member.status, 403)
    assert.equal((await as(await g.outsider()).patch(`${IPS}${ip.uuid}/`, { description: 'x' })).status, 404)
  })
})

describe('public IP delete, pull and unlink', () => {
  test('DELETE answers 204, schedules deletion, and the job removes the record', async () => {
    const ip = await okIp()
    const r = await as(await g.owner()).delete(`${IPS}${ip.uuid}/`)
    assert.equal(r.status, 204)
    assert.equal(r.text, '')
    assert.equal((await as(staff).get(`${IPS}${ip.uuid}/`)).body.state, 'DELETION_SCHEDULED')
    const again = await as(staff).delete(`${IPS}${ip.uuid}/`)
    assert.equal(again.status, 409)
    assert.deepEqual(again.body, { detail: 'Valid states for operation: OK, ERRED.' })
    assert.equal((await settled(ip.uuid)).status, 404)
  })

  test('DELETE from a transitional state is 409; members get 403', async () => {
    const ip = await createIp()
    assert.equal((await as(staff).delete(`${IPS}${ip.uuid}/`)).status, 409)
    await t.ctx.jobs.drain()
    assert.equal((await as(await g.member()).delete(`${IPS}${ip.uuid}/`)).status, 403)
  })

  test('a failing deletion leaves the IP ERRED; deleting an ERRED IP removes it even on failure', async () => {
    const s = await makeSettings()
    const loc = await makeLocation(s, 'francecentral')
    const rg = await makeGroup(s, loc, project, 'rg-del')
    const ip = await okIp({ service_settings: s.url, location: loc.url, resource_group: rg.url })
    await setOptions(s, { fail_next: 2 })
    assert.equal((await as(staff).delete(`${IPS}${ip.uuid}/`)).status, 204)
    const erred = (await settled(ip.uuid)).body
    assert.equal(erred.state, 'ERRED')
    assert.equal(erred.error_message, 'Emulated failure of delete_public_ip.')
    assert.equal((await as(staff).delete(`${IPS}${ip.uuid}/`)).status, 204)
    assert.equal((await settled(ip.uuid)).status, 404)
  })

  test('pull answers 202 with no body; the job re-reads the backend', async () => {
    const ip = await okIp()
    const r = await as(await g.admin()).post(`${IPS}${ip.uuid}/pull/`)
    assert.equal(r.status, 202)
    assert.equal(r.text, '')
    assert.equal((await settled(ip.uuid)).body.state, 'OK')
    assert.equal((await as(await g.member()).post(`${IPS}${ip.uuid}/pull/`)).status, 403)
  })

  test('pull answers 409 with no body where the driver has no pull', async () => {
    const s = await makeSettings({ options: { driver: 'emulator-no-pull' } })
    const loc = await makeLocation(s, 'norwayeast')
    const rg = await makeGroup(s, loc, project, 'rg-nopull')
    const ip = await okIp({ service_settings: s.url, location: loc.url, resource_group: rg.url })
    const r = await as(staff).post(`${IPS}${ip.uuid}/pull/`)
    assert.equal(r.status, 409)
    assert.equal(r.text, '')
  })

  test('pull from a transitional state is 409 with the valid states', async () => {
    const ip = await createIp()
    const r = await as(staff).post(`${IPS}${ip.uuid}/pull/`)
    assert.equal(r.status, 409)
    assert.deepEqual(r.body, { detail: 'Valid states for operation: OK, ERRED.' })
    await t.ctx.jobs.drain()
  })

  test('a queued pull does nothing once the IP is scheduled for deletion', async () => {
    const s = await makeSettings()
    const loc = await makeLocation(s, 'southafricanorth')
    const rg = await makeGroup(s, loc, project, 'rg-race')
    const ip = await okIp({ service_settings: s.url, location: loc.url, resource_group: rg.url })
    await setOptions(s, { fail_all: ['pull_public_ip'] })
    assert.equal((await as(staff).post(`${IPS}${ip.uuid}/pull/`)).status, 202)
    assert.equal((await as(staff).delete(`${IPS}${ip.uuid}/`)).status, 204)
    assert.equal(await t.ctx.jobs.runOne(), true)
    assert.equal((await as(staff).get(`${IPS}${ip.uuid}/`)).body.state, 'DELETION_SCHEDULED')
    assert.equal((await settled(ip.uuid)).status, 404)
  })

  test('a pull of an object gone from the backend marks the IP ERRED', async () => {
    const ip = await okIp()
    await t.ctx.db.deleteFrom('cloud_emulator_objects').where('backend_id', '=', ip.backend_id).execute()
    const r = await pulled(ip.uuid)
    assert.equal(r.state, 'ERRED')
    assert.equal(r.error_message, 'The resource does not exist on the backend.')
  })

  test('unlink: staff remove a stuck IP without a backend call; others get 403', async () => {
    const ip = await createIp()
    // Stuck in CREATING (a worker died mid-step).
    await t.ctx.db
      .updateTable('cloud_resources')
      .set({ state: 'CREATING' })
      .where('uuid', '=', ip.uuid)
      .execute()
    for (const u of [await g.owner(), await g.manager(), await g.support(), await g.outsider()]) {
      const r = await as(u).post(`${IPS}${ip.uuid}/unlink/`)
      assert.equal(r.status, 403)
      assert.deepEqual(r.body, { detail: 'You do not have permission to perform this action.' })
    }
    // Staff-only is checked before the lookup.
    assert.equal(
      (await as(await g.owner()).post(`${IPS}00000000-0000-0000-0000-000000000000/unlink/`)).status,
      403,
    )
    const r = await as(staff).post(`${IPS}${ip.uuid}/unlink/`)
    assert.equal(r.status, 204)
    assert.equal(r.text, '')
    assert.equal((await as(staff).get(`${IPS}${ip.uuid}/`)).status, 404)
    // The queued create step finds nothing to do.
    await t.ctx.jobs.drain()
    assert.equal((await as(staff).post(`${IPS}${ip.uuid}/unlink/`)).status, 404)
  })
})

describe('locations and resource groups', () => {
  test('staff manage locations; everyone who sees the settings sees them', async () => {
    const s = await makeSettings()
    const loc = await makeLocation(s, 'swedencentral')
    assert.deepEqual(Object.keys(loc).sort(), [
      'backend_id',
      'created',
      'modified',
      'name',
      'service_settings',
      'service_settings_name',
      'service_settings_uuid',
      'url',
      'uuid',
    ])
    const owner = await g.owner()
    assert.equal(
      (await as(owner).post('/api/cloudA-locations/', { name: 'x', service_settings: s.url })).status,
      403,
    )
    const list = await as(await g.outsider()).get(`/api/cloudA-locations/?service_settings_uuid=${s.uuid}`)
    assert.deepEqual(
      list.body.map((x: { uuid: string }) => x.uuid),
      [loc.uuid],
    )
    const patched = await as(staff).patch(`/api/cloudA-locations/${loc.uuid}/`, { name: 'sweden' })
    assert.equal(patched.body.name, 'sweden')
    assert.equal((await as(staff).get(`/api/cloudA-locations/?name_exact=sweden`)).body.length, 1)
    const wrong = await as(staff).post('/api/cloudA-locations/', { name: 'y', service_settings: project.url })
    assert.deepEqual(wrong.body, { service_settings: ['Invalid hyperlink - Incorrect URL match.'] })
    // In use → 409; unused → 204.
    await makeGroup(s, loc, project, 'rg-in-sweden')
    assert.equal((await as(staff).delete(`/api/cloudA-locations/${loc.uuid}/`)).status, 409)
    const spare = await makeLocation(s, 'spare')
    assert.equal((await as(staff).delete(`/api/cloudA-locations/${spare.uuid}/`)).status, 204)
    assert.equal((await as(staff).get(`/api/cloudA-locations/${spare.uuid}/`)).status, 404)
  })

  test('resource groups: project managers create them; members read; outsiders see none', async () => {
    const manager = await g.manager()
    const r = await as(manager).post('/api/cloudA-resource-groups/', {
      name: 'rg-by-manager',
      service_settings: settings.url,
      location: location.url,
      project: project.url,
    })
    assert.equal(r.status, 201, JSON.stringify(r.body))
    assert.equal(r.body.location_name, 'westeurope')
    assert.equal(r.body.project_uuid, project.uuid)
    const member = await g.member()
    const denied = await as(member).post('/api/cloudA-resource-groups/', {
      name: 'rg-by-member',
      service_settings: settings.url,
      location: location.url,
      project: project.url,
    })
    assert.equal(denied.status, 400)
    assert.ok(denied.body.project)
    const seen = await as(member).get(`/api/cloudA-resource-groups/?name=rg-by-manager`)
    assert.equal(seen.body.length, 1)
    assert.equal(
      (await as(await g.outsider()).get(`/api/cloudA-resource-groups/${r.body.uuid}/`)).status,
      404,
    )
    assert.equal(
      (await as(member).patch(`/api/cloudA-resource-groups/${r.body.uuid}/`, { name: 'x' })).status,
      403,
    )
    const renamed = await as(manager).patch(`/api/cloudA-resource-groups/${r.body.uuid}/`, {
      name: 'rg-renamed',
    })
    assert.equal(renamed.body.name, 'rg-renamed')
    const other = await makeSettings()
    const wrongLoc = await as(staff).post('/api/cloudA-resource-groups/', {
      name: 'rg-wrong',
      service_settings: other.url,
      location: location.url,
      project: project.url,
    })
    assert.deepEqual(wrongLoc.body, { location: ['The location must belong to the given service settings.'] })
    assert.equal((await as(manager).delete(`/api/cloudA-resource-groups/${r.body.uuid}/`)).status, 204)
    assert.equal((await as(staff).delete(`/api/cloudA-resource-groups/${group.uuid}/`)).status, 409)
  })
})

describe('set_ok and set_erred', () => {
  test('staff mark a stuck public IP ERRED with an error, then OK clearing it; others get 403', async () => {
    const ip = await createIp()
    await t.ctx.db
      .updateTable('cloud_resources')
      .set({ state: 'CREATING' })
      .where('uuid', '=', ip.uuid)
      .execute()
    for (const u of [await g.owner(), await g.support()]) {
      assert.equal((await as(u).post(`${IPS}${ip.uuid}/set_ok/`)).status, 403)
      assert.equal((await as(u).post(`${IPS}${ip.uuid}/set_erred/`, {})).status, 403)
    }
    const e = await as(staff).post(`${IPS}${ip.uuid}/set_erred/`, { error_message: 'Stuck.' })
    assert.equal(e.status, 200, e.text)
    assert.deepEqual(e.body, { detail: 'Resource state has been set to ERRED.' })
    let got = (await as(staff).get(`${IPS}${ip.uuid}/`)).body
    assert.equal(got.state, 'ERRED')
    assert.equal(got.error_message, 'Stuck.')
    const ok = await as(staff).post(`${IPS}${ip.uuid}/set_ok/`)
    assert.equal(ok.status, 200, ok.text)
    assert.deepEqual(ok.body, { detail: 'Resource state has been set to OK.' })
    got = (await as(staff).get(`${IPS}${ip.uuid}/`)).body
    assert.equal(got.state, 'OK')
    assert.equal(got.error_message, '')
    // No body at all is an empty error.
    assert.equal((await as(staff).post(`${IPS}${ip.uuid}/set_erred/`)).status, 200)
    assert.equal((await as(staff).post(`${IPS}00000000-0000-4000-8000-000000000000/set_ok/`)).status, 404)
    await t.ctx.jobs.drain()
  })
})
