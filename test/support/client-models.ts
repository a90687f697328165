// What the reference's generated Python client (`waldur-api-client` 8.1.0rc19, the one its site agent parses
// every answer with) requires of the records the agent reads: client-models.json lists, per model,
// each field the client's `from_dict` reads, whether it is required, whether null is accepted, and
// what it parses the value as (a UUID, a date-time, a date, an enum, a nested model, a list of
// them). A record the client would fail to parse fails the assertion, naming the field.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'

interface Field {
  required: boolean
  nullable: boolean
  kind: 'any' | 'uuid' | 'datetime' | 'date' | 'enum'
  enum?: string[]
  model?: string
  list?: boolean
}

const MODELS: Record<string, Record<string, Field>> = JSON.parse(
  readFileSync(new URL('./client-models.json', import.meta.url), 'utf8'),
)

const UUID = /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32})$/i
const DATE = /^\d{4}-\d{2}-\d{2}$/

function value(at: string, f: Field, v: unknown): void {
  if (v === null) {
    // A plain value is taken as it comes; a parsed one (UUID, date, enum, model, list) raises on null.
    const parsed = f.kind !== 'any' || f.model !== undefined || f.list
    assert.ok(f.nullable || !parsed, `${at} is null; the client parses it and cannot take null`)
    return
  }
  if (f.list) {
    assert.ok(Array.isArray(v), `${at} is not a list`)
    v.forEach((item, i) => value(`${at}[${i}]`, { ...f, list: false }, item))
    return
  }
  if (f.model !== undefined) {
    assert.ok(typeof v === 'object' && !Array.isArray(v), `${at} is not an object (${f.model})`)
    if (MODELS[f.model]) parses(f.model, v as Record<string, unknown>, at)
    return
  }
  switch (f.kind) {
    case 'uuid':
      return assert.match(String(v), UUID, `${at} is not a UUID: ${JSON.stringify(v)}`)
    case 'datetime':
      return assert.ok(typeof v === 'string' && !Number.isNaN(Date.parse(v)), `${at} is not a date-time`)
    case 'date':
      return assert.match(String(v), DATE, `${at} is not a date`)
    case 'enum':
      return assert.ok(
        f.enum!.includes(v as string),
        `${at}: ${JSON.stringify(v)} is not one of ${f.enum!.join(', ')}`,
      )
    case 'any':
      return
  }
}

function parses(model: string, record: Record<string, unknown>, where: string, selected = false): void {
  const fields = MODELS[model]
  assert.ok(fields, `no client model ${model}`)
  for (const [name, f] of Object.entries(fields)) {
    const at = `${where}.${name}`
    if (!(name in record)) {
      assert.ok(selected || !f.required, `${at} is required by the client and missing`)
      continue
    }
    value(at, f, record[name])
  }
}

/**
 * Asserts that the client parses `body` as `model` (a list of them when `list`). `selected`: the
 * request named its fields with `field=`, so fields not asked for may be absent.
 */
export function assertClientParses(
  model: string,
  body: unknown,
  opts: { list?: boolean; selected?: boolean } = {},
): void {
  if (opts.list) {
    assert.ok(Array.isArray(body), `${model} list: not a list`)
    body.forEach((item, i) => parses(model, item as Record<string, unknown>, `${model}[${i}]`, opts.selected))
    return
  }
  assert.ok(body && typeof body === 'object' && !Array.isArray(body), `${model}: not an object`)
  parses(model, body as Record<string, unknown>, model, opts.selected)
}

/** The fields of a resource the agent's membership_sync asks for with `field=`. */
export const AGENT_RESOURCE_FIELDS = [
  'uuid',
  'backend_id',
  'name',
  'slug',
  'state',
  'project_uuid',
  'project_slug',
  'customer_slug',
  'restrict_member_access',
  'backend_metadata',
  'limits',
  'paused',
  'downscaled',
  'attributes',
  'offering_plugin_options',
  'offering_backend_id',
  'project_name',
  'project_description',
  'customer_uuid',
  'customer_name',
  'end_date',
  'end_date_updated_at',
  'project_end_date',
]
