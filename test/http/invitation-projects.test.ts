// auto_create_project gives the requester a new project: a user who names itself after an
// existing project does not get that project; only a project the same invitation created for the
// same user is reused.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { sharedTestApp } from '../support/app.js'
import { client } from '../support/client.js'
import { makeCustomer, makeProject, makeUser, roleUuid } from '../support/fixtures.js'

const INV = '/api/user-group-invitations/'

const t = sharedTestApp()

async function publicInvitation(customerUrl: string) {
  const staff = await makeUser(t.ctx, { staff: true })
  const r = await client(t.app, staff.token).post(INV, {
    role: await roleUuid(t.ctx, 'PROJECT.ADMIN'),
    scope: customerUrl,
    is_public: true,
    auto_create_project: true,
    auto_approve: true,
    project_name_template: '{full_name}',
  })
  assert.equal(r.status, 201, JSON.stringify(r.body))
  return r.body.uuid as string
}

/** The scopes of the active role grants of `user`. */
function activeGrants(user: { id: number }) {
  return t.ctx.db
    .selectFrom('user_roles')
    .select('scope_id')
    .where('user_id', '=', user.id)
    .where('is_active', '=', 1)
    .execute()
}

async function projectsOf(customerId: number) {
  return t.ctx.db
    .selectFrom('projects')
    .select(['id', 'uuid', 'name'])
    .where('customer_id', '=', customerId)
    .orderBy('id')
    .execute()
}

test('a full name equal to an existing project gives a new project, not the existing one', async () => {
  const customer = await makeCustomer(t.ctx)
  const secret = await makeProject(t.ctx, customer, { name: 'Secret research' })
  await makeProject(t.ctx, customer, { name: 'Secret research 2' })
  const inv = await publicInvitation(customer.url)
  const mallory = await makeUser(t.ctx, { fullName: 'Someone' })
  const as = client(t.app, mallory.token)
  const renamed = await as.patch(`/api/users/${mallory.uuid}/`, { full_name: 'Secret research' })
  assert.equal(renamed.status, 200)
  const r = await as.post(`${INV}${inv}/submit_request/`)
  assert.equal(r.status, 200, JSON.stringify(r.body))
  assert.equal(r.body.auto_approved, true)
  assert.equal((await as.get(`/api/projects/${secret.uuid}/`)).status, 404)
  const grants = await activeGrants(mallory)
  assert.equal(grants.length, 1)
  const projects = await projectsOf(customer.id)
  const mine = projects.find((p) => p.id === grants[0]!.scope_id)!
  assert.notEqual(mine.id, secret.id)
  assert.equal(mine.name, 'Secret research 3')
  assert.equal((await as.get(`/api/projects/${mine.uuid}/`)).status, 200)
})

test('an approval reuses only the project the same invitation created for the same user', async () => {
  const customer = await makeCustomer(t.ctx)
  const inv = await publicInvitation(customer.url)
  const ann = await makeUser(t.ctx, { fullName: 'Shared name' })
  const bob = await makeUser(t.ctx, { fullName: 'Shared name' })
  assert.equal((await client(t.app, ann.token).post(`${INV}${inv}/submit_request/`)).status, 200)
  assert.equal((await client(t.app, bob.token).post(`${INV}${inv}/submit_request/`)).status, 200)
  let projects = await projectsOf(customer.id)
  assert.deepEqual(
    projects.map((p) => p.name),
    ['Shared name', 'Shared name 2'],
  )
  // Ann's request ends (no API cancels an approved one) and Ann asks again: her own project again.
  await t.ctx.db
    .updateTable('user_permission_requests')
    .set({ state: 'canceled' })
    .where('created_by_id', '=', ann.id)
    .execute()
  await t.ctx.db.updateTable('user_roles').set({ is_active: 0 }).where('user_id', '=', ann.id).execute()
  t.ctx.actorsChanged()
  assert.equal((await client(t.app, ann.token).post(`${INV}${inv}/submit_request/`)).status, 200)
  projects = await projectsOf(customer.id)
  assert.equal(projects.length, 2)
  const annGrants = await activeGrants(ann)
  assert.deepEqual(
    annGrants.map((g) => g.scope_id),
    [projects[0]!.id],
  )
})

test('a very long rendered name still makes a project', async () => {
  const customer = await makeCustomer(t.ctx)
  const inv = await publicInvitation(customer.url)
  const name = 'N'.repeat(200)
  await makeProject(t.ctx, customer, { name })
  const u = await makeUser(t.ctx, { fullName: name })
  const r = await client(t.app, u.token).post(`${INV}${inv}/submit_request/`)
  assert.equal(r.status, 200, JSON.stringify(r.body))
  assert.deepEqual(
    (await projectsOf(customer.id)).map((p) => p.name),
    [name, `${name} 2`],
  )
})
