import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { sharedTestApp } from '../support/app.js'
import { client } from '../support/client.js'
import { grant, makeCustomer, makeProject, makeUser, roleGraph } from '../support/fixtures.js'

const t = sharedTestApp()

describe('authentication', () => {
  test('missing credentials answer 401 with WWW-Authenticate', async () => {
    const r = await client(t.app).get('/api/customers/')
    assert.equal(r.status, 401)
    assert.deepEqual(r.body, { detail: 'Authentication credentials were not provided.' })
    assert.equal(r.headers['www-authenticate'], 'Token')
  })

  test('an unknown token is 401 Invalid token', async () => {
    const r = await client(t.app, 'nope').get('/api/customers/')
    assert.equal(r.status, 401)
    assert.deepEqual(r.body, { detail: 'Invalid token.' })
  })

  test('Token without a key and keys with spaces are refused', async () => {
    const a = await t.app.inject({ url: '/api/customers/', headers: { authorization: 'Token' } })
    assert.equal(a.statusCode, 401)
    assert.deepEqual(a.json(), { detail: 'Invalid token. No credentials provided.' })
    const b = await t.app.inject({ url: '/api/customers/', headers: { authorization: 'Token a b' } })
    assert.equal(b.statusCode, 401)
    assert.deepEqual(b.json(), { detail: 'Invalid token. Token string should not contain spaces.' })
  })

  test('the keyword is case-insensitive', async () => {
    const u = await makeUser(t.ctx)
    const r = await t.app.inject({ url: '/api/users/me/', headers: { authorization: `token ${u.token}` } })
    assert.equal(r.statusCode, 200)
    assert.equal(r.json().username, u.username)
  })

  test('an inactive user is refused', async () => {
    const u = await makeUser(t.ctx, { active: false })
    const r = await client(t.app, u.token).get('/api/users/me/')
    assert.equal(r.status, 401)
    assert.deepEqual(r.body, { detail: 'User inactive or deleted.' })
  })

  test('tokens are stored hashed, never in clear', async () => {
    const u = await makeUser(t.ctx)
    const rows = await t.ctx.db.selectFrom('tokens').select('key_hash').where('user_id', '=', u.id).execute()
    assert.equal(rows.length, 1)
    assert.notEqual(rows[0]!.key_hash, u.token)
    assert.match(rows[0]!.key_hash, /^[0-9a-f]{64}$/)
  })

  test('password login returns a working token; wrong password is 400', async () => {
    const staff = await makeUser(t.ctx, { staff: true })
    const created = await client(t.app, staff.token).post('/api/users/', {
      username: 'alice',
      password: 'correct horse battery',
      email: 'alice@example.com',
    })
    assert.equal(created.status, 201)
    assert.equal('password' in created.body, false)
    const bad = await client(t.app).post('/api-auth/password/', {
      username: 'alice',
      password: 'wrong-password',
    })
    assert.equal(bad.status, 400)
    assert.deepEqual(bad.body, { non_field_errors: ['Unable to log in with provided credentials.'] })
    const ok = await client(t.app).post('/api-auth/password/', {
      username: 'alice',
      password: 'correct horse battery',
    })
    assert.equal(ok.status, 200)
    const me = await client(t.app, ok.body.token).get('/api/users/me/')
    assert.equal(me.body.username, 'alice')
    const row = await t.ctx.db
      .selectFrom('users')
      .select('password_hash')
      .where('username', '=', 'alice')
      .executeTakeFirst()
    assert.match(row!.password_hash!, /^scrypt\$/)
  })
})

describe('users', () => {
  test('a user sees only itself; staff sees everyone', async () => {
    const a = await makeUser(t.ctx)
    await makeUser(t.ctx)
    const staff = await makeUser(t.ctx, { staff: true })
    const mine = await client(t.app, a.token).get('/api/users/')
    assert.equal(mine.status, 200)
    assert.deepEqual(
      mine.body.map((u: { uuid: string }) => u.uuid),
      [a.uuid],
    )
    const all = await client(t.app, staff.token).get('/api/users/?page_size=300')
    assert.ok(all.body.length >= 3)
  })

  test('only staff create users; usernames are validated', async () => {
    const u = await makeUser(t.ctx)
    const staff = await makeUser(t.ctx, { staff: true })
    assert.equal((await client(t.app, u.token).post('/api/users/', { username: 'bob' })).status, 403)
    const bad = await client(t.app, staff.token).post('/api/users/', { username: 'Bad Name' })
    assert.equal(bad.status, 400)
    assert.ok(bad.body.username)
    const dup = await client(t.app, staff.token).post('/api/users/', { username: u.username })
    assert.equal(dup.status, 400)
    assert.deepEqual(dup.body, { username: ['A user with that username already exists.'] })
  })

  test('a user may change its own name but not its staff flag', async () => {
    const u = await makeUser(t.ctx)
    const as = client(t.app, u.token)
    const ok = await as.patch(`/api/users/${u.uuid}/`, { full_name: 'New Name' })
    assert.equal(ok.status, 200)
    assert.equal(ok.body.full_name, 'New Name')
    const no = await as.patch(`/api/users/${u.uuid}/`, { is_staff: true })
    assert.equal(no.status, 400)
    assert.ok(no.body.is_staff)
  })

  test('password change by the user itself or staff only', async () => {
    const u = await makeUser(t.ctx)
    const other = await makeUser(t.ctx)
    const staff = await makeUser(t.ctx, { staff: true })
    assert.equal(
      (await client(t.app, u.token).post(`/api/users/${u.uuid}/password/`, { password: 'a-long-password' }))
        .status,
      200,
    )
    assert.equal(
      (
        await client(t.app, other.token).post(`/api/users/${u.uuid}/password/`, {
          password: 'a-long-password',
        })
      ).status,
      404,
    )
    assert.equal(
      (
        await client(t.app, staff.token).post(`/api/users/${u.uuid}/password/`, {
          password: 'a-long-password',
        })
      ).status,
      200,
    )
    assert.equal(
      (await client(t.app, u.token).post(`/api/users/${u.uuid}/password/`, { password: 'short' })).status,
      400,
    )
  })
})

describe('customers and projects', () => {
  test('staff creates a customer; owners see it, outsiders get 404', async () => {
    const staff = await makeUser(t.ctx, { staff: true })
    const owner = await makeUser(t.ctx)
    const outsider = await makeUser(t.ctx)
    const c = await client(t.app, staff.token).post('/api/customers/', { name: 'Acme', abbreviation: 'AC' })
    assert.equal(c.status, 201)
    assert.equal(c.body.url, `http://localhost:80/api/customers/${c.body.uuid}/`)
    const added = await client(t.app, staff.token).post(`/api/customers/${c.body.uuid}/add_user/`, {
      user: owner.uuid,
      role: 'CUSTOMER.OWNER',
    })
    assert.equal(added.status, 201)
    assert.equal(added.body.role_name, 'CUSTOMER.OWNER')
    assert.equal((await client(t.app, owner.token).get(`/api/customers/${c.body.uuid}/`)).status, 200)
    assert.equal((await client(t.app, outsider.token).get(`/api/customers/${c.body.uuid}/`)).status, 404)
    assert.equal((await client(t.app, owner.token).post('/api/customers/', { name: 'X' })).status, 403)
  })

  test('owners create projects in their customer, not in others', async () => {
    const g = roleGraph(t.ctx)
    const owner = await g.owner()
    const customer = await g.customer()
    const other = await makeCustomer(t.ctx)
    const as = client(t.app, owner.token)
    const p = await as.post('/api/projects/', { name: 'Research', customer: customer.url })
    assert.equal(p.status, 201)
    assert.equal(p.body.customer_uuid, customer.uuid)
    const hidden = await as.post('/api/projects/', { name: 'Nope', customer: other.url })
    assert.equal(hidden.status, 400)
    assert.deepEqual(hidden.body, { customer: ['Invalid hyperlink - Object does not exist.'] })
    const wrongKind = await as.post('/api/projects/', {
      name: 'Nope',
      customer: `http://x/api/users/${owner.uuid}/`,
    })
    assert.equal(wrongKind.status, 400)
    assert.deepEqual(wrongKind.body, { customer: ['Invalid hyperlink - Incorrect URL match.'] })
  })

  test('project members see their project only; the manager may not add owners', async () => {
    const g = roleGraph(t.ctx)
    const member = await g.member()
    const project = await g.project()
    const customer = await g.customer()
    const sibling = await makeProject(t.ctx, customer)
    const list = await client(t.app, member.token).get('/api/projects/')
    assert.deepEqual(
      list.body.map((p: { uuid: string }) => p.uuid),
      [project.uuid],
    )
    assert.equal((await client(t.app, member.token).get(`/api/projects/${sibling.uuid}/`)).status, 404)
    const manager = await g.manager()
    const target = await makeUser(t.ctx)
    const wrongRole = await client(t.app, manager.token).post(`/api/projects/${project.uuid}/add_user/`, {
      user: target.uuid,
      role: 'CUSTOMER.OWNER',
    })
    assert.equal(wrongRole.status, 400)
    assert.ok(wrongRole.body.role)
    const ok = await client(t.app, manager.token).post(`/api/projects/${project.uuid}/add_user/`, {
      user: target.uuid,
      role: 'PROJECT.MEMBER',
    })
    assert.equal(ok.status, 201)
    const users = await client(t.app, manager.token).get(
      `/api/projects/${project.uuid}/list_users/?role=PROJECT.MEMBER`,
    )
    assert.ok(users.body.some((u: { user_uuid: string }) => u.user_uuid === target.uuid))
    assert.equal(
      (
        await client(t.app, member.token).post(`/api/projects/${project.uuid}/delete_user/`, {
          user: target.uuid,
          role: 'PROJECT.MEMBER',
        })
      ).status,
      403,
    )
    const revoked = await client(t.app, manager.token).post(`/api/projects/${project.uuid}/delete_user/`, {
      user: target.uuid,
      role: 'PROJECT.MEMBER',
    })
    assert.equal(revoked.status, 204)
    assert.equal((await client(t.app, target.token).get(`/api/projects/${project.uuid}/`)).status, 404)
  })

  test('an expired grant stops counting', async () => {
    const customer = await makeCustomer(t.ctx)
    const staff = await makeUser(t.ctx, { staff: true })
    const u = await makeUser(t.ctx)
    const r = await client(t.app, staff.token).post(`/api/customers/${customer.uuid}/add_user/`, {
      user: u.uuid,
      role: 'CUSTOMER.OWNER',
      expiration_time: new Date(t.clock.now().getTime() + 3600_000).toISOString(),
    })
    assert.equal(r.status, 201)
    assert.equal((await client(t.app, u.token).get(`/api/customers/${customer.uuid}/`)).status, 200)
    t.clock.advanceHours(2)
    assert.equal((await client(t.app, u.token).get(`/api/customers/${customer.uuid}/`)).status, 404)
  })

  test('staff deletes an empty customer; one with projects is 409', async () => {
    const staff = await makeUser(t.ctx, { staff: true })
    const busy = await makeCustomer(t.ctx)
    await makeProject(t.ctx, busy)
    assert.equal((await client(t.app, staff.token).delete(`/api/customers/${busy.uuid}/`)).status, 409)
    const empty = await makeCustomer(t.ctx)
    assert.equal((await client(t.app, staff.token).delete(`/api/customers/${empty.uuid}/`)).status, 204)
  })
})

describe('roles and organization groups', () => {
  test('the seven fixed roles are listed', async () => {
    const u = await makeUser(t.ctx)
    const r = await client(t.app, u.token).get('/api/roles/?page_size=50')
    assert.deepEqual(r.body.map((x: { name: string }) => x.name).sort(), [
      'CUSTOMER.MANAGER',
      'CUSTOMER.OWNER',
      'CUSTOMER.SUPPORT',
      'OFFERING.MANAGER',
      'PROJECT.ADMIN',
      'PROJECT.MANAGER',
      'PROJECT.MEMBER',
    ])
  })

  test('organization groups: staff CRUD with parent links; no cycles', async () => {
    const staff = await makeUser(t.ctx, { staff: true })
    const as = client(t.app, staff.token)
    const parent = await as.post('/api/organization-groups/', { name: 'Universities' })
    assert.equal(parent.status, 201)
    const child = await as.post('/api/organization-groups/', { name: 'Tech', parent: parent.body.url })
    assert.equal(child.status, 201)
    assert.equal(child.body.parent_uuid, parent.body.uuid)
    const cycle = await as.patch(`/api/organization-groups/${parent.body.uuid}/`, { parent: child.body.url })
    assert.equal(cycle.status, 400)
    const c = await as.post('/api/customers/', { name: 'In group', organization_groups: [child.body.url] })
    assert.equal(c.status, 201)
    assert.deepEqual(c.body.organization_groups, [child.body.url])
    const u = await makeUser(t.ctx)
    assert.equal((await client(t.app, u.token).post('/api/organization-groups/', { name: 'x' })).status, 403)
  })
})

describe('permission decisions for every role', () => {
  const cases: [string, number, number][] = [
    // role, GET customer, PATCH customer
    ['staff', 200, 200],
    ['support', 200, 403],
    ['owner', 200, 200],
    ['admin', 200, 403],
    ['manager', 200, 403],
    ['member', 200, 403],
    ['outsider', 404, 404],
  ]
  for (const [role, read, write] of cases) {
    test(`${role}: customer read ${read}, write ${write}`, async () => {
      const g = roleGraph(t.ctx)
      const customer = await g.customer()
      const user =
        role === 'staff'
          ? await g.staff()
          : role === 'support'
            ? await g.support()
            : role === 'owner'
              ? await g.owner()
              : role === 'outsider'
                ? await g.outsider()
                : await g.projectRole(`PROJECT.${role.toUpperCase()}` as 'PROJECT.ADMIN')
      const as = client(t.app, user.token)
      assert.equal((await as.get(`/api/customers/${customer.uuid}/`)).status, read)
      assert.equal(
        (await as.patch(`/api/customers/${customer.uuid}/`, { email: 'x@example.com' })).status,
        write,
      )
    })
  }

  test('a customer manager (service provider) role grants no consumer project rights', async () => {
    const customer = await makeCustomer(t.ctx)
    const u = await makeUser(t.ctx)
    await grant(t.ctx, u, 'CUSTOMER.MANAGER', { type: 'customer', id: customer.id })
    const r = await client(t.app, u.token).post('/api/projects/', { name: 'p', customer: customer.url })
    assert.equal(r.status, 403)
  })
})
