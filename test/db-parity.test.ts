// The API answers the same on both databases. Every journey of the nine contract areas (orders,
// cost policies, site agent identities/services/processors, backend requests, invitations and
// permission requests, payment profiles, support feedbacks, cloudA public IPs, cloudB tenants,
// networks, subnets, ports, floating IPs, routers and migrations) runs once on in-memory SQLite
// and once on PostgreSQL; then a staff user lists every collection of the schema (customers,
// projects, offerings, plans, resources, ...). Every answer is recorded and the two runs must
// match, with uuids, URLs, timestamps and tokens compared by their form, not their value.
// Runs where TEST_DATABASE_URL points at PostgreSQL (it needs both databases).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp, TEST_DATABASE_URL } from './support/app.js'
import { journeyWorld } from './support/journey-world.js'
import type { Journey } from './journey/world.js'
import { orderJourneys } from './journey/orders.js'
import { costPolicyJourneys } from './journey/cost-policies.js'
import { siteAgentJourneys } from './journey/site-agents.js'
import { backendRequestJourneys } from './journey/backend-requests.js'
import { invitationJourneys } from './journey/invitations.js'
import { paymentProfileJourneys } from './journey/payment-profiles.js'
import { supportJourneys } from './journey/support.js'
import { cloudAJourneys } from './journey/cloud-a.js'
import { cloudBJourneys } from './journey/cloud-b.js'

const JOURNEYS: Journey[] = [
  ...orderJourneys,
  ...costPolicyJourneys,
  ...siteAgentJourneys,
  ...backendRequestJourneys,
  ...invitationJourneys,
  ...paymentProfileJourneys,
  ...supportJourneys,
  ...cloudAJourneys,
  ...cloudBJourneys,
]

interface Answer {
  request: string
  status: number
  body: unknown
}

const UUID = /[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}/gi
const TIMESTAMP = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?/g

/**
 * A text with its values replaced by their form: the app's address by `<base>`, each uuid by
 * `<uuid>` (dashed or not), each timestamp by its digits as 9s (so a change of format still
 * shows), long hex or base64 tokens by `<token:length>`.
 */
export function form(text: string, base: string): string {
  return text
    .split(base)
    .join('<base>')
    .replace(UUID, (u) => (u.includes('-') ? '<uuid>' : '<hexuuid>'))
    .replace(TIMESTAMP, (t) => t.replace(/\d/g, '9'))
    .replace(/\b[0-9a-f]{40,}\b/g, (t) => `<token:${t.length}>`)
}

async function record(url: string): Promise<Answer[]> {
  const answers: Answer[] = []
  let base = ''
  const t = await buildTestApp({ databaseUrl: url }, undefined, undefined, (app) => {
    app.addHook('onSend', async (request, reply, payload) => {
      const text = typeof payload === 'string' ? payload : ''
      let body: unknown = text
      try {
        body = text ? JSON.parse(form(text, base)) : ''
      } catch {
        body = form(text, base)
      }
      answers.push({
        request: `${request.method} ${form(request.url, base)}`,
        status: reply.statusCode,
        body,
      })
      return payload
    })
  })
  try {
    const world = await journeyWorld(t)
    base = world.baseUrl
    for (const j of JOURNEYS) await j.run(world)
    const staff = await world.user({ staff: true })
    const schema = await world.http<{ paths: Record<string, unknown> }>('GET', '/api/schema/', staff)
    const lists = Object.keys(schema.body.paths).filter((p) => /^\/api\/[^{}]+\/$/.test(p))
    assert.ok(lists.length > 30, 'the schema lists the collections')
    for (const p of lists.sort()) await world.http('GET', p, staff)
  } finally {
    await t.close()
  }
  return answers
}

test(
  'every record reads the same on SQLite and PostgreSQL',
  {
    skip: TEST_DATABASE_URL.startsWith('postgres') ? false : 'needs TEST_DATABASE_URL (PostgreSQL)',
  },
  async () => {
    const sqlite = await record('sqlite::memory:')
    const postgres = await record(TEST_DATABASE_URL)
    assert.ok(sqlite.length > 300, `${sqlite.length} answers recorded`)
    assert.equal(postgres.length, sqlite.length)
    for (let i = 0; i < sqlite.length; i++) assert.deepEqual(postgres[i], sqlite[i], `answer ${i}`)
  },
)

test('forms hide values, not formats', () => {
  const base = 'http://127.0.0.1:1234'
  assert.equal(
    form(
      `{"url":"${base}/api/x/0199aabb-ccdd-7eef-8001-123456789abc/","t":"2026-01-15T10:00:00.000Z"}`,
      base,
    ),
    '{"url":"<base>/api/x/<uuid>/","t":"9999-99-99T99:99:99.999Z"}',
  )
  assert.notEqual(form('"2026-01-15T10:00:00.000Z"', base), form('"2026-01-15T10:00:00+00:00"', base))
  assert.notEqual(
    form('0199aabbccdd7eef8001123456789abc', base),
    form('0199aabb-ccdd-7eef-8001-123456789abc', base),
  )
})
