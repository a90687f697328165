// Offering components: the provider's create / update / remove actions, the built-in components
// of a type, components given inline, and how they show on the offering record.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { sharedTestApp } from '../support/app.js'
import { client } from '../support/client.js'
import { makeCustomer, makeProject, makeUser } from '../support/fixtures.js'
import {
  makeOffering,
  makeOfferingManager,
  makePlan,
  makeResource,
  makeServiceSettings,
  providerGraph,
} from '../support/catalog-fixtures.js'

const t = sharedTestApp()

const OFFERINGS = '/api/marketplace-provider-offerings/'
const at = (uuid: string, action: string) => `${OFFERINGS}${uuid}/${action}/`

/** A provider with its owner and an offering of it. */
async function providerOffering(type = 'Marketplace.Slurm', state: 'Active' | 'Draft' = 'Active') {
  const p = providerGraph(t.ctx)
  const offering = await makeOffering(t.ctx, await p.customer(), { type, state })
  return { p, offering, owner: client(t.app, (await p.owner()).token) }
}

async function componentsOf(uuid: string, token: string) {
  const r = await client(t.app, token).get(`${OFFERINGS}${uuid}/?field=components`)
  assert.equal(r.status, 200)
  return r.body.components as Record<string, unknown>[]
}

describe('create_offering_component', () => {
  test('the provider owner adds components; the offering shows them by name with every field', async () => {
    const { p, offering, owner } = await providerOffering()
    const cpu = await owner.post(at(offering.uuid, 'create_offering_component'), {
      billing_type: 'usage',
      type: 'cpu',
      name: 'CPU',
      measured_unit: 'Hours',
      limit_amount: 1000,
      limit_period: 'month',
    })
    assert.equal(cpu.status, 201, cpu.text)
    assert.deepEqual(cpu.body, {
      uuid: cpu.body.uuid,
      offering_uuid: offering.uuid,
      billing_type: 'usage',
      type: 'cpu',
      name: 'CPU',
      description: '',
      measured_unit: 'Hours',
      unit_factor: 1,
      limit_period: 'month',
      limit_amount: 1000,
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
    })
    const mem = await owner.post(at(offering.uuid, 'create_offering_component'), {
      billing_type: 'limit',
      type: 'mem',
      name: 'Memory',
      measured_unit: 'GB',
      unit_factor: 1024,
      description: 'RAM of the allocation',
      article_code: 'MEM-1',
      min_value: 1,
      max_value: 512,
      max_available_limit: 4096,
      default_limit: 8,
      limit_period: '',
    })
    assert.equal(mem.status, 201, mem.text)
    assert.equal(mem.body.limit_period, null, 'a blank limit period is none')
    const all = await componentsOf(offering.uuid, (await p.owner()).token)
    assert.deepEqual(
      all.map((c) => [c.name, c.type, c.billing_type, c.unit_factor, c.min_value, c.max_value]),
      [
        ['CPU', 'cpu', 'usage', 1, null, null],
        ['Memory', 'mem', 'limit', 1024, 1, 512],
      ],
    )
    // Anyone who sees the offering sees its components.
    const consumer = await makeUser(t.ctx)
    assert.equal((await componentsOf(offering.uuid, consumer.token)).length, 2)
  })

  test('a boolean component is 0..1, monthly, without a limit amount', async () => {
    const { offering, owner } = await providerOffering()
    const r = await owner.post(at(offering.uuid, 'create_offering_component'), {
      billing_type: 'limit',
      type: 'backup',
      name: 'Backup',
      is_boolean: true,
      min_value: 5,
      max_value: 50,
      limit_amount: 3,
    })
    assert.equal(r.status, 201, r.text)
    assert.deepEqual(
      [r.body.is_boolean, r.body.min_value, r.body.max_value, r.body.limit_period, r.body.limit_amount],
      [true, 0, 1, 'month', null],
    )
  })

  test('a duplicate type is 400 on type; bad fields are named together', async () => {
    const { offering, owner } = await providerOffering()
    const path = at(offering.uuid, 'create_offering_component')
    assert.equal((await owner.post(path, { billing_type: 'usage', type: 'cpu', name: 'CPU' })).status, 201)
    const dup = await owner.post(path, { billing_type: 'limit', type: 'cpu', name: 'Other CPU' })
    assert.equal(dup.status, 400)
    assert.deepEqual(dup.body, { type: ["Component with type 'cpu' already exists in this offering."] })
    const bad = await owner.post(path, {
      billing_type: 'monthly',
      type: 'has space',
      limit_period: 'weekly',
      unit_factor: 'x',
    })
    assert.equal(bad.status, 400)
    assert.deepEqual(bad.body, {
      type: ['Enter a valid value.'],
      name: ['This field is required.'],
      unit_factor: ['A valid integer is required.'],
      billing_type: ['"monthly" is not a valid choice.'],
      limit_period: ['"weekly" is not a valid choice.'],
    })
    const range = await owner.post(path, {
      billing_type: 'limit',
      type: 'gpu',
      name: 'GPU',
      min_value: 8,
      max_value: 2,
    })
    assert.equal(range.status, 400)
    assert.deepEqual(range.body, { min_value: ['The minimum value must not exceed the maximum value.'] })
    assert.equal(
      (await componentsOf(offering.uuid, (await makeUser(t.ctx, { staff: true })).token)).length,
      1,
    )
  })

  test('prepaid fields need a prepaid component; an overage component is a usage one of the offering', async () => {
    const { offering, owner } = await providerOffering()
    const path = at(offering.uuid, 'create_offering_component')
    const notPrepaid = await owner.post(path, {
      billing_type: 'one',
      type: 'storage',
      name: 'Storage',
      min_prepaid_duration: 1,
      max_prepaid_duration: 12,
    })
    assert.equal(notPrepaid.status, 400)
    assert.deepEqual(notPrepaid.body, {
      min_prepaid_duration: ['This field can only be set on prepaid components.'],
      max_prepaid_duration: ['This field can only be set on prepaid components.'],
    })
    const overage = await owner.post(path, { billing_type: 'usage', type: 'storage_over', name: 'Overage' })
    const limitOne = await owner.post(path, { billing_type: 'limit', type: 'cores', name: 'Cores' })
    const badRange = await owner.post(path, {
      billing_type: 'one',
      type: 'storage',
      name: 'Storage',
      is_prepaid: true,
      min_prepaid_duration: 12,
      max_prepaid_duration: 1,
    })
    assert.deepEqual(badRange.body, {
      min_prepaid_duration: ['Minimum prepaid duration must not exceed the maximum.'],
    })
    const notUsage = await owner.post(path, {
      billing_type: 'one',
      type: 'storage',
      name: 'Storage',
      is_prepaid: true,
      overage_component: limitOne.body.uuid,
    })
    assert.deepEqual(notUsage.body, {
      overage_component: ["The linked overage component must have a billing type of 'usage'."],
    })
    const unknown = await owner.post(path, {
      billing_type: 'one',
      type: 'storage',
      name: 'Storage',
      is_prepaid: true,
      overage_component: '00000000-0000-4000-8000-000000000000',
    })
    assert.deepEqual(unknown.body, {
      overage_component: ['Object with uuid=00000000-0000-4000-8000-000000000000 does not exist.'],
    })
    const ok = await owner.post(path, {
      billing_type: 'one',
      type: 'storage',
      name: 'Storage',
      is_prepaid: true,
      min_prepaid_duration: 1,
      max_prepaid_duration: 36,
      prepaid_duration_step: 1,
      min_renewal_duration: 1,
      max_renewal_duration: 12,
      renewal_duration_step: 3,
      overage_component: overage.body.uuid.replace(/-/g, ''),
    })
    assert.equal(ok.status, 201, ok.text)
    assert.deepEqual(
      [
        ok.body.is_prepaid,
        ok.body.overage_component,
        ok.body.max_prepaid_duration,
        ok.body.renewal_duration_step,
      ],
      [true, overage.body.uuid, 36, 3],
    )
  })

  test('who may: the provider people and offering managers; 403 for others, 404 when unseen', async () => {
    const { p, offering } = await providerOffering('Marketplace.Slurm', 'Draft')
    const body = (type: string) => ({ billing_type: 'usage', type, name: type })
    const path = at(offering.uuid, 'create_offering_component')
    const manager = await makeOfferingManager(t.ctx, offering)
    assert.equal((await client(t.app, manager.token).post(path, body('a'))).status, 201)
    assert.equal((await client(t.app, (await p.manager()).token).post(path, body('b'))).status, 201)
    assert.equal(
      (await client(t.app, (await makeUser(t.ctx, { staff: true })).token).post(path, body('c'))).status,
      201,
    )
    const support = await client(t.app, (await p.support()).token).post(path, body('d'))
    assert.equal(support.status, 403)
    assert.deepEqual(support.body, { detail: 'You do not have permission to perform this action.' })
    assert.equal(
      (await client(t.app, (await makeUser(t.ctx, { support: true })).token).post(path, body('e'))).status,
      403,
    )
    // A Draft offering is not seen by outsiders: 404 before anything else.
    const outsider = await client(t.app, (await makeUser(t.ctx)).token).post(path, body('f'))
    assert.equal(outsider.status, 404)
    assert.equal((await client(t.app, null).post(path, body('g'))).status, 401)
    assert.equal(
      (await client(t.app, (await p.owner()).token).post(at('nope', 'create_offering_component'), body('h')))
        .status,
      404,
    )
  })
})

describe('update_offering_component', () => {
  test('changes the fields given of the component the uuid names (hyphenated or 32 hex digits)', async () => {
    const { p, offering, owner } = await providerOffering()
    const made = await owner.post(at(offering.uuid, 'create_offering_component'), {
      billing_type: 'usage',
      type: 'cpu',
      name: 'CPU',
      measured_unit: 'Hours',
      limit_amount: 10,
    })
    const r = await owner.post(at(offering.uuid, 'update_offering_component'), {
      uuid: made.body.uuid.replace(/-/g, ''),
      billing_type: 'limit',
      type: 'cpu',
      name: 'CPU cores',
      measured_unit: 'Hours',
      limit_amount: 20,
      max_value: 64,
    })
    assert.equal(r.status, 200, r.text)
    assert.deepEqual(
      [
        r.body.uuid,
        r.body.billing_type,
        r.body.name,
        r.body.limit_amount,
        r.body.max_value,
        r.body.measured_unit,
      ],
      [made.body.uuid, 'limit', 'CPU cores', 20, 64, 'Hours'],
    )
    const partial = await owner.post(at(offering.uuid, 'update_offering_component'), {
      uuid: made.body.uuid,
      description: 'cores',
      limit_amount: null,
    })
    assert.equal(partial.status, 200, partial.text)
    assert.deepEqual(
      [partial.body.description, partial.body.limit_amount, partial.body.name],
      ['cores', null, 'CPU cores'],
    )
    const [shown] = await componentsOf(offering.uuid, (await p.owner()).token)
    assert.deepEqual(shown, partial.body)
  })

  test('an unknown uuid is 404, a missing one 400; a type taken is 400 on type', async () => {
    const { offering, owner } = await providerOffering()
    const path = at(offering.uuid, 'create_offering_component')
    const cpu = await owner.post(path, { billing_type: 'usage', type: 'cpu', name: 'CPU' })
    await owner.post(path, { billing_type: 'usage', type: 'gpu', name: 'GPU' })
    const update = at(offering.uuid, 'update_offering_component')
    const unknown = await owner.post(update, { uuid: '00000000-0000-4000-8000-000000000000', name: 'X' })
    assert.equal(unknown.status, 404)
    assert.deepEqual(unknown.body, { detail: 'No OfferingComponent matches the given query.' })
    // Another offering's component is not this offering's.
    const other = await providerOffering()
    const foreign = await other.owner.post(at(other.offering.uuid, 'create_offering_component'), {
      billing_type: 'usage',
      type: 'cpu',
      name: 'CPU',
    })
    assert.equal((await owner.post(update, { uuid: foreign.body.uuid, name: 'X' })).status, 404)
    const missing = await owner.post(update, { name: 'X' })
    assert.equal(missing.status, 400)
    assert.deepEqual(missing.body, { uuid: ['This field is required.'] })
    const malformed = await owner.post(update, { uuid: 'abc', name: 'X' })
    assert.deepEqual(malformed.body, { uuid: ['Must be a valid UUID.'] })
    const taken = await owner.post(update, { uuid: cpu.body.uuid, type: 'gpu' })
    assert.equal(taken.status, 400)
    assert.deepEqual(taken.body, { type: ["Component with type 'gpu' already exists in this offering."] })
    const same = await owner.post(update, { uuid: cpu.body.uuid, type: 'cpu', billing_type: 'daily' })
    assert.deepEqual(same.body, { billing_type: ['"daily" is not a valid choice.'] })
  })

  test('support and consumers may not; the check is before the component is looked up', async () => {
    const { p, offering, owner } = await providerOffering()
    const made = await owner.post(at(offering.uuid, 'create_offering_component'), {
      billing_type: 'usage',
      type: 'cpu',
      name: 'CPU',
    })
    for (const token of [(await p.support()).token, (await makeUser(t.ctx)).token]) {
      const r = await client(t.app, token).post(at(offering.uuid, 'update_offering_component'), {
        uuid: made.body.uuid,
        name: 'Hacked',
      })
      assert.equal(r.status, 403)
    }
    assert.equal((await componentsOf(offering.uuid, (await p.owner()).token))[0]!.name, 'CPU')
  })
})

describe('remove_offering_component', () => {
  test('removes the component and its plan prices; 200 without a body', async () => {
    const { p, offering, owner } = await providerOffering()
    const plan = await makePlan(t.ctx, offering)
    const made = await owner.post(at(offering.uuid, 'create_offering_component'), {
      billing_type: 'usage',
      type: 'cpu',
      name: 'CPU',
    })
    const priced = await client(t.app, (await p.owner()).token).get(`/api/marketplace-plans/${plan.uuid}/`)
    assert.deepEqual(priced.body.prices, { cpu: '0.0000000000' }, 'a new component is priced 0 in each plan')
    const r = await owner.post(at(offering.uuid, 'remove_offering_component'), { uuid: made.body.uuid })
    assert.equal(r.status, 200)
    assert.equal(r.text, '')
    assert.deepEqual(await componentsOf(offering.uuid, (await p.owner()).token), [])
    const after = await client(t.app, (await p.owner()).token).get(`/api/marketplace-plans/${plan.uuid}/`)
    assert.deepEqual([after.body.prices, after.body.components], [{}, []])
    const again = await owner.post(at(offering.uuid, 'remove_offering_component'), { uuid: made.body.uuid })
    assert.equal(again.status, 404)
  })

  test('refused once the offering has resources: their limits and usages name its components', async () => {
    const { offering, owner } = await providerOffering()
    const made = await owner.post(at(offering.uuid, 'create_offering_component'), {
      billing_type: 'limit',
      type: 'cpu',
      name: 'CPU',
    })
    const customer = await makeCustomer(t.ctx)
    await makeResource(t.ctx, offering, await makeProject(t.ctx, customer), { state: 'Terminated' })
    const r = await owner.post(at(offering.uuid, 'remove_offering_component'), { uuid: made.body.uuid })
    assert.equal(r.status, 400)
    assert.deepEqual(r.body, { uuid: ['The component CPU cannot be removed because it is already used'] })
  })
})

describe('built-in components', () => {
  test('a cloudB tenant offering is created with cores, RAM and storage, limit-billed', async () => {
    const p = providerGraph(t.ctx)
    const settings = await makeServiceSettings(t.ctx, { type: 'cloudB' })
    const owner = client(t.app, (await p.owner()).token)
    const r = await owner.post(OFFERINGS, {
      name: 'Tenants',
      customer: (await p.customer()).url,
      type: 'CloudB.Tenant',
      scope: `http://localhost/api/service-settings/${settings.uuid}/`,
      components: [
        { billing_type: 'limit', type: 'cores', name: 'Cores', measured_unit: 'cores', max_value: 32 },
      ],
    })
    assert.equal(r.status, 201, r.text)
    const byType = Object.fromEntries(
      (r.body.components as Record<string, unknown>[]).map((c) => [c.type, c]),
    )
    assert.deepEqual(
      r.body.components.map((c: Record<string, unknown>) => [
        c.type,
        c.name,
        c.measured_unit,
        c.billing_type,
        c.limit_period,
        c.factor,
        c.is_builtin,
      ]),
      [
        ['cores', 'Cores', 'cores', 'limit', 'month', null, true],
        ['ram', 'RAM', 'GB', 'limit', 'month', 1024, true],
        ['storage', 'Storage', 'GB', 'limit', 'month', 1024, true],
      ],
    )
    assert.equal(byType.cores!.max_value, 32, 'an inline built-in component sets its fields')
    const uuid = r.body.uuid as string
    const again = await owner.post(at(uuid, 'create_offering_component'), {
      billing_type: 'limit',
      type: 'ram',
      name: 'More RAM',
    })
    assert.deepEqual(again.body, { type: ['Cannot create a component of built-in type: ram'] })
    const rename = await owner.post(at(uuid, 'update_offering_component'), {
      uuid: byType.ram!.uuid,
      name: 'Memory',
      max_value: 1024,
    })
    assert.equal(rename.status, 400)
    assert.deepEqual(rename.body, {
      name: ['The type, name and unit of a built-in component cannot be changed.'],
    })
    const bounds = await owner.post(at(uuid, 'update_offering_component'), {
      uuid: byType.ram!.uuid,
      type: 'ram',
      name: 'RAM',
      max_value: 1024,
    })
    assert.equal(bounds.status, 200, bounds.text)
    const remove = await owner.post(at(uuid, 'remove_offering_component'), { uuid: byType.storage!.uuid })
    assert.equal(remove.status, 400)
    assert.deepEqual(remove.body, { uuid: ['The component storage cannot be removed because it is builtin'] })
    // A custom component is refused for a type with built-in components.
    const extra = await owner.post(OFFERINGS, {
      name: 'Tenants 2',
      customer: (await p.customer()).url,
      type: 'CloudB.Tenant',
      scope: `http://localhost/api/service-settings/${settings.uuid}/`,
      components: [{ billing_type: 'usage', type: 'gpu', name: 'GPU' }],
    })
    assert.equal(extra.status, 400)
    assert.deepEqual(extra.body, { components: ['Extra components are not allowed.'] })
  })

  test('other types have none: inline components are created; a duplicate or bad one is nested', async () => {
    const p = providerGraph(t.ctx)
    const owner = client(t.app, (await p.owner()).token)
    const customer = (await p.customer()).url
    const body = (components: unknown[]) => ({ name: 'HPC', customer, type: 'Marketplace.Slurm', components })
    const dup = await owner.post(
      OFFERINGS,
      body([
        { billing_type: 'usage', type: 'cpu', name: 'CPU' },
        { billing_type: 'usage', type: 'cpu', name: 'CPU again' },
      ]),
    )
    assert.equal(dup.status, 400)
    assert.deepEqual(dup.body, {
      components: [{}, { type: ["Component with type 'cpu' already exists in this offering."] }],
    })
    const bad = await owner.post(OFFERINGS, body([{ billing_type: 'weekly', type: 'cpu', name: 'CPU' }]))
    assert.deepEqual(bad.body, { components: [{ billing_type: ['"weekly" is not a valid choice.'] }] })
    const schema = await owner.post(OFFERINGS, body([{ billing_type: 'usage', name: 'CPU' }]))
    assert.deepEqual(schema.body, { components: { 0: { type: ['This field is required.'] } } })
    const ok = await owner.post(
      OFFERINGS,
      body([
        { billing_type: 'usage', type: 'cpu', name: 'CPU', measured_unit: 'Hours' },
        { billing_type: 'usage', type: 'mem', name: 'Memory', measured_unit: 'GB-hours' },
      ]),
    )
    assert.equal(ok.status, 201, ok.text)
    assert.deepEqual(
      ok.body.components.map((c: Record<string, unknown>) => [c.type, c.is_builtin, c.factor]),
      [
        ['cpu', false, null],
        ['mem', false, null],
      ],
    )
  })
})
