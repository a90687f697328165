// The events of group invitations (created, canceled, deleted, accepted) and of role grants that
// end by expiring, read back through GET /api/events/ with its filters, and who sees them.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { buildTestApp, type TestApp } from '../support/app.js'
import { client } from '../support/client.js'
import {
  grant,
  makeCustomer,
  makeProject,
  makeUser,
  roleUuid,
  type Ref,
  type UserRef,
} from '../support/fixtures.js'
import { EXPIRE_GRANTS_JOB } from '../../src/areas/directory/service.js'

let t: TestApp
let customer: Ref
let project: Ref
let users: Record<'staff' | 'owner' | 'member' | 'outsider', UserRef>

before(async () => {
  t = await buildTestApp()
  customer = await makeCustomer(t.ctx, 'Invitations events org')
  project = await makeProject(t.ctx, customer, { name: 'Invitations events project' })
  users = {
    staff: await makeUser(t.ctx, { staff: true }),
    owner: await makeUser(t.ctx),
    member: await makeUser(t.ctx),
    outsider: await makeUser(t.ctx),
  }
  await grant(t.ctx, users.owner, 'CUSTOMER.OWNER', { type: 'customer', id: customer.id })
  await grant(t.ctx, users.member, 'PROJECT.MEMBER', { type: 'project', id: project.id })
})
after(() => t.close())

const as = (u: UserRef) => client(t.app, u.token)

async function eventsOf(who: UserRef, query = ''): Promise<any[]> {
  const r = await as(who).get(`/api/events/?page_size=300${query}`)
  assert.equal(r.status, 200, JSON.stringify(r.body))
  return r.body
}

async function headPosition(): Promise<number> {
  const r = await as(users.staff).get('/api/events/?page=last&page_size=1')
  return r.body.length ? r.body[0].position : 0
}

async function invitation(body: Record<string, unknown> = {}): Promise<string> {
  const r = await as(users.owner).post('/api/user-group-invitations/', {
    role: await roleUuid(t.ctx, 'CUSTOMER.MANAGER'),
    scope: customer.url,
    ...body,
  })
  assert.equal(r.status, 201, JSON.stringify(r.body))
  return r.body.uuid
}

describe('invitation events', () => {
  test('created, canceled and deleted are told with their states, to who may read the invitation', async () => {
    const from = await headPosition()
    const uuid = await invitation()
    assert.equal((await as(users.owner).post(`/api/user-group-invitations/${uuid}/cancel/`)).status, 200)
    // Read while the invitation exists: its events are seen as the invitation is.
    const q = `&after=${from}&object_type=invitation&customer_uuid=${customer.uuid}`
    const seen = await eventsOf(users.owner, q)
    assert.deepEqual(
      seen.map((e) => [e.type, e.data.state_before, e.data.state_after]),
      [
        ['user_group_invitation.created', null, 'pending'],
        ['user_group_invitation.state_changed', 'pending', 'canceled'],
      ],
    )
    const created = seen[0]
    assert.equal(created.data.uuid, uuid)
    assert.equal(created.data.url, `http://localhost:80/api/user-group-invitations/${uuid}/`)
    assert.equal(created.data.customer_uuid, customer.uuid)
    assert.equal(created.data.project_uuid, null)
    assert.equal(created.data.scope_type, 'customer')
    assert.equal(created.data.scope_uuid, customer.uuid)
    assert.equal(created.data.role_name, 'CUSTOMER.MANAGER')
    // A role in the scope reads the invitation, so its events; an outsider neither.
    assert.equal((await eventsOf(users.member, q)).length, 2)
    assert.equal((await eventsOf(users.outsider, q)).length, 0)

    assert.equal((await as(users.owner).delete(`/api/user-group-invitations/${uuid}/`)).status, 204)
    const all = await eventsOf(users.staff, `${q}&type=user_group_invitation.deleted`)
    assert.deepEqual(
      all.map((e) => [e.data.uuid, e.data.state_before, e.data.state_after]),
      [[uuid, 'canceled', null]],
    )
    // Gone: its events are staff's and support's only.
    assert.equal((await eventsOf(users.owner, q)).length, 0)
  })

  test('a refused cancel or delete tells nothing', async () => {
    const uuid = await invitation()
    const from = await headPosition()
    assert.equal((await as(users.owner).delete(`/api/user-group-invitations/${uuid}/`)).status, 400)
    assert.equal((await as(users.owner).post(`/api/user-group-invitations/${uuid}/cancel/`)).status, 200)
    assert.equal((await as(users.owner).post(`/api/user-group-invitations/${uuid}/cancel/`)).status, 400)
    assert.deepEqual(
      (await eventsOf(users.staff, `&after=${from}&object_type=invitation`)).map((e) => e.type),
      ['user_group_invitation.state_changed'],
    )
  })

  test('an approved request tells that the invitation was accepted, naming the request', async () => {
    const uuid = await invitation()
    const requester = await makeUser(t.ctx)
    const from = await headPosition()
    const submitted = await as(requester).post(`/api/user-group-invitations/${uuid}/submit_request/`)
    assert.equal(submitted.status, 200, JSON.stringify(submitted.body))
    const request = submitted.body.uuid
    const approved = await as(users.owner).post(`/api/user-permission-requests/${request}/approve/`)
    assert.equal(approved.status, 200, JSON.stringify(approved.body))
    const accepted = await eventsOf(users.owner, `&after=${from}&type=user_group_invitation.accepted`)
    assert.deepEqual(
      accepted.map((e) => [
        e.data.uuid,
        e.data.state_before,
        e.data.state_after,
        e.data.permission_request_uuid,
      ]),
      [[uuid, 'pending', 'pending', request]],
    )
    // In the order of the change: the request approved, the invitation accepted, the role granted.
    const types = (await eventsOf(users.staff, `&after=${from}`)).map((e) => e.type)
    assert.deepEqual(types, [
      'user_permission_request.created',
      'user_permission_request.state_changed',
      'user_group_invitation.accepted',
      'role.granted',
    ])
  })

  test('an auto-approving invitation is accepted as the request is made', async () => {
    const uuid = await invitation({ auto_approve: true })
    const requester = await makeUser(t.ctx)
    const from = await headPosition()
    const submitted = await as(requester).post(`/api/user-group-invitations/${uuid}/submit_request/`)
    assert.equal(submitted.status, 200, JSON.stringify(submitted.body))
    const accepted = await eventsOf(users.staff, `&after=${from}&object_type=invitation`)
    assert.deepEqual(
      accepted.map((e) => [e.type, e.data.permission_request_uuid]),
      [['user_group_invitation.accepted', submitted.body.uuid]],
    )
  })

  test("a project invitation's events carry the project", async () => {
    const from = await headPosition()
    const r = await as(users.owner).post('/api/user-group-invitations/', {
      role: await roleUuid(t.ctx, 'PROJECT.MEMBER'),
      scope: project.url,
    })
    assert.equal(r.status, 201, JSON.stringify(r.body))
    const seen = await eventsOf(
      users.member,
      `&after=${from}&project_uuid=${project.uuid}&object_type=invitation`,
    )
    assert.deepEqual(
      seen.map((e) => [e.type, e.data.uuid, e.data.scope_uuid]),
      [['user_group_invitation.created', r.body.uuid, project.uuid]],
    )
  })
})

describe('grants that expire', () => {
  test('the expiry job ends a grant when its time comes and tells role.revoked', async () => {
    const someone = await makeUser(t.ctx)
    const expires = new Date(t.clock.now().getTime() + 3600_000).toISOString()
    const add = await as(users.owner).post(`/api/projects/${project.uuid}/add_user/`, {
      user: someone.uuid,
      role: 'PROJECT.MEMBER',
      expiration_time: expires,
    })
    assert.equal(add.status, 201, JSON.stringify(add.body))
    const from = await headPosition()
    // Not due yet: the job waits, the grant stays.
    await t.ctx.jobs.drain()
    assert.deepEqual(await eventsOf(users.staff, `&after=${from}&type=role.revoked`), [])

    t.clock.advanceHours(2)
    await t.ctx.jobs.drain()
    const revoked = await eventsOf(
      users.owner,
      `&after=${from}&type=role.revoked&project_uuid=${project.uuid}`,
    )
    assert.deepEqual(
      revoked.map((e) => [e.data.uuid, e.data.user_uuid, e.data.role_name, e.data.scope_uuid]),
      [[add.body.uuid, someone.uuid, 'PROJECT.MEMBER', project.uuid]],
    )
    assert.equal(revoked[0].data.expiration_time, expires)
    assert.equal(revoked[0].data.customer_uuid, customer.uuid)
    // The user saw their grant end; it is ended, not only hidden: a new grant may be made.
    assert.equal((await eventsOf(someone, `&after=${from}&type=role.revoked`)).length, 1)
    const again = await as(users.owner).post(`/api/projects/${project.uuid}/add_user/`, {
      user: someone.uuid,
      role: 'PROJECT.MEMBER',
    })
    assert.equal(again.status, 201, JSON.stringify(again.body))
    // A second run finds nothing more to end.
    await t.ctx.jobs.enqueue(t.ctx.db, EXPIRE_GRANTS_JOB, {})
    await t.ctx.jobs.drain()
    assert.equal((await eventsOf(users.staff, `&after=${from}&type=role.revoked`)).length, 1)
  })
})
