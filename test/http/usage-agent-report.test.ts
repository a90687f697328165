// The reference site agent's `report` mode, call by call and with its exact bodies, as the
// offering's provider: it loads the offering's components, lists its resources, reads this
// month's usages, reports the backend's totals and each account's share, and reads them back.
// A second cycle in the same month replaces the first report instead of adding to it.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { sharedTestApp } from '../support/app.js'
import { client } from '../support/client.js'
import { makeCustomer, makeProject, makeUser } from '../support/fixtures.js'
import { makeOffering, makePlan, makeResource, providerGraph } from '../support/catalog-fixtures.js'
import { assertClientParses } from '../support/client-models.js'

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i
const hex = (u: string) => u.replace(/-/g, '')

const t = sharedTestApp(async (t) => {
  t.clock.set('2026-11-20T12:00:00.000Z')
  const g = providerGraph(t.ctx)
  const org = await g.customer()
  const agent = await g.owner()
  const offering = await makeOffering(t.ctx, org, { name: 'SLURM', type: 'Marketplace.Slurm' })
  const plan = await makePlan(t.ctx, offering)
  const project = await makeProject(t.ctx, await makeCustomer(t.ctx, 'Uni'))
  const resource = await makeResource(t.ctx, offering, project, {
    name: 'alloc-1',
    planId: plan.id,
    backendId: 'hpc_alloc-1',
  })
  // The backend's accounts of the offering's users.
  const now = t.ctx.clock().toISOString()
  const accounts: Record<string, string> = {}
  for (const username of ['alice', 'bob']) {
    const user = await makeUser(t.ctx)
    const uuid = t.ctx.newUuid()
    await t.ctx.db
      .insertInto('offering_users')
      .values({
        uuid,
        offering_id: offering.id,
        user_id: user.id,
        username,
        state: 'OK',
        created: now,
        modified: now,
      })
      .execute()
    accounts[username] = uuid
  }
  return { agent, offering, resource, accounts }
})

/** What the backend reports for the month: totals and per-account usage, as the agent sends them. */
type Backend = { total: Record<string, number>; users: Record<string, Record<string, number>> }

/** One `report` cycle of the agent for the offering; the calls it made, in order. */
async function reportCycle(backend: Backend): Promise<string[]> {
  const as = client(t.app, t.agent.token)
  const calls: string[] = []
  const get = async (url: string) => {
    calls.push(`GET ${url.split('?')[0]}`)
    const r = await as.get(url)
    assert.equal(r.status, 200, `${url}: ${r.text}`)
    return r.body
  }
  const post = async (url: string, body: unknown) => {
    calls.push(`POST ${url}`)
    const r = await as.post(url, body)
    assert.equal(r.status, 201, `${url}: ${r.text}`)
    assert.equal(r.text, '')
  }
  const offeringUuid = t.offering.uuid
  const userFields = ['user_uuid', 'username', 'url', 'state', 'uuid', 'user_username', 'user_full_name']
  const offeringUsers = await get(
    `/api/marketplace-offering-users/?offering_uuid=${offeringUuid}&is_restricted=false&page_size=100&${userFields.map((f) => `field=${f}`).join('&')}`,
  )
  const urlOf = new Map<string, string>(offeringUsers.map((u: any) => [u.username, u.url]))
  const offering = await get(`/api/marketplace-provider-offerings/${offeringUuid}/?field=components`)
  const types: string[] = offering.components.map((c: any) => c.type)
  const resources = await get(
    `/api/marketplace-provider-resources/?offering_uuid=${offeringUuid}&state=OK&state=Erred&page_size=100&field=uuid&field=backend_id&field=name&field=limits`,
  )
  for (const listed of resources) {
    const resource = await get(
      `/api/marketplace-provider-resources/${hex(listed.uuid)}/?field=uuid&field=name&field=backend_id`,
    )
    assert.equal(resource.backend_id, 'hpc_alloc-1')
    const period = '2026-11-01'
    const usagesQuery = `/api/marketplace-component-usages/?resource_uuid=${hex(resource.uuid)}&billing_period=${period}&field=uuid&field=type&field=usage&page_size=100`
    const existing = await get(usagesQuery)
    assertClientParses('ComponentUsage', existing, { list: true, selected: true })
    for (const u of existing) assert.ok(UUID.test(u.uuid) && typeof u.usage === 'string')
    const userUsages = await get(
      `/api/marketplace-component-user-usages/?resource_uuid=${hex(resource.uuid)}&component_usage__billing_period=${period}&field=component_usage&page_size=100`,
    )
    for (const uu of userUsages)
      assert.match(uu.component_usage, /\/api\/marketplace-component-usages\/[0-9a-f-]{36}\/$/)
    await post('/api/marketplace-component-usages/set_usage/', {
      usages: Object.entries(backend.total)
        .filter(([type]) => types.includes(type))
        .map(([type, amount]) => ({ type, amount: amount.toFixed(2), recurring: false })),
      resource: hex(resource.uuid),
      date: '2026-11-01T00:00:00+00:00',
    })
    const reported = await get(usagesQuery)
    assertClientParses('ComponentUsage', reported, { list: true, selected: true })
    for (const usage of reported) {
      const items = Object.entries(backend.users)
        .filter(([, u]) => u[usage.type] !== undefined)
        .map(([username, u]) => ({
          username,
          usage: u[usage.type]!.toFixed(2),
          date: '2026-11-01T00:00:00+00:00',
          ...(urlOf.has(username) ? { user: urlOf.get(username) } : {}),
        }))
      if (items.length)
        await post(`/api/marketplace-component-usages/${usage.uuid}/set_user_usages/`, { usages: items })
    }
  }
  return calls
}

describe("the agent's report mode", () => {
  test('loads components, reports totals and per-user usage, and reads back what the backend reported', async () => {
    const owner = client(t.app, t.agent.token)
    // waldur_site_load_components: the components of the agent's configuration.
    for (const [type, name, unit] of [
      ['cpu', 'CPU', 'k-Hours'],
      ['mem', 'RAM', 'gb-Hours'],
    ]) {
      const r = await owner.post(
        `/api/marketplace-provider-offerings/${t.offering.uuid}/create_offering_component/`,
        {
          billing_type: 'usage',
          type,
          name,
          measured_unit: unit,
          unit_factor: 1,
          limit_period: null,
          limit_amount: null,
        },
      )
      assert.equal(r.status, 201, r.text)
    }
    const first: Backend = {
      total: { cpu: 0, mem: 4, gpu: 2 },
      users: { alice: { cpu: 0, mem: 3 }, bob: { mem: 1 }, carol: { gpu: 2 } },
    }
    const calls = await reportCycle(first)
    const stored = (
      await owner.get(`/api/marketplace-component-usages/?resource_uuid=${t.resource.uuid}&o=type`)
    ).body as { uuid: string; type: string }[]
    assert.deepEqual(
      stored.map((u) => u.type),
      ['cpu', 'mem'],
      'gpu is not a component of the offering: the agent leaves it out',
    )
    assert.deepEqual(calls, [
      'GET /api/marketplace-offering-users/',
      `GET /api/marketplace-provider-offerings/${t.offering.uuid}/`,
      'GET /api/marketplace-provider-resources/',
      `GET /api/marketplace-provider-resources/${hex(t.resource.uuid)}/`,
      'GET /api/marketplace-component-usages/',
      'GET /api/marketplace-component-user-usages/',
      'POST /api/marketplace-component-usages/set_usage/',
      'GET /api/marketplace-component-usages/',
      ...stored.map((u) => `POST /api/marketplace-component-usages/${u.uuid}/set_user_usages/`),
    ])

    // Read back through the API, as anyone on the resource's sides would.
    const read = async () => {
      const usages = (
        await owner.get(
          `/api/marketplace-component-usages/?resource_uuid=${t.resource.uuid}&o=billing_period`,
        )
      ).body
      const users = (
        await owner.get(`/api/marketplace-component-user-usages/?resource_uuid=${t.resource.uuid}&o=username`)
      ).body
      return {
        usages: usages.map((u: any) => [u.type, u.usage, u.billing_period, u.date]).sort(),
        users: users.map((u: any) => [u.username, u.component_type, u.usage, u.user]).sort(),
        count: usages.length,
      }
    }
    const url = (u: string) => `http://localhost:80/api/marketplace-offering-users/${t.accounts[u]}/`
    assert.deepEqual(await read(), {
      usages: [
        ['cpu', '0.00', '2026-11-01', '2026-11-01T00:00:00.000Z'],
        ['mem', '4.00', '2026-11-01', '2026-11-01T00:00:00.000Z'],
      ],
      users: [
        ['alice', 'cpu', '0.00', url('alice')],
        ['alice', 'mem', '3.00', url('alice')],
        ['bob', 'mem', '1.00', url('bob')],
      ],
      count: 2,
    })

    // The next cycle of the month: the new totals replace the old ones.
    await reportCycle({
      total: { cpu: 1.5, mem: 6 },
      users: { alice: { cpu: 1.5, mem: 4 }, bob: { mem: 2 } },
    })
    assert.deepEqual(await read(), {
      usages: [
        ['cpu', '1.50', '2026-11-01', '2026-11-01T00:00:00.000Z'],
        ['mem', '6.00', '2026-11-01', '2026-11-01T00:00:00.000Z'],
      ],
      users: [
        ['alice', 'cpu', '1.50', url('alice')],
        ['alice', 'mem', '4.00', url('alice')],
        ['bob', 'mem', '2.00', url('bob')],
      ],
      count: 2,
    })

    // Every record parses as the reference's generated client parses it (uuids, date-times, dates, enums).
    const full = (await owner.get(`/api/marketplace-component-usages/?resource_uuid=${t.resource.uuid}`)).body
    assertClientParses('ComponentUsage', full, { list: true })
    const shares = (
      await owner.get(`/api/marketplace-component-user-usages/?resource_uuid=${t.resource.uuid}`)
    ).body
    assertClientParses('ComponentUserUsage', shares, { list: true })
    for (const u of full) {
      for (const k of ['uuid', 'resource_uuid', 'offering_uuid', 'project_uuid', 'customer_uuid'])
        assert.match(u[k], UUID, k)
      for (const k of ['created', 'date']) assert.ok(!Number.isNaN(Date.parse(u[k])), k)
      assert.match(u.billing_period, /^\d{4}-\d{2}-01$/)
      assert.ok(['none', 'reuse', 'zero'].includes(u.missing_usage_policy))
      assert.equal(typeof u.recurring, 'boolean')
    }
  })
})
