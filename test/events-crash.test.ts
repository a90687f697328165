// Kill the server with SIGKILL in the middle of a load of changes that each tell an event (role
// grants), restart it, and check the event log: every acknowledged change has its event, once,
// and the positions run in order without a gap, so a client resuming from any position misses
// nothing.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { childServers, tokenApi } from './support/child-servers.js'
import type { ServerProcess } from './support/server.js'

const TOKEN = 'events-crash-staff-token'
const servers = childServers(TOKEN, 'SIGKILL')
const api = tokenApi(TOKEN)
let server: ServerProcess | null = null

interface EventItem {
  position: number
  type: string
  data: { customer_uuid: string | null }
}

test('the events of acknowledged changes survive SIGKILL, once each, with gap-free positions', async () => {
  const env = { WORKER_ENABLED: 'false' }
  server = await servers.start(env)
  const base = server.url
  const me = await api(base, 'GET', '/api/users/me/')
  assert.equal(me.status, 200)

  // Each writer makes an organization and grants the staff user its ownership: the grant and its
  // event are one transaction.
  const acknowledged: string[] = []
  let stop = false
  const writer = async (w: number) => {
    for (let i = 0; !stop; i++) {
      try {
        const c = await api(base, 'POST', '/api/customers/', { name: `events-crash-${w}-${i}` })
        if (c.status !== 201) continue
        const g = await api(base, 'POST', `/api/customers/${c.body.uuid}/add_user/`, {
          user: me.body.uuid,
          role: 'CUSTOMER.OWNER',
        })
        if (g.status === 201) acknowledged.push(c.body.uuid as string)
      } catch {
        return // connection refused or reset: the server is gone
      }
    }
  }
  const writers = Array.from({ length: 4 }, (_, w) => writer(w))
  while (acknowledged.length < 60) await new Promise((r) => setImmediate(r))
  await server.stop('SIGKILL')
  stop = true
  await Promise.all(writers)
  server = null

  server = await servers.start(env)
  const events: EventItem[] = []
  for (let after = 0; ;) {
    const r = await api(server.url, 'GET', `/api/events/?type=role.granted&after=${after}&page_size=300`)
    assert.equal(r.status, 200)
    const page = r.body as EventItem[]
    events.push(...page)
    if (page.length < 300) break
    after = page[page.length - 1]!.position
  }
  const granted = new Map<string, number>()
  for (const e of events) {
    if (e.data.customer_uuid) granted.set(e.data.customer_uuid, (granted.get(e.data.customer_uuid) ?? 0) + 1)
  }
  for (const uuid of acknowledged)
    assert.equal(granted.get(uuid), 1, `the grant on ${uuid} has no single event`)

  // Positions of every event (of any type) run 1, 2, 3, … in order: nothing lost, nothing twice.
  const all: number[] = []
  for (let after = 0; ;) {
    const r = await api(server.url, 'GET', `/api/events/?after=${after}&page_size=300`)
    const page = r.body as EventItem[]
    all.push(...page.map((e) => e.position))
    if (page.length < 300) break
    after = page[page.length - 1]!.position
  }
  assert.ok(all.length >= acknowledged.length)
  assert.deepEqual(
    all,
    all.map((_, i) => all[0]! + i),
  )
  await server.stop()
  server = null
})
