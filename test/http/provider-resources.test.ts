// The provider's view of marketplace resources (/api/marketplace-provider-resources/): who sees
// which resources, the filters, the team, and every provider action with its permission, state
// rule and validation.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { sharedTestApp } from '../support/app.js'
import { BASE, client, uuids } from '../support/client.js'
import { grant, makeCustomer, makeProject, makeUser, roleGraph, type UserRef } from '../support/fixtures.js'
import {
  makeCategory,
  makeComponent,
  makeOffering,
  makeOfferingManager,
  makePlan,
  makeResource,
  providerGraph,
} from '../support/catalog-fixtures.js'
import {
  assertClientParsesProjectUser,
  assertClientParsesResource,
} from '../support/resource-client-model.js'
import { AGENT_RESOURCE_FIELDS } from '../support/client-models.js'

const R = '/api/marketplace-provider-resources/'

const t = sharedTestApp(async (t) => {
  const p = providerGraph(t.ctx)
  const g = roleGraph(t.ctx)
  const provider = await p.customer()
  const offering = await makeOffering(t.ctx, provider, { name: 'HPC', pluginOptions: { x: 1 } })
  // What its backend accounts for: cpu and disk by limit, mem by usage.
  await makeComponent(t.ctx, offering, { type: 'cpu', maxValue: 4 })
  await makeComponent(t.ctx, offering, { type: 'mem', billingType: 'usage' })
  await makeComponent(t.ctx, offering, { type: 'disk' })
  const plan = await makePlan(t.ctx, offering)
  const project = await g.project()
  const staff = await makeUser(t.ctx, { staff: true })
  const offeringManager = await makeOfferingManager(t.ctx, offering)
  return {
    p,
    g,
    provider,
    offering,
    plan,
    project,
    staff,
    offeringManager,
    providerOwner: await p.owner(),
    providerManager: await p.manager(),
    providerSupport: await p.support(),
    support: await makeUser(t.ctx, { support: true }),
  }
})

const as = (u: UserRef | null) => client(t.app, u?.token)

/** A fresh resource of the world's offering in the consumer project. */
const fresh = (opts: Parameters<typeof makeResource>[3] = {}) =>
  makeResource(t.ctx, t.offering, t.project, { planId: t.plan.id, ...opts })

const row = (uuid: string) =>
  t.ctx.db.selectFrom('resources').selectAll().where('uuid', '=', uuid).executeTakeFirstOrThrow()

describe('who sees the provider view', () => {
  test("the provider organization's people, the offering's managers, staff and support see a resource", async () => {
    const r = await fresh()
    const seeing = [
      t.providerOwner,
      t.providerManager,
      t.providerSupport,
      t.offeringManager,
      t.staff,
      t.support,
    ]
    for (const u of seeing) {
      const one = await as(u).get(`${R}${r.uuid}/`)
      assert.equal(one.status, 200, u.username)
      assert.ok(
        uuids((await as(u).get(`${R}?offering_uuid=${t.offering.uuid}&page_size=300`)).body).includes(r.uuid),
      )
    }
  })

  test('consumers, outsiders and managers of other offerings do not; anonymous callers are 401', async () => {
    const r = await fresh()
    const otherManager = await makeOfferingManager(t.ctx, await makeOffering(t.ctx, t.provider))
    const notSeeing = [
      await t.g.owner(),
      await t.g.admin(),
      await t.g.manager(),
      await t.g.member(),
      await t.g.outsider(),
      otherManager,
    ]
    for (const u of notSeeing) {
      const one = await as(u).get(`${R}${r.uuid}/`)
      assert.equal(one.status, 404, u.username)
      assert.deepEqual(one.body, { detail: 'No Resource matches the given query.' })
      assert.deepEqual((await as(u).get(`${R}?offering_uuid=${t.offering.uuid}`)).body, [])
      assert.equal((await as(u).post(`${R}${r.uuid}/set_backend_id/`, { backend_id: 'x' })).status, 404)
    }
    assert.equal((await as(null).get(R)).status, 401)
    assert.equal((await as(null).get(`${R}${r.uuid}/team/`)).status, 401)
  })

  test('the record is the same as in /api/marketplace-resources/, and the client models parse it', async () => {
    const r = await fresh({ name: 'same-record' })
    const provider = await as(t.providerOwner).get(`${R}${r.uuid}/`)
    const consumer = await as(t.staff).get(`/api/marketplace-resources/${r.uuid}/`)
    assert.equal(provider.body.url, `${BASE}/api/marketplace-resources/${r.uuid}/`)
    assert.deepEqual({ ...provider.body, can_terminate: false }, { ...consumer.body, can_terminate: false })
    assertClientParsesResource(provider.body)
    const listed = await as(t.providerOwner).get(`${R}?uuid=${r.uuid}`)
    assertClientParsesResource(listed.body[0])
    assert.equal('order_in_progress' in listed.body[0], false, 'lists leave the orders out')
  })

  test('field= selects the fields the site agent reads', async () => {
    const r = await fresh({ name: 'agent-view' })
    const fields = AGENT_RESOURCE_FIELDS
    const q = fields.map((f) => `field=${f}`).join('&')
    const list = await as(t.offeringManager).get(
      `${R}?offering_uuid=${t.offering.uuid}&state=OK&state=Erred&page_size=100&${q}&uuid=${r.uuid}`,
    )
    assert.equal(list.status, 200)
    assert.deepEqual(Object.keys(list.body[0]).sort(), [...fields].sort())
    assert.deepEqual(list.body[0].offering_plugin_options, { x: 1 })
    assert.match(list.body[0].slug, /^agent-view-/)
  })
})

describe('filters', () => {
  test('each filter narrows the list; a malformed value is 400 naming the parameter', async () => {
    const cat = await makeCategory(t.ctx)
    const a = await makeOffering(t.ctx, t.provider, { categoryId: cat.id, name: 'Filter A' })
    const b = await makeOffering(t.ctx, t.provider, { name: 'Filter B' })
    await t.ctx.db.updateTable('offerings').set({ slug: 'filter-b-slug' }).where('id', '=', b.id).execute()
    const otherCustomer = await makeCustomer(t.ctx)
    const otherProject = await makeProject(t.ctx, otherCustomer)
    const r1 = await makeResource(t.ctx, a, t.project, { name: 'Fone', backendId: 'be-1' })
    t.clock.advance(1000)
    const r2 = await makeResource(t.ctx, b, otherProject, { name: 'Ftwo', state: 'Erred' })
    t.clock.advance(1000)
    const r3 = await makeResource(t.ctx, a, otherProject, { name: 'Fthree', state: 'Creating' })
    await t.ctx.db
      .updateTable('resources')
      .set({ paused: 1, downscaled: 1, restrict_member_access: 1 })
      .where('uuid', '=', r3.uuid)
      .execute()
    const ours = [r1.uuid, r2.uuid, r3.uuid]
    const q = async (qs: string) => {
      const res = await as(t.providerOwner).get(`${R}?o=created&page_size=300&${qs}`)
      assert.equal(res.status, 200, res.text)
      return uuids(res.body).filter((u) => ours.includes(u))
    }
    assert.deepEqual(await q(`offering_uuid=${a.uuid}`), [r1.uuid, r3.uuid])
    assert.deepEqual(await q(`offering_uuid=${a.uuid}&offering_uuid=${b.uuid}`), ours)
    assert.deepEqual(await q(`offering_uuid=${a.uuid},${b.uuid}`), ours)
    assert.deepEqual(await q('state=OK&state=Erred'), [r1.uuid, r2.uuid])
    assert.deepEqual(await q(`project_uuid=${otherProject.uuid}`), [r2.uuid, r3.uuid])
    assert.deepEqual(await q(`customer_uuid=${otherCustomer.uuid}`), [r2.uuid, r3.uuid])
    assert.deepEqual(await q('backend_id=be-1'), [r1.uuid])
    assert.deepEqual(await q('name=FTW'), [r2.uuid])
    assert.deepEqual(await q('name_exact=Fone'), [r1.uuid])
    assert.deepEqual(await q('query=fthree'), [r3.uuid])
    assert.deepEqual(await q('query=be-1'), [r1.uuid])
    assert.deepEqual(await q('offering_slug=filter-b-slug'), [r2.uuid])
    assert.deepEqual(await q(`category_uuid=${cat.uuid}`), [r1.uuid, r3.uuid])
    assert.deepEqual(await q('paused=true'), [r3.uuid])
    assert.deepEqual(await q('paused=false'), [r1.uuid, r2.uuid])
    assert.deepEqual(await q('downscaled=true'), [r3.uuid])
    assert.deepEqual(await q('restrict_member_access=true'), [r3.uuid])
    assert.deepEqual(
      await q(`modified=${encodeURIComponent(new Date(t.clock.now().getTime() - 500).toISOString())}`),
      [r3.uuid],
    )
    assert.deepEqual(await q(`provider_uuid=${t.provider.uuid}&offering_uuid=${b.uuid}`), [r2.uuid])
    const bad = async (qs: string) => (await as(t.providerOwner).get(`${R}?${qs}`)).body
    assert.deepEqual(await bad('offering_uuid=nope'), { offering_uuid: ['Enter a valid UUID.'] })
    assert.deepEqual(await bad('state=Running'), {
      state: ['Select a valid choice. Running is not one of the available choices.'],
    })
    assert.deepEqual(await bad('modified=yesterday'), { modified: ['Enter a valid date/time.'] })
    assert.deepEqual(await bad('o=cost'), {
      o: ['Select a valid choice. cost is not one of the available choices.'],
    })
  })

  test('order_state: resources with an order in one of the states', async () => {
    const owner = await t.g.owner()
    const placed = await as(owner).post('/api/marketplace-orders/', {
      offering: t.offering.url,
      plan: t.plan.url,
      project: t.project.url,
      attributes: { name: 'order-state' },
    })
    assert.equal(placed.status, 201, placed.text)
    const rid = placed.body.marketplace_resource_uuid
    const list = async (qs: string) =>
      uuids((await as(t.providerOwner).get(`${R}?${qs}&page_size=300`)).body).includes(rid)
    assert.equal(await list('order_state=pending-provider'), true)
    assert.equal(await list('order_state=done'), false)
  })
})

describe('the team', () => {
  test("lists the project's users with their project roles, by username", async () => {
    const project = await makeProject(t.ctx, await t.g.customer())
    const r = await makeResource(t.ctx, t.offering, project)
    const users = {
      b: await makeUser(t.ctx, { username: 'team-b', fullName: 'Bea', email: 'b@example.org' }),
      a: await makeUser(t.ctx, { username: 'team-a', fullName: 'Ann', email: 'a@example.org' }),
      expired: await makeUser(t.ctx, { username: 'team-c' }),
    }
    await grant(t.ctx, users.b, 'PROJECT.MEMBER', { type: 'project', id: project.id })
    await grant(t.ctx, users.a, 'PROJECT.MANAGER', { type: 'project', id: project.id })
    await grant(t.ctx, users.expired, 'PROJECT.ADMIN', { type: 'project', id: project.id })
    const later = '2027-01-01T00:00:00.000Z'
    await t.ctx.db
      .updateTable('user_roles')
      .set({ expiration_time: later })
      .where('user_id', '=', users.a.id)
      .execute()
    await t.ctx.db
      .updateTable('user_roles')
      .set({ expiration_time: '2025-01-01T00:00:00.000Z' })
      .where('user_id', '=', users.expired.id)
      .execute()
    const team = await as(t.offeringManager).get(`${R}${r.uuid}/team/`)
    assert.equal(team.status, 200)
    assert.deepEqual(team.body, [
      {
        url: `${BASE}/api/users/${users.a.uuid}/`,
        uuid: users.a.uuid,
        username: 'team-a',
        full_name: 'Ann',
        email: 'a@example.org',
        role: 'PROJECT.MANAGER',
        expiration_time: later,
        offering_user_username: null,
        offering_user_state: null,
      },
      {
        url: `${BASE}/api/users/${users.b.uuid}/`,
        uuid: users.b.uuid,
        username: 'team-b',
        full_name: 'Bea',
        email: 'b@example.org',
        role: 'PROJECT.MEMBER',
        expiration_time: null,
        offering_user_username: null,
        offering_user_state: null,
      },
    ])
    for (const m of team.body) assertClientParsesProjectUser(m)
    // The customer's owner holds no project role: not on the team.
    assert.equal((await as(t.providerOwner).get(`${R}${r.uuid}/team/?has_consent=true`)).body.length, 2)
    assert.equal((await as(await t.g.owner()).get(`${R}${r.uuid}/team/`)).status, 404)
    // A member's account on an offering that keeps accounts shows its username and state there.
    const keeping = await makeOffering(t.ctx, t.provider, {
      type: 'Marketplace.Slurm',
      pluginOptions: { service_provider_can_create_offering_user: true },
    })
    const onKeeping = await makeResource(t.ctx, keeping, project)
    const account = await as(t.staff).post('/api/marketplace-offering-users/', {
      offering_uuid: keeping.uuid,
      user_uuid: users.b.uuid,
      username: 'bea_hpc',
    })
    assert.equal(account.status, 201, account.text)
    const withAccount = (await as(t.providerOwner).get(`${R}${onKeeping.uuid}/team/`)).body
    assert.deepEqual(
      withAccount.map((m: Record<string, unknown>) => [
        m.username,
        m.offering_user_username,
        m.offering_user_state,
      ]),
      [
        ['team-a', null, null],
        ['team-b', 'bea_hpc', account.body.state],
      ],
    )
    for (const m of withAccount) assertClientParsesProjectUser(m)
  })
})

describe('provider actions', () => {
  test('set_backend_id: changed, not changed, or taken by another resource of the offering', async () => {
    const r = await fresh()
    const other = await fresh({ backendId: 'taken' })
    const post = (u: UserRef, body: unknown) => as(u).post(`${R}${r.uuid}/set_backend_id/`, body)
    const changed = await post(t.offeringManager, { backend_id: 'hpc_agent-alloc-1' })
    assert.equal(changed.status, 200)
    assert.deepEqual(changed.body, { status: 'Resource backend_id has been changed.' })
    assert.equal((await row(r.uuid)).backend_id, 'hpc_agent-alloc-1')
    assert.deepEqual((await post(t.providerOwner, { backend_id: 'hpc_agent-alloc-1' })).body, {
      status: 'Resource backend_id is not changed.',
    })
    const taken = await post(t.providerManager, { backend_id: 'taken' })
    assert.equal(taken.status, 400)
    assert.deepEqual(taken.body, { backend_id: ['A resource of this offering already has this backend_id.'] })
    await t.ctx.db
      .updateTable('resources')
      .set({ state: 'Terminated' })
      .where('uuid', '=', other.uuid)
      .execute()
    assert.equal((await post(t.providerManager, { backend_id: 'taken' })).status, 200)
    assert.deepEqual((await post(t.staff, {})).body, { backend_id: ['This field is required.'] })
    assert.deepEqual((await post(t.staff, { backend_id: 'x'.repeat(256) })).body, {
      backend_id: ['Ensure this field has no more than 255 characters.'],
    })
    for (const u of [t.providerSupport, t.support]) {
      const no = await post(u, { backend_id: 'nope' })
      assert.equal(no.status, 403, u.username)
      assert.deepEqual(no.body, { detail: 'You do not have permission to perform this action.' })
    }
  })

  test('set_effective_id and set_backend_metadata store what they are given', async () => {
    const r = await fresh()
    const eff = await as(t.offeringManager).post(`${R}${r.uuid}/set_effective_id/`, {
      effective_id: 'remote-7',
    })
    assert.deepEqual(eff.body, { status: 'Resource effective_id has been changed.' })
    const meta = await as(t.offeringManager).post(`${R}${r.uuid}/set_backend_metadata/`, {
      backend_metadata: { qos: 'normal' },
    })
    assert.equal(meta.status, 200)
    assert.deepEqual(meta.body, { status: 'The backend metadata is updated' })
    const rec = (await as(t.offeringManager).get(`${R}${r.uuid}/`)).body
    assert.equal(rec.effective_id, 'remote-7')
    assert.deepEqual(rec.backend_metadata, { qos: 'normal' })
    const bad = await as(t.offeringManager).post(`${R}${r.uuid}/set_backend_metadata/`, {
      backend_metadata: [1],
    })
    assert.equal(bad.status, 400)
    assert.deepEqual(bad.body, { backend_metadata: ['Expected a dictionary of items.'] })
    assert.equal(
      (await as(t.providerSupport).post(`${R}${r.uuid}/set_backend_metadata/`, { backend_metadata: {} }))
        .status,
      403,
    )
  })

  test("set_limits: whole numbers not below 0 of the offering's components, each bad entry named", async () => {
    const r = await fresh({ limits: { cpu: 1 } })
    const ok = await as(t.offeringManager).post(`${R}${r.uuid}/set_limits/`, { limits: { cpu: 10, mem: 10 } })
    assert.equal(ok.status, 200)
    assert.deepEqual(ok.body, { status: 'The resource limits are updated' })
    assert.deepEqual((await as(t.offeringManager).get(`${R}${r.uuid}/`)).body.limits, { cpu: 10, mem: 10 })
    const bad = await as(t.offeringManager).post(`${R}${r.uuid}/set_limits/`, {
      limits: { cpu: -1, mem: 1.5, gpu: 'many', disk: '20' },
    })
    assert.equal(bad.status, 400)
    assert.deepEqual(bad.body, {
      limits: {
        cpu: ['Ensure this value is greater than or equal to 0.'],
        mem: ['A valid integer is required.'],
        gpu: ['A valid integer is required.'],
      },
    })
    assert.deepEqual((await as(t.offeringManager).get(`${R}${r.uuid}/`)).body.limits, { cpu: 10, mem: 10 })
    // What the backend holds is reported as it is (cpu above its max_value, mem billed by usage),
    // but only for components the offering has.
    assert.deepEqual(
      (await as(t.offeringManager).post(`${R}${r.uuid}/set_limits/`, { limits: { cpu: 1, gpu: 2, tb: 3 } }))
        .body,
      { limits: ['Invalid types: gpu, tb'] },
    )
    assert.deepEqual((await as(t.offeringManager).post(`${R}${r.uuid}/set_limits/`, {})).body, {
      limits: ['This field is required.'],
    })
    assert.deepEqual((await as(t.offeringManager).post(`${R}${r.uuid}/set_limits/`, { limits: [] })).body, {
      limits: ['Expected a dictionary of items.'],
    })
    const numeric = await as(t.offeringManager).post(`${R}${r.uuid}/set_limits/`, { limits: { disk: '20' } })
    assert.equal(numeric.status, 200)
    assert.deepEqual((await row(r.uuid)).limits && (await as(t.staff).get(`${R}${r.uuid}/`)).body.limits, {
      disk: 20,
    })
    assert.equal((await as(t.support).post(`${R}${r.uuid}/set_limits/`, { limits: {} })).status, 403)
  })

  test('set_endpoints replaces the endpoints; submit_report stores the report', async () => {
    const r = await fresh()
    const first = await as(t.offeringManager).post(`${R}${r.uuid}/set_endpoints/`, {
      endpoints: [
        { name: 'API', url: 'https://api.example.org/v1' },
        { name: 'Docs', url: 'https://docs.example.org' },
      ],
    })
    assert.equal(first.status, 200)
    assert.deepEqual(first.body, { status: 'Resource endpoints have been set.' })
    await as(t.offeringManager).post(`${R}${r.uuid}/set_endpoints/`, {
      endpoints: [{ name: 'API', url: 'https://api.example.org/v2' }],
    })
    const rec = (await as(t.offeringManager).get(`${R}${r.uuid}/`)).body
    assert.equal(rec.endpoints.length, 1)
    assert.deepEqual(
      { ...rec.endpoints[0], uuid: 'x' },
      { uuid: 'x', name: 'API', url: 'https://api.example.org/v2' },
    )
    assert.match(rec.endpoints[0].uuid, /^[0-9a-f-]{36}$/)
    const bad = await as(t.offeringManager).post(`${R}${r.uuid}/set_endpoints/`, {
      endpoints: [{ name: 'API', url: 'not a url' }],
    })
    assert.equal(bad.status, 400)
    assert.deepEqual(bad.body, { endpoints: { 0: { url: ['Enter a valid URL.'] } } })
    const report = [{ header: 'Usage', body: 'All fine' }]
    assert.deepEqual((await as(t.providerOwner).post(`${R}${r.uuid}/submit_report/`, { report })).body, {
      status: 'Report is submitted',
    })
    assert.deepEqual((await as(t.staff).get(`/api/marketplace-resources/${r.uuid}/`)).body.report, report)
  })

  test('refresh_last_sync sets last_sync to now and leaves modified alone', async () => {
    const r = await fresh()
    t.clock.advance(60_000)
    const now = t.clock.now().toISOString()
    const res = await as(t.offeringManager).post(`${R}${r.uuid}/refresh_last_sync/`)
    assert.equal(res.status, 200)
    assert.equal(res.text, '')
    const rec = (await as(t.offeringManager).get(`${R}${r.uuid}/`)).body
    assert.equal(rec.last_sync, now)
    assert.notEqual(rec.modified, now)
    assert.equal((await as(t.providerSupport).post(`${R}${r.uuid}/refresh_last_sync/`)).status, 403)
  })

  test('set_as_erred, set_as_ok and set_state_ok move the state; a transition not allowed is 409', async () => {
    const r = await fresh()
    const erred = await as(t.offeringManager).post(`${R}${r.uuid}/set_as_erred/`, {
      error_message: 'Backend down',
      error_traceback: 'Traceback ...',
    })
    assert.equal(erred.status, 200)
    assert.equal(erred.text, '')
    let rec = (await as(t.offeringManager).get(`${R}${r.uuid}/`)).body
    assert.deepEqual(
      [rec.state, rec.error_message, rec.error_traceback],
      ['Erred', 'Backend down', 'Traceback ...'],
    )
    // No body at all is accepted: the texts stay.
    assert.equal((await as(t.offeringManager).post(`${R}${r.uuid}/set_as_erred/`)).status, 200)
    assert.equal((await row(r.uuid)).error_message, 'Backend down')
    const ok = await as(t.offeringManager).post(`${R}${r.uuid}/set_as_ok/`)
    assert.equal(ok.status, 200)
    rec = (await as(t.offeringManager).get(`${R}${r.uuid}/`)).body
    assert.deepEqual([rec.state, rec.error_message, rec.error_traceback], ['OK', '', ''])
    // Already OK: nothing to do.
    assert.equal((await as(t.offeringManager).post(`${R}${r.uuid}/set_as_ok/`)).status, 200)
    const notFromOk = await as(t.offeringManager).post(`${R}${r.uuid}/set_state_ok/`)
    assert.equal(notFromOk.status, 409)
    assert.deepEqual(notFromOk.body, {
      detail: 'Valid states for operation: Erred, Creating, Updating, Terminating.',
    })
    await t.ctx.db.updateTable('resources').set({ state: 'Updating' }).where('uuid', '=', r.uuid).execute()
    const stateOk = await as(t.offeringManager).post(`${R}${r.uuid}/set_state_ok/`)
    assert.deepEqual(stateOk.body, { status: 'Resource state has been set to OK.' })
    await t.ctx.db.updateTable('resources').set({ state: 'Terminated' }).where('uuid', '=', r.uuid).execute()
    const terminated = await as(t.offeringManager).post(`${R}${r.uuid}/set_as_ok/`)
    assert.equal(terminated.status, 409)
    assert.equal((await row(r.uuid)).state, 'Terminated')
    assert.equal((await as(t.providerSupport).post(`${R}${r.uuid}/set_as_ok/`)).status, 403)
    assert.deepEqual(
      (await as(t.offeringManager).post(`${R}${r.uuid}/set_as_erred/`, { error_message: 7 })).body,
      { error_message: ['Not a valid string.'] },
    )
  })

  test('set_membership_sync_statuses: replaces the report, skips unknown users; 409 unless the offering opted in', async () => {
    const off = await makeOffering(t.ctx, t.provider, {
      pluginOptions: { enable_membership_sync_status: true },
    })
    const r = await makeResource(t.ctx, off, t.project)
    const closed = await fresh()
    const member = await t.g.member()
    const manager = await t.g.manager()
    const statuses = [
      { scope_type: 'resource', role_name: 'PROJECT.MEMBER', state: 'synced', user_uuid: member.uuid },
      {
        scope_type: 'resource_project',
        role_name: 'PROJECT.MANAGER',
        state: 'error',
        username: manager.username,
        resource_project_uuid: t.project.uuid,
        message: 'quota',
      },
      { scope_type: 'resource', role_name: 'PROJECT.MEMBER', state: 'pending', username: 'nobody-here' },
    ]
    const res = await as(t.providerOwner).post(`${R}${r.uuid}/set_membership_sync_statuses/`, { statuses })
    assert.equal(res.status, 200, res.text)
    assert.deepEqual(res.body, { stored: 2, skipped: ['nobody-here'] })
    const stored = await t.ctx.db
      .selectFrom('resource_member_sync_statuses')
      .select(['user_id', 'scope_type', 'role_name', 'state', 'message', 'resource_project_id'])
      .orderBy('id')
      .execute()
    assert.deepEqual(stored, [
      {
        user_id: member.id,
        scope_type: 'resource',
        role_name: 'PROJECT.MEMBER',
        state: 'synced',
        message: '',
        resource_project_id: null,
      },
      {
        user_id: manager.id,
        scope_type: 'resource_project',
        role_name: 'PROJECT.MANAGER',
        state: 'error',
        message: 'quota',
        resource_project_id: t.project.id,
      },
    ])
    const again = await as(t.providerOwner).post(`${R}${r.uuid}/set_membership_sync_statuses/`, {
      statuses: [],
    })
    assert.deepEqual(again.body, { stored: 0, skipped: [] })
    assert.equal((await t.ctx.db.selectFrom('resource_member_sync_statuses').selectAll().execute()).length, 0)
    const notOpted = await as(t.providerOwner).post(`${R}${closed.uuid}/set_membership_sync_statuses/`, {
      statuses,
    })
    assert.equal(notOpted.status, 409)
    assert.deepEqual(notOpted.body, {
      detail: 'Membership sync status reporting is not enabled for this offering.',
    })
    const bad = await as(t.providerOwner).post(`${R}${r.uuid}/set_membership_sync_statuses/`, {
      statuses: [{ scope_type: 'galaxy', role_name: 'x', state: 'synced' }],
    })
    assert.equal(bad.status, 400)
    assert.deepEqual(bad.body, { statuses: { 0: { scope_type: ['Select a valid choice.'] } } })
  })

  test('set_end_date_by_provider: at least 7 days ahead, who asked and when are recorded; null clears', async () => {
    const r = await fresh()
    const post = (u: UserRef, body: unknown) => as(u).post(`${R}${r.uuid}/set_end_date_by_provider/`, body)
    const soon = await post(t.offeringManager, { end_date: '2026-01-20' })
    assert.equal(soon.status, 400)
    assert.deepEqual(soon.body, { end_date: ['Please set at least 7 days in advance.'] })
    const ok = await post(t.offeringManager, { end_date: '2026-01-22' })
    assert.equal(ok.status, 200)
    assert.equal(ok.text, '')
    const rec = (await as(t.offeringManager).get(`${R}${r.uuid}/`)).body
    assert.equal(rec.end_date, '2026-01-22')
    assert.equal(rec.end_date_requested_by, `${BASE}/api/users/${t.offeringManager.uuid}/`)
    assert.equal(rec.end_date_updated_at, t.clock.now().toISOString())
    assert.equal(rec.resource_effective_end_date, '2026-01-22')
    assert.deepEqual((await post(t.offeringManager, { end_date: 'soon' })).body, {
      end_date: ['Date has wrong format. Use one of these formats instead: YYYY-MM-DD.'],
    })
    // Global support may, as in the reference; the organization's support may not.
    assert.equal((await post(t.support, { end_date: null })).status, 200)
    assert.equal((await as(t.staff).get(`${R}${r.uuid}/`)).body.end_date, null)
    assert.equal((await post(t.providerSupport, { end_date: null })).status, 403)
  })

  test('the flags and the slug are set by staff only', async () => {
    const r = await fresh()
    for (const [action, field] of [
      ['set_paused', 'paused'],
      ['set_downscaled', 'downscaled'],
      ['set_restrict_member_access', 'restrict_member_access'],
    ] as const) {
      const res = await as(t.staff).post(`${R}${r.uuid}/${action}/`, { [field]: true })
      assert.equal(res.status, 200)
      assert.deepEqual(res.body, { status: `Resource ${field} flag has been changed.` })
      assert.deepEqual((await as(t.staff).post(`${R}${r.uuid}/${action}/`, { [field]: true })).body, {
        status: `Resource ${field} flag is not changed.`,
      })
      assert.equal((await as(t.staff).get(`${R}${r.uuid}/`)).body[field], true)
      const no = await as(t.providerOwner).post(`${R}${r.uuid}/${action}/`, { [field]: false })
      assert.equal(no.status, 403)
      assert.deepEqual((await as(t.staff).post(`${R}${r.uuid}/${action}/`, { [field]: 'yes' })).body, {
        [field]: ['Must be a valid boolean.'],
      })
    }
    const other = await fresh({ slug: 'occupied' })
    const slug = await as(t.staff).post(`${R}${r.uuid}/set_slug/`, { slug: 'my-alloc' })
    assert.deepEqual(slug.body, { status: 'Resource slug has been changed.' })
    assert.equal((await as(t.staff).get(`${R}${r.uuid}/`)).body.slug, 'my-alloc')
    const dup = await as(t.staff).post(`${R}${r.uuid}/set_slug/`, { slug: 'occupied' })
    assert.equal(dup.status, 400)
    assert.deepEqual(dup.body, { slug: ['A resource with this slug already exists.'] })
    assert.equal((await as(t.staff).post(`${R}${other.uuid}/set_slug/`, { slug: 'no spaces' })).status, 400)
    assert.equal((await as(t.offeringManager).post(`${R}${r.uuid}/set_slug/`, { slug: 'mine' })).status, 403)
  })
})

describe('resources made by orders', () => {
  test('get a unique slug from their name, and show their creating and in-progress orders', async () => {
    const owner = await t.g.owner()
    const place = async (name: string) => {
      const res = await as(owner).post('/api/marketplace-orders/', {
        offering: t.offering.url,
        plan: t.plan.url,
        project: t.project.url,
        attributes: { name },
      })
      assert.equal(res.status, 201, res.text)
      return res.body as { uuid: string; marketplace_resource_uuid: string }
    }
    const first = await place('Alloc Ünï')
    const second = await place('Alloc Ünï')
    const unnamed = await place('')
    const rec = async (uuid: string) => (await as(t.providerOwner).get(`${R}${uuid}/`)).body
    const one = await rec(first.marketplace_resource_uuid)
    assert.equal(one.slug, 'alloc-uni-1')
    assert.equal((await rec(second.marketplace_resource_uuid)).slug, 'alloc-uni-2')
    assert.equal((await rec(unnamed.marketplace_resource_uuid)).slug, 'hpc-1')
    assert.equal(one.order_in_progress.uuid, first.uuid)
    assert.equal(one.order_in_progress.state, 'pending-provider')
    assert.equal(one.creation_order.uuid, first.uuid)
    assert.equal(one.can_terminate, false)
    assert.deepEqual(one.available_actions, [])
    assert.equal(one.last_sync, one.created)
    assertClientParsesResource(one)
    // Done: no order in progress; the creating order stays.
    const approve = await as(t.providerOwner).post(
      `/api/marketplace-orders/${first.uuid}/approve_by_provider/`,
    )
    assert.equal(approve.status, 200)
    const done = await as(t.providerOwner).post(`/api/marketplace-orders/${first.uuid}/set_state_done/`)
    assert.equal(done.status, 200, done.text)
    const after = await rec(first.marketplace_resource_uuid)
    assert.equal(after.state, 'OK')
    assert.equal(after.order_in_progress, null)
    assert.equal(after.creation_order.state, 'done')
    assert.equal(
      (await as(owner).get(`/api/marketplace-resources/${first.marketplace_resource_uuid}/`)).body
        .can_terminate,
      true,
    )
  })
})
