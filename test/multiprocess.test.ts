// Two server processes on one database: concurrent transitions on one order have exactly one
// winner, and the processing jobs both workers see run exactly once.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { childServers, passwordToken, roleUuid, tokenApi } from './support/child-servers.js'
import { checkedFetch } from './support/server.js'
import { createDatabase } from '../src/db/database.js'

const TOKEN = 'multiprocess-staff-token'
const servers = childServers(TOKEN)
const api = tokenApi(TOKEN)

test('two processes: one winner per transition, each job run once', async () => {
  // Both processes run a job worker, so they compete for every job.
  const env = { WORKER_ENABLED: 'true', WORKER_POLL_MS: '20', PUBLIC_URL: 'http://market.test' }
  const a = (await servers.start(env)).url
  const b = (await servers.start(env)).url

  const customer = await api(a, 'POST', '/api/customers/', { name: 'Consumer' })
  const providerOrg = await api(a, 'POST', '/api/customers/', { name: 'Provider' })
  const project = await api(a, 'POST', '/api/projects/', { name: 'P', customer: customer.body.url })
  assert.equal(project.status, 201)
  const sp = await api(a, 'POST', '/api/marketplace-service-providers/', { customer: providerOrg.body.url })
  assert.equal(sp.status, 201)
  const offering = await api(a, 'POST', '/api/marketplace-provider-offerings/', {
    name: 'Support',
    type: 'Support.OfferingTemplate',
    customer: providerOrg.body.url,
  })
  assert.equal(offering.status, 201, JSON.stringify(offering.body))
  assert.equal(
    (await api(a, 'POST', `/api/marketplace-provider-offerings/${offering.body.uuid}/activate/`)).status,
    200,
  )
  const basic = await api(a, 'POST', '/api/marketplace-provider-offerings/', {
    name: 'Basic',
    type: 'Marketplace.Basic',
    customer: providerOrg.body.url,
  })
  assert.equal(
    (await api(a, 'POST', `/api/marketplace-provider-offerings/${basic.body.uuid}/activate/`)).status,
    200,
  )

  // Staff creates orders (consumer review implied): Support ones execute at once, so a race on
  // set_state_done between the two processes must have one winner.
  for (let i = 0; i < 5; i++) {
    const o = await api(a, 'POST', '/api/marketplace-orders/', {
      offering: offering.body.url,
      project: project.body.url,
    })
    assert.equal(o.status, 201)
    assert.equal(o.body.state, 'executing')
    const results = await Promise.all(
      [a, b, a, b].map((base) => api(base, 'POST', `/api/marketplace-orders/${o.body.uuid}/set_state_done/`)),
    )
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 409, 409, 409])
  }

  // Basic orders approved by the provider are processed by a job; with workers in both
  // processes, every order ends done and every job ran exactly once.
  const uuids: string[] = []
  for (let i = 0; i < 8; i++) {
    const o = await api(b, 'POST', '/api/marketplace-orders/', {
      offering: basic.body.url,
      project: project.body.url,
    })
    assert.equal(o.body.state, 'pending-provider')
    assert.equal(
      (await api(i % 2 ? a : b, 'POST', `/api/marketplace-orders/${o.body.uuid}/approve_by_provider/`))
        .status,
      200,
    )
    uuids.push(o.body.uuid)
  }
  const deadline = Date.now() + 20_000
  for (;;) {
    const states = await Promise.all(
      uuids.map(async (u) => (await api(a, 'GET', `/api/marketplace-orders/${u}/`)).body.state),
    )
    if (states.every((s) => s === 'done')) break
    if (Date.now() > deadline) assert.fail(`orders not processed: ${states.join(', ')}`)
    await new Promise((r) => setTimeout(r, 50))
  }
  const database = await createDatabase(servers.databaseUrl)
  try {
    const jobs = await database.db
      .selectFrom('jobs')
      .select(['state', 'attempts'])
      .where('kind', '=', 'order.process')
      .execute()
    assert.equal(jobs.length, uuids.length)
    for (const j of jobs) {
      assert.equal(j.state, 'done')
      assert.equal(j.attempts, 1, 'a processing job was claimed twice')
    }
  } finally {
    await database.close()
  }

  // A backend resource request and a permission request, raced from both processes.
  for (let i = 0; i < 3; i++) {
    const req = await api(a, 'POST', '/api/backend-resource-requests/', { offering: basic.body.uuid })
    assert.equal(req.status, 201, JSON.stringify(req.body))
    const started = await Promise.all(
      [a, b, a, b].map((base) =>
        api(base, 'POST', `/api/backend-resource-requests/${req.body.uuid}/start_processing/`),
      ),
    )
    assert.deepEqual(started.map((r) => r.status).sort(), [200, 409, 409, 409])
  }
  const invitation = await api(a, 'POST', '/api/user-group-invitations/', {
    role: await roleUuid(api, a, 'CUSTOMER.MANAGER'),
    scope: customer.body.url,
  })
  assert.equal(invitation.status, 201, JSON.stringify(invitation.body))
  for (let i = 0; i < 3; i++) {
    const user = await api(a, 'POST', '/api/users/', {
      username: `requester-${i}`,
      email: `requester-${i}@example.com`,
      password: 'a-long-password-1',
    })
    assert.equal(user.status, 201, JSON.stringify(user.body))
    const token = await passwordToken(a, `requester-${i}`, 'a-long-password-1')
    const submitted = await tokenApi(token)(
      b,
      'POST',
      `/api/user-group-invitations/${invitation.body.uuid}/submit_request/`,
    )
    assert.equal(submitted.status, 200)
    const { uuid } = submitted.body as { uuid: string }
    const approved = await Promise.all(
      [a, b, a, b].map((base) => api(base, 'POST', `/api/user-permission-requests/${uuid}/approve/`)),
    )
    assert.deepEqual(approved.map((r) => r.status).sort(), [200, 409, 409, 409])
  }
})

test('two processes: retries of one POST with an Idempotency-Key, sent to both at once, act once', async () => {
  const a = (await servers.start()).url
  const b = (await servers.start()).url
  const name = `Idempotent ${Date.now()}`
  const send = (base: string) =>
    checkedFetch(`${base}/api/customers/`, {
      method: 'POST',
      headers: {
        authorization: `Token ${TOKEN}`,
        'content-type': 'application/json',
        'idempotency-key': 'one-customer',
      },
      body: JSON.stringify({ name }),
    })
  const answers = await Promise.all([a, b, a, b, a, b].map(send))
  const statuses = answers.map((r) => r.status)
  const performed = answers.filter((r) => r.status === 201 && !r.headers.get('idempotent-replayed'))
  // One performs; each other is told the first still runs (409) or, once it has committed, gets
  // its answer again (on SQLite a retry in the other process waits for the file's writer, then replays).
  assert.equal(performed.length, 1, statuses.join(' '))
  assert.ok(
    statuses.every((s) => s === 201 || s === 409),
    statuses.join(' '),
  )
  const customers = await api(a, 'GET', `/api/customers/?name=${encodeURIComponent(name)}`)
  assert.equal((customers.body as unknown[]).length, 1)
  const again = await send(b)
  assert.equal(again.status, 201)
  assert.equal(again.headers.get('idempotent-replayed'), 'true')
})
