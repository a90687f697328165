// One active grant per (user, role, scope): racing add_user calls give one 201 and 400s naming the
// problem; delete_user ends every active grant of the triple, duplicates from before included.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { sharedTestApp } from '../support/app.js'
import { client } from '../support/client.js'
import { makeCustomer, makeProject, makeUser } from '../support/fixtures.js'
import { up as oneActiveGrant } from '../../src/db/migrations/2026-11-26T1100_one_active_grant.js'

const t = sharedTestApp()

async function activeGrants(userId: number, scopeId: number) {
  return t.ctx.db
    .selectFrom('user_roles')
    .select('id')
    .where('user_id', '=', userId)
    .where('scope_type', '=', 'project')
    .where('scope_id', '=', scopeId)
    .where('is_active', '=', 1)
    .execute()
}

/** A new project and user and the role `name`: `row` is an active grant of that triple. */
async function triple(name: string) {
  const project = await makeProject(t.ctx, await makeCustomer(t.ctx))
  const target = await makeUser(t.ctx)
  const role = await t.ctx.db
    .selectFrom('roles')
    .select('id')
    .where('name', '=', name)
    .executeTakeFirstOrThrow()
  const row = (uuid: string) => ({
    uuid,
    user_id: target.id,
    role_id: role.id,
    scope_type: 'project',
    scope_id: project.id,
    is_active: 1,
    created: t.ctx.clock().toISOString(),
  })
  return { project, target, row }
}

test('concurrent add_user for one triple: one 201, the rest 400, one active grant', async () => {
  const staff = await makeUser(t.ctx, { staff: true })
  const project = await makeProject(t.ctx, await makeCustomer(t.ctx))
  const target = await makeUser(t.ctx)
  const as = client(t.app, staff.token)
  const results = await Promise.all(
    Array.from({ length: 20 }, () =>
      as.post(`/api/projects/${project.uuid}/add_user/`, { user: target.uuid, role: 'PROJECT.ADMIN' }),
    ),
  )
  const statuses = results.map((r) => r.status).sort()
  assert.deepEqual(statuses, [201, ...Array<number>(19).fill(400)])
  for (const r of results.filter((x) => x.status === 400)) {
    assert.deepEqual(r.body, { non_field_errors: ['User already has this role in this scope.'] })
  }
  assert.equal((await activeGrants(target.id, project.id)).length, 1)
  const revoked = await as.post(`/api/projects/${project.uuid}/delete_user/`, {
    user: target.uuid,
    role: 'PROJECT.ADMIN',
  })
  assert.equal(revoked.status, 204)
  assert.equal((await client(t.app, target.token).get(`/api/projects/${project.uuid}/`)).status, 404)
  // Revoked, the role can be granted again.
  const again = await as.post(`/api/projects/${project.uuid}/add_user/`, {
    user: target.uuid,
    role: 'PROJECT.ADMIN',
  })
  assert.equal(again.status, 201)
})

test('the database refuses a second active grant of a triple', async () => {
  const { row } = await triple('PROJECT.MEMBER')
  await t.ctx.db.insertInto('user_roles').values(row(t.ctx.newUuid())).execute()
  await assert.rejects(t.ctx.db.insertInto('user_roles').values(row(t.ctx.newUuid())).execute())
  // An ended grant does not count.
  await t.ctx.db
    .insertInto('user_roles')
    .values({ ...row(t.ctx.newUuid()), is_active: 0 })
    .execute()
})

test('the migration ends duplicates left from before, and delete_user then revokes for good', async () => {
  const staff = await makeUser(t.ctx, { staff: true })
  const { project, target, row } = await triple('PROJECT.MANAGER')
  // The state of a database before the rule: no index, two active rows for one triple.
  await t.ctx.db.schema.dropIndex('user_roles_one_active_idx').execute()
  for (let i = 0; i < 2; i++) {
    await t.ctx.db.insertInto('user_roles').values(row(t.ctx.newUuid())).execute()
  }
  assert.equal((await activeGrants(target.id, project.id)).length, 2)
  await oneActiveGrant(t.ctx.db)
  assert.equal((await activeGrants(target.id, project.id)).length, 1)
  t.ctx.actorsChanged()
  const revoked = await client(t.app, staff.token).post(`/api/projects/${project.uuid}/delete_user/`, {
    user: target.uuid,
    role: 'PROJECT.MANAGER',
  })
  assert.equal(revoked.status, 204)
  assert.equal((await activeGrants(target.id, project.id)).length, 0)
  assert.equal((await client(t.app, target.token).get(`/api/projects/${project.uuid}/`)).status, 404)
})
