// The finishing pass over the OpenAPI document (`/api/schema/`), for the clients generated from it:
// every operation gets the operationId the resource kit gives its own (the reference's rule), a
// one-line summary and one tag per area or cloud resource kind; each response record and request
// body becomes a named component referenced by `$ref`, with `required` listing its fields; query
// parameters are typed from the record they filter; responses are described. Only the document
// changes: validation and serialization use the routes' own schemas, untouched.
import { operationId, RECORD_REQUIRED } from './resource-docs.js'
import { IDEMPOTENCY_HEADER, KEY_MAX_LENGTH, REPLAYED_HEADER } from './idempotency.js'

type Json = Record<string, any>

export interface DocumentInfo {
  title: string
  version: string
  /** The server's public URL, or null (then the document names a relative server). */
  publicUrl: string | null
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head'] as const

const STATUS_TEXT: Record<string, string> = {
  '200': 'Success',
  '201': 'Created',
  '202': 'Accepted: the change runs in the background',
  '204': 'Done; no content',
  '302': 'Redirect',
  '400': 'Invalid input: each field in error with its messages',
  '401': 'Missing or invalid token',
  '403': 'Not permitted',
  '404': 'Not found, or not visible to the caller',
  '405': 'Method not allowed',
  '409': 'Conflict with the current state',
  '413': 'Request body too large',
  '414': 'Request target too long',
  '415': 'Unsupported media type',
  '422': 'The Idempotency-Key was used for another request',
  '423': 'Locked',
  '429': 'Too many requests',
  '500': 'Server error',
  '502': 'Upstream failure',
  '503': 'Unavailable',
}

const ERROR_NAMES: Record<string, string> = {
  '400': 'ValidationError',
  '401': 'AuthenticationError',
  '403': 'PermissionError',
  '404': 'NotFoundError',
  '405': 'MethodNotAllowedError',
  '409': 'ConflictError',
  '413': 'PayloadTooLargeError',
  '414': 'UriTooLongError',
  '415': 'UnsupportedMediaTypeError',
  '422': 'IdempotencyKeyError',
  '429': 'ThrottledError',
}

/** The header every POST may carry (src/http/idempotency.ts). */
const IDEMPOTENCY_PARAMETER: Json = {
  name: IDEMPOTENCY_HEADER,
  in: 'header',
  required: false,
  description:
    `Makes a retry safe: the request is performed once per user and key, and a retry of the same ` +
    `request (method, path and body) within 24 hours answers the first answer again, with ` +
    `\`${REPLAYED_HEADER}: true\`. The same key with another request is 422; a retry while the ` +
    `first is still running is 409. Ignored on requests without a token.`,
  schema: { type: 'string', minLength: 1, maxLength: KEY_MAX_LENGTH },
}

/** Properties whose shape the routes leave open (any JSON), typed as far as they are known. */
const OPEN_PROPERTIES: Record<string, Json> = {
  attributes: { type: ['object', 'null'], additionalProperties: true },
  statistics: { type: ['object', 'null'], additionalProperties: true },
  offering_plugin_options: { type: ['object', 'null'], additionalProperties: true },
  plan_unit: { type: ['string', 'null'] },
  issue: { type: ['string', 'object', 'null'] },
  user_affiliations: { type: ['array', 'null'], items: { type: 'string' } },
  user_email_patterns: { type: ['array', 'null'], items: { type: 'string' } },
  user_identity_sources: { type: ['array', 'null'], items: { type: 'string' } },
  ip_address: { type: ['string', 'null'], description: 'IPv4 or IPv6 address' },
  nexthop: { type: 'string', description: 'IPv4 or IPv6 address' },
  options: { type: ['object', 'null'], additionalProperties: true },
  dry_run: { type: 'boolean' },
  older_than_hours: { type: 'integer', minimum: 0 },
  evaluation: { type: 'integer' },
  start: { type: 'string', description: 'first IPv4 or IPv6 address of the range' },
  end: { type: 'string', description: 'last IPv4 or IPv6 address of the range' },
  ethertype: { type: 'string', description: 'IPv4 or IPv6' },
  direction: { type: 'string', description: 'ingress or egress' },
  protocol: { type: 'string', description: 'tcp, udp, icmp, or empty for any' },
}

const BOOLEAN_PARAMS = /^(is_|can_|has_)|^(shared|billable|archived|stale|free|o_is_active)$/
const DATE_PARAMS = /^(created|modified)(_(before|after|from|to))?$|_(before|after)$/
const LINK_PARAMS = /^(customer|project|offering|resource|scope|tenant|resource_group|organization|plan)$/

function pascal(words: string): string {
  return words
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('')
}

function singular(word: string): string {
  if (/ies$/.test(word)) return word.replace(/ies$/, 'y')
  if (/(ss|us)$/.test(word)) return word
  if (/(ches|shes|sses|xes)$/.test(word)) return word.replace(/es$/, '')
  return word.replace(/s$/, '')
}

/** The tag of a path: its first segment after `/api/` (the area, or the cloud resource kind). */
export function tagOf(path: string): string {
  const segments = path.split('/').filter(Boolean)
  return segments[0] === 'api' ? (segments[1] ?? 'api') : (segments[0] ?? 'api')
}

function segmentsOf(path: string): string[] {
  return path
    .replace(/^\/api\//, '')
    .split('/')
    .filter(Boolean)
}

function jsonSchemaOf(holder: Json | undefined): Json | undefined {
  return holder?.content?.['application/json']?.schema
}

function isRecord(s: Json | undefined): boolean {
  return !!s && !s.$ref && s.type === 'object' && !!s.properties && Object.keys(s.properties).length > 0
}

/** The suffix of the operation's id, as the rule names it. */
function suffixOf(path: string, method: string, op: Json): string | null {
  const segments = segmentsOf(path)
  const onRecord = segments[segments.length - 1]?.startsWith('{') ?? false
  const onCollection = segments.length === 1
  switch (method) {
    case 'head':
      return 'count'
    case 'get': {
      const body = jsonSchemaOf(op.responses?.['200'])
      return body?.type === 'array' ? 'list' : 'retrieve'
    }
    case 'post':
      return onCollection ? 'create' : null
    case 'put':
      return onRecord ? 'update' : null
    case 'patch':
      return onRecord ? 'partial_update' : null
    case 'delete':
      return onRecord ? 'destroy' : null
    default:
      return null
  }
}

function summaryOf(path: string, method: string, suffix: string | null): string {
  const segments = segmentsOf(path).filter((s) => !s.startsWith('{'))
  const resource = (segments[0] ?? '').replace(/[-_]/g, ' ')
  const one = singular(resource)
  const rest = segments.slice(1).join(' ').replace(/[-_]/g, ' ')
  const onRecord = segmentsOf(path).some((s) => s.startsWith('{'))
  switch (suffix) {
    case 'list':
      return rest ? `List the ${rest} of ${onRecord ? `a ${one}` : resource}` : `List ${resource}`
    case 'count':
      return `Count ${resource}: headers only, no body`
    case 'create':
      return `Create a ${one}`
    case 'retrieve':
      return rest ? `Get the ${rest} of ${onRecord ? `a ${one}` : resource}` : `Get a ${one}`
    case 'update':
      return `Replace a ${one}`
    case 'partial_update':
      return `Update fields of a ${one}`
    case 'destroy':
      return `Delete a ${one}`
    default: {
      const verb = method === 'delete' ? 'Delete' : method === 'put' || method === 'patch' ? 'Change' : ''
      const action = rest || resource
      const text = verb ? `${verb} ${action}` : action[0]!.toUpperCase() + action.slice(1)
      return onRecord ? `${text} (${one})` : text
    }
  }
}

/** The base name of the records a path answers: `Order`, `CloudBFloatingIp`, `OrderOffering`. */
function baseName(path: string): string {
  const segments = segmentsOf(path).filter((s) => !s.startsWith('{'))
  const [first = 'api', ...rest] = segments
  const resource = pascal(singular(first.replace(/^marketplace-/, '').replace(/^api-/, '')))
  return resource + rest.map((s) => pascal(s)).join('')
}

class Components {
  readonly schemas: Json
  private readonly byContent = new Map<string, string>()

  constructor(existing: Json | undefined) {
    this.schemas = existing ?? {}
    for (const [name, schema] of Object.entries(this.schemas))
      this.byContent.set(JSON.stringify(schema), name)
  }

  /** The `$ref` of the schema, named from the candidates (first free one), shared when identical. */
  ref(schema: Json, candidates: string[]): Json {
    const key = JSON.stringify(schema)
    let name = this.byContent.get(key)
    if (!name) {
      name = candidates.find((c) => !(c in this.schemas))
      for (let i = 2; !name; i++) if (!(`${candidates[0]}${i}` in this.schemas)) name = `${candidates[0]}${i}`
      this.schemas[name] = schema
      this.byContent.set(key, name)
    }
    return { $ref: `#/components/schemas/${name}` }
  }
}

/** Types the open properties known by name, at any depth of the schema. */
function typeProperties(schema: Json): void {
  if (!schema || typeof schema !== 'object') return
  for (const [name, prop] of Object.entries<Json>(schema.properties ?? {})) {
    const open = Object.keys(prop).filter((k) => k !== 'description').length === 0
    if (open && OPEN_PROPERTIES[name]) schema.properties[name] = { ...OPEN_PROPERTIES[name], ...prop }
    else typeProperties(prop)
  }
  if (schema.items && typeof schema.items === 'object') typeProperties(schema.items)
  for (const key of ['anyOf', 'oneOf', 'allOf'])
    if (Array.isArray(schema[key])) for (const member of schema[key] as Json[]) typeProperties(member)
}

/**
 * A response record: its open properties typed and every property listed as required, except
 * those its declaration makes optional (a kit resource's record notes its required ones).
 */
function finishRecord(record: Json): Json {
  typeProperties(record)
  const declared = record[RECORD_REQUIRED] as string[] | undefined
  delete record[RECORD_REQUIRED]
  if (!record.required) record.required = declared ?? Object.keys(record.properties)
  return record
}

function plainString(s: Json | undefined): boolean {
  return !!s && s.type === 'string' && !s.enum && !s.format && !s.pattern
}

function stripNull(s: Json): Json {
  const out: Json = { ...s }
  delete out.description
  if (Array.isArray(out.type)) {
    const types = out.type.filter((t: string) => t !== 'null')
    out.type = types.length === 1 ? types[0] : types
  }
  if (Array.isArray(out.enum)) out.enum = out.enum.filter((v: unknown) => v !== null)
  return out
}

/** The type of a query parameter, from the record's field of that name or the parameter's name. */
function paramType(name: string, record: Json | undefined): Json | null {
  const field = record?.properties?.[name] as Json | undefined
  if (
    field &&
    (field.enum || field.format || ['boolean', 'integer', 'number'].includes(stripNull(field).type))
  )
    return stripNull(field)
  if (name === 'page')
    return {
      anyOf: [
        { type: 'integer', minimum: 1 },
        { type: 'string', enum: ['last'] },
      ],
    }
  if (name === 'page_size') return { type: 'integer', minimum: 1 }
  if (name === 'uuid' || name.endsWith('_uuid')) return { type: 'string', format: 'uuid' }
  if (BOOLEAN_PARAMS.test(name)) return { type: 'boolean' }
  if (DATE_PARAMS.test(name)) return { type: 'string', format: 'date-time' }
  if (LINK_PARAMS.test(name)) return { type: 'string', format: 'uri' }
  return null
}

function typeParameters(op: Json, record: Json | undefined): void {
  for (const p of (op.parameters ?? []) as Json[]) {
    if (p.in !== 'query' || !p.schema) continue
    const many = p.schema.type === 'array'
    const current = many ? p.schema.items : p.schema
    if (p.name === 'field' && many && plainString(current) && record?.properties) {
      p.schema = { ...p.schema, items: { type: 'string', enum: Object.keys(record.properties) } }
      continue
    }
    if (!plainString(current)) continue
    const typed = paramType(p.name, record)
    if (!typed) continue
    p.schema = many ? { ...p.schema, items: typed } : typed
  }
}

/** Finishes the generated document in place (see the file's header). */
export function finishDocument(generated: Json, info: DocumentInfo): Json {
  // A copy: the generator may hand out the routes' own schema objects.
  const doc = JSON.parse(JSON.stringify(generated)) as Json
  doc.info = { ...doc.info, title: info.title, version: info.version }
  doc.servers = [
    info.publicUrl
      ? { url: info.publicUrl, description: 'this server' }
      : { url: '/', description: 'this server (its own address)' },
  ]
  doc.components ??= {}
  const components = new Components(doc.components.schemas)
  const tags = new Set<string>()

  for (const [path, item] of Object.entries<Json>(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method] as Json | undefined
      if (!op) continue
      const suffix = suffixOf(path, method, op)
      op.operationId ??= operationId(path, suffix)
      if (!op.summary) op.summary = summaryOf(path, method, suffix)
      const tag = tagOf(path)
      op.tags = [tag]
      tags.add(tag)
      const base = baseName(path)
      const opName = pascal(op.operationId as string)

      let record: Json | undefined
      for (const [status, response] of Object.entries((op.responses ?? {}) as Json)) {
        if (!response.description || response.description === 'Default Response')
          response.description = STATUS_TEXT[status] ?? `Status ${status}`
        const media = response.content?.['application/json']
        const schema = media?.schema as Json | undefined
        if (!schema) continue
        if (status.startsWith('2')) {
          if (schema.type === 'array' && isRecord(schema.items)) {
            record = finishRecord(schema.items)
            media.schema = { ...schema, items: components.ref(record, [base, `${base}Item`, opName]) }
          } else if (isRecord(schema)) {
            record = finishRecord(schema)
            media.schema = components.ref(record, [base, opName])
          }
        } else if (isRecord(schema) || (schema.type === 'object' && schema.additionalProperties)) {
          const name = ERROR_NAMES[status] ?? `Error${status}`
          media.schema = components.ref(schema, [name, `${name}${opName}`])
        }
      }
      typeParameters(op, record)
      if (method === 'post')
        op.parameters = [...((op.parameters as Json[] | undefined) ?? []), IDEMPOTENCY_PARAMETER]

      const body = op.requestBody?.content?.['application/json']
      if (isRecord(body?.schema)) {
        typeProperties(body.schema)
        body.schema = components.ref(body.schema, [`${base}Request`, `${opName}Request`])
      }
    }
  }
  doc.components.schemas = components.schemas
  doc.tags = [...tags].sort().map((name) => ({ name }))
  return doc
}
