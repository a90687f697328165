// A user's own new e-mail address counts only once confirmed: invitations restricted by e-mail
// patterns match the confirmed address, in full. Reading an invitation needs a reason to.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { sharedTestApp } from '../support/app.js'
import { client } from '../support/client.js'
import { makeCustomer, makeUser, type Ref, roleUuid, type UserRef, withStaff } from '../support/fixtures.js'
import { EMAIL_CONFIRMATION_EVENT } from '../../src/areas/directory/service.js'
import { parseJson } from '../../src/db/values.js'

const INV = '/api/user-group-invitations/'
const REFUSED = {
  non_field_errors: [
    'You are not allowed to accept this invitation. Your email or organization must match the invitation restrictions.',
  ],
}

const t = sharedTestApp(withStaff)

async function ownerInvitation(customer: Ref, patterns: string[]) {
  const r = await client(t.app, t.staff.token).post(INV, {
    role: await roleUuid(t.ctx, 'CUSTOMER.OWNER'),
    scope: customer.url,
    auto_approve: true,
    user_email_patterns: patterns,
  })
  assert.equal(r.status, 201, JSON.stringify(r.body))
  return r.body.uuid as string
}

async function customerRoles(user: UserRef, customerId: number) {
  const rows = await t.ctx.db
    .selectFrom('user_roles')
    .innerJoin('roles', 'roles.id', 'user_roles.role_id')
    .select('roles.name')
    .where('user_roles.user_id', '=', user.id)
    .where('user_roles.scope_type', '=', 'customer')
    .where('user_roles.scope_id', '=', customerId)
    .where('user_roles.is_active', '=', 1)
    .execute()
  return rows.map((r) => r.name)
}

/** The token the server wrote for delivery to the new address (it sends no mail itself). */
async function sentToken(user: UserRef, email: string): Promise<string> {
  const rows = await t.ctx.db
    .selectFrom('events')
    .select('context')
    .where('event_type', '=', EMAIL_CONFIRMATION_EVENT)
    .orderBy('id', 'desc')
    .execute()
  for (const r of rows) {
    const c = parseJson<{ user_uuid: string; email: string; token: string }>(r.context, {} as never)
    if (c.user_uuid === user.uuid && c.email === email) return c.token
  }
  throw new Error(`no confirmation for ${email}`)
}

test('an outsider who sets its own e-mail to the organization’s domain is still refused', async () => {
  const customer = await makeCustomer(t.ctx)
  const inv = await ownerInvitation(customer, ['.*@cust-a\\.example'])
  const mallory = await makeUser(t.ctx, { email: 'mallory@evil.example' })
  const as = client(t.app, mallory.token)
  assert.deepEqual((await as.post(`${INV}${inv}/submit_request/`)).body, REFUSED)
  const patched = await as.patch(`/api/users/${mallory.uuid}/`, { email: 'mallory@cust-a.example' })
  assert.equal(patched.status, 200)
  assert.equal(patched.body.email, 'mallory@evil.example')
  assert.equal(patched.body.pending_email, 'mallory@cust-a.example')
  const again = await as.post(`${INV}${inv}/submit_request/`)
  assert.equal(again.status, 400)
  assert.deepEqual(again.body, REFUSED)
  assert.deepEqual(await customerRoles(mallory, customer.id), [])
  assert.equal((await as.get(`${INV}${inv}/`)).status, 404)
  // Guessing the token does not help.
  const guessed = await as.post(`/api/users/${mallory.uuid}/confirm_email/`, { token: 'a'.repeat(40) })
  assert.equal(guessed.status, 400)
  assert.deepEqual(guessed.body, { token: ['Invalid or expired token.'] })
  const none = await as.post(`/api/users/${mallory.uuid}/confirm_email/`, {})
  assert.deepEqual(none.body, { token: ['This field is required.'] })
  assert.deepEqual(await customerRoles(mallory, customer.id), [])
})

test('the owner of the address confirms it with the token sent there, then matches', async () => {
  const customer = await makeCustomer(t.ctx)
  const inv = await ownerInvitation(customer, ['.*@cust-b\\.example'])
  const ann = await makeUser(t.ctx, { email: 'ann@old.example' })
  const as = client(t.app, ann.token)
  assert.equal((await as.patch(`/api/users/${ann.uuid}/`, { email: 'ann@cust-b.example' })).status, 200)
  const token = await sentToken(ann, 'ann@cust-b.example')
  // Another user cannot use it on Ann's account, nor on its own.
  const other = await makeUser(t.ctx)
  const foreign = await client(t.app, other.token).post(`/api/users/${ann.uuid}/confirm_email/`, { token })
  assert.equal(foreign.status, 404)
  const confirmed = await as.post(`/api/users/${ann.uuid}/confirm_email/`, { token })
  assert.equal(confirmed.status, 200, JSON.stringify(confirmed.body))
  assert.equal(confirmed.body.email, 'ann@cust-b.example')
  assert.equal(confirmed.body.pending_email, null)
  // A restricted invitation addressed to her can now be read, and she may accept it.
  assert.equal((await as.get(`${INV}${inv}/`)).status, 200)
  const r = await as.post(`${INV}${inv}/submit_request/`)
  assert.equal(r.status, 200, JSON.stringify(r.body))
  assert.deepEqual(await customerRoles(ann, customer.id), ['CUSTOMER.OWNER'])
  // The token is spent.
  const reused = await as.post(`/api/users/${ann.uuid}/confirm_email/`, { token })
  assert.deepEqual(reused.body, {
    non_field_errors: ['There is no e-mail address waiting for confirmation.'],
  })
})

test('a token expires; a newer change replaces the older token', async () => {
  const bob = await makeUser(t.ctx, { email: 'bob@old.example' })
  const as = client(t.app, bob.token)
  await as.patch(`/api/users/${bob.uuid}/`, { email: 'bob@first.example' })
  const first = await sentToken(bob, 'bob@first.example')
  await as.patch(`/api/users/${bob.uuid}/`, { email: 'bob@second.example' })
  const second = await sentToken(bob, 'bob@second.example')
  const old = await as.post(`/api/users/${bob.uuid}/confirm_email/`, { token: first })
  assert.deepEqual(old.body, { token: ['Invalid or expired token.'] })
  t.clock.advanceHours(49)
  const late = await as.post(`/api/users/${bob.uuid}/confirm_email/`, { token: second })
  assert.deepEqual(late.body, { token: ['Invalid or expired token.'] })
  assert.equal((await as.get('/api/users/me/')).body.email, 'bob@old.example')
})

test('staff set an address outright or confirm a pending one without a token', async () => {
  const carol = await makeUser(t.ctx, { email: 'carol@old.example' })
  const st = client(t.app, t.staff.token)
  const set = await st.patch(`/api/users/${carol.uuid}/`, { email: 'carol@staff-set.example' })
  assert.equal(set.body.email, 'carol@staff-set.example')
  assert.equal(set.body.pending_email, null)
  await client(t.app, carol.token).patch(`/api/users/${carol.uuid}/`, { email: 'carol@new.example' })
  const confirmed = await st.post(`/api/users/${carol.uuid}/confirm_email/`)
  assert.equal(confirmed.status, 200, JSON.stringify(confirmed.body))
  assert.equal(confirmed.body.email, 'carol@new.example')
  const nothing = await st.post(`/api/users/${carol.uuid}/confirm_email/`)
  assert.equal(nothing.status, 400)
  // Going back to the confirmed address, or clearing it, needs no confirmation.
  const self = client(t.app, carol.token)
  await self.patch(`/api/users/${carol.uuid}/`, { email: 'carol@elsewhere.example' })
  const back = await self.patch(`/api/users/${carol.uuid}/`, { email: 'carol@new.example' })
  assert.equal(back.body.email, 'carol@new.example')
  assert.equal(back.body.pending_email, null)
})

test('patterns match the whole address, not its beginning', async () => {
  const customer = await makeCustomer(t.ctx)
  const inv = await ownerInvitation(customer, ['boss@cust-c\\.example'])
  const fake = await makeUser(t.ctx, { email: 'boss@cust-c.example.evil.org' })
  const r = await client(t.app, fake.token).post(`${INV}${inv}/submit_request/`)
  assert.deepEqual(r.body, REFUSED)
  assert.equal((await client(t.app, fake.token).get(`${INV}${inv}/`)).status, 404)
  const boss = await makeUser(t.ctx, { email: 'boss@cust-c.example' })
  assert.equal((await client(t.app, boss.token).post(`${INV}${inv}/submit_request/`)).status, 200)
})

test('patterns that expand too far are refused at creation', async () => {
  const customer = await makeCustomer(t.ctx)
  const r = await client(t.app, t.staff.token).post(INV, {
    role: 'CUSTOMER.OWNER',
    scope: customer.url,
    user_email_patterns: ['(?:.{0,30}){0,30}@x\\.org', '.{0,100}'.repeat(6), '(a)\\1@x\\.org'],
  })
  assert.equal(r.status, 400)
  assert.equal(r.body.user_email_patterns.length, 3)
})

test('a pattern that backtracks in other engines answers within milliseconds', async () => {
  const customer = await makeCustomer(t.ctx)
  const slow = '.{0,10}'.repeat(12) + '!'
  const larger = '.{0,10}'.repeat(18) + '!'
  const inv = await ownerInvitation(customer, [slow, larger])
  const user = await makeUser(t.ctx, { email: `${'a'.repeat(10)}@x.example` }) // 22 characters
  const started = performance.now()
  for (let i = 0; i < 5; i++) {
    assert.equal((await client(t.app, user.token).get(`${INV}${inv}/`)).status, 404)
    const r = await client(t.app, user.token).post(`${INV}${inv}/submit_request/`)
    assert.deepEqual(r.body, REFUSED)
  }
  assert.ok(performance.now() - started < 3000, `${performance.now() - started} ms`)
})
