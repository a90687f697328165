// Every response a test produces is checked against the OpenAPI document the app serves: an
// undocumented status or a body that does not match its schema fails the test file.
import type { FastifyInstance } from 'fastify'
import { Ajv, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'

type Doc = {
  paths: Record<string, Record<string, { responses?: Record<string, any> }>>
  components?: Record<string, unknown>
}

/** The schema without `required` lists (a `field=` selection answers only the fields asked for). */
function withoutRequired(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutRequired)
  if (!node || typeof node !== 'object') return node
  return Object.fromEntries(
    Object.entries(node)
      .filter(([k, v]) => !(k === 'required' && Array.isArray(v)))
      .map(([k, v]) => [k, withoutRequired(v)]),
  )
}

export class Conformance {
  readonly problems: string[] = []
  private readonly ajv: Ajv
  private readonly cache = new Map<string, ValidateFunction | null>()
  private doc: Doc | null = null

  constructor() {
    this.ajv = new Ajv({ strict: false, allErrors: false, validateFormats: true })
    const addFormats = ((addFormatsModule as any).default ?? addFormatsModule) as (a: Ajv) => void
    addFormats(this.ajv)
  }

  install(app: FastifyInstance): void {
    app.addHook('onSend', async (request, reply, payload) => {
      const url = request.routeOptions.url
      if (!url || !url.startsWith('/api') || request.method === 'HEAD' || request.method === 'OPTIONS')
        return payload
      if (url.startsWith('/api/docs') || url === '/api/schema/') return payload
      this.doc ??= app.swagger() as unknown as Doc
      const path = url.replace(/:([A-Za-z_]+)/g, '{$1}')
      const op = this.doc.paths[path]?.[request.method.toLowerCase()]
      if (!op) return payload // hidden routes (e.g. the 405 answers) are not part of the contract
      const status = String(reply.statusCode)
      const response = op.responses?.[status]
      const where = `${request.method} ${path} → ${status}`
      if (!response) {
        this.problems.push(`${where}: status not documented`)
        return payload
      }
      const schema = response.content?.['application/json']?.schema
      if (!schema || typeof payload !== 'string' || payload === '') return payload
      let body: unknown
      try {
        body = JSON.parse(payload)
      } catch {
        this.problems.push(`${where}: body is not JSON`)
        return payload
      }
      // Records are named components: the schema is compiled with them, so its `$ref`s resolve.
      const selected = (request.query as Record<string, unknown> | undefined)?.field !== undefined
      const key = `${where}${selected ? ' (field selection)' : ''}`
      let validate = this.cache.get(key)
      if (validate === undefined) {
        try {
          const whole = { ...schema, components: this.doc.components }
          validate = this.ajv.compile((selected ? withoutRequired(whole) : whole) as object)
        } catch (e) {
          this.problems.push(`${where}: schema does not compile: ${(e as Error).message}`)
          validate = null
        }
        this.cache.set(key, validate)
      }
      if (validate && !validate(body)) {
        this.problems.push(`${where}: ${this.ajv.errorsText(validate.errors)} in ${payload.slice(0, 300)}`)
      }
      return payload
    })
  }
}
