// Records every answer of the app on one database (the URL given as argument) while the journeys
// of the nine contract areas run and a staff user then lists every collection of the schema, and
// prints them as JSON, with values replaced by their form (`form`). Run by test/db-parity.test.ts
// in a process of its own per database, so fixture names and counters start alike.
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { buildTestApp } from './app.js'
import { journeyWorld } from './journey-world.js'
import type { Journey } from '../journey/world.js'
import { orderJourneys } from '../journey/orders.js'
import { costPolicyJourneys } from '../journey/cost-policies.js'
import { siteAgentJourneys } from '../journey/site-agents.js'
import { backendRequestJourneys } from '../journey/backend-requests.js'
import { invitationJourneys } from '../journey/invitations.js'
import { paymentProfileJourneys } from '../journey/payment-profiles.js'
import { supportJourneys } from '../journey/support.js'
import { cloudAJourneys } from '../journey/cloud-a.js'
import { cloudBJourneys } from '../journey/cloud-b.js'

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

export interface Answer {
  request: string
  status: number
  body: unknown
}

const UUID = /[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}/gi
const TIMESTAMP = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?/g

/**
 * A text with its values replaced by their form: the app's address by `<base>`, other local ports
 * (callback receivers) by `<port>`, each uuid by `<uuid>` (dashed or not), each timestamp by its
 * digits as 9s (so a change of format still shows), hex tokens by `<token:length>` and signatures
 * (43 base64url characters) by `<signature>`.
 */
export function form(text: string, base: string): string {
  return text
    .split(base)
    .join('<base>')
    .replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:<port>')
    .replace(UUID, (u) => (u.includes('-') ? '<uuid>' : '<hexuuid>'))
    .replace(TIMESTAMP, (t) => t.replace(/\d/g, '9'))
    .replace(/\b[0-9a-f]{40,}\b/g, (t) => `<token:${t.length}>`)
    .replace(/(?:(?<![\w-])|(?<=%3A))[\w-]{43}(?![\w-])/g, '<signature>')
}

export async function record(url: string): Promise<Answer[]> {
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
    // Every collection; an event stream (text/event-stream) never ends, so it is not one.
    const lists = Object.keys(schema.body.paths).filter(
      (p) => /^\/api\/[^{}]+\/$/.test(p) && !p.endsWith('/stream/'),
    )
    assert.ok(lists.length > 30, 'the schema lists the collections')
    for (const p of lists.sort()) await world.http('GET', p, staff)
  } finally {
    await t.close()
  }
  return answers
}

// `node --import tsx parity-record.ts <database url> <output file>`
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const answers = await record(process.argv[2]!)
  writeFileSync(process.argv[3]!, JSON.stringify(answers))
}
