// Kill the server with SIGKILL in the middle of a write load, restart it, and check that every
// write it acknowledged is there, complete, and that queued jobs still run.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { ServerProcess } from './support/server.js'
import { childServers, tokenApi } from './support/child-servers.js'

const TOKEN = 'crash-test-staff-token'
const servers = childServers(TOKEN, 'SIGKILL')
const api = tokenApi(TOKEN)
let server: ServerProcess | null = null

test('acknowledged writes survive SIGKILL and nothing half-written is visible', async () => {
  const env = { WORKER_ENABLED: 'false' }
  server = await servers.start(env)
  const base = server.url
  const group = await api(base, 'POST', '/api/organization-groups/', { name: 'crash-group' })
  assert.equal(group.status, 201)

  // Writers run until the server dies under them; each customer is written with its group
  // membership in one transaction, so a half-written one would lack the group.
  const acknowledged: string[] = []
  let stop = false
  const writer = async (w: number) => {
    for (let i = 0; !stop; i++) {
      const name = `crash-${w}-${i}`
      try {
        const r = await api(base, 'POST', '/api/customers/', { name, organization_groups: [group.body.url] })
        if (r.status === 201) acknowledged.push(name)
      } catch {
        return // connection refused or reset: the server is gone
      }
    }
  }
  const writers = Array.from({ length: 6 }, (_, w) => writer(w))
  // Let the load build up to a fixed number of acknowledged writes, then kill mid-flight.
  while (acknowledged.length < 150) await new Promise((r) => setImmediate(r))
  await server.stop('SIGKILL')
  stop = true
  await Promise.all(writers)
  server = null

  server = await servers.start(env)
  const seen = new Map<string, string[]>()
  for (let page = 1; ; page++) {
    const r = await api(server.url, 'GET', `/api/customers/?name=crash-&page_size=300&page=${page}`)
    assert.equal(r.status, 200)
    for (const c of r.body as { name: string; organization_groups: string[] }[])
      seen.set(c.name, c.organization_groups)
    if ((r.body as unknown[]).length < 300) break
  }
  for (const name of acknowledged) assert.ok(seen.has(name), `acknowledged ${name} is missing after restart`)
  for (const [name, groups] of seen) {
    assert.deepEqual(
      groups.map((g) => g.replace(/^https?:\/\/[^/]+/, '')),
      [group.body.url.replace(/^https?:\/\/[^/]+/, '')],
      `${name} is half-written`,
    )
  }
  assert.ok(seen.size >= acknowledged.length)
})

test('jobs queued before a SIGKILL run after the restart', async () => {
  if (server) await server.stop('SIGKILL') // the previous test's restarted server
  // No worker in the first process: approved orders wait in the queue when it dies.
  const env = { WORKER_ENABLED: 'false' }
  server = await servers.start(env)
  const base = server.url
  const consumer = await api(base, 'POST', '/api/customers/', { name: 'jobs-consumer' })
  const provider = await api(base, 'POST', '/api/customers/', { name: 'jobs-provider' })
  const project = await api(base, 'POST', '/api/projects/', { name: 'P', customer: consumer.body.url })
  assert.equal(project.status, 201)
  assert.equal(
    (await api(base, 'POST', '/api/marketplace-service-providers/', { customer: provider.body.url })).status,
    201,
  )
  const offering = await api(base, 'POST', '/api/marketplace-provider-offerings/', {
    name: 'Basic',
    type: 'Marketplace.Basic',
    customer: provider.body.url,
  })
  assert.equal(offering.status, 201)
  const activated = await api(
    base,
    'POST',
    `/api/marketplace-provider-offerings/${offering.body.uuid}/activate/`,
  )
  assert.equal(activated.status, 200)
  const uuids: string[] = []
  for (let i = 0; i < 5; i++) {
    const o = await api(base, 'POST', '/api/marketplace-orders/', {
      offering: offering.body.url,
      project: project.body.url,
    })
    assert.equal(o.status, 201)
    const approved = await api(base, 'POST', `/api/marketplace-orders/${o.body.uuid}/approve_by_provider/`)
    assert.equal(approved.status, 200)
    uuids.push(o.body.uuid)
  }
  for (const u of uuids) {
    assert.equal((await api(base, 'GET', `/api/marketplace-orders/${u}/`)).body.state, 'executing')
  }
  await server.stop('SIGKILL')
  server = null

  server = await servers.start({ ...env, WORKER_ENABLED: 'true', WORKER_POLL_MS: '20' })
  const deadline = Date.now() + 20_000
  for (;;) {
    const states = await Promise.all(
      uuids.map(async (u) => (await api(server!.url, 'GET', `/api/marketplace-orders/${u}/`)).body.state),
    )
    if (states.every((s) => s === 'done')) break
    if (Date.now() > deadline) assert.fail(`queued jobs did not resume: ${states.join(', ')}`)
    await new Promise((r) => setImmediate(r))
  }
})
