import { before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { sharedTestApp } from '../support/app.js'
import { call, client } from '../support/client.js'
import {
  grant,
  makeCustomer,
  makeProject,
  makeUser,
  roleGraph,
  type UserRef,
  uniqueName,
} from '../support/fixtures.js'

const t = sharedTestApp(async (t) => {
  const g = roleGraph(t.ctx)
  return { g, staff: await g.staff() }
})

const BASE = '/api/service-settings/'
const as = (u: UserRef | null) => client(t.app, u?.token ?? null)

async function create(extra: Record<string, unknown> = {}) {
  const r = await as(t.staff).post(BASE, {
    name: uniqueName('Settings'),
    type: 'cloudA',
    ...extra,
  })
  assert.equal(r.status, 201, JSON.stringify(r.body))
  return r.body
}

describe('service settings records', () => {
  test('staff create settings; the emulator is the default driver', async () => {
    const customer = await t.g.customer()
    const r = await as(t.staff).post(BASE, {
      name: 'Region one',
      type: 'cloudA',
      shared: false,
      customer: `http://localhost:80/api/customers/${customer.uuid}/`,
      options: { slow_ms: 0, region: 'one' },
      unknown: 'ignored',
    })
    assert.equal(r.status, 201)
    assert.deepEqual(r.body, {
      url: `http://localhost:80/api/service-settings/${r.body.uuid}/`,
      uuid: r.body.uuid,
      name: 'Region one',
      type: 'cloudA',
      shared: false,
      customer: `http://localhost:80/api/customers/${customer.uuid}/`,
      customer_uuid: customer.uuid,
      customer_name: customer.name,
      state: 'OK',
      error_message: '',
      options: { slow_ms: 0, region: 'one', driver: 'emulator' },
      created: '2026-01-15T10:00:00.000Z',
      modified: '2026-01-15T10:00:00.000Z',
    })
    const got = await as(t.staff).get(`${BASE}${r.body.uuid}/`)
    assert.deepEqual(got.body, r.body)
    const fields = await as(t.staff).get(`${BASE}${r.body.uuid}/?field=name&field=type`)
    assert.deepEqual(fields.body, { name: 'Region one', type: 'cloudA' })
  })

  test('only staff create, edit and delete', async () => {
    const s = await create({ shared: true })
    for (const u of [await t.g.owner(), await t.g.support(), await t.g.outsider()]) {
      assert.equal((await as(u).post(BASE, { name: 'x', type: 'cloudA' })).status, 403)
      assert.equal((await as(u).patch(`${BASE}${s.uuid}/`, { name: 'x' })).status, 403)
      assert.equal((await as(u).delete(`${BASE}${s.uuid}/`)).status, 403)
    }
  })

  test('anonymous callers get 401', async () => {
    for (const [m, u] of [
      ['GET', BASE],
      ['POST', BASE],
      ['GET', `${BASE}00000000-0000-0000-0000-000000000000/`],
    ] as const) {
      const r = await call(t.app, m, u, m === 'POST' ? { body: {} } : {})
      assert.equal(r.status, 401)
    }
  })

  test('validation: required fields, type choices, driver and emulator options', async () => {
    const missing = await as(t.staff).post(BASE, {})
    assert.equal(missing.status, 400)
    assert.deepEqual(missing.body.name, ['This field is required.'])
    assert.deepEqual(missing.body.type, ['This field is required.'])
    const type = await as(t.staff).post(BASE, { name: 'x', type: 'cloudC' })
    assert.deepEqual(type.body, { type: ['"cloudC" is not a valid choice.'] })
    const driver = await as(t.staff).post(BASE, { name: 'x', type: 'cloudA', options: { driver: 'nope' } })
    assert.equal(driver.status, 400)
    assert.deepEqual(driver.body, {
      options: ['Unknown driver "nope" for cloudA; known drivers: emulator, emulator-no-pull.'],
    })
    const opts = await as(t.staff).post(BASE, {
      name: 'x',
      type: 'cloudA',
      options: { fail_next: 'create', fail_all: 3, slow_ms: -1 },
    })
    assert.deepEqual(opts.body, {
      options: [
        'fail_next must be a list of operation names or a non-negative integer.',
        'fail_all must be a boolean or a list of operation names.',
        'slow_ms must be an integer from 0 to 60000.',
      ],
    })
    const customer = await as(t.staff).post(BASE, { name: 'x', type: 'cloudA', customer: BASE })
    assert.deepEqual(customer.body, { customer: ['Invalid hyperlink - Incorrect URL match.'] })
    const notObject = await as(t.staff).post(BASE, { name: 'x', type: 'cloudA', options: 'text' })
    assert.equal(notObject.status, 400)
  })

  test('PUT and PATCH update; the type is fixed once resources use the settings', async () => {
    const s = await create()
    const put = await as(t.staff).put(`${BASE}${s.uuid}/`, {
      name: 'Renamed',
      type: 'cloudA',
      shared: true,
      customer: null,
    })
    assert.equal(put.status, 200, JSON.stringify(put.body))
    assert.equal(put.body.name, 'Renamed')
    assert.equal(put.body.type, 'cloudA')
    assert.equal(put.body.shared, true)
    assert.equal(put.body.customer, null)
    const patch = await as(t.staff).patch(`${BASE}${s.uuid}/`, { options: { fail_next: 1 } })
    assert.deepEqual(patch.body.options, { fail_next: 1, driver: 'emulator' })
    // A resource in these settings pins the type and blocks deletion.
    const project = await t.g.project()
    const loc = await as(t.staff).post('/api/cloudA-locations/', { name: 'loc', service_settings: s.url })
    const rg = await as(t.staff).post('/api/cloudA-resource-groups/', {
      name: 'rg',
      service_settings: s.url,
      location: loc.body.url,
      project: project.url,
    })
    const ip = await as(t.staff).post('/api/cloudA-public-ips/', {
      name: 'pinned',
      service_settings: s.url,
      project: project.url,
      location: loc.body.url,
      resource_group: rg.body.url,
    })
    assert.equal(ip.status, 201)
    const retype = await as(t.staff).patch(`${BASE}${s.uuid}/`, { type: 'cloudB' })
    assert.equal(retype.status, 400)
    assert.deepEqual(retype.body, { type: ['The type cannot change while resources use these settings.'] })
    const del = await as(t.staff).delete(`${BASE}${s.uuid}/`)
    assert.equal(del.status, 409)
    assert.deepEqual(del.body, { detail: 'Cannot delete service settings with existing resources' })
    await t.ctx.jobs.drain()
  })

  test('DELETE removes unused settings', async () => {
    const s = await create()
    assert.equal((await as(t.staff).delete(`${BASE}${s.uuid}/`)).status, 204)
    const gone = await as(t.staff).get(`${BASE}${s.uuid}/`)
    assert.equal(gone.status, 404)
    assert.deepEqual(gone.body, { detail: 'No ServiceSettings matches the given query.' })
  })
})

describe('service settings visibility and filters', () => {
  let shared: any
  let foreign: any
  before(async () => {
    const customer = await t.g.customer()
    const other = await makeCustomer(t.ctx)
    shared = await create({ name: 'vis-shared', shared: true, options: { secret: 's3' } })
    await create({
      name: 'vis-own',
      type: 'cloudB',
      customer: `http://localhost:80/api/customers/${customer.uuid}/`,
    })
    foreign = await create({
      name: 'vis-foreign',
      customer: `http://localhost:80/api/customers/${other.uuid}/`,
    })
  })

  const names = async (u: UserRef, qs = '') => {
    const r = await as(u).get(`${BASE}?name=vis-&${qs}`)
    assert.equal(r.status, 200, JSON.stringify(r.body))
    return (r.body as { name: string }[]).map((x) => x.name)
  }

  test('staff and support see all; members their customer own and the shared; others the shared', async () => {
    assert.deepEqual(await names(t.staff), ['vis-foreign', 'vis-own', 'vis-shared'])
    assert.deepEqual(await names(await t.g.support()), ['vis-foreign', 'vis-own', 'vis-shared'])
    assert.deepEqual(await names(await t.g.owner()), ['vis-own', 'vis-shared'])
    assert.deepEqual(await names(await t.g.member()), ['vis-own', 'vis-shared'])
    assert.deepEqual(await names(await t.g.outsider()), ['vis-shared'])
    const hidden = await as(await t.g.outsider()).get(`${BASE}${foreign.uuid}/`)
    assert.equal(hidden.status, 404)
  })

  test('only staff and support read every option; others see the driver', async () => {
    assert.deepEqual((await as(await t.g.outsider()).get(`${BASE}${shared.uuid}/`)).body.options, {
      driver: 'emulator',
    })
    assert.deepEqual((await as(await t.g.support()).get(`${BASE}${shared.uuid}/`)).body.options, {
      secret: 's3',
      driver: 'emulator',
    })
  })

  test('filters and ordering', async () => {
    const customer = await t.g.customer()
    assert.deepEqual(await names(t.staff, 'type=cloudB'), ['vis-own'])
    assert.deepEqual(await names(t.staff, 'shared=true'), ['vis-shared'])
    assert.deepEqual(await names(t.staff, 'shared=false'), ['vis-foreign', 'vis-own'])
    assert.deepEqual(await names(t.staff, `customer_uuid=${customer.uuid}`), ['vis-own'])
    assert.deepEqual(await names(t.staff, `customer=${customer.uuid}`), ['vis-own'])
    assert.deepEqual(await names(t.staff, 'name_exact=vis-own'), ['vis-own'])
    assert.deepEqual(await names(t.staff, `uuid=${foreign.uuid}`), ['vis-foreign'])
    assert.deepEqual(await names(t.staff, 'state=OK&o=-name'), ['vis-shared', 'vis-own', 'vis-foreign'])
    assert.equal((await as(t.staff).get(`${BASE}?type=cloudC`)).status, 400)
    assert.equal((await as(t.staff).get(`${BASE}?customer_uuid=bad`)).status, 400)
    const head = await as(t.staff).head(`${BASE}?name=vis-`)
    assert.equal(head.headers['x-result-count'], '3')
  })

  test('a project role in the customer is enough to see its own settings', async () => {
    const customer = await makeCustomer(t.ctx)
    const project = await makeProject(t.ctx, customer)
    const u = await makeUser(t.ctx)
    await grant(t.ctx, u, 'PROJECT.MEMBER', { type: 'project', id: project.id })
    const s = await create({
      name: 'vis-project',
      customer: `http://localhost:80/api/customers/${customer.uuid}/`,
    })
    assert.equal((await as(u).get(`${BASE}${s.uuid}/`)).status, 200)
  })
})
