// The wire contract: a response of the nine spec areas is judged against the reference system's
// published OpenAPI 3.0 schema (reference-openapi.json beside this file), the one its generated
// clients are built from and validate against. The rules:
// - the operation is found from the method and the concrete path; literal segments win over {uuid};
// - $ref is resolved; readOnly, writeOnly, description, default and example are annotations only;
//   properties the schema does not declare are allowed;
// - a wrong JSON type, a value outside an enum, a bad format (uuid: hyphenated or 32 hex digits;
//   uri: an absolute http(s) URL; date-time; date; decimal string; ipv4/ipv6) or a violated
//   min/max/maxLength/pattern fails;
// - `uuid` and `url`, wherever an object schema declares them, are present and non-null;
// - a required property is present, and null only where the schema says nullable (or where
//   exceptions.ts lists it); a property that is not required may be absent or null;
// - a body is judged only against the schema's response for the status actually sent: a status the
//   schema does not document, or an empty body, is not judged here;
// - the exceptions of exceptions.ts (one table) apply on top.
import { readFileSync } from 'node:fs'
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'
import { CONTRACT_EXCEPTIONS, type ContractException } from './exceptions.js'

type Json = null | boolean | number | string | Json[] | { [k: string]: Json }
type SchemaObject = { [k: string]: any }

interface Operation {
  id: string
  method: string
  template: string
  segments: string[]
  responses: Record<string, SchemaObject | null>
}

export interface Violation {
  operation: string
  where: string
  pointer: string
  rule: string
  value: unknown
}

export function formatViolation(v: Violation): string {
  let shown: string
  try {
    shown = v.value === undefined ? '(absent)' : JSON.stringify(v.value)
  } catch {
    shown = String(v.value)
  }
  if (shown.length > 200) shown = `${shown.slice(0, 200)}…`
  return `contract: ${v.operation} (${v.where}): ${v.pointer || '/'} ${v.rule}; value ${shown}`
}

export const REFERENCE_SCHEMA_PATH = new URL('./reference-openapi.json', import.meta.url)

const ANNOTATIONS = ['readOnly', 'writeOnly', 'description', 'default', 'example', 'examples', 'title']
const UUID =
  /^(?:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|[0-9a-fA-F]{32})$/
const DECIMAL = /^-?\d+(?:\.\d+)?$/

function isAbsoluteHttpUrl(s: string): boolean {
  if (!/^https?:\/\//i.test(s)) return false
  try {
    new URL(s)
    return true
  } catch {
    return false
  }
}

/** The schema with OpenAPI 3.0's `nullable` turned into JSON Schema, and the contract's rules on
 * required, uuid/url and null applied to every object schema. */
function convert(node: any, nullAllowed: Set<string> | undefined, stripRequired: boolean): any {
  if (Array.isArray(node)) return node.map((n) => convert(n, undefined, stripRequired))
  if (node === null || typeof node !== 'object') return node
  const out: SchemaObject = {}
  for (const [k, v] of Object.entries(node)) {
    if (ANNOTATIONS.includes(k) || k.startsWith('x-') || k === 'nullable') continue
    if (k === 'properties') continue
    out[k] = convert(v, undefined, stripRequired)
  }
  if (node.properties && typeof node.properties === 'object') {
    const declared = Object.keys(node.properties)
    const required = new Set<string>(Array.isArray(node.required) ? node.required : [])
    for (const key of ['uuid', 'url']) if (declared.includes(key)) required.add(key)
    const props: SchemaObject = {}
    for (const [name, sub] of Object.entries<any>(node.properties)) {
      const identity = name === 'uuid' || name === 'url'
      // convert() already lets a nullable property be null; uuid and url never may.
      const converted = convert(identity ? { ...sub, nullable: false } : sub, undefined, stripRequired)
      const mayBeNull =
        !identity && sub?.nullable !== true && (!required.has(name) || (nullAllowed?.has(name) ?? false))
      props[name] = mayBeNull ? orNull(converted) : converted
    }
    out.properties = props
    if (stripRequired) delete out.required
    else out.required = [...required]
  }
  if (node.nullable === true) return orNull(out)
  return out
}

function orNull(schema: SchemaObject): SchemaObject {
  return { anyOf: [{ type: 'null' }, schema] }
}

export class Contract {
  private readonly operations: Operation[] = []
  private readonly validators = new Map<string, ValidateFunction | null>()
  private readonly ajv: Ajv
  private readonly lenientAjv: Ajv
  private readonly exceptions: ContractException[]

  constructor(
    document: any = JSON.parse(readFileSync(REFERENCE_SCHEMA_PATH, 'utf8')),
    exceptions = CONTRACT_EXCEPTIONS,
  ) {
    this.exceptions = exceptions
    const nullAllowed = new Map<string, Set<string>>()
    for (const e of exceptions)
      if (e.kind === 'null-allowed') nullAllowed.set(e.schema, new Set(e.properties))
    const components = (strip: boolean) =>
      Object.fromEntries(
        Object.entries<any>(document.components?.schemas ?? {}).map(([name, s]) => [
          name,
          convert(s, nullAllowed.get(name), strip),
        ]),
      )
    this.ajv = this.makeAjv(components(false))
    this.lenientAjv = this.makeAjv(components(true))
    for (const [template, item] of Object.entries<any>(document.paths ?? {})) {
      for (const [method, op] of Object.entries<any>(item)) {
        if (!op || typeof op !== 'object' || !op.responses) continue
        const responses: Record<string, SchemaObject | null> = {}
        for (const [status, r] of Object.entries<any>(op.responses)) {
          responses[status] = r?.content?.['application/json']?.schema ?? null
        }
        this.operations.push({
          id: op.operationId,
          method: method.toUpperCase(),
          template,
          segments: template.split('/'),
          responses,
        })
      }
    }
  }

  private makeAjv(schemas: Record<string, SchemaObject>): Ajv {
    const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true })
    const addFormats = ((addFormatsModule as any).default ?? addFormatsModule) as (
      a: Ajv,
      f?: string[],
    ) => void
    addFormats(ajv, ['date-time', 'date', 'ipv4', 'ipv6', 'email', 'int64', 'int32', 'double', 'float'])
    ajv.addFormat('uuid', UUID)
    ajv.addFormat('uri', isAbsoluteHttpUrl)
    ajv.addFormat('decimal', DECIMAL)
    ajv.addFormat('binary', true)
    ajv.addSchema({ $id: 'reference', components: { schemas } })
    return ajv
  }

  /** The operation a request reaches: literal segments win over `{uuid}`. */
  operationFor(method: string, path: string): Operation | undefined {
    const segments = path.split('?')[0]!.split('/')
    let best: Operation | undefined
    let bestLiterals = -1
    for (const op of this.operations) {
      if (op.method !== method || op.segments.length !== segments.length) continue
      let literals = 0
      let ok = true
      for (let i = 0; i < segments.length; i++) {
        const t = op.segments[i]!
        if (t.startsWith('{')) continue
        if (t !== segments[i]) {
          ok = false
          break
        }
        literals++
      }
      if (ok && literals > bestLiterals) {
        best = op
        bestLiterals = literals
      }
    }
    return best
  }

  /** The violations of one response; [] when it is not judged or holds. */
  check(r: { method: string; url: string; status: number; contentType?: string; body: string }): Violation[] {
    if (r.method === 'HEAD' || r.body === '') return []
    const path = r.url.split('?')[0]!
    const op = this.operationFor(r.method, path.endsWith('/') ? path : `${path}/`)
    if (!op) return []
    const status = String(r.status)
    const schema = op.responses[status]
    if (!schema) return []
    const where = `${r.method} ${op.template} → ${status}`
    if (
      this.exceptions.some(
        (e) => e.kind === 'body-not-judged' && e.operation === op.id && (!e.status || e.status === status),
      )
    )
      return []
    if (!/^application\/json\b/i.test(r.contentType ?? '')) {
      return [
        {
          operation: op.id,
          where,
          pointer: '',
          rule: `content-type must be application/json`,
          value: r.contentType,
        },
      ]
    }
    let body: Json
    try {
      body = JSON.parse(r.body)
    } catch {
      return [
        { operation: op.id, where, pointer: '', rule: 'body must be JSON', value: r.body.slice(0, 200) },
      ]
    }
    const judgedOn = this.exceptions.find((e) => e.kind === 'judged-on' && e.operation === op.id)
    if (judgedOn?.kind === 'judged-on' && body && typeof body === 'object' && !Array.isArray(body)) {
      body = Object.fromEntries(
        judgedOn.properties.map((p) => [p, (body as Record<string, Json>)[p] as Json]),
      )
    }
    const selected = new URLSearchParams(r.url.split('?')[1] ?? '').has('field')
    const lenient = selected && this.exceptions.some((e) => e.kind === 'field-selection')
    const validate = this.validator(
      op,
      status,
      schema,
      lenient,
      judgedOn?.kind === 'judged-on' ? judgedOn.properties : undefined,
    )
    if (!validate || validate(body)) return []
    return describe(validate.errors ?? [], body).map((e) => ({ operation: op.id, where, ...e }))
  }

  private validator(
    op: Operation,
    status: string,
    schema: SchemaObject,
    lenient: boolean,
    only: string[] | undefined,
  ): ValidateFunction | null {
    const key = `${op.method} ${op.template} ${status} ${lenient}`
    let v = this.validators.get(key)
    if (v !== undefined) return v
    const ajv = lenient ? this.lenientAjv : this.ajv
    let root = convert(rebase(schema), undefined, lenient)
    if (only) {
      // Judge the named properties of the record only.
      const record = resolveRecord(schema, ajv)
      const properties = Object.fromEntries(only.map((p) => [p, rebase(record?.properties?.[p] ?? {})]))
      root = {
        type: 'object',
        properties,
        required: only.filter((p) => p === 'uuid' || p === 'url' || record?.required?.includes(p)),
      }
    }
    v = ajv.compile(root)
    this.validators.set(key, v)
    return v
  }
}

/** `#/components/schemas/X` → `reference#/components/schemas/X`, in a schema taken out of its document. */
function rebase(node: any): any {
  if (Array.isArray(node)) return node.map(rebase)
  if (node === null || typeof node !== 'object') return node
  const out: SchemaObject = {}
  for (const [k, v] of Object.entries(node))
    out[k] = k === '$ref' && typeof v === 'string' ? `reference${v}` : rebase(v)
  return out
}

function resolveRecord(schema: SchemaObject, ajv: Ajv): SchemaObject | undefined {
  const ref: string | undefined = schema.$ref
  if (!ref) return schema
  return ajv.getSchema(`reference${ref}`)?.schema as SchemaObject | undefined
}

function valueAt(body: Json, pointer: string): unknown {
  let cur: any = body
  for (const part of pointer.split('/').slice(1)) {
    if (cur === null || typeof cur !== 'object') return undefined
    cur = cur[part.replace(/~1/g, '/').replace(/~0/g, '~')]
  }
  return cur
}

/** Ajv's errors as pointer, rule and value; the `null` branch of a nullable property is left out. */
function describe(errors: ErrorObject[], body: Json): Omit<Violation, 'operation' | 'where'>[] {
  const out: Omit<Violation, 'operation' | 'where'>[] = []
  const seen = new Set<string>()
  for (const e of errors) {
    if (e.keyword === 'anyOf') continue
    if (e.keyword === 'type' && (e.params as { type?: string }).type === 'null') continue
    let pointer = e.instancePath
    let rule: string
    switch (e.keyword) {
      case 'required':
        pointer = `${pointer}/${(e.params as { missingProperty: string }).missingProperty}`
        rule = 'is required'
        break
      case 'pattern':
        rule = `must match pattern ${(e.params as { pattern: string }).pattern}`
        break
      case 'format':
        rule = `must be format ${(e.params as { format: string }).format}`
        break
      case 'enum':
        rule = `must be one of ${JSON.stringify((e.params as { allowedValues: unknown[] }).allowedValues)}`
        break
      default:
        rule = `${e.keyword}: ${e.message ?? ''}`
    }
    const key = `${pointer} ${rule}`
    if (seen.has(key)) continue
    seen.add(key)
    out.push({ pointer, rule, value: valueAt(body, pointer) })
  }
  return out
}
