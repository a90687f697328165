// The reference's site agent against this server: the calls its `order_process` and
// `membership_sync` modes make, in its order, with the bodies it sends, as the offering's provider.
// Every answer is parsed as the agent's generated client parses it (client-models.ts): a missing
// required field, a URL where a UUID belongs, a null the client cannot take fails the test. A
// Create, an Update (limits) and a Terminate order each go from the consumer to done.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { sharedTestApp } from '../support/app.js'
import { client } from '../support/client.js'
import { grant, makeCustomer, makeProject, makeUser, type UserRef } from '../support/fixtures.js'
import { makeCategory, makeOffering, makePlan, providerGraph } from '../support/catalog-fixtures.js'
import { AGENT_RESOURCE_FIELDS, assertClientParses } from '../support/client-models.js'

const AGENT_VERSION = '1.0.6rc17'
const OFFERING_USER_FIELDS = [
  'user_uuid',
  'username',
  'url',
  'state',
  'uuid',
  'user_username',
  'user_full_name',
  'user_first_name',
  'user_last_name',
  'user_email',
]
const fields = (names: string[]) => names.map((f) => `field=${f}`).join('&')

const t = sharedTestApp(async (t) => {
  const p = providerGraph(t.ctx)
  const provider = await p.customer()
  // A SLURM offering that keeps its users' accounts, as the reference's demo HPC offering does.
  const offering = await makeOffering(t.ctx, provider, {
    name: 'HPC allocation',
    type: 'Marketplace.Slurm',
    categoryId: (await makeCategory(t.ctx, 'HPC')).id,
    pluginOptions: { service_provider_can_create_offering_user: true },
  })
  const plan = await makePlan(t.ctx, offering, { unitPrice: '0' })
  const consumer = await makeCustomer(t.ctx)
  const project = await makeProject(t.ctx, consumer)
  const consumerOwner = await makeUser(t.ctx)
  await grant(t.ctx, consumerOwner, 'CUSTOMER.OWNER', { type: 'customer', id: consumer.id })
  const member = await makeUser(t.ctx, { fullName: 'Ada Lovelace' })
  await grant(t.ctx, member, 'PROJECT.MEMBER', { type: 'project', id: project.id })
  return { provider, offering, plan, project, consumerOwner, member, providerOwner: await p.owner() }
})

/** The agent's HTTP: its token is the provider owner's; each answer must have `status`. */
async function agentCall(
  method: 'GET' | 'POST' | 'PUT',
  path: string,
  body?: unknown,
  status: number | number[] = 200,
) {
  const c = client(t.app, t.providerOwner.token)
  const res =
    method === 'GET'
      ? await c.get(path)
      : method === 'POST'
        ? await c.post(path, body)
        : await c.put(path, body)
  assert.ok([status].flat().includes(res.status), `${method} ${path}: ${res.status} ${res.text}`)
  return res.body
}

const consumer = (u: UserRef = t.consumerOwner) => client(t.app, u.token)

/** The consumer organization's owner placed the order: it needs no consumer approval. */
async function waitsForProvider(orderUuid: string) {
  const order = await consumer().get(`/api/marketplace-orders/${orderUuid}/`)
  assert.equal(order.body.state, 'pending-provider')
}

/** What the agent does at the start of every mode: its identity, service and processor. */
async function start(mode: string, processor: string) {
  const version = await agentCall('GET', '/api/version/')
  assertClientParses('Version', version)
  const name = `agent-${t.offering.uuid}`
  const found = await agentCall('GET', `/api/marketplace-site-agent-identities/?name=${name}`)
  assertClientParses('AgentIdentity', found, { list: true })
  const body = {
    offering: t.offering.uuid.replaceAll('-', ''),
    name,
    version: AGENT_VERSION,
    dependencies: [{ package: 'waldur-site-agent-slurm', version: AGENT_VERSION }],
    config_file_path: '',
    config_file_content: '',
    last_restarted: '2026-11-27T10:00:00+00:00',
  }
  const identity = found.length
    ? await agentCall('PUT', `/api/marketplace-site-agent-identities/${found[0].uuid}/`, body)
    : await agentCall('POST', '/api/marketplace-site-agent-identities/', body, 201)
  assertClientParses('AgentIdentity', identity)
  assert.equal(identity.offering.replaceAll('-', ''), t.offering.uuid.replaceAll('-', ''))
  assert.equal(identity.created_by.replaceAll('-', ''), t.providerOwner.uuid.replaceAll('-', ''))
  assert.deepEqual(identity.dependencies, body.dependencies)
  const service = await agentCall(
    'POST',
    `/api/marketplace-site-agent-identities/${identity.uuid}/register_service/`,
    { name: mode, mode },
    [200, 201], // the client takes both: 201 when the service is new
  )
  assertClientParses('AgentService', service)
  const proc = await agentCall(
    'POST',
    `/api/marketplace-site-agent-services/${service.uuid}/register_processor/`,
    {
      name: processor,
      backend_type: 'waldur_site_agent_slurm.backend.SlurmBackend',
      backend_version: AGENT_VERSION,
    },
    [200, 201],
  )
  assertClientParses('AgentProcessor', proc)
  const me = await agentCall('GET', '/api/users/me/')
  assertClientParses('UserMe', me)
  assert.equal(me.username, t.providerOwner.username)
  const offering = await agentCall(
    'GET',
    `/api/marketplace-provider-offerings/${t.offering.uuid}/?${fields(['components', 'customer_uuid', 'partitions', 'plugin_options'])}`,
  )
  assertClientParses('ProviderOfferingDetails', offering, { selected: true })
  const sp = await agentCall(
    'GET',
    `/api/marketplace-service-providers/?customer_uuid=${offering.customer_uuid}&field=uuid`,
  )
  assertClientParses('ServiceProvider', sp, { list: true, selected: true })
  assert.equal(sp.length, 1)
  return { identity, serviceProviderUuid: sp[0].uuid as string, offering }
}

/** One `order_process` pass: every order of the offering waiting for the provider or executing is
 * approved, carried out on the "backend" and set done. Answers the orders it finished. */
async function orderProcess(backend: Map<string, Record<string, number>>) {
  const { serviceProviderUuid } = await start('order_process', 'OfferingOrderProcessor')
  const orders = await agentCall(
    'GET',
    `/api/marketplace-orders/?offering_uuid=${t.offering.uuid}&state=pending-provider&state=executing&page_size=100`,
  )
  assertClientParses('OrderDetails', orders, { list: true })
  const done: string[] = []
  for (const listed of orders) {
    if (listed.state === 'pending-provider') {
      const approved = await agentCall(
        'POST',
        `/api/marketplace-orders/${listed.uuid}/approve_by_provider/`,
        {},
      )
      assertClientParses('OrderInfoResponse', approved)
    }
    const order = await agentCall('GET', `/api/marketplace-orders/${listed.uuid}/`)
    assertClientParses('OrderDetails', order)
    assert.equal(order.state, 'executing')
    const resourcePath = `/api/marketplace-provider-resources/${order.marketplace_resource_uuid}/`
    const resource = await agentCall('GET', resourcePath)
    assertClientParses('Resource', resource)
    const team = await agentCall('GET', `${resourcePath}team/`)
    assertClientParses('ProjectUser', team, { list: true })
    if (order.type === 'Create') {
      const plan = await agentCall('GET', `/api/marketplace-plans/${order.plan_uuid}/`)
      assertClientParses('ProviderPlanDetails', plan)
      const keys = await agentCall('GET', `/api/marketplace-service-providers/${serviceProviderUuid}/keys/`)
      assertClientParses('SshKey', keys, { list: true })
      // The SLURM account is named after the resource's slug.
      const backendId = `hpc_${resource.slug}`
      backend.set(backendId, { ...order.limits })
      assertClientParses(
        'Status',
        await agentCall('POST', `${resourcePath}set_backend_id/`, { backend_id: backendId }),
      )
      assertClientParses(
        'Status',
        await agentCall('POST', `${resourcePath}set_limits/`, { limits: order.limits }),
      )
    } else if (order.type === 'Update') {
      backend.set(resource.backend_id, { ...order.limits })
      assertClientParses(
        'Status',
        await agentCall('POST', `${resourcePath}set_limits/`, { limits: order.limits }),
      )
    } else {
      backend.delete(resource.backend_id)
    }
    const state = await agentCall('GET', `/api/marketplace-orders/${order.uuid}/?field=uuid&field=state`)
    assertClientParses('OrderDetails', state, { selected: true })
    assert.equal(state.state, 'executing')
    await agentCall('POST', `/api/marketplace-orders/${order.uuid}/set_state_done/`)
    done.push(order.uuid)
  }
  const accounts = `/api/marketplace-provider-offerings/${t.offering.uuid}/`
  assertClientParses(
    'ProjectServiceAccount',
    await agentCall('GET', `${accounts}list_project_service_accounts/?page_size=100`),
    { list: true },
  )
  assertClientParses(
    'CourseAccount',
    await agentCall('GET', `${accounts}list_course_accounts/?page_size=100`),
    { list: true },
  )
  return done
}

/** One `membership_sync` pass; answers the resources it synced and the usernames it saw. */
async function membershipSync() {
  await start('membership_sync', 'OfferingMembershipProcessor')
  const resources = await agentCall(
    'GET',
    `/api/marketplace-provider-resources/?offering_uuid=${t.offering.uuid}&state=OK&state=Erred&page_size=100&${fields(AGENT_RESOURCE_FIELDS)}`,
  )
  assertClientParses('Resource', resources, { list: true, selected: true })
  const options = await agentCall(
    'GET',
    `/api/marketplace-provider-offerings/${t.offering.uuid}/?field=plugin_options`,
  )
  assertClientParses('ProviderOfferingDetails', options, { selected: true })
  assert.equal(options.plugin_options.service_provider_can_create_offering_user, true)
  const config = await agentCall(
    'GET',
    `/api/marketplace-provider-offerings/${t.offering.uuid}/user-attribute-config/`,
  )
  assertClientParses('OfferingUserAttributeConfig', config)
  const users = await agentCall(
    'GET',
    `/api/marketplace-offering-users/?offering_uuid=${t.offering.uuid}&is_restricted=false&page_size=100&${fields(OFFERING_USER_FIELDS)}`,
  )
  assertClientParses('OfferingUser', users, { list: true, selected: true })
  for (const r of resources) {
    const path = `/api/marketplace-provider-resources/${r.uuid}/`
    const team = await agentCall('GET', `${path}team/`)
    assertClientParses('ProjectUser', team, { list: true })
    assertClientParses(
      'Status',
      await agentCall('POST', `${path}set_backend_metadata/`, { backend_metadata: { qos: 'normal' } }),
    )
    const limits = await agentCall(
      'GET',
      `/api/component-user-usage-limits/?resource_uuid=${r.uuid}&page_size=100`,
    )
    assertClientParses('ComponentUserUsageLimit', limits, { list: true })
    await agentCall('POST', `${path}refresh_last_sync/`)
  }
  return { resources, usernames: users.map((u: { username: string }) => u.username) }
}

/** The components the agent's configuration names, created as its load_components command does. */
async function loadComponents() {
  for (const [type, name, unit] of [
    ['cpu', 'CPU', 'k-Hours'],
    ['mem', 'Memory', 'gb-Hours'],
  ] as const) {
    const res = await client(t.app, t.providerOwner.token).post(
      `/api/marketplace-provider-offerings/${t.offering.uuid}/create_offering_component/`,
      {
        billing_type: 'limit',
        type,
        name,
        measured_unit: unit,
        unit_factor: 1,
        limit_period: null,
        limit_amount: null,
      },
    )
    assert.equal(res.status, 201, res.text)
  }
}

describe('the reference site agent, order_process and membership_sync', () => {
  const backend = new Map<string, Record<string, number>>()
  let resourceUuid = ''

  test('a Create order goes from the consumer to done, and the resource is OK with its backend id and limits', async () => {
    await loadComponents()
    const placed = await consumer().post('/api/marketplace-orders/', {
      offering: t.offering.url,
      plan: t.plan.url,
      project: t.project.url,
      limits: { cpu: 10, mem: 10 },
      attributes: { name: 'Protein folding' },
    })
    assert.equal(placed.status, 201, placed.text)
    await waitsForProvider(placed.body.uuid)
    assert.deepEqual(await orderProcess(backend), [placed.body.uuid])
    const order = await consumer().get(`/api/marketplace-orders/${placed.body.uuid}/`)
    assert.equal(order.body.state, 'done')
    resourceUuid = order.body.marketplace_resource_uuid
    const resource = await consumer().get(`/api/marketplace-resources/${resourceUuid}/`)
    assert.equal(resource.body.state, 'OK')
    assert.equal(resource.body.backend_id, `hpc_${resource.body.slug}`)
    assert.deepEqual(resource.body.limits, { cpu: 10, mem: 10 })
    assert.deepEqual([...backend.entries()], [[resource.body.backend_id, { cpu: 10, mem: 10 }]])
  })

  test('membership_sync sees the resource, its team and the members’ accounts, and stores what it reports', async () => {
    const { resources, usernames } = await membershipSync()
    assert.deepEqual(
      resources.map((r: { uuid: string }) => r.uuid),
      [resourceUuid],
    )
    assert.equal(usernames.length, 1, 'the project member has an account on the offering')
    const team = await agentCall('GET', `/api/marketplace-provider-resources/${resourceUuid}/team/`)
    const ada = team.find(
      (m: { uuid: string }) => m.uuid.replaceAll('-', '') === t.member.uuid.replaceAll('-', ''),
    )
    assert.ok(ada, 'the project member is in the team')
    assert.equal(ada.offering_user_username, usernames[0])
    const resource = await agentCall('GET', `/api/marketplace-provider-resources/${resourceUuid}/`)
    assert.deepEqual(resource.backend_metadata, { qos: 'normal' })
    assert.ok(resource.last_sync, 'refresh_last_sync recorded the sync')
  })

  test('an Update order carries new limits to the backend and the resource', async () => {
    const placed = await consumer().post(`/api/marketplace-resources/${resourceUuid}/update_limits/`, {
      limits: { cpu: 20, mem: 5 },
    })
    assert.equal(placed.status, 200, placed.text)
    const orderUuid = placed.body.order_uuid as string
    await waitsForProvider(orderUuid)
    assert.deepEqual(await orderProcess(backend), [orderUuid])
    const resource = await consumer().get(`/api/marketplace-resources/${resourceUuid}/`)
    assert.equal(resource.body.state, 'OK')
    assert.deepEqual(resource.body.limits, { cpu: 20, mem: 5 })
    assert.deepEqual(backend.get(resource.body.backend_id), { cpu: 20, mem: 5 })
  })

  test('a Terminate order removes the backend account and ends the resource Terminated', async () => {
    const placed = await consumer().post(`/api/marketplace-resources/${resourceUuid}/terminate/`, {})
    assert.equal(placed.status, 200, placed.text)
    const orderUuid = placed.body.order_uuid as string
    await waitsForProvider(orderUuid)
    assert.deepEqual(await orderProcess(backend), [orderUuid])
    const order = await consumer().get(`/api/marketplace-orders/${orderUuid}/`)
    assert.equal(order.body.state, 'done')
    const resource = await consumer().get(`/api/marketplace-resources/${resourceUuid}/`)
    assert.equal(resource.body.state, 'Terminated')
    assert.equal(backend.size, 0)
    // Nothing left for the agent: a later pass finds no order and no live resource.
    assert.deepEqual(await orderProcess(backend), [])
    assert.deepEqual((await membershipSync()).resources, [])
  })
})

test('the client check fails what the client cannot parse', () => {
  const identity = {
    uuid: '0190c0de-0000-7000-8000-000000000001',
    url: 'http://localhost/api/marketplace-site-agent-identities/0190c0de-0000-7000-8000-000000000001/',
    offering: '0190c0de-0000-7000-8000-000000000002',
    created_by: null,
    name: 'agent',
    created: '2026-11-27T10:00:00Z',
    modified: '2026-11-27T10:00:00Z',
    services: [],
  }
  assertClientParses('AgentIdentity', identity)
  const offering = `http://localhost/api/marketplace-provider-offerings/${identity.offering}/`
  assert.throws(
    () => assertClientParses('AgentIdentity', { ...identity, offering }),
    /offering is not a UUID/,
  )
  const withoutServices: Record<string, unknown> = { ...identity }
  delete withoutServices.services
  assert.throws(() => assertClientParses('AgentIdentity', withoutServices), /services is required/)
  assert.throws(
    () => assertClientParses('Resource', { state: 'Running' }),
    /Resource.state: "Running" is not one of/,
  )
  assert.throws(() => assertClientParses('Resource', { offering_plugin_options: null }), /cannot take null/)
})
