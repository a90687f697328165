import { before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { sharedTestApp } from '../support/app.js'
import { client } from '../support/client.js'
import {
  grant,
  makeCustomer,
  makeProject,
  makeUser,
  roleGraph,
  type Ref,
  type UserRef,
  withStaff,
} from '../support/fixtures.js'

const INV = '/api/user-group-invitations/'
const REQ = '/api/user-permission-requests/'
const HOST = 'http://localhost:80'

const t = sharedTestApp(async (t) => {
  const rows = await t.ctx.db.selectFrom('roles').select(['name', 'uuid']).execute()
  return { ...(await withStaff(t)), roles: Object.fromEntries(rows.map((r) => [r.name, r.uuid])) }
})

/** `as` posts an invitation to the role `role` on `scope`, with `extra` fields: the response. */
function postInvitation(
  as: UserRef,
  role: string,
  scope: { url: string },
  extra: Record<string, unknown> = {},
) {
  return client(t.app, as.token).post(INV, { role: t.roles[role], scope: scope.url, ...extra })
}

/** The same, which must answer 201: the invitation created. */
async function invite(
  as: UserRef,
  role: string,
  scope: { url: string },
  extra: Record<string, unknown> = {},
) {
  const r = await postInvitation(as, role, scope, extra)
  assert.equal(r.status, 201, JSON.stringify(r.body))
  return r.body
}

async function ownedCustomer() {
  const c = await makeCustomer(t.ctx)
  const owner = await makeUser(t.ctx, { fullName: 'Olga Owner' })
  await grant(t.ctx, owner, 'CUSTOMER.OWNER', { type: 'customer', id: c.id })
  return { c, owner }
}

/** A new customer, its owner, and the owner's invitation to `role` on it (with `extra` fields). */
async function customerInvitation(role: string, extra: Record<string, unknown> = {}) {
  const { c, owner } = await ownedCustomer()
  const inv = await invite(owner, role, c, extra)
  return { c, owner, inv }
}

/** The one project of customer `c` (made by an invitation's auto_create_project). */
function projectOf(c: { id: number }) {
  return t.ctx.db
    .selectFrom('projects')
    .select(['id', 'name'])
    .where('customer_id', '=', c.id)
    .executeTakeFirstOrThrow()
}

async function roleOf(user: UserRef, scopeType: string, scopeId: number) {
  return t.ctx.db
    .selectFrom('user_roles')
    .innerJoin('roles', 'roles.id', 'user_roles.role_id')
    .select('roles.name')
    .where('user_id', '=', user.id)
    .where('scope_type', '=', scopeType)
    .where('scope_id', '=', scopeId)
    .execute()
    .then((rs) => rs.map((r) => r.name))
}

describe('creating invitations', () => {
  test('a customer owner creates a customer invitation and gets the full record', async () => {
    const { c, owner } = await ownedCustomer()
    const r = await postInvitation(owner, 'CUSTOMER.MANAGER', c)
    assert.equal(r.status, 201)
    assert.deepEqual(r.body, {
      scope_uuid: c.uuid,
      scope_name: c.name,
      scope_description: '',
      scope_type: 'customer',
      scope_image: null,
      customer_uuid: c.uuid,
      customer_name: c.name,
      role_name: 'CUSTOMER.MANAGER',
      role_description: 'Service provider manager',
      created_by_full_name: 'Olga Owner',
      created_by_username: r.body.created_by_username,
      created_by_image: null,
      url: `${HOST}${INV}${r.body.uuid}/`,
      uuid: r.body.uuid,
      role: t.roles['CUSTOMER.MANAGER'],
      created: t.clock.now().toISOString(),
      is_active: true,
      is_public: false,
      auto_create_project: false,
      auto_approve: false,
      project_name_template: '',
      project_role: null,
      user_affiliations: [],
      user_email_patterns: [],
      user_identity_sources: [],
    })
    const got = await client(t.app, owner.token).get(`${INV}${r.body.uuid}/`)
    assert.deepEqual(got.body, r.body)
  })

  test('a project manager invites to the project; a project member may not', async () => {
    const g = roleGraph(t.ctx)
    const project = await g.project()
    const mgr = await g.projectRole('PROJECT.MANAGER')
    const inv = await invite(mgr, 'PROJECT.MEMBER', project)
    assert.equal(inv.scope_type, 'project')
    assert.equal(inv.scope_uuid, project.uuid)
    const member = await g.projectRole('PROJECT.MEMBER')
    const r = await postInvitation(member, 'PROJECT.MEMBER', project)
    assert.equal(r.status, 403)
  })

  test('role and scope must be of the same kind', async () => {
    const { c, owner } = await ownedCustomer()
    const r = await postInvitation(owner, 'PROJECT.ADMIN', c)
    assert.equal(r.status, 400)
    assert.deepEqual(r.body, { non_field_errors: ['Role and scope should belong to the same content type.'] })
    // ... except a project role on a customer with auto_create_project.
    const ok = await postInvitation(owner, 'PROJECT.ADMIN', c, { auto_create_project: true })
    assert.equal(ok.status, 201)
  })

  test('bad scope and role values are 400 on their field', async () => {
    const { c, owner } = await ownedCustomer()
    const a = await client(t.app, owner.token).post(INV, {
      role: t.roles['CUSTOMER.OWNER'],
      scope: `${HOST}/api/users/x/`,
    })
    assert.equal(a.status, 400)
    assert.deepEqual(a.body, { scope: ['Invalid hyperlink - Incorrect URL match.'] })
    const b = await client(t.app, owner.token).post(INV, {
      role: t.roles['CUSTOMER.OWNER'],
      scope: `${HOST}/api/customers/00000000-0000-0000-0000-000000000000/`,
    })
    assert.deepEqual(b.body, { scope: ['Invalid hyperlink - Object does not exist.'] })
    const d = await client(t.app, owner.token).post(INV, { role: 'nope', scope: c.url })
    assert.equal(d.status, 400)
    assert.ok(d.body.role)
  })

  test('only staff create public invitations, which need auto_create_project and a project role', async () => {
    const { c, owner } = await ownedCustomer()
    const a = await postInvitation(owner, 'PROJECT.ADMIN', c, { is_public: true, auto_create_project: true })
    assert.equal(a.status, 400)
    assert.deepEqual(a.body, { is_public: ['Only staff users can create public invitations.'] })
    const b = await postInvitation(t.staff, 'PROJECT.ADMIN', c, { is_public: true })
    assert.equal(b.status, 400)
    assert.ok(b.body.auto_create_project)
    const d = await postInvitation(t.staff, 'CUSTOMER.OWNER', c, {
      is_public: true,
      auto_create_project: true,
    })
    assert.equal(d.status, 400)
    assert.ok(d.body.role)
    const ok = await invite(t.staff, 'PROJECT.ADMIN', c, {
      is_public: true,
      auto_create_project: true,
    })
    assert.equal(ok.is_public, true)
  })

  test('auto_create_project rules for project_role', async () => {
    const { c, owner } = await ownedCustomer()
    const a = await postInvitation(owner, 'CUSTOMER.MANAGER', c, { auto_create_project: true })
    assert.equal(a.status, 400)
    assert.ok(a.body.project_role)
    const b = await postInvitation(owner, 'CUSTOMER.MANAGER', c, {
      auto_create_project: true,
      project_role: t.roles['CUSTOMER.OWNER'],
    })
    assert.deepEqual(b.body, { project_role: ['project_role must be a project-level role'] })
  })

  test('project_name_template accepts only {username}, {email}, {full_name}', async () => {
    const { c, owner } = await ownedCustomer()
    const bad = await postInvitation(owner, 'CUSTOMER.MANAGER', c, {
      project_name_template: '{username}-{organization}',
    })
    assert.equal(bad.status, 400)
    assert.deepEqual(bad.body, {
      project_name_template: [
        'Unknown placeholders: {organization}. Allowed: {username}, {email}, {full_name}.',
      ],
    })
    const ok = await invite(owner, 'CUSTOMER.MANAGER', c, {
      project_name_template: '{username} {email} {full_name}',
    })
    assert.equal(ok.project_name_template, '{username} {email} {full_name}')
  })

  test('user_email_patterns must be valid, short and of bounded size', async () => {
    const { c, owner } = await ownedCustomer()
    const r = await postInvitation(owner, 'CUSTOMER.MANAGER', c, {
      user_email_patterns: ['.*@ok\\.org', '(a+)+@x', '([', 'x'.repeat(201), '(?:a{0,40}){0,40}'],
    })
    assert.equal(r.status, 400)
    assert.equal(r.body.user_email_patterns.length, 3)
    const notList = await postInvitation(owner, 'CUSTOMER.MANAGER', c, { user_affiliations: 'staff' })
    assert.equal(notList.status, 400)
    assert.ok(notList.body.user_affiliations)
  })
})

describe('visibility, filters, cancel and delete', () => {
  let c: Ref
  let owner: UserRef
  let priv: any
  let pub: any
  let projInv: any
  let project: Ref
  before(async () => {
    ;({ c, owner } = await ownedCustomer())
    project = await makeProject(t.ctx, c)
    priv = await invite(owner, 'CUSTOMER.MANAGER', c)
    t.clock.advanceHours(1)
    pub = await invite(t.staff, 'PROJECT.ADMIN', c, {
      is_public: true,
      auto_create_project: true,
    })
    t.clock.advanceHours(1)
    projInv = await invite(owner, 'PROJECT.MEMBER', project)
  })

  test('anonymous callers see only public active invitations, without the creator', async () => {
    const list = await client(t.app).get(`${INV}?customer_uuid=${c.uuid}`)
    assert.equal(list.status, 200)
    assert.deepEqual(
      list.body.map((i: any) => i.uuid),
      [pub.uuid],
    )
    assert.equal(list.body[0].created_by_username, null)
    assert.equal(list.body[0].created_by_full_name, null)
    assert.equal((await client(t.app).get(`${INV}${pub.uuid}/`)).status, 200)
    assert.equal((await client(t.app).get(`${INV}${priv.uuid}/`)).status, 404)
    // Staff and the customer owner see the creator of public invitations.
    const asOwner = await client(t.app, owner.token).get(`${INV}${pub.uuid}/`)
    assert.notEqual(asOwner.body.created_by_username, null)
  })

  test('authenticated outsiders list and retrieve public ones only', async () => {
    const outsider = await makeUser(t.ctx)
    const list = await client(t.app, outsider.token).get(`${INV}?customer_uuid=${c.uuid}`)
    assert.deepEqual(
      list.body.map((i: any) => i.uuid),
      [pub.uuid],
    )
    assert.equal((await client(t.app, outsider.token).get(`${INV}${priv.uuid}/`)).status, 404)
    assert.equal((await client(t.app, outsider.token).get(`${INV}${pub.uuid}/`)).status, 200)
    const ownerList = await client(t.app, owner.token).get(`${INV}?customer_uuid=${c.uuid}`)
    assert.deepEqual(
      ownerList.body.map((i: any) => i.uuid),
      [projInv.uuid, pub.uuid, priv.uuid],
    )
  })

  test('filters and ordering', async () => {
    const as = client(t.app, t.staff.token)
    const uuids = async (qs: string) => {
      const r = await as.get(`${INV}?customer_uuid=${c.uuid}&${qs}`)
      assert.equal(r.status, 200, JSON.stringify(r.body))
      return r.body.map((i: any) => i.uuid)
    }
    assert.deepEqual(await uuids('is_public=true'), [pub.uuid])
    assert.deepEqual(await uuids('is_public=false'), [projInv.uuid, priv.uuid])
    assert.deepEqual(await uuids('role_name=CUSTOMER.MANAGER'), [priv.uuid])
    assert.deepEqual(await uuids(`role_uuid=${t.roles['PROJECT.MEMBER']}`), [projInv.uuid])
    assert.deepEqual(await uuids('scope_type=project'), [projInv.uuid])
    assert.deepEqual(await uuids('scope_type=customer'), [pub.uuid, priv.uuid])
    assert.deepEqual(await uuids('scope_type=planet'), [projInv.uuid, pub.uuid, priv.uuid])
    assert.deepEqual(await uuids('o=created'), [priv.uuid, pub.uuid, projInv.uuid])
    assert.deepEqual(await uuids('is_active=false'), [])
    const other = await makeCustomer(t.ctx)
    assert.deepEqual((await as.get(`${INV}?customer_uuid=${other.uuid}`)).body, [])
    assert.equal((await as.get(`${INV}?o=role`)).status, 400)
  })

  test('projects/ lists the customer projects; a project-scoped invitation gives 404', async () => {
    const r = await client(t.app, owner.token).get(`${INV}${priv.uuid}/projects/`)
    assert.equal(r.status, 200)
    assert.deepEqual(r.body, [{ uuid: project.uuid, url: `${HOST}/api/projects/${project.uuid}/` }])
    const p = await client(t.app, owner.token).get(`${INV}${projInv.uuid}/projects/`)
    assert.equal(p.status, 404)
    assert.equal(p.text, '')
  })

  test('cancel then delete; wrong order is a 400; outsiders get 404', async () => {
    const inv = await invite(owner, 'CUSTOMER.SUPPORT', c)
    const as = client(t.app, owner.token)
    const outsider = await makeUser(t.ctx)
    assert.equal((await client(t.app, outsider.token).post(`${INV}${inv.uuid}/cancel/`)).status, 404)
    const del = await as.delete(`${INV}${inv.uuid}/`)
    assert.equal(del.status, 400)
    assert.deepEqual(del.body, { non_field_errors: ['Only canceled invitation can be deleted.'] })
    const cancel = await as.post(`${INV}${inv.uuid}/cancel/`)
    assert.equal(cancel.status, 200)
    assert.equal(cancel.text, '')
    assert.equal((await as.get(`${INV}${inv.uuid}/`)).body.is_active, false)
    const again = await as.post(`${INV}${inv.uuid}/cancel/`)
    assert.equal(again.status, 400)
    assert.deepEqual(again.body, { non_field_errors: ['Only pending invitation can be canceled.'] })
    assert.equal((await as.delete(`${INV}${inv.uuid}/`)).status, 204)
    assert.equal((await as.get(`${INV}${inv.uuid}/`)).status, 404)
  })
})

describe('submit_request', () => {
  test('a matching user is auto-approved and gets the role on the scope', async () => {
    const { c, inv } = await customerInvitation('CUSTOMER.SUPPORT', {
      auto_approve: true,
      user_email_patterns: ['.*@uni\\.edu'],
    })
    const user = await makeUser(t.ctx, { email: 'ann@uni.edu' })
    const r = await client(t.app, user.token).post(`${INV}${inv.uuid}/submit_request/`)
    assert.equal(r.status, 200)
    assert.deepEqual(r.body, {
      uuid: r.body.uuid,
      scope_name: c.name,
      scope_uuid: c.uuid,
      auto_approved: true,
    })
    assert.deepEqual(await roleOf(user, 'customer', c.id), ['CUSTOMER.SUPPORT'])
    const req = await client(t.app, user.token).get(`${REQ}${r.body.uuid}/`)
    assert.equal(req.body.state, 'approved')
    // Same role again → refused.
    const again = await client(t.app, user.token).post(`${INV}${inv.uuid}/submit_request/`)
    assert.deepEqual(again.body, { non_field_errors: ['User already has this role in the scope.'] })
  })

  test('matching by affiliation or identity source; nobody matching is refused; patterns match the whole address', async () => {
    const { inv } = await customerInvitation('CUSTOMER.SUPPORT', {
      auto_approve: true,
      user_email_patterns: ['uni\\.edu'],
      user_affiliations: ['faculty'],
      user_identity_sources: ['eduGAIN'],
    })
    const byAff = await makeUser(t.ctx, { affiliations: ['faculty', 'x'] })
    const bySource = await makeUser(t.ctx, { identitySource: 'eduGAIN' })
    const nobody = await makeUser(t.ctx, { email: 'bob@uni.edu', affiliations: ['student'] })
    for (const u of [byAff, bySource]) {
      const r = await client(t.app, u.token).post(`${INV}${inv.uuid}/submit_request/`)
      assert.equal(r.status, 200, JSON.stringify(r.body))
      assert.equal(r.body.auto_approved, true)
    }
    const r = await client(t.app, nobody.token).post(`${INV}${inv.uuid}/submit_request/`)
    assert.equal(r.status, 400)
    assert.deepEqual(r.body, {
      non_field_errors: [
        'You are not allowed to accept this invitation. Your email or organization must match the invitation restrictions.',
      ],
    })
  })

  test('auto_create_project creates the templated project and grants project_role there', async () => {
    const { c, inv } = await customerInvitation('CUSTOMER.MANAGER', {
      auto_approve: true,
      auto_create_project: true,
      project_role: t.roles['PROJECT.ADMIN'],
      project_name_template: '{full_name} ({username}) {email}',
    })
    const user = await makeUser(t.ctx, { username: 'ann', fullName: 'Ann Lee', email: 'ann@x.org' })
    const r = await client(t.app, user.token).post(`${INV}${inv.uuid}/submit_request/`)
    assert.equal(r.status, 200)
    assert.equal(r.body.auto_approved, true)
    const p = await projectOf(c)
    assert.equal(p.name, 'Ann Lee (ann) ann@x.org')
    assert.deepEqual(await roleOf(user, 'project', p.id), ['PROJECT.ADMIN'])
    assert.deepEqual(await roleOf(user, 'customer', c.id), [])
  })

  test('an empty template names the project <username>_project and role is used without project_role', async () => {
    const { c } = await ownedCustomer()
    const inv = await invite(t.staff, 'PROJECT.MEMBER', c, {
      is_public: true,
      auto_approve: true,
      auto_create_project: true,
    })
    const user = await makeUser(t.ctx, { username: 'bo' })
    const r = await client(t.app, user.token).post(`${INV}${inv.uuid}/submit_request/`)
    assert.equal(r.status, 200)
    const p = await projectOf(c)
    assert.equal(p.name, 'bo_project')
    assert.deepEqual(await roleOf(user, 'project', p.id), ['PROJECT.MEMBER'])
  })

  test('concurrent accepts whose projects render the same name each get a name of their own', async () => {
    const { c, inv } = await customerInvitation('CUSTOMER.MANAGER', {
      auto_approve: true,
      auto_create_project: true,
      project_role: t.roles['PROJECT.ADMIN'],
      project_name_template: '{full_name}',
    })
    const users = await Promise.all(
      Array.from({ length: 6 }, () => makeUser(t.ctx, { fullName: 'Collide Target' })),
    )
    const results = await Promise.all(
      users.map((u) => client(t.app, u.token).post(`${INV}${inv.uuid}/submit_request/`)),
    )
    assert.deepEqual(
      results.map((r) => r.status),
      users.map(() => 200),
    )
    const names = (
      await t.ctx.db.selectFrom('projects').select('name').where('customer_id', '=', c.id).execute()
    ).map((p) => p.name)
    assert.equal(names.length, 6)
    assert.equal(new Set(names).size, 6, names.join(', '))
    assert.ok(names.includes('Collide Target'))
  })

  test('concurrent submit_request calls by one user: one request is created, the rest are 400', async () => {
    const { inv } = await customerInvitation('CUSTOMER.SUPPORT')
    const user = await makeUser(t.ctx)
    const results = await Promise.all(
      Array.from({ length: 6 }, () => client(t.app, user.token).post(`${INV}${inv.uuid}/submit_request/`)),
    )
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 400, 400, 400, 400, 400])
    const rows = await t.ctx.db
      .selectFrom('user_permission_requests')
      .select('id')
      .where('created_by_id', '=', user.id)
      .execute()
    assert.equal(rows.length, 1)
  })

  test('without auto_approve the request waits; duplicates and inactive invitations are refused', async () => {
    const { c, owner, inv } = await customerInvitation('CUSTOMER.SUPPORT')
    const user = await makeUser(t.ctx)
    const r = await client(t.app, user.token).post(`${INV}${inv.uuid}/submit_request/`)
    assert.equal(r.status, 200)
    assert.equal(r.body.auto_approved, false)
    assert.deepEqual(await roleOf(user, 'customer', c.id), [])
    const dup = await client(t.app, user.token).post(`${INV}${inv.uuid}/submit_request/`)
    assert.deepEqual(dup.body, { non_field_errors: ['Permission request already exists for this scope.'] })
    await client(t.app, owner.token).post(`${INV}${inv.uuid}/cancel/`)
    const other = await makeUser(t.ctx)
    const inactive = await client(t.app, other.token).post(`${INV}${inv.uuid}/submit_request/`)
    assert.deepEqual(inactive.body, { non_field_errors: ['Only pending invitation can be requested.'] })
    assert.equal((await client(t.app).post(`${INV}${inv.uuid}/submit_request/`)).status, 401)
  })
})

describe('permission requests', () => {
  async function pending() {
    const { c, owner, inv } = await customerInvitation('CUSTOMER.SUPPORT')
    const user = await makeUser(t.ctx)
    const r = await client(t.app, user.token).post(`${INV}${inv.uuid}/submit_request/`)
    return { c, owner, inv, user, uuid: r.body.uuid as string }
  }

  test('the scope owner approves: the role is granted, a second approve is a 409', async () => {
    const { c, owner, user, uuid, inv } = await pending()
    const outsider = await makeUser(t.ctx)
    assert.equal((await client(t.app, outsider.token).post(`${REQ}${uuid}/approve/`)).status, 404)
    assert.equal((await client(t.app, user.token).post(`${REQ}${uuid}/approve/`)).status, 404)
    const r = await client(t.app, owner.token).post(`${REQ}${uuid}/approve/`, { comment: 'welcome' })
    assert.equal(r.status, 200)
    assert.equal(r.text, '')
    assert.deepEqual(await roleOf(user, 'customer', c.id), ['CUSTOMER.SUPPORT'])
    const got = await client(t.app, user.token).get(`${REQ}${uuid}/`)
    assert.equal(got.status, 200)
    assert.equal(got.body.state, 'approved')
    assert.equal(got.body.review_comment, 'welcome')
    assert.equal(got.body.invitation_uuid, inv.uuid)
    const again = await client(t.app, owner.token).post(`${REQ}${uuid}/reject/`)
    assert.equal(again.status, 409)
    assert.deepEqual(again.body, { detail: 'Valid states for operation: pending.' })
  })

  test('reject leaves the user without the role', async () => {
    const { c, owner, user, uuid } = await pending()
    const r = await client(t.app, owner.token).post(`${REQ}${uuid}/reject/`)
    assert.equal(r.status, 200)
    assert.deepEqual(await roleOf(user, 'customer', c.id), [])
    assert.equal((await client(t.app, user.token).get(`${REQ}${uuid}/`)).body.state, 'rejected')
  })

  test('the creator cancels a pending request; others get 403 or 404', async () => {
    const { owner, user, uuid, c } = await pending()
    assert.equal((await client(t.app, owner.token).post(`${REQ}${uuid}/cancel_request/`)).status, 403)
    assert.equal(
      (await client(t.app, (await makeUser(t.ctx)).token).post(`${REQ}${uuid}/cancel_request/`)).status,
      404,
    )
    const r = await client(t.app, user.token).post(`${REQ}${uuid}/cancel_request/`)
    assert.equal(r.status, 200)
    assert.deepEqual(r.body, { uuid, scope_name: c.name, scope_uuid: c.uuid })
    assert.equal((await client(t.app, user.token).post(`${REQ}${uuid}/cancel_request/`)).status, 409)
  })

  test('lists: own requests, managed scopes, staff; filter by state', async () => {
    const { owner, user, uuid } = await pending()
    const own = await client(t.app, user.token).get(REQ)
    assert.deepEqual(
      own.body.map((r: any) => r.uuid),
      [uuid],
    )
    const managed = await client(t.app, owner.token).get(REQ)
    assert.deepEqual(
      managed.body.map((r: any) => r.uuid),
      [uuid],
    )
    const outsider = await makeUser(t.ctx)
    assert.deepEqual((await client(t.app, outsider.token).get(REQ)).body, [])
    const st = await client(t.app, t.staff.token).get(`${REQ}?state=pending`)
    assert.ok(st.body.some((r: any) => r.uuid === uuid))
    const none = await client(t.app, t.staff.token).get(
      `${REQ}?state=canceled&invitation_uuid=${own.body[0].invitation_uuid}`,
    )
    assert.deepEqual(none.body, [])
    assert.equal((await client(t.app, t.staff.token).get(`${REQ}?state=draft2`)).status, 400)
  })

  test('lists filter as the clients ask: invitation, customer, project, scope, creator, states; o orders', async () => {
    const { c, owner, inv: customerInv } = await customerInvitation('CUSTOMER.SUPPORT')
    const p = await makeProject(t.ctx, c)
    const projectInv = await invite(owner, 'PROJECT.MEMBER', p)
    const elsewhere = await pending()
    const [u1, u2, u3] = [await makeUser(t.ctx), await makeUser(t.ctx), await makeUser(t.ctx)]
    const submit = async (u: UserRef, inv: { uuid: string }) => {
      t.clock.advance(60_000)
      const r = await client(t.app, u.token).post(`${INV}${inv.uuid}/submit_request/`)
      assert.equal(r.status, 200, JSON.stringify(r.body))
      return r.body.uuid as string
    }
    const r1 = await submit(u1, customerInv)
    const r2 = await submit(u2, projectInv)
    const r3 = await submit(u3, customerInv)
    t.clock.advance(60_000)
    assert.equal((await client(t.app, owner.token).post(`${REQ}${r3}/reject/`)).status, 200)
    const names = { [r1]: 'r1', [r2]: 'r2', [r3]: 'r3', [elsewhere.uuid]: 'elsewhere' }
    const listed = async (who: UserRef, qs: string) => {
      const r = await client(t.app, who.token).get(`${REQ}?${qs}`)
      assert.equal(r.status, 200, `${qs}: ${JSON.stringify(r.body)}`)
      assert.equal(Number(r.headers['x-result-count']), r.body.length, qs)
      return r.body.map((x: { uuid: string }) => names[x.uuid] ?? 'other')
    }
    // The newest first by default; the owner sees the requests on its customer and its project.
    assert.deepEqual(await listed(owner, ''), ['r3', 'r2', 'r1'])
    assert.deepEqual(await listed(owner, 'o=created'), ['r1', 'r2', 'r3'])
    assert.deepEqual(await listed(owner, 'o=state,-created'), ['r2', 'r1', 'r3'])
    assert.deepEqual(await listed(owner, 'o=-state,created'), ['r3', 'r1', 'r2'])
    assert.deepEqual(await listed(owner, `invitation=${customerInv.uuid.replaceAll('-', '')}`), ['r3', 'r1'])
    assert.deepEqual(await listed(owner, `invitation=${projectInv.uuid}`), ['r2'])
    assert.deepEqual(await listed(t.staff, `customer_uuid=${c.uuid}`), ['r3', 'r2', 'r1'])
    assert.deepEqual(await listed(t.staff, `customer=${c.uuid}`), ['r3', 'r2', 'r1'])
    assert.deepEqual(await listed(t.staff, `customer_uuid=${elsewhere.c.uuid}`), ['elsewhere'])
    assert.deepEqual(await listed(t.staff, `project=${p.uuid}`), ['r2'])
    assert.deepEqual(await listed(t.staff, `scope=${HOST}/api/customers/${c.uuid}/`), ['r3', 'r1'])
    assert.deepEqual(await listed(t.staff, `scope=${HOST}/api/projects/${p.uuid}/`), ['r2'])
    assert.deepEqual(await listed(t.staff, `scope=${HOST}/api/users/${u1.uuid}/`), [])
    assert.deepEqual(await listed(t.staff, `created_by=${u2.uuid}`), ['r2'])
    assert.deepEqual(await listed(owner, 'state=pending&state=rejected'), ['r3', 'r2', 'r1'])
    assert.deepEqual(await listed(owner, 'state=rejected'), ['r3'])
    assert.deepEqual(await listed(owner, 'state=draft'), [])
    // The requester sees only its own, whatever it asks for.
    assert.deepEqual(await listed(u1, `customer_uuid=${c.uuid}`), ['r1'])
    for (const name of ['invitation', 'customer_uuid', 'customer', 'project', 'created_by']) {
      const r = await client(t.app, owner.token).get(`${REQ}?${name}=zz`)
      assert.equal(r.status, 400, name)
      assert.deepEqual(r.body, { [name]: ['Enter a valid UUID.'] })
    }
    assert.equal((await client(t.app, owner.token).get(`${REQ}?o=reviewed_at`)).status, 400)
  })

  test('two concurrent approvals: exactly one 200', async () => {
    const { c, owner, user, uuid } = await pending()
    const rs = await Promise.all([
      client(t.app, owner.token).post(`${REQ}${uuid}/approve/`),
      client(t.app, t.staff.token).post(`${REQ}${uuid}/approve/`),
    ])
    assert.deepEqual(rs.map((r) => r.status).sort(), [200, 409])
    assert.deepEqual(await roleOf(user, 'customer', c.id), ['CUSTOMER.SUPPORT'])
  })
})
