// Property-based fuzzing derived from the served OpenAPI document: every operation receives
// generated requests (valid shapes, wrong types, missing and extra fields, huge strings, unicode,
// malformed uuids and hyperlinks, odd pages, injection attempts in filters and `o`). Every answer
// must be a documented status below 500 with a JSON body where one is due, and the database must
// stay consistent. FUZZ_RUNS scales the number of requests per operation.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { sql } from 'kysely'
import { sharedTestApp } from './support/app.js'
import { BASE, injectUntilStream } from './support/client.js'
import { makeCustomer, makeProject, makeUser, grant, withStaff } from './support/fixtures.js'
import { makeComponent, makeOffering, makeResource } from './support/catalog-fixtures.js'

const RUNS = Number(process.env.FUZZ_RUNS ?? 15)

type Schema = Record<string, any>
interface Operation {
  method: string
  path: string
  query: Record<string, Schema>
  body: Schema | null
  publicOp: boolean
}

const pool: string[] = []

const INJECTIONS = [
  "' OR '1'='1",
  '1; DROP TABLE users; --',
  '") OR 1=1 --',
  '%',
  '_',
  '\\',
  '${7*7}',
  '<script>alert(1)</script>',
  '../../etc/passwd',
  '\u0000',
  'null',
  '-created,name; delete from customers',
]

// The users the calls are made as, and the pool of existing uuids.
const t = sharedTestApp(async (t) => {
  const { staff } = await withStaff(t)
  const user = await makeUser(t.ctx)
  const c = await makeCustomer(t.ctx)
  const p = await makeProject(t.ctx, c)
  await grant(t.ctx, user, 'PROJECT.ADMIN', { type: 'project', id: p.id })
  // A resource of an offering, so that the resources' actions meet a real one (the staff caller
  // sees it as provider; the offering takes membership sync reports).
  const offering = await makeOffering(t.ctx, await makeCustomer(t.ctx), {
    pluginOptions: { enable_membership_sync_status: true },
  })
  const resource = await makeResource(t.ctx, offering, p, { state: 'Erred' })
  // A reported usage of the resource (and an account's share), so the usage actions meet real ones.
  await makeComponent(t.ctx, offering, { type: 'cpu', billingType: 'usage' })
  const set = await t.app.inject({
    method: 'POST',
    url: '/api/marketplace-component-usages/set_usage/',
    headers: { authorization: `Token ${staff.token}` },
    payload: { usages: [{ type: 'cpu', amount: '1.00' }], resource: resource.uuid },
  })
  assert.equal(set.statusCode, 201, set.body)
  const usage = await t.ctx.db.selectFrom('component_usages').select('uuid').executeTakeFirstOrThrow()
  await t.app.inject({
    method: 'POST',
    url: `/api/marketplace-component-usages/${usage.uuid}/set_user_usages/`,
    headers: { authorization: `Token ${staff.token}` },
    payload: { usages: [{ username: 'fuzz', usage: '1.00' }] },
  })
  pool.push(c.uuid, p.uuid, staff.uuid, user.uuid)
  // Every row with a uuid becomes a candidate for path parameters and hyperlinks.
  const tables = [
    'roles',
    'organization_groups',
    'offerings',
    'plans',
    'resources',
    'service_settings',
    'component_usages',
    'component_user_usages',
  ]
  for (const table of tables) {
    const rows = await sql<{ uuid: string }>`select uuid from ${sql.table(table)} limit 5`.execute(t.ctx.db)
    pool.push(...rows.rows.map((r) => r.uuid))
  }
  return { staff, user }
})

function operations(doc: any): Operation[] {
  const ops: Operation[] = []
  for (const [path, methods] of Object.entries<Record<string, any>>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(methods)) {
      const query: Record<string, Schema> = {}
      for (const p of op.parameters ?? [])
        if (p.in === 'query') query[p.name] = p.schema ?? { type: 'string' }
      const body = op.requestBody?.content?.['application/json']?.schema ?? null
      ops.push({
        method: method.toUpperCase(),
        path,
        query,
        body,
        publicOp: Array.isArray(op.security) && !op.security.length,
      })
    }
  }
  return ops
}

const uuidArb = (): fc.Arbitrary<string> =>
  fc.oneof(
    fc.constantFrom(...pool),
    fc.uuid(),
    fc.constantFrom(
      'not-a-uuid',
      '1',
      'ffffffff',
      '00000000000000000000000000000000',
      '%27',
      'x'.repeat(300),
    ),
  )

function poolUuid(): fc.Arbitrary<string> {
  return fc.oneof(fc.constantFrom(...pool), fc.uuid())
}

const linkArb = (): fc.Arbitrary<string> =>
  fc.oneof(
    fc
      .tuple(
        fc.constantFrom(
          'customers',
          'projects',
          'users',
          'marketplace-provider-offerings',
          'marketplace-plans',
          'service-settings',
          'roles',
        ),
        poolUuid(),
      )
      .map(([k, u]) => `${BASE}/api/${k}/${u}/`),
    fc.constantFrom('http://evil.example/', 'not a url', '/api/customers/zzz/', 'javascript:alert(1)', ''),
  )

/** A generated value as query text: objects without a prototype (no toString) as JSON. */
function text(v: unknown): string {
  if (v === null || typeof v !== 'object') return String(v)
  try {
    return JSON.stringify(v)
  } catch {
    return ''
  }
}

const hostile = fc.oneof(
  fc.constantFrom(...INJECTIONS),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.constantFrom('x'.repeat(5000), '🚀'.repeat(500)),
)

function valueFor(schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 4) return fc.anything({ maxDepth: 1 })
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map((s: Schema) => valueFor(s, depth + 1)))
  if (schema.enum) return fc.constantFrom(...schema.enum)
  const type = Array.isArray(schema.type) ? schema.type.find((x: string) => x !== 'null') : schema.type
  switch (type) {
    case 'string':
      if (schema.format === 'uri') return linkArb()
      if (schema.pattern?.includes('[0-9a-fA-F]{8}') || schema.format === 'uuid') return poolUuid()
      if (schema.format === 'date-time') return fc.date({ noInvalidDate: true }).map((d) => d.toISOString())
      if (schema.format === 'date')
        return fc.date({ noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10))
      return fc.oneof(fc.string({ maxLength: 20 }), linkArb(), hostile)
    case 'integer':
      return fc.oneof(
        fc.integer({ min: -10, max: 100 }),
        fc.constantFrom(0, 2 ** 31, -(2 ** 53), Number.MAX_SAFE_INTEGER),
      )
    case 'number':
      return fc.oneof(fc.double({ noNaN: true }), fc.constantFrom(0, 1e308, -1))
    case 'boolean':
      return fc.boolean()
    case 'array':
      return fc.array(valueFor(schema.items, depth + 1), { maxLength: 3 })
    case 'object': {
      const props: Record<string, fc.Arbitrary<unknown>> = {}
      for (const [k, v] of Object.entries<Schema>(schema.properties ?? {})) props[k] = valueFor(v, depth + 1)
      return fc.record(props, { requiredKeys: [] })
    }
    default:
      return fc.anything({ maxDepth: 1 })
  }
}

/** Valid-looking bodies, bodies with wrong types, extra and missing fields, and non-objects. */
function bodyFor(schema: Schema): fc.Arbitrary<unknown> {
  const valid = valueFor(schema)
  const wrongTypes = fc.dictionary(
    fc.constantFrom(...Object.keys(schema.properties ?? { x: 1 })),
    fc.oneof(fc.anything({ maxDepth: 2 }), hostile),
    { maxKeys: 5 },
  )
  const extra = valid.chain((v) =>
    fc
      .dictionary(fc.string({ maxLength: 10 }), fc.anything({ maxDepth: 1 }), { maxKeys: 3 })
      .map((x) => (typeof v === 'object' && v !== null ? { ...x, ...v } : x)),
  )
  return fc.oneof(valid, wrongTypes, extra, fc.constantFrom(null, [], 'string', 42, {}))
}

function queryFor(op: Operation): fc.Arbitrary<string> {
  const names = Object.keys(op.query)
  const param = fc.oneof(
    fc
      .constantFrom(...(names.length ? names : ['page']))
      .chain((name) =>
        fc
          .oneof(valueFor(op.query[name]), hostile)
          .map((v) => [[name, text(Array.isArray(v) ? (v[0] ?? '') : v)]] as [string, string][]),
      ),
    fc
      .tuple(
        fc.constantFrom('page', 'page_size'),
        fc.constantFrom('-1', '0', '99999999999', 'last', 'abc', '1.5'),
      )
      .map(([k, v]) => [[k, v]] as [string, string][]),
    fc
      .constantFrom(...INJECTIONS, 'created', '-created', 'name,-name', '')
      .map((v) => [['o', v]] as [string, string][]),
  )
  return fc.array(param, { maxLength: 4 }).map((parts) => new URLSearchParams(parts.flat()).toString())
}

test('every operation answers generated requests with a documented non-5xx status', async () => {
  const doc = (await t.app.inject({ url: '/api/schema/' })).json()
  const ops = operations(doc)
  assert.ok(ops.length > 20)
  let requests = 0
  for (const op of ops) {
    const arb = fc.record({
      path: fc.array(uuidArb(), { minLength: 4, maxLength: 4 }).map((ids) => {
        let i = 0
        return op.path.replace(/\{[^}]+\}/g, () => encodeURIComponent(ids[i++] ?? ''))
      }),
      query: queryFor(op),
      body: op.body ? bodyFor(op.body) : fc.constant(undefined),
      who: fc.constantFrom('staff', 'user', 'anonymous'),
    })
    await fc.assert(
      fc.asyncProperty(arb, async ({ path, query, body, who }) => {
        const token = who === 'staff' ? t.staff.token : who === 'user' ? t.user.token : null
        const headers: Record<string, string> = {}
        if (token) headers.authorization = `Token ${token}`
        let payload: string | undefined
        if (body !== undefined && op.method !== 'GET' && op.method !== 'DELETE') {
          headers['content-type'] = 'application/json'
          payload = JSON.stringify(body)
        }
        const url = query ? `${path}?${query}` : path
        const r = await injectUntilStream(t.app, { method: op.method, url, headers, payload })
        requests++
        if (r.statusCode >= 500) {
          throw new Error(`${op.method} ${url} ${payload ?? ''} → ${r.statusCode} ${r.body.slice(0, 300)}`)
        }
        const ct = String(r.headers['content-type'] ?? '')
        if (r.body && ct.includes('json')) JSON.parse(r.body)
        if (r.statusCode >= 400 && r.statusCode !== 403 && op.method !== 'HEAD') {
          assert.ok(ct.includes('json'), `${op.method} ${url} → ${r.statusCode} without a JSON body`)
        }
      }),
      { numRuns: RUNS, seed: 20261122, endOnFailure: true },
    )
  }
  assert.ok(requests >= ops.length * RUNS)
  if (process.env.FUZZ_VERBOSE) console.error(`fuzz: ${requests} requests over ${ops.length} operations`)
})

test('the database is still consistent after fuzzing', async () => {
  if (t.dialect === 'sqlite') {
    const fk = await sql`pragma foreign_key_check`.execute(t.ctx.db)
    assert.deepEqual(fk.rows, [])
    const integrity = await sql<{ integrity_check: string }>`pragma integrity_check`.execute(t.ctx.db)
    assert.equal(integrity.rows[0]?.integrity_check, 'ok')
  }
  const orphans = await sql<{
    n: number
  }>`select count(*) as n from projects p where not exists (select 1 from customers c where c.id = p.customer_id)`.execute(
    t.ctx.db,
  )
  assert.equal(Number(orphans.rows[0]?.n), 0)
  const admins = await t.ctx.db.selectFrom('users').select('id').where('id', '=', t.staff.id).execute()
  assert.equal(admins.length, 1)
})
