// Two server processes on one database, attacked as an ordinary user would: racing grants, a
// claimed e-mail address and a project name chosen to match another's.
import { before, test } from 'node:test'
import assert from 'node:assert/strict'
import { childServers, passwordToken, roleUuid, tokenApi } from './support/child-servers.js'

const TOKEN = 'multiprocess-security-staff-token'
const servers = childServers(TOKEN)
const api = tokenApi(TOKEN)
let a: string
let b: string

before(async () => {
  const env = { WORKER_ENABLED: 'false', PUBLIC_URL: 'http://market.test' }
  a = (await servers.start(env)).url
  b = (await servers.start(env)).url
})

let users = 0
/** A user created by staff, logged in; returns its uuid, its token and calls as that user. */
async function newUser(email: string, fullName = 'Someone') {
  const username = `attacker-${++users}`
  const u = await api(a, 'POST', '/api/users/', {
    username,
    email,
    full_name: fullName,
    password: 'a-long-password-1',
  })
  assert.equal(u.status, 201, JSON.stringify(u.body))
  const token = await passwordToken(b, username, 'a-long-password-1')
  return { uuid: u.body.uuid as string, token, api: tokenApi(token) }
}

test('50 concurrent add_user over two processes: one grant, one 201; delete_user revokes it', async () => {
  const customer = await api(a, 'POST', '/api/customers/', { name: 'Race org' })
  const project = await api(a, 'POST', '/api/projects/', { name: 'Race', customer: customer.body.url })
  assert.equal(project.status, 201)
  const target = await newUser('target@race.example')
  const results = await Promise.all(
    Array.from({ length: 50 }, (_, i) =>
      api(i % 2 ? a : b, 'POST', `/api/projects/${project.body.uuid}/add_user/`, {
        user: target.uuid,
        role: 'PROJECT.ADMIN',
      }),
    ),
  )
  const statuses = results.map((r) => r.status).sort()
  assert.deepEqual(statuses, [201, ...Array<number>(49).fill(400)])
  for (const r of results.filter((x) => x.status === 400)) {
    assert.deepEqual(r.body, { non_field_errors: ['User already has this role in this scope.'] })
  }
  const listed = await api(a, 'GET', `/api/projects/${project.body.uuid}/list_users/?role=PROJECT.ADMIN`)
  assert.equal(listed.body.length, 1)
  const revoked = await api(b, 'POST', `/api/projects/${project.body.uuid}/delete_user/`, {
    user: target.uuid,
    role: 'PROJECT.ADMIN',
  })
  assert.equal(revoked.status, 204)
  for (const base of [a, b]) {
    const seen = await target.api(base, 'GET', `/api/projects/${project.body.uuid}/`)
    assert.equal(seen.status, 404)
  }
})

test('a full name equal to an existing project does not hand over that project', async () => {
  const customer = await api(a, 'POST', '/api/customers/', { name: 'Takeover org' })
  const secret = await api(a, 'POST', '/api/projects/', {
    name: 'Secret research',
    customer: customer.body.url,
  })
  assert.equal(secret.status, 201)
  const inv = await api(b, 'POST', '/api/user-group-invitations/', {
    role: await roleUuid(api, a, 'PROJECT.ADMIN'),
    scope: customer.body.url,
    is_public: true,
    auto_create_project: true,
    auto_approve: true,
    project_name_template: '{full_name}',
  })
  assert.equal(inv.status, 201, JSON.stringify(inv.body))
  const mallory = await newUser('mallory@evil.example')
  const renamed = await mallory.api(a, 'PATCH', `/api/users/${mallory.uuid}/`, {
    full_name: 'Secret research',
  })
  assert.equal(renamed.status, 200)
  const submitted = await mallory.api(
    b,
    'POST',
    `/api/user-group-invitations/${inv.body.uuid}/submit_request/`,
  )
  assert.equal(submitted.status, 200, JSON.stringify(submitted.body))
  assert.equal(submitted.body.auto_approved, true)
  for (const base of [a, b]) {
    const seen = await mallory.api(base, 'GET', `/api/projects/${secret.body.uuid}/`)
    assert.equal(seen.status, 404)
  }
  const own = await mallory.api(a, 'GET', '/api/projects/')
  assert.deepEqual(
    own.body.map((p: { name: string }) => p.name),
    ['Secret research 2'],
  )
})

test('an outsider who claims the organization’s e-mail domain is refused by both processes', async () => {
  const customer = await api(a, 'POST', '/api/customers/', { name: 'Cust A' })
  const inv = await api(a, 'POST', '/api/user-group-invitations/', {
    role: await roleUuid(api, a, 'CUSTOMER.OWNER'),
    scope: customer.body.url,
    auto_approve: true,
    user_email_patterns: ['.*@cust-a\\.example'],
  })
  assert.equal(inv.status, 201, JSON.stringify(inv.body))
  const mallory = await newUser('mallory@other.example')
  const submit = (base: string) =>
    mallory.api(base, 'POST', `/api/user-group-invitations/${inv.body.uuid}/submit_request/`)
  assert.equal((await submit(b)).status, 400)
  const patched = await mallory.api(a, 'PATCH', `/api/users/${mallory.uuid}/`, {
    email: 'mallory@cust-a.example',
  })
  assert.equal(patched.status, 200)
  assert.equal(patched.body.email, 'mallory@other.example')
  for (const base of [b, a]) {
    const r = await submit(base)
    assert.equal(r.status, 400, JSON.stringify(r.body))
    assert.deepEqual(r.body, {
      non_field_errors: [
        'You are not allowed to accept this invitation. Your email or organization must match the invitation restrictions.',
      ],
    })
    const read = await mallory.api(base, 'GET', `/api/user-group-invitations/${inv.body.uuid}/`)
    assert.equal(read.status, 404)
    const seen = await mallory.api(base, 'GET', `/api/customers/${customer.body.uuid}/`)
    assert.equal(seen.status, 404)
  }
})
