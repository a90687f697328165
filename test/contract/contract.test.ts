// The contract check itself: it catches broken bodies, names what broke, and applies the rules and
// exceptions of contract.ts and exceptions.ts (and nothing more).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import Fastify from 'fastify'
import { Contract, formatViolation } from './contract.js'
import { ContractWatch } from '../support/contract-watch.js'

const contract = new Contract()
const U = '0190c0de-0000-7000-8000-000000000001'
const HOST = 'http://localhost'

function profile(over: Record<string, unknown> = {}) {
  return {
    uuid: U,
    url: `${HOST}/api/payment-profiles/${U}/`,
    name: 'Invoice',
    organization_uuid: U,
    organization: `${HOST}/api/customers/${U}/`,
    attributes: { end_date: '2027-01-01', agreement_number: 'A-1', contract_sum: 100 },
    payment_type: 'invoices',
    payment_type_display: 'Invoices',
    is_active: true,
    ...over,
  }
}

const judge = (method: string, url: string, status: number, body: unknown) =>
  contract.check({
    method,
    url,
    status,
    contentType: 'application/json; charset=utf-8',
    body: JSON.stringify(body),
  })

test('a body that holds passes', () => {
  assert.deepEqual(judge('GET', `/api/payment-profiles/${U}/`, 200, profile()), [])
  assert.deepEqual(judge('GET', '/api/payment-profiles/?page=2', 200, [profile(), profile()]), [])
})

test('a broken order slug is caught, naming the operation, the pointer, the rule and the value', () => {
  const v = judge('GET', `/api/marketplace-orders/${U}/`, 200, { uuid: U, url: `${HOST}/x/`, slug: '' })
  assert.equal(v.length, 1)
  assert.equal(v[0]!.operation, 'marketplace_orders_retrieve')
  assert.equal(v[0]!.pointer, '/slug')
  assert.match(v[0]!.rule, /pattern/)
  assert.equal(v[0]!.value, '')
  assert.equal(
    formatViolation(v[0]!),
    'contract: marketplace_orders_retrieve (GET /api/marketplace-orders/{uuid}/ → 200): /slug must match pattern ^[-a-zA-Z0-9_]+$; value ""',
  )
})

test('wrong types, enums, formats, limits and missing or null required fields are caught', () => {
  const cases: [Record<string, unknown>, string, string][] = [
    [{ is_active: 'yes' }, '/is_active', 'type'],
    [{ payment_type: 'barter' }, '/payment_type', 'one of'],
    [{ organization: 'ftp://x/y' }, '/organization', 'format uri'],
    [{ organization: '/api/customers/x/' }, '/organization', 'format uri'],
    [{ organization_uuid: 'not-a-uuid' }, '/organization_uuid', 'format uuid'],
    [{ name: 'x'.repeat(151) }, '/name', 'maxLength'],
    [{ uuid: undefined }, '/uuid', 'required'],
    [{ url: null }, '/url', 'type'],
    [{ attributes: { contract_sum: 1.5 } }, '/attributes/contract_sum', 'type'],
  ]
  for (const [over, pointer, rule] of cases) {
    const v = judge('GET', `/api/payment-profiles/${U}/`, 200, profile(over))
    assert.ok(
      v.some((x) => x.pointer === pointer && x.rule.includes(rule)),
      `${JSON.stringify(over)}: ${v.map(formatViolation).join('; ')}`,
    )
  }
  // A required field may not be null where the schema does not say nullable.
  const service = judge('GET', `/api/marketplace-site-agent-services/${U}/`, 200, {
    uuid: U,
    url: `${HOST}/s/`,
    name: null,
  })
  assert.ok(
    service.some((x) => x.pointer === '/name' && x.rule.includes('type')),
    service.map(formatViolation).join('; '),
  )
  assert.ok(service.some((x) => x.pointer === '/identity' && x.rule === 'is required'))
  // Inside a list, the pointer names the item.
  const list = judge('GET', '/api/payment-profiles/', 200, [profile(), profile({ is_active: 1 })])
  assert.deepEqual(
    list.map((x) => x.pointer),
    ['/1/is_active'],
  )
})

test('hyphenated and 32-digit uuids, and absent or null optional fields, are accepted', () => {
  const bare = U.replace(/-/g, '')
  assert.deepEqual(judge('GET', `/api/payment-profiles/${U}/`, 200, profile({ organization_uuid: bare })), [])
  const { payment_type_display: _, ...rest } = profile()
  assert.deepEqual(judge('GET', `/api/payment-profiles/${U}/`, 200, rest), [])
})

test('the exceptions: bodies not judged, bodies judged on some fields, nulls allowed, field selection', () => {
  // approve_by_consumer's body is left open by the spec.
  assert.deepEqual(judge('POST', `/api/marketplace-orders/${U}/approve_by_consumer/`, 200, { x: 1 }), [])
  // actions/ (a literal segment, not a uuid) is judged on `actions` only.
  assert.deepEqual(
    judge('GET', '/api/marketplace-offering-estimated-cost-policies/actions/', 200, {
      actions: 'a,b',
      url: null,
    }),
    [],
  )
  const actions = judge('GET', '/api/marketplace-offering-estimated-cost-policies/actions/', 200, {
    actions: 5,
  })
  assert.equal(actions[0]?.operation, 'marketplace_offering_estimated_cost_policies_actions_retrieve')
  // A required field the reference itself sends as null.
  const policy = judge('GET', `/api/marketplace-offering-estimated-cost-policies/${U}/`, 200, {
    uuid: U,
    url: `${HOST}/p/`,
    fired_datetime: null,
  })
  assert.ok(!policy.some((x) => x.pointer === '/fired_datetime'), policy.map(formatViolation).join('; '))
  assert.ok(policy.some((x) => x.pointer === '/scope' && x.rule === 'is required'))
  // With ?field=, absent properties are not judged; present ones still are.
  assert.deepEqual(judge('GET', `/api/payment-profiles/${U}/?field=name`, 200, { name: 'x' }), [])
  assert.equal(judge('GET', `/api/payment-profiles/${U}/?field=name`, 200, { name: 5 }).length, 1)
})

test('statuses the schema does not document, empty bodies, HEAD and other paths are not judged', () => {
  assert.deepEqual(judge('GET', `/api/payment-profiles/${U}/`, 404, { detail: 'Not found.' }), [])
  assert.deepEqual(
    contract.check({ method: 'POST', url: `/api/cloudA-public-ips/${U}/pull/`, status: 202, body: '' }),
    [],
  )
  assert.deepEqual(
    contract.check({ method: 'HEAD', url: '/api/payment-profiles/', status: 200, body: '[1]' }),
    [],
  )
  assert.deepEqual(judge('GET', '/api/customers/', 200, [{ nothing: true }]), [])
  const html = contract.check({
    method: 'GET',
    url: `/api/payment-profiles/${U}/`,
    status: 200,
    contentType: 'text/html',
    body: '<p>',
  })
  assert.match(html[0]!.rule, /content-type/)
})

test('in a test app, a broken body makes the app.inject call that received it reject', async () => {
  const app = Fastify()
  const watch = new ContractWatch()
  watch.install(app)
  app.addHook('onSend', async (request, reply, payload) => {
    void reply.header('x-request-id', request.id)
    return payload
  })
  app.get('/api/payment-profiles/:uuid/', async () => profile({ is_active: 'yes' }))
  app.get('/api/payment-profiles/', async () => [profile()])
  await app.ready()
  await assert.rejects(
    app.inject({ url: `/api/payment-profiles/${U}/` }),
    /contract: payment_profiles_retrieve \(GET \/api\/payment-profiles\/\{uuid\}\/ → 200\): \/is_active type: must be boolean; value "yes"/,
  )
  assert.equal((await app.inject({ url: '/api/payment-profiles/' })).statusCode, 200)
  watch.assertNoneLeft()
  await app.close()
})
