// Project service accounts and course accounts (their own lists, and an offering's for its
// provider), and per-user component limits.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { sharedTestApp } from '../support/app.js'
import { client } from '../support/client.js'
import { insertRef, grant, makeCustomer, makeProject, makeUser, type Ref } from '../support/fixtures.js'
import {
  makeComponent,
  makeOffering,
  makeOfferingManager,
  makeResource,
  providerGraph,
} from '../support/catalog-fixtures.js'

const KEEPS = { service_provider_can_create_offering_user: true }

const t = sharedTestApp(async (t) => {
  const staff = await makeUser(t.ctx, { staff: true })
  const pg = providerGraph(t.ctx)
  const providerCustomer = await pg.customer()
  const offering = await makeOffering(t.ctx, providerCustomer, {
    type: 'Marketplace.Slurm',
    pluginOptions: KEEPS,
  })
  const consumer = await makeCustomer(t.ctx)
  const project = await makeProject(t.ctx, consumer)
  const other = await makeProject(t.ctx, consumer)
  const components = {
    cpu: await makeComponent(t.ctx, offering, { type: 'cpu' }),
    mem: await makeComponent(t.ctx, offering, { type: 'mem', billingType: 'usage' }),
    gpu: await makeComponent(t.ctx, offering, { type: 'gpu', billingType: 'usage' }),
  }
  const resource = await makeResource(t.ctx, offering, project, { limits: { cpu: 10, mem: 20 } })
  const owner = await makeUser(t.ctx)
  const manager = await makeUser(t.ctx)
  const admin = await makeUser(t.ctx)
  const member = await makeUser(t.ctx)
  await grant(t.ctx, owner, 'CUSTOMER.OWNER', { type: 'customer', id: consumer.id })
  await grant(t.ctx, manager, 'PROJECT.MANAGER', { type: 'project', id: project.id })
  await grant(t.ctx, admin, 'PROJECT.ADMIN', { type: 'project', id: project.id })
  await grant(t.ctx, member, 'PROJECT.MEMBER', { type: 'project', id: project.id })
  return {
    staff,
    providerCustomer,
    providerOwner: await pg.owner(),
    offering,
    components,
    offeringManager: await makeOfferingManager(t.ctx, offering),
    consumer,
    project,
    other,
    resource,
    owner,
    manager,
    admin,
    member,
    outsider: await makeUser(t.ctx),
  }
})

const serviceAccount = (project: Ref, username: string) =>
  insertRef(t.ctx, 'project_service_accounts', 'marketplace-project-service-accounts', {
    project_id: project.id,
    username,
    email: `${username}@robots.example.org`,
    expires_at: '2027-01-01T00:00:00.000Z',
  })

describe('project service accounts and course accounts', () => {
  test("the offering's provider lists the accounts of projects with its live resources", async () => {
    const inProject = await serviceAccount(t.project, 'robot1')
    await serviceAccount(t.other, 'robot2')
    const course = await insertRef(t.ctx, 'course_accounts', 'marketplace-course-accounts', {
      project_id: t.project.id,
      user_id: t.member.id,
      username: 'student1',
      state: 'Pending',
    })
    const base = `/api/marketplace-provider-offerings/${t.offering.uuid}/`
    const agent = client(t.app, t.offeringManager.token)
    const psa = await agent.get(`${base}list_project_service_accounts/?page_size=100`)
    assert.equal(psa.status, 200, psa.text)
    assert.deepEqual(psa.body, [
      {
        url: `http://localhost:80/api/marketplace-project-service-accounts/${inProject.uuid}/`,
        uuid: inProject.uuid,
        created: '2026-01-15T10:00:00.000Z',
        modified: '2026-01-15T10:00:00.000Z',
        username: 'robot1',
        description: '',
        error_message: '',
        error_traceback: '',
        state: 'OK',
        token: null,
        email: 'robot1@robots.example.org',
        expires_at: '2027-01-01T00:00:00.000Z',
        preferred_identifier: '',
        project: t.project.uuid,
        project_uuid: t.project.uuid,
        project_name: t.project.name,
        customer_uuid: t.consumer.uuid,
        customer_name: t.consumer.name,
        customer_abbreviation: '',
      },
    ])
    const ca = await agent.get(
      `${base}list_course_accounts/?state=Pending&field=uuid&field=user_uuid&field=state`,
    )
    assert.deepEqual(ca.body, [{ uuid: course.uuid, user_uuid: t.member.uuid, state: 'Pending' }])
    assert.equal((await agent.get(`${base}list_course_accounts/?state=Gone`)).status, 400)
    assert.equal(
      (await client(t.app, t.owner.token).get(`${base}list_project_service_accounts/`)).status,
      403,
    )
    assert.equal((await client(t.app, t.providerOwner.token).get(`${base}list_course_accounts/`)).status, 200)
    // The accounts' own lists: the project's side and the provider side see them.
    for (const u of [t.member, t.owner, t.providerOwner, t.staff]) {
      const r = await client(t.app, u.token).get(
        `/api/marketplace-project-service-accounts/${inProject.uuid}/`,
      )
      assert.equal(r.status, 200, u.username)
    }
    assert.equal(
      (
        await client(t.app, t.outsider.token).get(
          `/api/marketplace-project-service-accounts/${inProject.uuid}/`,
        )
      ).status,
      404,
    )
    const own = await client(t.app, t.member.token).get(
      `/api/marketplace-course-accounts/?project_uuid=${t.project.uuid}`,
    )
    assert.deepEqual(
      own.body.map((x: { uuid: string }) => x.uuid),
      [course.uuid],
    )
  })
})

describe('per-user component limits', () => {
  const L = '/api/component-user-usage-limits/'
  const account = async () => {
    const user = await makeUser(t.ctx)
    const r = await client(t.app, t.staff.token).post('/api/marketplace-offering-users/', {
      offering_uuid: t.offering.uuid,
      user_uuid: user.uuid,
      username: `acct-${user.uuid.slice(-12)}`,
    })
    assert.equal(r.status, 201, r.text)
    return r.body as { url: string; uuid: string; username: string }
  }

  test("the consumer's manager sets a limit; the agent lists it by resource", async () => {
    const a = await account()
    const r = await client(t.app, t.manager.token).post(L, {
      resource: `http://localhost:80/api/marketplace-resources/${t.resource.uuid}/`,
      component: 'cpu',
      user: a.url,
      limit: '100.5',
    })
    assert.equal(r.status, 201, r.text)
    assert.deepEqual(r.body, {
      url: `http://localhost:80${L}${r.body.uuid}/`,
      uuid: r.body.uuid,
      resource: `http://localhost:80/api/marketplace-resources/${t.resource.uuid}/`,
      component: t.components.cpu.uuid,
      component_type: 'cpu',
      user: a.username,
      limit: '100.50',
    })
    // The component given by its uuid names the same type.
    const byUuid = await client(t.app, t.owner.token).post(L, {
      resource: `/api/marketplace-resources/${t.resource.uuid}/`,
      component: t.components.mem.uuid.replace(/-/g, ''),
      user: a.url,
    })
    assert.equal(byUuid.status, 201, byUuid.text)
    assert.equal(byUuid.body.component_type, 'mem')
    assert.equal(byUuid.body.limit, '0.00')
    const listed = await client(t.app, t.offeringManager.token).get(
      `${L}?resource_uuid=${t.resource.uuid}&page_size=100`,
    )
    assert.deepEqual(
      listed.body
        .filter((x: { user: string }) => x.user === a.username)
        .map((x: { component_type: string }) => x.component_type),
      ['cpu', 'mem'],
    )
    const dup = await client(t.app, t.manager.token).post(L, {
      resource: `/api/marketplace-resources/${t.resource.uuid}/`,
      component: 'cpu',
      user: a.url,
    })
    assert.equal(dup.status, 400)
    assert.deepEqual(dup.body, {
      non_field_errors: ['The fields resource, component, user must make a unique set.'],
    })
    const patched = await client(t.app, t.manager.token).patch(`${L}${r.body.uuid}/`, { limit: 50 })
    assert.equal(patched.status, 200)
    assert.equal(patched.body.limit, '50.00')
    assert.equal((await client(t.app, t.admin.token).patch(`${L}${r.body.uuid}/`, { limit: 5 })).status, 403)
    assert.equal(
      (await client(t.app, t.outsider.token).patch(`${L}${r.body.uuid}/`, { limit: 5 })).status,
      404,
    )
    assert.equal((await client(t.app, t.admin.token).delete(`${L}${r.body.uuid}/`)).status, 403)
    assert.equal((await client(t.app, t.manager.token).delete(`${L}${r.body.uuid}/`)).status, 204)
  })

  test('who sets limits, and the 400s of a create', async () => {
    const a = await account()
    const body = { resource: `/api/marketplace-resources/${t.resource.uuid}/`, component: 'gpu', user: a.url }
    for (const u of [t.admin, t.member, t.offeringManager])
      assert.equal((await client(t.app, u.token).post(L, body)).status, 403)
    assert.equal(
      (await client(t.app, t.outsider.token).post(L, body)).status,
      400,
      'an unseen resource is no resource',
    )
    const m = client(t.app, t.manager.token)
    assert.deepEqual((await m.post(L, { ...body, limit: -1 })).body, {
      limit: ['Ensure this value is greater than or equal to 0.'],
    })
    assert.deepEqual((await m.post(L, { ...body, limit: 'many' })).body, {
      limit: ['A valid number is required.'],
    })
    assert.deepEqual((await m.post(L, { ...body, limit: '1.005' })).body, {
      limit: ['Ensure that there are no more than 2 decimal places.'],
    })
    assert.equal((await m.post(L, { ...body, component: 'no spaces' })).status, 400)
    assert.deepEqual((await m.post(L, { ...body, component: 'disk' })).body, {
      component: ['The resource\'s offering has no component of type "disk".'],
    })
    assert.equal(
      (await m.post(L, { ...body, component: '00000000-0000-0000-0000-000000000000' })).status,
      400,
    )
    const elsewhere = await makeOffering(t.ctx, await makeCustomer(t.ctx), {
      type: 'Marketplace.Slurm',
      pluginOptions: KEEPS,
    })
    const foreign = await client(t.app, t.staff.token).post('/api/marketplace-offering-users/', {
      offering_uuid: elsewhere.uuid,
      user_uuid: t.member.uuid,
    })
    assert.deepEqual((await m.post(L, { ...body, user: foreign.body.url })).body, {
      user: ["The offering user is not an account of the resource's offering."],
    })
    assert.equal(
      (await client(t.app, t.providerOwner.token).post(L, body)).status,
      201,
      "the provider's owner may",
    )
    const seen = await client(t.app, t.member.token).get(`${L}?username=${a.username}&component_type=gpu`)
    assert.equal(seen.body.length, 1)
    assert.deepEqual((await client(t.app, t.outsider.token).get(`${L}?username=${a.username}`)).body, [])
  })
})
