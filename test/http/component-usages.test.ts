// Component usages: the provider's reports per resource, component and billing period, what each
// side reads back with the reference's filters, and the accounts' shares of a usage.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { sharedTestApp } from '../support/app.js'
import { client } from '../support/client.js'
import { grant, makeCustomer, makeProject, makeUser } from '../support/fixtures.js'
import {
  makeComponent,
  makeOffering,
  makeOfferingManager,
  makePlan,
  makeResource,
  providerGraph,
} from '../support/catalog-fixtures.js'

const U = '/api/marketplace-component-usages/'
const UU = '/api/marketplace-component-user-usages/'
const SET = `${U}set_usage/`

const t = sharedTestApp(async (t) => {
  t.clock.set('2026-11-20T12:00:00.000Z')
  const staff = await makeUser(t.ctx, { staff: true })
  const support = await makeUser(t.ctx, { support: true })
  const provider = providerGraph(t.ctx)
  const providerCustomer = await provider.customer()
  const offering = await makeOffering(t.ctx, providerCustomer, { name: 'HPC', type: 'Marketplace.Slurm' })
  await makeComponent(t.ctx, offering, {
    type: 'cpu',
    billingType: 'usage',
    measuredUnit: 'hours',
    name: 'CPU',
  })
  await makeComponent(t.ctx, offering, { type: 'mem', billingType: 'usage', measuredUnit: 'GB' })
  await makeComponent(t.ctx, offering, { type: 'storage', billingType: 'limit' })
  await makeComponent(t.ctx, offering, { type: 'support', billingType: 'fixed' })
  const plan = await makePlan(t.ctx, offering)
  const offeringManager = await makeOfferingManager(t.ctx, offering)
  const consumer = await makeCustomer(t.ctx, 'Uni')
  const project = await makeProject(t.ctx, consumer, { name: 'Physics' })
  const owner = await makeUser(t.ctx)
  await grant(t.ctx, owner, 'CUSTOMER.OWNER', { type: 'customer', id: consumer.id })
  const member = await makeUser(t.ctx)
  await grant(t.ctx, member, 'PROJECT.MEMBER', { type: 'project', id: project.id })
  const outsider = await makeUser(t.ctx)
  const resource = await makeResource(t.ctx, offering, project, { name: 'alloc-1', planId: plan.id })
  return {
    staff,
    support,
    providerCustomer,
    providerOwner: await provider.owner(),
    providerManager: await provider.manager(),
    offering,
    offeringManager,
    consumer,
    project,
    owner,
    member,
    outsider,
    plan,
    resource,
  }
})

const hex = (uuid: string) => uuid.replace(/-/g, '')

/** A fresh OK resource of the offering in the consumer project. */
const freshResource = (state = 'OK') =>
  makeResource(t.ctx, t.offering, t.project, { planId: t.plan.id, state })

async function report(
  token: string,
  resourceUuid: string,
  usages: object[],
  date = '2026-11-01T00:00:00+00:00',
) {
  return client(t.app, token).post(SET, { usages, resource: hex(resourceUuid), date })
}

describe('set_usage', () => {
  test("the agent's body: one usage per component, read back per billing period", async () => {
    const r = await freshResource()
    const set = await report(t.providerOwner.token, r.uuid, [
      { type: 'cpu', amount: '0.00', recurring: false },
      { type: 'mem', amount: '4.00', recurring: false },
    ])
    assert.equal(set.status, 201, set.text)
    assert.equal(set.text, '')
    const list = await client(t.app, t.providerOwner.token).get(
      `${U}?resource_uuid=${hex(r.uuid)}&billing_period=2026-11-01&field=uuid&field=type&field=usage&page_size=100`,
    )
    assert.equal(list.status, 200)
    assert.deepEqual(
      list.body.map((u: any) => [u.type, u.usage, Object.keys(u).sort().join(',')]),
      [
        ['cpu', '0.00', 'type,usage,uuid'],
        ['mem', '4.00', 'type,usage,uuid'],
      ],
    )
    const one = await client(t.app, t.member.token).get(`${U}${list.body[1].uuid}/`)
    assert.equal(one.status, 200)
    const u = one.body
    assert.equal(u.url, `http://localhost:80${U}${u.uuid}/`)
    assert.equal(u.type, 'mem')
    assert.equal(u.name, 'MEM')
    assert.equal(u.measured_unit, 'GB')
    assert.equal(u.usage, '4.00')
    assert.equal(u.date, '2026-11-01T00:00:00.000Z')
    assert.equal(u.billing_period, '2026-11-01')
    assert.equal(u.recurring, false)
    assert.equal(u.missing_usage_policy, 'none')
    assert.equal(u.description, '')
    assert.equal(u.resource_uuid, r.uuid)
    assert.equal(u.resource_name, r.name)
    assert.equal(u.offering_uuid, t.offering.uuid)
    assert.equal(u.offering_name, 'HPC')
    assert.equal(u.project_uuid, t.project.uuid)
    assert.equal(u.project_name, 'Physics')
    assert.equal(u.customer_uuid, t.consumer.uuid)
    assert.equal(u.customer_name, 'Uni')
    assert.equal(u.modified_by, t.providerOwner.id)
    assert.equal(u.created, '2026-11-20T12:00:00.000Z')
    // The resource shows the latest period's usage.
    const res = await client(t.app, t.owner.token).get(`/api/marketplace-resources/${r.uuid}/`)
    assert.deepEqual(res.body.current_usages, { cpu: '0.00', mem: '4.00' })
  })

  test('a second report in the period replaces the first; another month is another usage', async () => {
    const r = await freshResource()
    const as = t.offeringManager.token
    assert.equal((await report(as, r.uuid, [{ type: 'cpu', amount: '1.5' }])).status, 201)
    assert.equal(
      (
        await report(
          as,
          r.uuid,
          [{ type: 'cpu', amount: 12.25, description: 'jobs' }],
          '2026-11-18T10:00:00Z',
        )
      ).status,
      201,
    )
    assert.equal(
      (await report(as, r.uuid, [{ type: 'cpu', amount: '3' }], '2026-10-01T00:00:00+00:00')).status,
      201,
    )
    const list = await client(t.app, as).get(`${U}?resource_uuid=${r.uuid}`)
    assert.deepEqual(
      list.body.map((u: any) => [u.billing_period, u.usage, u.description, u.date]),
      [
        ['2026-11-01', '12.25', 'jobs', '2026-11-18T10:00:00.000Z'],
        ['2026-10-01', '3.00', '', '2026-10-01T00:00:00.000Z'],
      ],
    )
    // Without a date the report is for the current month.
    assert.equal(
      (await client(t.app, as).post(SET, { usages: [{ type: 'cpu', amount: '7' }], resource: r.uuid }))
        .status,
      201,
    )
    const nov = await client(t.app, as).get(`${U}?resource_uuid=${r.uuid}&billing_period=2026-11-01`)
    assert.deepEqual(
      nov.body.map((u: any) => [u.usage, u.date]),
      [['7.00', '2026-11-20T12:00:00.000Z']],
    )
  })

  test("a date's month as written is the period, whatever its offset", async () => {
    const r = await freshResource()
    const set = await report(
      t.staff.token,
      r.uuid,
      [{ type: 'mem', amount: '2' }],
      '2026-11-01T00:00:00+02:00',
    )
    assert.equal(set.status, 201, set.text)
    const list = await client(t.app, t.staff.token).get(`${U}?resource_uuid=${r.uuid}`)
    assert.deepEqual(
      list.body.map((u: any) => [u.billing_period, u.date]),
      [['2026-11-01', '2026-10-31T22:00:00.000Z']],
    )
  })

  test('only the provider side and staff report', async () => {
    const r = await freshResource()
    const body = [{ type: 'cpu', amount: '1' }]
    for (const u of [t.owner, t.member, t.outsider, t.support]) {
      const res = await report(u.token, r.uuid, body)
      assert.equal(res.status, 403, res.text)
    }
    for (const u of [t.providerOwner, t.providerManager, t.offeringManager, t.staff]) {
      assert.equal((await report(u.token, r.uuid, body)).status, 201)
    }
    assert.equal((await client(t.app, null).post(SET, { usages: body, resource: r.uuid })).status, 401)
  })

  test('refused: a terminated or creating resource, components the offering lacks or does not meter, bad amounts and dates', async () => {
    const as = t.providerOwner.token
    for (const state of ['Terminated', 'Creating']) {
      const r = await freshResource(state)
      const res = await report(as, r.uuid, [{ type: 'cpu', amount: '1' }])
      assert.equal(res.status, 400)
      assert.deepEqual(res.body, { resource: ['Resource is not in valid state.'] })
    }
    const r = await freshResource()
    const bad = await report(as, r.uuid, [
      { type: 'gpu', amount: '1' },
      { type: 'support', amount: '1' },
      { type: 'cpu', amount: '1' },
    ])
    assert.equal(bad.status, 400)
    assert.deepEqual(bad.body, { usages: ['These components are invalid: gpu, support.'] })
    const cases: [unknown, string][] = [
      ['1.234', 'Ensure that there are no more than 2 decimal places.'],
      ['-1', 'Ensure this value is greater than or equal to 0.'],
      ['lots', 'A valid number is required.'],
      ['1e18', 'Ensure that there are no more than 20 digits in total.'],
    ]
    for (const [amount, message] of cases) {
      const res = await report(as, r.uuid, [
        { type: 'mem', amount: '1' },
        { type: 'cpu', amount },
      ])
      assert.equal(res.status, 400)
      assert.deepEqual(res.body, { usages: [{}, { amount: [message] }] })
    }
    const future = await report(as, r.uuid, [{ type: 'cpu', amount: '1' }], '2026-12-05T00:00:00Z')
    assert.deepEqual(future.body, { date: ['Usage cannot be reported for a future billing period.'] })
    const badDate = await report(as, r.uuid, [{ type: 'cpu', amount: '1' }], 'yesterday')
    assert.equal(badDate.status, 400)
    assert.deepEqual(Object.keys(badDate.body), ['date'])
    const missing = await client(t.app, as).post(SET, { usages: [] })
    assert.deepEqual(missing.body, {
      non_field_errors: ['Either plan_period or resource should be provided.'],
    })
    const unknown = await client(t.app, as).post(SET, {
      usages: [],
      resource: '0190c0de-0000-7000-8000-00000000abcd',
    })
    assert.deepEqual(unknown.body, {
      resource: ['Object with uuid=0190c0de-0000-7000-8000-00000000abcd does not exist.'],
    })
    const notUuid = await client(t.app, as).post(SET, { usages: [], resource: 'abc' })
    assert.deepEqual(notUuid.body, { resource: ['Must be a valid UUID.'] })
    // Nothing was written by the refused reports.
    const list = await client(t.app, as).get(`${U}?resource_uuid=${r.uuid}`)
    assert.deepEqual(list.body, [])
  })

  test("a usage component's limit over its period caps the reports", async () => {
    const offering = await makeOffering(t.ctx, t.providerCustomer, { name: 'Capped' })
    const c = await makeComponent(t.ctx, offering, { type: 'gpu', billingType: 'usage' })
    await t.ctx.db
      .updateTable('offering_components')
      .set({ limit_period: 'annual', limit_amount: 100 })
      .where('id', '=', c.id)
      .execute()
    const r = await makeResource(t.ctx, offering, t.project)
    const as = t.staff.token
    assert.equal(
      (await report(as, r.uuid, [{ type: 'gpu', amount: '60' }], '2026-10-01T00:00:00Z')).status,
      201,
    )
    const over = await report(as, r.uuid, [{ type: 'gpu', amount: '40.01' }])
    assert.deepEqual(over.body, { usages: ['Total amount exceeds limit. Total amount: 100.01, limit: 100.'] })
    assert.equal((await report(as, r.uuid, [{ type: 'gpu', amount: '40' }])).status, 201)
    // Replacing a period's report counts the new amount, not both.
    assert.equal((await report(as, r.uuid, [{ type: 'gpu', amount: '30' }])).status, 201)
  })
})

describe('reading usages', () => {
  let seeding:
    Promise<{ a: { uuid: string }; b: { uuid: string }; otherProject: { uuid: string } }> | undefined
  const seeded = () => (seeding ??= seed())
  const seed = async () => {
    const a = await makeResource(t.ctx, t.offering, t.project, { name: 'seen-a', planId: t.plan.id })
    const otherProject = await makeProject(t.ctx, await makeCustomer(t.ctx, 'Other org'))
    const b = await makeResource(t.ctx, t.offering, otherProject, { name: 'seen-b', planId: t.plan.id })
    const as = t.staff.token
    await report(
      as,
      a.uuid,
      [
        { type: 'cpu', amount: '5' },
        { type: 'mem', amount: '1' },
      ],
      '2026-09-03T08:00:00Z',
    )
    await report(as, a.uuid, [{ type: 'cpu', amount: '2' }], '2026-10-15T08:00:00Z')
    await report(as, b.uuid, [{ type: 'cpu', amount: '9' }], '2026-10-20T08:00:00Z')
    return { a, b, otherProject }
  }

  const q = async (query: string, token = t.staff.token) => {
    const { a, b } = await seeded()
    const r = await client(t.app, token).get(`${U}?offering_uuid=${t.offering.uuid}&${query}`)
    assert.equal(r.status, 200, r.text)
    return r.body
      .filter((u: any) => u.resource_uuid === a.uuid || u.resource_uuid === b.uuid)
      .map((u: any) => `${u.resource_name}:${u.type}:${u.billing_period.slice(0, 7)}`)
  }

  test('filters and orders as the reference does', async () => {
    const { a, b, otherProject } = await seeded()
    assert.deepEqual(await q(''), [
      'seen-b:cpu:2026-10',
      'seen-a:cpu:2026-10',
      'seen-a:cpu:2026-09',
      'seen-a:mem:2026-09',
    ])
    assert.deepEqual(await q(`resource_uuid=${hex(a.uuid)}&type=mem`), ['seen-a:mem:2026-09'])
    assert.deepEqual(await q(`resource=http://localhost/api/marketplace-resources/${b.uuid}/`), [
      'seen-b:cpu:2026-10',
    ])
    assert.deepEqual(await q(`project_uuid=${otherProject.uuid}`), ['seen-b:cpu:2026-10'])
    assert.deepEqual(await q(`customer_uuid=${t.consumer.uuid}&billing_period=2026-10-01`), [
      'seen-a:cpu:2026-10',
    ])
    assert.deepEqual(await q('billing_period_year=2026&billing_period_month=9'), [
      'seen-a:cpu:2026-09',
      'seen-a:mem:2026-09',
    ])
    assert.deepEqual(await q('date_after=2026-10-15&date_before=2026-10-15'), ['seen-a:cpu:2026-10'])
    assert.deepEqual(await q('date_before=2026-09-30'), ['seen-a:cpu:2026-09', 'seen-a:mem:2026-09'])
    assert.deepEqual(await q('o=usage'), [
      'seen-a:mem:2026-09',
      'seen-a:cpu:2026-10',
      'seen-a:cpu:2026-09',
      'seen-b:cpu:2026-10',
    ])
    assert.deepEqual(await q('missing_usage_policy=reuse'), [])
    for (const bad of [
      'billing_period=2026-13-01',
      'date_before=soon',
      'resource_uuid=x',
      'missing_usage_policy=always',
    ]) {
      const r = await client(t.app, t.staff.token).get(`${U}?${bad}`)
      assert.equal(r.status, 400, bad)
      assert.deepEqual(Object.keys(r.body), [bad.split('=')[0]])
    }
  })

  test("who sees them: the resource's consumer and provider sides, support and staff", async () => {
    const { a } = await seeded()
    assert.deepEqual(await q('', t.member.token), [
      'seen-a:cpu:2026-10',
      'seen-a:cpu:2026-09',
      'seen-a:mem:2026-09',
    ])
    assert.deepEqual(await q('', t.owner.token), [
      'seen-a:cpu:2026-10',
      'seen-a:cpu:2026-09',
      'seen-a:mem:2026-09',
    ])
    assert.equal((await q('', t.offeringManager.token)).length, 4)
    assert.equal((await q('', t.providerManager.token)).length, 4)
    assert.equal((await q('', t.support.token)).length, 4)
    assert.deepEqual(await q('', t.outsider.token), [])
    const one = (await client(t.app, t.staff.token).get(`${U}?resource_uuid=${a.uuid}`)).body[0]
    assert.equal((await client(t.app, t.outsider.token).get(`${U}${one.uuid}/`)).status, 404)
    assert.equal((await client(t.app, null).get(`${U}${one.uuid}/`)).status, 401)
  })
})

describe('user usages', () => {
  test("each account's share of a usage: linked by URL or by username, replaced per username", async () => {
    const r = await freshResource()
    const as = t.providerOwner.token
    await report(as, r.uuid, [
      { type: 'cpu', amount: '10' },
      { type: 'mem', amount: '3' },
    ])
    const usages = (await client(t.app, as).get(`${U}?resource_uuid=${r.uuid}&billing_period=2026-11-01`))
      .body
    const cpu = usages.find((u: any) => u.type === 'cpu')
    const person = await makeUser(t.ctx)
    const now = t.ctx.clock().toISOString()
    const account = t.ctx.newUuid()
    await t.ctx.db
      .insertInto('offering_users')
      .values({
        uuid: account,
        offering_id: t.offering.id,
        user_id: person.id,
        username: 'alice',
        state: 'OK',
        created: now,
        modified: now,
      })
      .execute()
    const accountUrl = `http://localhost/api/marketplace-offering-users/${account}/`
    const set = await client(t.app, as).post(`${U}${cpu.uuid}/set_user_usages/`, {
      usages: [
        { username: 'alice', usage: '6.00', date: '2026-11-01T00:00:00+00:00' },
        { username: 'bob', usage: '4.00', date: '2026-11-01T00:00:00+00:00', user: null },
      ],
    })
    assert.equal(set.status, 201, set.text)
    assert.equal(set.text, '')
    const again = await client(t.app, as).post(`${U}${cpu.uuid}/set_user_usage/`, {
      username: 'alice',
      usage: '7.5',
      user: accountUrl,
    })
    assert.equal(again.status, 201, again.text)
    const list = await client(t.app, t.member.token).get(
      `${UU}?resource_uuid=${hex(r.uuid)}&component_usage__billing_period=2026-11-01&o=username`,
    )
    assert.equal(list.status, 200)
    assert.deepEqual(
      list.body.map((u: any) => [u.username, u.usage, u.user, u.component_type, u.component_usage]),
      [
        [
          'alice',
          '7.50',
          `http://localhost:80/api/marketplace-offering-users/${account}/`,
          'cpu',
          `http://localhost:80${U}${cpu.uuid}/`,
        ],
        ['bob', '4.00', null, 'cpu', `http://localhost:80${U}${cpu.uuid}/`],
      ],
    )
    const alice = list.body[0]
    assert.equal(alice.measured_unit, 'hours')
    assert.equal(alice.billing_period, '2026-11-01')
    assert.equal(alice.resource_uuid, r.uuid)
    assert.equal(alice.customer_uuid, t.consumer.uuid)
    assert.equal(alice.project_uuid, t.project.uuid)
    assert.equal(alice.offering_uuid, t.offering.uuid)
    assert.equal(alice.date, '2026-11-01T00:00:00.000Z')
    const byUser = await client(t.app, as).get(`${UU}?user_uuid=${person.uuid}`)
    assert.deepEqual(
      byUser.body.map((u: any) => u.username),
      ['alice'],
    )
    const byName = await client(t.app, as).get(`${UU}?username=bob&resource_uuid=${r.uuid}`)
    assert.deepEqual(
      byName.body.map((u: any) => u.usage),
      ['4.00'],
    )
    assert.equal((await client(t.app, t.outsider.token).get(`${UU}${alice.uuid}/`)).status, 404)
    assert.equal((await client(t.app, t.owner.token).get(`${UU}${alice.uuid}/`)).status, 200)

    // The consumer may not report; an account of another offering or a bad amount is refused.
    const consumer = await client(t.app, t.owner.token).post(`${U}${cpu.uuid}/set_user_usages/`, {
      usages: [],
    })
    assert.equal(consumer.status, 403)
    const outsider = await client(t.app, t.outsider.token).post(`${U}${cpu.uuid}/set_user_usages/`, {
      usages: [],
    })
    assert.equal(outsider.status, 404)
    const other = await makeOffering(t.ctx, t.providerCustomer)
    const foreign = t.ctx.newUuid()
    await t.ctx.db
      .insertInto('offering_users')
      .values({
        uuid: foreign,
        offering_id: other.id,
        user_id: person.id,
        username: 'alice',
        state: 'OK',
        created: now,
        modified: now,
      })
      .execute()
    const wrong = await client(t.app, as).post(`${U}${cpu.uuid}/set_user_usages/`, {
      usages: [
        { username: 'x', usage: '1' },
        {
          username: 'alice',
          usage: '1',
          user: `http://localhost/api/marketplace-offering-users/${foreign}/`,
        },
      ],
    })
    assert.deepEqual(wrong.body, {
      usages: [{}, { user: ["The offering user is not an account of the resource's offering."] }],
    })
    const amount = await client(t.app, as).post(`${U}${cpu.uuid}/set_user_usage/`, {
      username: 'bob',
      usage: '0.001',
    })
    assert.deepEqual(amount.body, { usage: ['Ensure that there are no more than 2 decimal places.'] })
  })
})

describe("the reference client's models", () => {
  // Every attribute the reference's generated client declares on ComponentUsage and
  // ComponentUserUsage (py-client waldur_api_client/models), which the site agent parses.
  const USAGE = [
    'uuid',
    'created',
    'description',
    'type',
    'name',
    'measured_unit',
    'usage',
    'date',
    'missing_usage_policy',
    'recurring',
    'resource_name',
    'resource_uuid',
    'offering_name',
    'offering_uuid',
    'project_name',
    'project_uuid',
    'customer_name',
    'customer_uuid',
    'billing_period',
    'modified_by',
  ]
  const USER_USAGE = [
    'uuid',
    'user',
    'username',
    'component_usage',
    'usage',
    'measured_unit',
    'description',
    'created',
    'modified',
    'backend_id',
    'resource_name',
    'resource_uuid',
    'offering_name',
    'offering_uuid',
    'project_name',
    'project_uuid',
    'customer_name',
    'customer_uuid',
    'component_type',
    'date',
    'billing_period',
  ]

  test('the records carry each declared field, of its kind', async () => {
    const r = await freshResource()
    const as = client(t.app, t.providerOwner.token)
    await report(t.providerOwner.token, r.uuid, [{ type: 'cpu', amount: '2' }])
    const usage = (await as.get(`${U}?resource_uuid=${r.uuid}`)).body[0]
    for (const f of USAGE) assert.ok(f in usage, `ComponentUsage.${f}`)
    await as.post(`${U}${usage.uuid}/set_user_usages/`, { usages: [{ username: 'zed', usage: '2' }] })
    const share = (await as.get(`${UU}?resource_uuid=${r.uuid}`)).body[0]
    for (const f of USER_USAGE) assert.ok(f in share, `ComponentUserUsage.${f}`)
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
    for (const rec of [usage, share]) {
      for (const f of ['uuid', 'resource_uuid', 'offering_uuid', 'project_uuid', 'customer_uuid'])
        assert.match(rec[f], uuid, f)
      assert.match(rec.billing_period, /^\d{4}-\d{2}-\d{2}$/)
      assert.ok(!Number.isNaN(Date.parse(rec.date)) && !Number.isNaN(Date.parse(rec.created)))
      assert.match(rec.usage, /^\d+\.\d{2}$/)
    }
    assert.equal(typeof usage.modified_by, 'number')
  })
})

describe("a report's statements do not grow with its items", () => {
  /** The statements the database ran while `act` ran. */
  async function statementsOf(act: () => Promise<void>): Promise<number> {
    const before = t.database.statements()
    await act()
    return t.database.statements() - before
  }

  test('set_usage: as many for one component as for four, two of them capped', async () => {
    const offering = await makeOffering(t.ctx, t.providerCustomer, { name: 'Metered' })
    const types = ['u1', 'u2', 'u3', 'u4']
    for (const [i, type] of types.entries()) {
      const c = await makeComponent(t.ctx, offering, { type, billingType: 'usage' })
      if (i % 2 === 0) {
        await t.ctx.db
          .updateTable('offering_components')
          .set({ limit_period: 'annual', limit_amount: 100 })
          .where('id', '=', c.id)
          .execute()
      }
    }
    const r = await makeResource(t.ctx, offering, t.project)
    const as = t.providerOwner.token
    const ok = async (usages: object[]) => {
      const res = await report(as, r.uuid, usages)
      assert.equal(res.status, 201, res.text)
    }
    await ok([{ type: 'u2', amount: '1' }])
    const one = await statementsOf(() => ok([{ type: 'u1', amount: '1' }]))
    const four = await statementsOf(() => ok(types.map((type) => ({ type, amount: '2' }))))
    assert.equal(four, one)
    const list = await client(t.app, as).get(`${U}?resource_uuid=${r.uuid}&o=type`)
    assert.deepEqual(
      list.body.map((u: any) => [u.type, u.usage]),
      types.map((type) => [type, '2.00']),
    )
  })

  test('set_user_usages: as many for one share as for four, linked by URL and by username', async () => {
    const offering = await makeOffering(t.ctx, t.providerCustomer, { name: 'Shared' })
    await makeComponent(t.ctx, offering, { type: 'cpu', billingType: 'usage' })
    const r = await makeResource(t.ctx, offering, t.project)
    const as = t.providerOwner.token
    await report(as, r.uuid, [{ type: 'cpu', amount: '10' }])
    const usage = (await client(t.app, as).get(`${U}?resource_uuid=${r.uuid}`)).body[0]
    const now = t.ctx.clock().toISOString()
    const links: string[] = []
    for (const username of ['ann', 'ben']) {
      const uuid = t.ctx.newUuid()
      const person = await makeUser(t.ctx)
      await t.ctx.db
        .insertInto('offering_users')
        .values({
          uuid,
          offering_id: offering.id,
          user_id: person.id,
          username,
          state: 'OK',
          created: now,
          modified: now,
        })
        .execute()
      links.push(`http://localhost/api/marketplace-offering-users/${uuid}/`)
    }
    const ok = async (usages: object[]) => {
      const res = await client(t.app, as).post(`${U}${usage.uuid}/set_user_usages/`, { usages })
      assert.equal(res.status, 201, res.text)
    }
    await ok([{ username: 'zed', usage: '1' }])
    const one = await statementsOf(() => ok([{ username: 'ann', usage: '1' }]))
    const four = await statementsOf(() =>
      ok([
        { username: 'ann', usage: '2', user: links[0] },
        { username: 'ben', usage: '2', user: links[1] },
        { username: 'ann', usage: '3', user: links[0] },
        { username: 'cat', usage: '2' },
      ]),
    )
    assert.equal(four, one)
    const list = await client(t.app, as).get(`${UU}?resource_uuid=${r.uuid}&o=username`)
    assert.deepEqual(
      list.body.map((u: any) => [u.username, u.usage, u.user !== null]),
      [
        ['ann', '3.00', true],
        ['ben', '2.00', true],
        ['cat', '2.00', false],
        ['zed', '1.00', false],
      ],
    )
  })
})
