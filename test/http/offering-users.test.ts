// Offering users: accounts made when users gain access to an offering's resources, what each side
// sees of them, the provider's state actions, and the offering's user attribute config.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { sharedTestApp } from '../support/app.js'
import { client } from '../support/client.js'
import { grant, makeCustomer, makeProject, makeUser, type Ref, type UserRef } from '../support/fixtures.js'
import {
  makeOffering,
  makeOfferingManager,
  makePlan,
  makeResource,
  providerGraph,
  type OfferingRef,
} from '../support/catalog-fixtures.js'

const R = '/api/marketplace-offering-users/'
const KEEPS = { service_provider_can_create_offering_user: true }

const t = sharedTestApp(async (t) => {
  const staff = await makeUser(t.ctx, { staff: true })
  const support = await makeUser(t.ctx, { support: true })
  const provider = providerGraph(t.ctx)
  const providerCustomer = await provider.customer()
  const offering = await makeOffering(t.ctx, providerCustomer, {
    name: 'HPC cluster',
    type: 'Marketplace.Slurm',
    pluginOptions: KEEPS,
  })
  const offeringManager = await makeOfferingManager(t.ctx, offering)
  const consumer = await makeCustomer(t.ctx, 'Uni')
  const owner = await makeUser(t.ctx)
  await grant(t.ctx, owner, 'CUSTOMER.OWNER', { type: 'customer', id: consumer.id })
  return {
    staff,
    support,
    provider,
    providerCustomer,
    providerOwner: await provider.owner(),
    providerManager: await provider.manager(),
    providerSupport: await provider.support(),
    offering,
    offeringManager,
    consumer,
    owner,
  }
})

/** A project of the consumer with an OK resource of `offering`. */
async function projectWith(offering: OfferingRef = t.offering, state = 'OK') {
  const project = await makeProject(t.ctx, t.consumer)
  const resource = await makeResource(t.ctx, offering, project, { state })
  return { project, resource }
}

/** Staff grant `role` on the project over HTTP (the grant path every client uses). */
async function addMember(project: Ref, user: UserRef, role = 'PROJECT.MEMBER') {
  const r = await client(t.app, t.staff.token).post(`/api/projects/${project.uuid}/add_user/`, {
    user: user.uuid,
    role,
  })
  assert.equal(r.status, 201, r.text)
}

async function accountOf(user: UserRef, offering: OfferingRef = t.offering) {
  const r = await client(t.app, t.staff.token).get(
    `${R}?user_uuid=${user.uuid}&offering_uuid=${offering.uuid}`,
  )
  assert.equal(r.status, 200, r.text)
  return r.body[0] as Record<string, any> | undefined
}

describe('accounts made when users gain access', () => {
  test('a member granted a role on a project with a live resource gets a Requested account', async () => {
    const { project } = await projectWith()
    const user = await makeUser(t.ctx, { fullName: 'Ada King Lovelace', email: 'ada@example.org' })
    await addMember(project, user)
    const a = await accountOf(user)
    assert.ok(a)
    assert.equal(a.state, 'Requested')
    assert.equal(a.username, null)
    assert.equal(a.user_username, user.username)
    assert.equal(a.user_full_name, 'Ada King Lovelace')
    assert.equal(a.user_first_name, 'Ada')
    assert.equal(a.user_last_name, 'King Lovelace')
    assert.equal(a.user_email, 'ada@example.org')
    assert.equal(a.offering_uuid, t.offering.uuid)
    assert.equal(a.offering_name, 'HPC cluster')
    assert.equal(a.customer_uuid, t.providerCustomer.uuid)
    assert.equal(a.is_restricted, false)
    assert.equal(a.runtime_state, 'Active')
    assert.equal(a.url, `http://localhost:80${R}${a.uuid}/`)
    assert.equal(a.user, `http://localhost:80/api/users/${user.uuid}/`)
    assert.equal(a.offering, `http://localhost:80/api/marketplace-provider-offerings/${t.offering.uuid}/`)
    // A second grant on the same project leaves the one account.
    await addMember(project, user, 'PROJECT.ADMIN')
    const all = await client(t.app, t.staff.token).get(`${R}?user_uuid=${user.uuid}`)
    assert.equal(all.body.length, 1)
  })

  test('no account without a live resource, or when the offering does not keep accounts', async () => {
    const user = await makeUser(t.ctx)
    const { project: erred } = await projectWith(t.offering, 'Erred')
    await addMember(erred, user)
    const closed = await makeOffering(t.ctx, t.providerCustomer, { type: 'Marketplace.Slurm' })
    const { project } = await projectWith(closed)
    await addMember(project, user)
    const support = await makeOffering(t.ctx, t.providerCustomer, {
      type: 'Support.OfferingTemplate',
      pluginOptions: KEEPS,
    })
    const { project: p3 } = await projectWith(support)
    await addMember(p3, user)
    const r = await client(t.app, t.staff.token).get(`${R}?user_uuid=${user.uuid}`)
    assert.deepEqual(r.body, [])
  })

  /** A Create order on the offering placed by the consumer's owner (no consumer review): its record. */
  async function placeByOwner(project: Ref, plan: Ref) {
    const o = await client(t.app, t.owner.token).post('/api/marketplace-orders/', {
      offering: t.offering.url,
      plan: plan.url,
      project: project.url,
      attributes: { name: 'alloc' },
    })
    assert.equal(o.status, 201, o.text)
    return o.body
  }

  /** A new project of the consumer with a member and a manager, and a new plan of the offering. */
  async function staffedProject() {
    const project = await makeProject(t.ctx, t.consumer)
    const plan = await makePlan(t.ctx, t.offering)
    const member = await makeUser(t.ctx)
    const manager = await makeUser(t.ctx)
    await addMember(project, member)
    await addMember(project, manager, 'PROJECT.MANAGER')
    return { project, plan, member, manager }
  }

  test("a Create order reaching the provider gives the project's members accounts, in that transaction", async () => {
    const { project, plan, member, manager } = await staffedProject()
    assert.equal(await accountOf(member), undefined, 'no resource yet')
    // The consumer's owner orders: no consumer review, the order waits for the provider.
    const o = await placeByOwner(project, plan)
    assert.equal(o.state, 'pending-provider')
    for (const u of [member, manager]) assert.equal((await accountOf(u))?.state, 'Requested')
  })

  test("the consumer's approval that brings an order to the provider gives the members accounts", async () => {
    const { project, plan, member, manager } = await staffedProject()
    // The project's manager orders: the order waits for the consumer's review, no account yet.
    const placed = await client(t.app, manager.token).post('/api/marketplace-orders/', {
      offering: t.offering.url,
      plan: plan.url,
      project: project.url,
      attributes: { name: 'alloc' },
    })
    assert.equal(placed.status, 201, placed.text)
    assert.equal(placed.body.state, 'pending-consumer')
    assert.equal(await accountOf(member), undefined)
    const approved = await client(t.app, t.owner.token).post(
      `/api/marketplace-orders/${placed.body.uuid}/approve_by_consumer/`,
    )
    assert.equal(approved.status, 200, approved.text)
    for (const u of [member, manager]) assert.equal((await accountOf(u))?.state, 'Requested')
  })

  test("a Create order's approval gives accounts on its own offering only, not on the project's others", async () => {
    const project = await makeProject(t.ctx, t.consumer)
    const plan = await makePlan(t.ctx, t.offering)
    const member = await makeUser(t.ctx)
    await addMember(project, member)
    // A live resource of another account-keeping offering, placed without the provisioning a
    // resource's order runs: the member has no account on it.
    const other = await makeOffering(t.ctx, t.providerCustomer, {
      type: 'Marketplace.Basic',
      pluginOptions: KEEPS,
    })
    await makeResource(t.ctx, other, project)
    await placeByOwner(project, plan)
    assert.equal((await accountOf(member))?.state, 'Requested')
    assert.equal(await accountOf(member, other), undefined)
  })

  test('usernames by the offering policy: waldur_username, anonymized and full_name', async () => {
    const byUsername = await makeOffering(t.ctx, t.providerCustomer, {
      type: 'Marketplace.Basic',
      pluginOptions: { ...KEEPS, username_generation_policy: 'waldur_username' },
    })
    const anonymized = await makeOffering(t.ctx, t.providerCustomer, {
      type: 'Marketplace.Slurm',
      pluginOptions: {
        ...KEEPS,
        username_generation_policy: 'anonymized',
        username_anonymized_prefix: 'hpc_',
      },
    })
    const byName = await makeOffering(t.ctx, t.providerCustomer, {
      type: 'Marketplace.Slurm',
      pluginOptions: { ...KEEPS, username_generation_policy: 'full_name' },
    })
    const project = await makeProject(t.ctx, t.consumer)
    for (const o of [byUsername, anonymized, byName]) await makeResource(t.ctx, o, project)
    const a = await makeUser(t.ctx, { fullName: 'Jöhn  Doe' })
    const b = await makeUser(t.ctx, { fullName: 'John Doe' })
    await addMember(project, a)
    await addMember(project, b)
    const first = await accountOf(a, byUsername)
    assert.equal(first?.username, a.username)
    assert.equal(first?.state, 'OK')
    assert.equal((await accountOf(a, anonymized))?.username, 'hpc_00000')
    assert.equal((await accountOf(b, anonymized))?.username, 'hpc_00001')
    assert.equal((await accountOf(a, byName))?.username, 'john_doe_00')
    assert.equal((await accountOf(b, byName))?.username, 'john_doe_01')
  })

  test('a revoked role asks for deletion where the offering wants it, and a new grant restores', async () => {
    const offering = await makeOffering(t.ctx, t.providerCustomer, {
      type: 'Marketplace.Slurm',
      pluginOptions: { ...KEEPS, offering_user_auto_deletion: true },
    })
    const { project } = await projectWith(offering)
    const user = await makeUser(t.ctx)
    const waiting = await makeUser(t.ctx)
    await addMember(project, user)
    await addMember(project, waiting)
    const a = (await accountOf(user, offering))!
    const staff = client(t.app, t.staff.token)
    assert.equal((await staff.patch(`${R}${a.uuid}/`, { username: 'u1' })).body.state, 'OK')
    for (const u of [user, waiting]) {
      const r = await staff.post(`/api/projects/${project.uuid}/delete_user/`, {
        user: u.uuid,
        role: 'PROJECT.MEMBER',
      })
      assert.equal(r.status, 204, r.text)
    }
    assert.equal((await accountOf(user, offering))?.state, 'Requested deletion')
    assert.equal((await accountOf(waiting, offering))?.state, 'Deleted', 'never created: simply deleted')
    await addMember(project, user)
    await addMember(project, waiting)
    assert.equal((await accountOf(user, offering))?.state, 'OK', 'its username is known: OK again')
    assert.equal((await accountOf(waiting, offering))?.state, 'Requested')
    // Without the option, a revoked role leaves the account alone.
    const kept = await makeUser(t.ctx)
    const { project: p2 } = await projectWith()
    await addMember(p2, kept)
    await staff.post(`/api/projects/${p2.uuid}/delete_user/`, { user: kept.uuid, role: 'PROJECT.MEMBER' })
    assert.equal((await accountOf(kept))?.state, 'Requested')
  })
})

describe('who sees and changes accounts', () => {
  const setup = async () => {
    const { project } = await projectWith()
    const user = await makeUser(t.ctx)
    await addMember(project, user)
    const a = (await accountOf(user))!
    return { project, user, a }
  }

  test('the user, the provider side and staff/support see it; others do not', async () => {
    const { user, a } = await setup()
    const outsider = await makeUser(t.ctx)
    const otherProvider = await makeUser(t.ctx)
    await grant(t.ctx, otherProvider, 'CUSTOMER.OWNER', {
      type: 'customer',
      id: (await makeCustomer(t.ctx)).id,
    })
    const seers = [
      user,
      t.providerOwner,
      t.providerManager,
      t.providerSupport,
      t.offeringManager,
      t.staff,
      t.support,
    ]
    for (const u of seers) {
      assert.equal((await client(t.app, u.token).get(`${R}${a.uuid}/`)).status, 200, u.username)
      const list = await client(t.app, u.token).get(`${R}?offering_uuid=${t.offering.uuid}&page_size=300`)
      assert.ok(
        list.body.some((x: { uuid: string }) => x.uuid === a.uuid),
        u.username,
      )
    }
    for (const u of [outsider, otherProvider, t.owner]) {
      assert.equal((await client(t.app, u.token).get(`${R}${a.uuid}/`)).status, 404, u.username)
      const list = await client(t.app, u.token).get(`${R}?page_size=300`)
      assert.ok(!list.body.some((x: { uuid: string }) => x.uuid === a.uuid), u.username)
    }
    assert.equal((await client(t.app).get(R)).status, 401)
  })

  test('the provider side moves the account through its states; the user may not', async () => {
    const { user, a } = await setup()
    const agent = client(t.app, t.offeringManager.token)
    const url = `${R}${a.uuid}/`
    assert.equal((await client(t.app, user.token).post(`${url}begin_creating/`)).status, 403)
    assert.equal((await client(t.app, t.providerSupport.token).post(`${url}begin_creating/`)).status, 403)
    const begun = await agent.post(`${url}begin_creating/`)
    assert.equal(begun.status, 200)
    assert.equal(begun.text, '')
    const again = await agent.post(`${url}begin_creating/`)
    assert.equal(again.status, 409)
    assert.deepEqual(again.body, { detail: 'Valid states for operation: Requested, Error creating.' })
    const linking = await agent.post(`${url}set_pending_account_linking/`, {
      comment: 'Link your account',
      comment_url: 'https://idp.example.org/link',
    })
    assert.equal(linking.status, 200)
    let got = (await agent.get(url)).body
    assert.equal(got.state, 'Pending account linking')
    assert.equal(got.service_provider_comment, 'Link your account')
    assert.equal(got.service_provider_comment_url, 'https://idp.example.org/link')
    assert.equal((await agent.post(`${url}set_pending_additional_validation/`)).status, 200)
    assert.equal(
      (await agent.get(url)).body.service_provider_comment,
      'Link your account',
      'kept without a body',
    )
    assert.equal((await agent.post(`${url}set_validation_complete/`)).status, 200)
    got = (await agent.get(url)).body
    assert.equal(got.state, 'OK')
    assert.equal(got.service_provider_comment, '')
    for (const [action, state] of [
      ['request_deletion', 'Requested deletion'],
      ['set_deleting', 'Deleting'],
      ['set_error_deleting', 'Error deleting'],
      ['set_deleting', 'Deleting'],
      ['set_deleted', 'Deleted'],
    ] as const) {
      assert.equal((await agent.post(`${url}${action}/`)).status, 200, action)
      assert.equal((await agent.get(url)).body.state, state)
    }
    assert.equal((await agent.post(`${url}set_ok/`)).status, 409)
    assert.equal((await agent.post(`${R}00000000-0000-0000-0000-000000000000/set_ok/`)).status, 404)
  })

  test("the agent's username flow: begin_creating, then PATCH username makes it OK", async () => {
    const { a } = await setup()
    const agent = client(t.app, t.providerOwner.token)
    await agent.post(`${R}${a.uuid}/begin_creating/`)
    assert.equal((await agent.post(`${R}${a.uuid}/set_error_creating/`)).status, 200)
    assert.equal(
      (await agent.post(`${R}${a.uuid}/begin_creating/`)).status,
      200,
      'retried from Error creating',
    )
    const r = await agent.patch(`${R}${a.uuid}/`, { username: 'ada01' })
    assert.equal(r.status, 200, r.text)
    assert.equal(r.body.username, 'ada01')
    assert.equal(r.body.state, 'OK')
    const filtered = await agent.get(`${R}?offering_uuid=${t.offering.uuid}&state=OK&query=ada01`)
    assert.deepEqual(
      filtered.body.map((x: { uuid: string }) => x.uuid),
      [a.uuid],
    )
  })

  test('restriction, runtime state and comments', async () => {
    const { user, a } = await setup()
    const url = `${R}${a.uuid}/`
    const manager = client(t.app, t.providerManager.token)
    assert.equal(
      (await client(t.app, user.token).post(`${url}update_restricted/`, { is_restricted: true })).status,
      403,
    )
    assert.equal((await manager.post(`${url}update_restricted/`, {})).status, 400)
    assert.equal((await manager.post(`${url}update_restricted/`, { is_restricted: true })).status, 200)
    const restricted = await manager.get(
      `${R}?offering_uuid=${t.offering.uuid}&is_restricted=true&page_size=300`,
    )
    assert.ok(restricted.body.some((x: { uuid: string }) => x.uuid === a.uuid))
    const unrestricted = await manager.get(
      `${R}?offering_uuid=${t.offering.uuid}&is_restricted=false&page_size=300`,
    )
    assert.ok(!unrestricted.body.some((x: { uuid: string }) => x.uuid === a.uuid))
    assert.equal(
      (await manager.post(`${url}update_runtime_state/`, { runtime_state: 'Pending account linking' }))
        .status,
      200,
    )
    assert.equal((await manager.post(`${url}update_runtime_state/`, { runtime_state: 'Gone' })).status, 400)
    const comments = await manager.patch(`${url}update_comments/`, {
      service_provider_comment: 'See the portal',
    })
    assert.equal(comments.status, 200)
    assert.deepEqual(comments.body, {
      service_provider_comment: 'See the portal',
      service_provider_comment_url: '',
    })
    const got = (await manager.get(url)).body
    assert.equal(got.runtime_state, 'Pending account linking')
    assert.equal(got.is_restricted, true)
  })

  test('create: the provider side for an offering that keeps accounts; one account per user', async () => {
    const user = await makeUser(t.ctx)
    const owner = client(t.app, t.providerOwner.token)
    const body = { offering_uuid: t.offering.uuid.replace(/-/g, ''), user_uuid: user.uuid, username: 'made' }
    assert.equal((await client(t.app, t.owner.token).post(R, body)).status, 403)
    const r = await owner.post(R, body)
    assert.equal(r.status, 201, r.text)
    assert.equal(r.body.state, 'OK')
    assert.equal(r.body.username, 'made')
    const dup = await owner.post(R, { offering: t.offering.url, user: user.url })
    assert.equal(dup.status, 400)
    assert.deepEqual(dup.body, { non_field_errors: ['The fields offering, user must make a unique set.'] })
    const both = await owner.post(R, { ...body, offering: t.offering.url })
    assert.equal(both.status, 400)
    assert.equal((await owner.post(R, { username: 'x' })).status, 400)
    assert.deepEqual((await owner.post(R, { offering: 'nope', user_uuid: user.uuid })).body, {
      offering: ['Invalid hyperlink - Incorrect URL match.'],
    })
    const closed = await makeOffering(t.ctx, t.providerCustomer, { type: 'Marketplace.Slurm' })
    const refused = await owner.post(R, { offering: closed.url, user: user.url })
    assert.equal(refused.status, 400)
    assert.deepEqual(refused.body, {
      non_field_errors: ['It is not allowed to create users for current offering.'],
    })
    const requested = await client(t.app, t.offeringManager.token).post(R, {
      offering: t.offering.url,
      user: (await makeUser(t.ctx)).url,
    })
    assert.equal(requested.status, 201)
    assert.equal(requested.body.state, 'Requested')
    // Delete: provider side only.
    assert.equal((await client(t.app, t.providerSupport.token).delete(`${R}${r.body.uuid}/`)).status, 403)
    assert.equal((await owner.delete(`${R}${r.body.uuid}/`)).status, 204)
    assert.equal((await owner.get(`${R}${r.body.uuid}/`)).status, 404)
  })

  test('filters: provider_uuid, user_username ignoring case, state, created; o=username', async () => {
    const { user, a } = await setup()
    const staff = client(t.app, t.staff.token)
    const byProvider = await staff.get(`${R}?provider_uuid=${t.providerCustomer.uuid}&user_uuid=${user.uuid}`)
    assert.deepEqual(
      byProvider.body.map((x: { uuid: string }) => x.uuid),
      [a.uuid],
    )
    const other = await staff.get(`${R}?provider_uuid=${t.consumer.uuid}&user_uuid=${user.uuid}`)
    assert.deepEqual(other.body, [])
    const upper = await staff.get(`${R}?user_username=${user.username.toUpperCase()}`)
    assert.deepEqual(
      upper.body.map((x: { uuid: string }) => x.uuid),
      [a.uuid],
    )
    assert.equal((await staff.get(`${R}?state=Nope`)).status, 400)
    assert.equal((await staff.get(`${R}?created=yesterday`)).status, 400)
    const fields = await staff.get(`${R}?user_uuid=${user.uuid}&field=uuid&field=username&field=state`)
    assert.deepEqual(fields.body, [{ uuid: a.uuid, username: null, state: 'Requested' }])
    assert.equal((await staff.get(`${R}?o=-username&o=user_first_name`)).status, 200)
  })
})

describe('user attribute config', () => {
  const C = (o: OfferingRef) => `/api/marketplace-provider-offerings/${o.uuid}/`

  test('the default exposes username, full name and e-mail; the provider edits it', async () => {
    const offering = await makeOffering(t.ctx, t.providerCustomer, {
      type: 'Marketplace.Slurm',
      pluginOptions: KEEPS,
    })
    const owner = client(t.app, t.providerOwner.token)
    const d = await owner.get(`${C(offering)}user-attribute-config/`)
    assert.equal(d.status, 200)
    assert.equal(d.body.is_default, true)
    assert.deepEqual(d.body.exposed_fields, ['full_name', 'email', 'username'])
    assert.equal(d.body.expose_email, true)
    assert.equal(d.body.expose_phone_number, false)
    assert.equal(d.body.offering_uuid, offering.uuid)
    // Anyone who sees the offering reads it; only who edits it writes it.
    assert.equal((await client(t.app, t.owner.token).get(`${C(offering)}user-attribute-config/`)).status, 200)
    const denied = await client(t.app, t.owner.token).post(`${C(offering)}update-user-attribute-config/`, {})
    assert.equal(denied.status, 403)
    const set = await owner.post(`${C(offering)}update-user-attribute-config/`, {
      expose_email: false,
      expose_affiliations: true,
    })
    assert.equal(set.status, 200, set.text)
    assert.equal(set.body.is_default, false)
    assert.deepEqual(set.body.exposed_fields, ['full_name', 'username', 'affiliations'])
    const patched = await client(t.app, t.offeringManager.token).patch(
      `${C(t.offering)}update-user-attribute-config/`,
      { expose_civil_number: true },
    )
    assert.equal(patched.status, 200)
    assert.deepEqual(patched.body.exposed_fields, ['full_name', 'email', 'username', 'civil_number'])
    const put = await owner.put(`${C(offering)}update-user-attribute-config/`, { expose_gender: true })
    assert.deepEqual(put.body.exposed_fields, ['full_name', 'email', 'username', 'gender'])
    assert.equal((await owner.delete(`${C(offering)}delete-user-attribute-config/`)).status, 204)
    assert.equal((await owner.get(`${C(offering)}user-attribute-config/`)).body.is_default, true)
    assert.equal(
      (
        await owner.get(
          `${C({ ...offering, uuid: '00000000-0000-0000-0000-000000000000' })}user-attribute-config/`,
        )
      ).status,
      404,
    )
    await owner.delete(`${C(t.offering)}delete-user-attribute-config/`)
  })

  test('the provider side reads only the exposed attributes of its users; the user reads all', async () => {
    const offering = await makeOffering(t.ctx, t.providerCustomer, {
      type: 'Marketplace.Slurm',
      pluginOptions: KEEPS,
    })
    const { project } = await projectWith(offering)
    const user = await makeUser(t.ctx, { fullName: 'Grace Hopper', email: 'grace@example.org' })
    await addMember(project, user)
    const owner = client(t.app, t.providerOwner.token)
    await owner.post(`${C(offering)}update-user-attribute-config/`, {
      expose_full_name: false,
      expose_email: false,
    })
    const a = (await owner.get(`${R}?offering_uuid=${offering.uuid}`)).body[0]
    assert.equal(a.user_full_name, '')
    assert.equal(a.user_first_name, '')
    assert.equal(a.user_email, '')
    assert.equal(a.user_username, user.username)
    assert.deepEqual(a.missing_profile_attributes, [])
    assert.equal(a.is_profile_complete, true)
    const own = (await client(t.app, user.token).get(`${R}${a.uuid}/`)).body
    assert.equal(own.user_full_name, 'Grace Hopper')
    await owner.patch(`${C(offering)}update-user-attribute-config/`, { expose_phone_number: true })
    const b = (await owner.get(`${R}${a.uuid}/`)).body
    assert.deepEqual(b.missing_profile_attributes, ['phone_number'])
    assert.equal(b.is_profile_complete, false)
  })
})
