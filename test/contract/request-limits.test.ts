// What a create or update request may store fits what the reference's response schema allows for
// that field: for every writable field of the contract areas' create and update operations, a
// value just past the limit the reference's response puts on the same field is refused with a 400
// naming the field, so no stored record can break a client that validates what it reads.
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { call } from '../support/client.js'
import { makeUser } from '../support/fixtures.js'
import { sharedTestWorld } from '../support/shared-world.js'
import { REFERENCE_SCHEMA_PATH } from './contract.js'

type Schema = { [k: string]: any }
const reference = JSON.parse(readFileSync(REFERENCE_SCHEMA_PATH, 'utf8')) as Schema

function resolve(s: Schema | undefined): Schema | undefined {
  if (!s) return s
  if (s.$ref)
    return resolve(
      s.$ref
        .split('/')
        .slice(1)
        .reduce((o: Schema, k: string) => o[k], reference),
    )
  if (s.allOf?.length === 1) return { ...resolve(s.allOf[0]), ...s, allOf: undefined }
  return s
}

function responseSchema(path: string, method: string): Schema | undefined {
  const op = reference.paths[path]?.[method]
  if (!op) return undefined
  for (const status of ['200', '201']) {
    const s = resolve(op.responses?.[status]?.content?.['application/json']?.schema)
    if (s?.properties) return s
  }
  return undefined
}

/**
 * Values just past the limits the reference's response puts on a field. Links (`uri`, `uuid`) are
 * left out: the server resolves them to existing records, so only valid links are ever stored.
 */
function pastLimits(prop: Schema): { value: unknown; rule: string }[] {
  const p = resolve(prop)!
  const out: { value: unknown; rule: string }[] = []
  if (p.readOnly) return out
  if (p.type === 'integer' || p.type === 'number') {
    if (p.maximum !== undefined) out.push({ value: p.maximum + 1, rule: `maximum ${p.maximum}` })
    else if (p.format === 'int32') out.push({ value: 2 ** 31, rule: 'int32' })
    if (p.minimum !== undefined) out.push({ value: p.minimum - 1, rule: `minimum ${p.minimum}` })
    else if (p.format === 'int32') out.push({ value: -(2 ** 31) - 1, rule: 'int32' })
    return out
  }
  if (p.type !== 'string') return out
  if (p.maxLength !== undefined) {
    const value =
      p.format === 'email'
        ? `${'a'.repeat(p.maxLength)}@x.io`
        : p.format === 'uri'
          ? `https://example.com/${'a'.repeat(p.maxLength)}`
          : 'a'.repeat(p.maxLength + 1)
    out.push({ value, rule: `maxLength ${p.maxLength}` })
  }
  if (p.format === 'uri' || p.format === 'uuid') return out
  if (p.enum) out.push({ value: 'not-one-of-the-choices', rule: 'enum' })
  if (p.pattern) {
    const re = new RegExp(p.pattern)
    const value = ['a', '', ' ', '!', 'a b', '-'].find((v) => !re.test(v))
    if (value !== undefined) out.push({ value, rule: `pattern ${p.pattern}` })
  }
  const byFormat: Record<string, string> = {
    'date-time': 'not a date-time',
    date: 'not a date',
    email: 'not an e-mail address',
    ipv4: '999.1.1.1',
  }
  if (p.format && byFormat[p.format]) out.push({ value: byFormat[p.format], rule: `format ${p.format}` })
  return out
}

interface Case {
  method: 'POST' | 'PUT' | 'PATCH'
  template: string
  field: string
  value: unknown
  rule: string
}

/** A request body of our own document, its named component resolved. */
function resolveIn(doc: Schema, s: Schema | undefined): Schema | undefined {
  if (!s?.$ref) return s
  return resolveIn(
    doc,
    s.$ref
      .split('/')
      .slice(1)
      .reduce((o: Schema, k: string) => o[k], doc),
  )
}

/** Every create and update operation this server documents on a contract path, field by field. */
function cases(ours: Schema): Case[] {
  const out: Case[] = []
  for (const [template, ops] of Object.entries(ours.paths as Record<string, Schema>)) {
    if (!reference.paths[template]) continue
    const item = template.endsWith('{uuid}/')
    const creates = !item && !/\/[a-z_]+\/$/.test(template.replace(/^\/api\/[^/]+\//, '/'))
    const processor = template.endsWith('/register_processor/')
    for (const method of ['post', 'put', 'patch'] as const) {
      const op = ops[method]
      if (!op) continue
      if (method === 'post' ? !(creates || processor) : !item) continue
      const body = resolveIn(ours, op.requestBody?.content?.['application/json']?.schema)
      if (!body?.properties) continue
      const collection = item ? template.replace(/\{uuid\}\/$/, '') : template
      // The operation's own answer, else the record as retrieved.
      const records = [responseSchema(template, method), responseSchema(`${collection}{uuid}/`, 'get')]
      for (const field of Object.keys(body.properties)) {
        const prop = records.map((r) => r?.properties[field]).find((p) => p !== undefined)
        if (!prop) continue
        for (const past of pastLimits(prop)) {
          out.push({ method: method.toUpperCase() as Case['method'], template, field, ...past })
        }
      }
    }
  }
  return out
}

/**
 * Fields whose request is a fixed set of choices checked by the server (in the reference's words,
 * after the body's shape): only those choices are ever stored, each within the reference's limit.
 * The areas' own tests send a value outside the choices.
 */
const CHOICES_CHECKED_BY_SERVER = new Set([
  'marketplace-offering-estimated-cost-policies period', // 1 to 4
  'payment-profiles payment_type', // the payment types
  'support-feedbacks evaluation', // 1 to 10
])
const area = (template: string) => template.split('/')[2]

const { t, world } = sharedTestWorld(async (app) => ({ staff: await makeUser(app.ctx, { staff: true }) }))

test('every writable field refuses a value past the limit the reference answers it with', async () => {
  const ours = (await t.app.inject({ url: '/api/schema/' })).json()
  const all = cases(ours)
  // The fields the reference bounds most tightly are among them.
  const names = new Set(all.map((c) => `${c.method} ${c.template} ${c.field}`))
  for (const expected of [
    'POST /api/marketplace-orders/ callback_url',
    'POST /api/marketplace-orders/ request_comment',
    'POST /api/marketplace-offering-estimated-cost-policies/ limit_cost',
    'POST /api/marketplace-site-agent-services/{uuid}/register_processor/ name',
    'POST /api/cloudA-public-ips/ name',
    'POST /api/cloudB-routers/ description',
  ]) {
    assert.ok(names.has(expected), `${expected} is checked`)
  }
  const uuid = '00000000-0000-4000-8000-000000000000'
  const byServer = all.filter((c) => CHOICES_CHECKED_BY_SERVER.has(`${area(c.template)} ${c.field}`))
  assert.deepEqual(
    new Set(byServer.map((c) => `${area(c.template)} ${c.field}`)),
    CHOICES_CHECKED_BY_SERVER,
    'every field checked by the server is still a writable field with a limit',
  )
  const failures: string[] = []
  for (const c of all) {
    if (byServer.includes(c)) continue
    const path = c.template.replace('{uuid}', uuid)
    const r = await call(t.app, c.method, path, { token: world.staff.token, body: { [c.field]: c.value } })
    const named = r.body && typeof r.body === 'object' && c.field in r.body
    if (r.status !== 400 || !named) {
      failures.push(`${c.method} ${c.template} ${c.field} (${c.rule}): ${r.status} ${r.text.slice(0, 160)}`)
    }
  }
  assert.deepEqual(failures, [])
})
