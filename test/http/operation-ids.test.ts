// The OpenAPI metadata of the resource kit: every operation it registers has the operationId the
// reference's schema generator would give it, a one-line summary and one tag; ids are unique; and
// the rule, run over the reference's own document, gives the reference's ids.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { operationId } from '../../src/http/resource.js'
import { sharedTestApp } from '../support/app.js'
import { REFERENCE_SCHEMA_PATH } from '../contract/contract.js'

type Op = {
  operationId?: string
  summary?: string
  tags?: string[]
  parameters?: { name: string; in: string; schema?: Record<string, unknown> }[]
  responses?: Record<string, { content?: Record<string, { schema?: Record<string, unknown> }> }>
}
type Doc = { paths: Record<string, Record<string, Op>>; components?: Record<string, Record<string, any>> }

/**
 * The paths declared with the kit: every area's, less the few routes written by hand (the
 * offering types, answered whole without pages; the site agents' statistics and the version, one
 * object each).
 */
const KIT_PATHS = /^\/api\/(?!marketplace-offering-types\/|marketplace-site-agent-stats\/|version\/)/

const t = sharedTestApp(async (t) => {
  const doc: Doc = (await t.app.inject({ url: '/api/schema/' })).json()
  return { doc }
})

function resolve(d: Doc, schema: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  const ref = schema?.$ref
  if (typeof ref !== 'string') return schema
  return ref
    .slice(2)
    .split('/')
    .reduce<any>((node, key) => node?.[key], d)
}

/**
 * The rule, written out again from its description (not by calling the kit): the path's segments
 * after /api/ without parameters, `-` → `_`, joined by `_`; then `count` for HEAD; for GET `list`
 * when it answers an array, else `retrieve`; `create` for POST on the collection; `update`,
 * `partial_update`, `destroy` for PUT, PATCH and DELETE (on the record or an action); nothing after
 * a POST action's name.
 */
function expectedId(d: Doc, path: string, method: string, op: Op): string {
  const segments = path
    .replace(/^\/api\//, '')
    .split('/')
    .filter(Boolean)
  const tokens = segments.filter((s) => !s.startsWith('{')).map((s) => s.replace(/-/g, '_'))
  const onCollection = segments.length === 1
  const ok = op.responses?.['200'] ?? op.responses?.['201']
  const body = resolve(d, ok?.content?.['application/json']?.schema)
  let suffix: string | null
  switch (method) {
    case 'head':
      suffix = 'count'
      break
    case 'get':
      suffix = body?.type === 'array' ? 'list' : 'retrieve'
      break
    case 'post':
      suffix = onCollection ? 'create' : null
      break
    // On a record or as an action's method alike (`..._update_comments_partial_update`).
    case 'put':
      suffix = 'update'
      break
    case 'patch':
      suffix = 'partial_update'
      break
    case 'delete':
      suffix = 'destroy'
      break
    default:
      throw new Error(`unexpected method ${method}`)
  }
  return [...tokens, ...(suffix ? [suffix] : [])].join('_')
}

function operations(d: Doc): [path: string, method: string, op: Op][] {
  const out: [string, string, Op][] = []
  for (const [path, methods] of Object.entries(d.paths))
    for (const [method, op] of Object.entries(methods))
      if (op && typeof op === 'object') out.push([path, method, op])
  return out
}

describe('operationId', () => {
  test('the function names operations as the reference does', () => {
    assert.equal(operationId('/api/payment-profiles/', 'list'), 'payment_profiles_list')
    assert.equal(operationId('/api/payment-profiles/', 'count'), 'payment_profiles_count')
    assert.equal(
      operationId('/api/payment-profiles/:uuid/', 'partial_update'),
      'payment_profiles_partial_update',
    )
    assert.equal(
      operationId('/api/marketplace-orders/:uuid/approve_by_consumer/', null),
      'marketplace_orders_approve_by_consumer',
    )
    assert.equal(
      operationId('/api/marketplace-orders/{uuid}/offering/', 'retrieve'),
      'marketplace_orders_offering_retrieve',
    )
    // The spec's area names are kept as written, case included.
    assert.equal(operationId('/api/cloudB-floating-ips/', 'list'), 'cloudB_floating_ips_list')
  })

  test('every operation follows the rule, with a summary and one tag', () => {
    const all = operations(t.doc)
    const areas = all.filter(([path]) => KIT_PATHS.test(path))
    // The kit's areas are wholly declared with it: list and count, retrieve, create, update,
    // partial update, delete and the actions.
    assert.equal(areas.length, 361)
    assert.ok(all.length > 200, `${all.length} operations`)
    for (const [path, method, op] of all) {
      const where = `${method.toUpperCase()} ${path}`
      assert.ok(op.operationId, `${where} has no operationId`)
      assert.equal(op.operationId, expectedId(t.doc, path, method, op), where)
      assert.ok(op.summary && !op.summary.includes('\n'), `${where}: one-line summary`)
      assert.equal(op.tags?.length, 1, `${where}: one tag`)
      const segments = path.split('/').filter(Boolean)
      const resource = segments[0] === 'api' ? segments[1] : segments[0]
      assert.equal(op.tags[0], resource, `${where}: tagged with its area or resource kind`)
    }
    const ids = all.map(([, , op]) => op.operationId)
    assert.equal(new Set(ids).size, ids.length, 'operationIds are unique')
    // Each cloud resource kind has its own tag.
    const tags = new Set(all.map(([, , op]) => op.tags![0]))
    for (const kind of [
      'cloudB-floating-ips',
      'cloudB-routers',
      'cloudB-ports',
      'cloudB-networks',
      'cloudB-tenants',
    ])
      assert.ok(tags.has(kind), kind)
  })

  test('records are named components, with their fields required', () => {
    const order = t.doc.paths['/api/marketplace-orders/{uuid}/']!.get!.responses!['200']!.content![
      'application/json'
    ]!.schema as { $ref?: string }
    assert.equal(order.$ref, '#/components/schemas/Order')
    const record = t.doc.components!.schemas!.Order
    assert.ok(record.required.includes('uuid') && record.required.includes('state'))
    assert.equal(record.properties.attributes.type[0], 'object')
    for (const [path, method, op] of operations(t.doc)) {
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        const where = `${method.toUpperCase()} ${path} ${status}`
        assert.notEqual((response as { description?: string }).description, 'Default Response', where)
        const schema = response.content?.['application/json']?.schema
        if (!schema) continue
        const body = (schema.type === 'array' ? schema.items : schema) as Record<string, unknown>
        if (body.type === 'object' && body.properties && Object.keys(body.properties).length)
          assert.fail(`${where}: an inline record`)
      }
    }
    for (const [name, schema] of Object.entries(t.doc.components!.schemas!)) {
      if (name.endsWith('Request') || name.endsWith('Error') || !schema.properties) continue
      assert.ok(Array.isArray(schema.required), `${name} lists its required fields`)
    }
  })

  test('the document names the product, its version and the server', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }
    const d = t.doc as Doc & { info: { title: string; version: string }; servers?: { url: string }[] }
    assert.equal(d.info.version, pkg.version)
    assert.equal(d.info.title, 'Marketplace API')
    assert.ok(d.servers?.length)
  })

  test('the ids equal the reference’s where the reference has the operation', () => {
    const reference = JSON.parse(readFileSync(REFERENCE_SCHEMA_PATH, 'utf8')) as Doc
    let compared = 0
    for (const [path, method, op] of operations(t.doc)) {
      if (!KIT_PATHS.test(path)) continue
      const theirs = reference.paths[path]?.[method]
      if (!theirs) continue
      // The cloud kinds' ids keep the spec's names where the reference kept its own.
      const expected = theirs.operationId!.replace(/^openstack_/, 'cloudB_').replace(/^azure_/, 'cloudA_')
      assert.equal(op.operationId, expected, `${method.toUpperCase()} ${path}`)
      compared++
    }
    assert.ok(compared >= 18, `compared ${compared}`)
  })

  test('the rule gives the reference’s own ids over its whole document', () => {
    const reference = JSON.parse(readFileSync(REFERENCE_SCHEMA_PATH, 'utf8')) as Doc
    // The reference's paths were renamed to the spec's names; its ids kept the original ones.
    const original = (path: string) =>
      path.replace('/api/cloudA-', '/api/azure-').replace('/api/cloudB-', '/api/openstack-')
    const ops = operations(reference)
    assert.ok(ops.length > 90)
    for (const [path, method, op] of ops) {
      assert.equal(expectedId(reference, original(path), method, op), op.operationId, `${method} ${path}`)
    }
  })

  test('query parameters are typed by their filter kind', () => {
    const params = (path: string) =>
      Object.fromEntries((t.doc.paths[path]!.get!.parameters ?? []).map((p) => [p.name, p.schema]))
    const profiles = params('/api/payment-profiles/')
    assert.equal(profiles.is_active?.type, 'boolean')
    assert.equal(profiles.organization?.format, 'uri')
    assert.equal(profiles.organization_uuid?.format, 'uuid')
    assert.deepEqual((profiles.payment_type?.items as { enum: string[] }).enum, [
      'fixed_price',
      'invoices',
      'payment_gw_monthly',
    ])
    assert.equal(profiles.page_size?.type, 'integer')
    const requests = params('/api/backend-resource-requests/')
    assert.equal(requests.created?.format, 'date-time')
    assert.deepEqual((requests.state?.items as { enum: string[] }).enum, [
      'Sent',
      'Processing',
      'Done',
      'Erred',
    ])
    assert.deepEqual((requests.o?.items as { enum: string[] }).enum, ['created', '-created'])
    const feedbacks = params('/api/support-feedbacks/')
    assert.equal((feedbacks.evaluation?.items as { type: string }).type, 'integer')
    // Areas outside the kit: typed from the record they filter, or by the parameter's kind.
    const orders = params('/api/marketplace-orders/')
    assert.equal(orders.page_size?.type, 'integer')
    assert.equal(orders.project_uuid?.format, 'uuid')
    assert.equal(orders.can_approve_as_consumer?.type, 'boolean')
    assert.equal(orders.created?.format, 'date-time')
    const state = (orders.state?.items ?? orders.state) as { enum?: string[] }
    assert.ok(state.enum?.includes('done'), JSON.stringify(orders.state))
    const fields = orders.field?.items as { enum?: string[] }
    assert.ok(fields.enum?.includes('uuid'))
  })
})
