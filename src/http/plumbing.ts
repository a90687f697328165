// Cross-cutting HTTP behaviour registered once: validators, body parsing, base URL, security
// headers, CORS, 405 for known paths (rate limits: rate-limit.ts; metrics: metrics.ts).
import cors from '@fastify/cors'
import helmet from 'helmet'
import { Ajv, type Options as AjvOptions, type ValidateFunction } from 'ajv'
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import addFormatsModule from 'ajv-formats'
import type { FastifyInstance, HTTPMethods } from 'fastify'
import type { Config } from '../config.js'
import { AppError, fieldError, methodNotAllowed } from './errors.js'
import { FieldErrorsBody } from './schemas.js'

export type { MetricCounter } from './metrics.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** Scheme and host every absolute URL in the response is built from. */
    baseUrl: string
  }
  interface FastifyInstance {
    appConfig: Config
  }
}

function makeAjv(opts: AjvOptions): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: true, useDefaults: true, ...opts })
  // ajv-formats is CommonJS: its default export arrives under .default in ESM.
  const addFormats = ((addFormatsModule as any).default ?? addFormatsModule) as (a: Ajv) => void
  addFormats(ajv)
  ajv.addFormat('http-url', isHttpUrl)
  return ajv
}

/** An absolute http(s) URL that the WHATWG parser accepts. */
export function isHttpUrl(s: string): boolean {
  if (!/^https?:\/\/[^\s/?#]/i.test(s)) return false
  try {
    new URL(s)
    return true
  } catch {
    return false
  }
}

/**
 * Marks a schema of a request part that the route's handler parses itself (the resource kit's
 * query parsers, compiled from the filter declarations): the schema then only documents the part
 * and no validator is compiled for it.
 */
export const PARSED_BY_HANDLER = Symbol('parsed by the handler')

const acceptAll = () => true

/**
 * Bodies are validated strictly (no type coercion: `null` is not 0, "1" is not 1) with unknown
 * fields dropped; query strings and params coerce, and a single value becomes an array.
 */
export function installValidators(app: FastifyInstance): void {
  const compile = requestValidators()
  app.setValidatorCompiler((route) => {
    if ((route.schema as { [PARSED_BY_HANDLER]?: boolean })[PARSED_BY_HANDLER]) return acceptAll
    return lazyValidator(() => compile(route))
  })
}

/** Compiles a route part's schema at once, with the Ajv for its part (the body's or the others'). */
export function requestValidators(): (route: { schema: object; httpPart?: string }) => ValidateFunction {
  const bodyAjv = makeAjv({ coerceTypes: false, removeAdditional: true })
  const queryAjv = makeAjv({ coerceTypes: 'array', removeAdditional: false })
  return ({ schema, httpPart }) => (httpPart === 'body' ? bodyAjv : queryAjv).compile(schema)
}

/**
 * A validator compiled when a request first needs it, not when its route is registered: compiling
 * every route's schemas took most of the server's start (about half a second of the 0.75 s a build
 * took, with the serializers below), and a process serves few of its routes in its first seconds;
 * a test file builds an app and calls a handful. Fastify reads the errors off the function, as
 * from Ajv's.
 */
function lazyValidator(compile: () => ValidateFunction) {
  let compiled: ValidateFunction | undefined
  const validate = (data: unknown): boolean => {
    compiled ??= compile()
    const valid = compiled(data)
    validate.errors = compiled.errors
    return valid
  }
  validate.errors = null as ValidateFunction['errors']
  return validate
}

/**
 * Fastify's response serializers (fast-json-stringify, as by default), each compiled at its first
 * response rather than when its route is registered, for the reason the validators are.
 */
export function lazySerializers(): ReturnType<typeof SerializerSelector> {
  const build = SerializerSelector()
  return (externalSchemas, options) => {
    const compile = build(externalSchemas, options)
    return (route) => {
      let serialize: ((doc: unknown) => string) | undefined
      return (doc) => (serialize ??= compile(route))(doc)
    }
  }
}

const NUL_MESSAGE = 'Null characters are not allowed.'

function hasNul(v: unknown): boolean {
  if (typeof v === 'string') return v.includes('\u0000')
  if (Array.isArray(v)) return v.some(hasNul)
  if (v !== null && typeof v === 'object')
    return Object.entries(v).some(([k, x]) => k.includes('\u0000') || hasNul(x))
  return false
}

/**
 * 400 naming the first field of a body or query that holds a null character (U+0000) anywhere
 * in it, as DRF's text fields refuse them; a key holding one is a non-field error. PostgreSQL
 * stores no null character in text or JSON, so such a value was a 500 there (and stored on
 * SQLite): both databases now answer the same.
 */
export function nulCharacterError(value: unknown): AppError | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return hasNul(value) ? fieldError('non_field_errors', NUL_MESSAGE) : null
  }
  for (const [k, v] of Object.entries(value)) {
    if (k.includes('\u0000')) return fieldError('non_field_errors', NUL_MESSAGE)
    if (hasNul(v)) return fieldError(k, NUL_MESSAGE)
  }
  return null
}

/** JSON bodies: an empty body is an empty object (as DRF treats it). */
export function installBodyParsing(app: FastifyInstance): void {
  app.removeContentTypeParser(['application/json', 'text/plain'])
  app.addContentTypeParser(
    /^application\/([\w.+-]+\+)?json(\s*;.*)?$/i,
    { parseAs: 'string' },
    (_req, body: string | Buffer, done) => {
      const text = typeof body === 'string' ? body : body.toString('utf8')
      if (text.trim() === '') {
        done(null, {})
        return
      }
      let parsed: unknown
      try {
        parsed = JSON.parse(text)
      } catch (e) {
        done(new AppError('invalid', `JSON parse error - ${(e as Error).message}`), undefined)
        return
      }
      // JSON can only carry a null character escaped: look for one only then.
      const nul = text.includes('\\u0000') ? nulCharacterError(parsed) : null
      if (nul) done(nul, undefined)
      else done(null, parsed)
    },
  )
  // Form posts are accepted for the few actions clients send that way; fields become strings.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    const out: Record<string, string> = {}
    for (const [k, v] of new URLSearchParams(String(body))) out[k] = v
    const nul = nulCharacterError(out)
    if (nul) done(nul, undefined)
    else done(null, out)
  })
  // A query string can only carry a null character percent-encoded: look for one only then.
  app.addHook('preValidation', (request, _reply, done) => {
    done((request.url.includes('%00') && nulCharacterError(request.query)) || undefined)
  })
}

/** A write without a body is validated as an empty object (DRF treats it so): fields it needs
 * are then reported as required, by name. */
export function installEmptyBody(app: FastifyInstance): void {
  app.addHook('preValidation', (request, _reply, done) => {
    if (
      request.body === undefined &&
      (request.method === 'POST' || request.method === 'PUT' || request.method === 'PATCH')
    ) {
      request.body = {}
    }
    done()
  })
}

export function installBaseUrl(app: FastifyInstance, config: Config): void {
  const { publicUrl } = config
  app.decorateRequest('baseUrl', publicUrl ?? '')
  // With PUBLIC_URL every request has it (the decorator's value); otherwise it is the request's own.
  if (publicUrl) return
  app.addHook('onRequest', (request, _reply, done) => {
    const host = request.host || 'localhost'
    const safeHost = /^[A-Za-z0-9.\-:[\]]+$/.test(host) ? host : 'localhost'
    request.baseUrl = `${request.protocol}://${safeHost}`
    done()
  })
}

/**
 * A request target (path and query) longer than URL_LIMIT_BYTES is 414, before anything else is
 * done with it. A list repeats its query in the links of its Link header, so without a bound a
 * long query made a response whose headers Node's and most clients' parsers refuse (16 KB).
 */
export function installUrlLimit(app: FastifyInstance, config: Config): void {
  const limit = config.urlLimitBytes
  const message = `The request URI is too long: at most ${limit} bytes are accepted.`
  app.addHook('onRequest', (request, _reply, done) => {
    // The target arrives as bytes read as latin1: its length is its size in bytes.
    done(request.url.length > limit ? new AppError('uri_too_long', message) : undefined)
  })
}

/**
 * Security headers from helmet (its set, computed once at start), with a Content-Security-Policy that
 * allows nothing on API responses (they are JSON, never rendered), no framing and same-origin
 * referrers and opener. The docs UI sets its own policy (app.ts). Every response also carries its
 * request id.
 */
export async function installSecurityHeaders(app: FastifyInstance): Promise<void> {
  const headers = helmetHeaders({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] },
    },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'same-origin' },
    crossOriginOpenerPolicy: { policy: 'same-origin' },
    // Headers for HTML documents in old browsers (IE's download prompt and XSS filter, Flash's
    // cross-domain files, DNS prefetching of links, origin-keyed agent clusters): an API answering
    // JSON has no use for them, and each header sent costs every request its share of the time.
    originAgentCluster: false,
    xDnsPrefetchControl: false,
    xDownloadOptions: false,
    xPermittedCrossDomainPolicies: false,
    xXssProtection: false,
  })
  app.addHook('onRequest', (request, reply, done) => {
    void reply.headers(headers)
    void reply.header('x-request-id', request.id)
    done()
  })
}

/**
 * The headers helmet sets, computed once: they depend only on the options, and running helmet's
 * middleware on every request (as @fastify/helmet does) cost the bare stack over half its
 * throughput (docs/decisions.md).
 */
export function helmetHeaders(options: Parameters<typeof helmet>[0]): Record<string, string> {
  const headers: Record<string, string> = {}
  const res = {
    setHeader: (name: string, value: unknown) => void (headers[name.toLowerCase()] = String(value)),
    removeHeader: (name: string) => void delete headers[name.toLowerCase()],
  }
  helmet(options)({} as never, res as never, () => undefined)
  return headers
}

/** CORS through @fastify/cors, for the origins of CORS_ORIGINS only (none: no CORS headers). */
export async function installCors(app: FastifyInstance, config: Config): Promise<void> {
  if (!config.corsOrigins.length) return
  const any = config.corsOrigins.includes('*')
  await app.register(cors, {
    origin: any ? '*' : config.corsOrigins,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    allowedHeaders: ['Authorization', 'Content-Type', 'X-Request-Id', 'Idempotency-Key'],
    exposedHeaders: ['Link', 'X-Result-Count', 'X-Request-Id', 'Retry-After', 'Idempotent-Replayed'],
    maxAge: 600,
    // Preflights are answered in the onRequest phase, before authentication and the rate limit.
    hook: 'onRequest',
  })
}

const METHODS: HTTPMethods[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']
const GENERIC_STATUSES = [401, 404, 413, 414, 415, 429] as const
const GENERIC_ERROR = {
  type: 'object',
  properties: { detail: { type: 'string' } },
  required: ['detail'],
  additionalProperties: true,
  description: 'Error detail',
}

/** Collects the methods of every route so wrong methods on a known path answer 405, not 404. */
export function collectRoutes(app: FastifyInstance): Map<string, Set<string>> {
  const routes = new Map<string, Set<string>>()
  app.addHook('onRoute', (r) => {
    if (!r.url.startsWith('/api') || r.schema?.hide) return
    // Statuses the platform itself may answer on any route, documented everywhere: among them a
    // 400 for a query it refuses before the handler (a null character), named by field.
    const schema = (r.schema ??= {}) as { response?: Record<string | number, unknown> }
    schema.response ??= {}
    schema.response[400] ??= FieldErrorsBody
    for (const code of GENERIC_STATUSES) schema.response[code] ??= GENERIC_ERROR
    // A POST may carry an Idempotency-Key (idempotency.ts): a retry still running is 409, the key
    // reused for another request 422 naming the header.
    if ((Array.isArray(r.method) ? r.method : [r.method]).includes('POST')) {
      schema.response[409] ??= GENERIC_ERROR
      schema.response[422] ??= FieldErrorsBody
    }
    const set = routes.get(r.url) ?? new Set<string>()
    for (const m of Array.isArray(r.method) ? r.method : [r.method]) set.add(m)
    routes.set(r.url, set)
  })
  return routes
}

export function installMethodNotAllowed(app: FastifyInstance, routes: Map<string, Set<string>>): void {
  for (const [url, methods] of [...routes.entries()]) {
    const missing = METHODS.filter((m) => !methods.has(m))
    if (!missing.length) continue
    app.route({
      method: missing,
      url,
      schema: { hide: true },
      config: { auth: 'optional' },
      handler: async (request) => {
        throw methodNotAllowed(request.method)
      },
    })
  }
}
