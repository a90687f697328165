// Error kinds, the one mapping from kind to HTTP status, and the DRF-shaped bodies.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { ErrorObject } from 'ajv'

export type ErrorKind =
  | 'invalid'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'not_allowed'
  | 'conflict'
  | 'unsupported_media'
  | 'too_large'
  | 'uri_too_long'
  | 'unprocessable'
  | 'rate_limited'
  | 'unavailable'

const STATUS: Record<ErrorKind, number> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  not_allowed: 405,
  conflict: 409,
  too_large: 413,
  uri_too_long: 414,
  unsupported_media: 415,
  unprocessable: 422,
  rate_limited: 429,
  unavailable: 503,
}

export type FieldErrors = { [field: string]: unknown }

export class AppError extends Error {
  readonly kind: ErrorKind
  /** A DRF detail string or a field-error object (400). */
  readonly body: string | FieldErrors | null
  readonly headers: Record<string, string>

  constructor(kind: ErrorKind, body: string | FieldErrors | null, headers: Record<string, string> = {}) {
    super(typeof body === 'string' ? body : kind)
    this.kind = kind
    this.body = body
    this.headers = headers
  }

  get status(): number {
    return STATUS[this.kind]
  }
}

/** 400 `{"<field>": ["message"]}`. */
export function fieldError(field: string, message: string): AppError {
  return new AppError('invalid', { [field]: [message] })
}

/** 400 `{"non_field_errors": ["message"]}`. */
export function nonFieldError(message: string): AppError {
  return new AppError('invalid', { non_field_errors: [message] })
}

export function notFound(message = 'Not found.'): AppError {
  return new AppError('not_found', message)
}

export function forbidden(message = 'You do not have permission to perform this action.'): AppError {
  return new AppError('forbidden', message)
}

/** 403 with no body (order unlink, as the spec says). */
export function forbiddenNoBody(): AppError {
  return new AppError('forbidden', null)
}

export function conflict(message: string): AppError {
  return new AppError('conflict', message)
}

/** 409 in the wording of the reference's state validator. */
export function invalidState(validStates: readonly string[]): AppError {
  return new AppError('conflict', `Valid states for operation: ${validStates.join(', ')}.`)
}

export function methodNotAllowed(method: string): AppError {
  return new AppError('not_allowed', `Method "${method}" not allowed.`)
}

export function unauthenticated(message: string): AppError {
  return new AppError('unauthenticated', message, { 'www-authenticate': 'Token' })
}

// ---- Ajv errors → DRF field errors ----

function messageFor(e: ErrorObject): string {
  const p = e.params
  switch (e.keyword) {
    case 'required':
      return 'This field is required.'
    case 'type': {
      const t = String(p.type)
      if (t.includes('null') && t !== 'null') return messageForType(t.replace(/,?null,?/, ''))
      return messageForType(t)
    }
    case 'enum':
    case 'const':
      return 'Select a valid choice.'
    case 'maxLength':
      return `Ensure this field has no more than ${p.limit} characters.`
    case 'minLength':
      return p.limit === 1
        ? 'This field may not be blank.'
        : `Ensure this field has at least ${p.limit} characters.`
    case 'maximum':
      return `Ensure this value is less than or equal to ${p.limit}.`
    case 'minimum':
      return `Ensure this value is greater than or equal to ${p.limit}.`
    case 'exclusiveMinimum':
      return `Ensure this value is greater than ${p.limit}.`
    case 'maxItems':
      return `Ensure this field has no more than ${p.limit} elements.`
    case 'minItems':
      return `Ensure this field has at least ${p.limit} elements.`
    case 'maxProperties':
      return `Ensure this object has no more than ${p.limit} keys.`
    case 'pattern':
      return PATTERN_MESSAGES.get(String(p.pattern)) ?? 'This value does not match the required pattern.'
    case 'format':
      return formatMessage(String(p.format))
    case 'anyOf':
    case 'oneOf':
      return 'Invalid value.'
    default:
      return e.message ?? 'Invalid value.'
  }
}

/** DRF's message for a value not of the schema's type, by type. */
const TYPE_MESSAGES = new Map([
  ['integer', 'A valid integer is required.'],
  ['number', 'A valid number is required.'],
  ['boolean', 'Must be a valid boolean.'],
  ['string', 'Not a valid string.'],
  ['array', 'Expected a list of items.'],
  ['object', 'Expected a dictionary of items.'],
  ['null', 'Must be null.'],
])

function messageForType(t: string): string {
  return TYPE_MESSAGES.get(t) ?? `Expected ${t}.`
}

/** Messages of body patterns that have their own (a field's schema registers its pattern here). */
export const PATTERN_MESSAGES = new Map<string, string>()

/** DRF's message for a value not in the schema's format, by format. */
const FORMAT_MESSAGES = new Map([
  [
    'date-time',
    'Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].',
  ],
  ['date', 'Date has wrong format. Use one of these formats instead: YYYY-MM-DD.'],
  ['uri', 'Enter a valid URL.'],
  ['http-url', 'Enter a valid URL.'],
  ['email', 'Enter a valid email address.'],
  ['uuid', 'Must be a valid UUID.'],
])

function formatMessage(format: string): string {
  return FORMAT_MESSAGES.get(format) ?? `Enter a valid ${format}.`
}

function setPath(target: FieldErrors, path: string[], message: string): void {
  let node: any = target
  for (let i = 0; i < path.length; i++) {
    const key = path[i]!
    const last = i === path.length - 1
    if (last) {
      const existing = node[key]
      if (Array.isArray(existing) && existing.every((x) => typeof x === 'string')) {
        if (!existing.includes(message)) existing.push(message)
      } else if (existing === undefined) {
        node[key] = [message]
      }
      return
    }
    if (typeof node[key] !== 'object' || node[key] === null || Array.isArray(node[key])) node[key] = {}
    node = node[key]
  }
}

/**
 * Ajv reports every error of a body (`allErrors`), so one request can carry tens of thousands of
 * them (a 1 MB body of bad `limits` entries); rendering them all cost far more than validating,
 * and answered megabytes. The first ones are enough for a client to correct its request.
 */
export const MAX_REPORTED_ERRORS = 100

/** Turns Ajv errors of one request part into a DRF body keyed by field (the first ones). */
export function validationBody(errors: ErrorObject[], part: string | undefined): FieldErrors {
  const body: FieldErrors = {}
  for (const e of errors.slice(0, MAX_REPORTED_ERRORS)) {
    // anyOf/oneOf report every failed branch and then a summary; the summary is enough.
    if (/\/(anyOf|oneOf)\/\d+\//.test(e.schemaPath)) continue
    const path = e.instancePath
      .split('/')
      .slice(1)
      .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    if (e.keyword === 'required') path.push(String((e.params as any).missingProperty))
    if (path.length === 0) {
      if (part === 'body' && e.keyword === 'type') {
        setPath(body, ['non_field_errors'], 'Invalid data. Expected a dictionary, but got another type.')
      } else {
        setPath(body, ['non_field_errors'], messageFor(e))
      }
      continue
    }
    setPath(body, path, messageFor(e))
  }
  return Object.keys(body).length ? body : { non_field_errors: ['Invalid input.'] }
}

/** Merges the field errors of `from` into `into`: messages of one field are concatenated (each once). */
function mergeInto(into: FieldErrors, from: FieldErrors): void {
  for (const [key, value] of Object.entries(from)) {
    const existing = into[key]
    if (existing === undefined) {
      into[key] = value
    } else if (Array.isArray(existing) && Array.isArray(value)) {
      for (const m of value) if (!existing.includes(m)) existing.push(m)
    } else if (isFieldErrors(existing) && isFieldErrors(value)) {
      mergeInto(existing, value)
    }
  }
}

function isFieldErrors(v: unknown): v is FieldErrors {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}

/**
 * The field errors of one write, gathered over its stages so that one 400 names every bad field,
 * as DRF does: the body's schema errors (the route sets `attachValidation`, see `fieldErrorsOf`),
 * then each business rule. A rule that needs a field's value runs only when that field has no
 * error yet; a 400 it throws is recorded, and the service calls `throwIfAny()` before the rules
 * that need every field valid (cross-field rules) and before it writes anything.
 */
export class FieldErrorSet {
  private readonly errors: FieldErrors = {}
  /** True when the body's schema already failed: that 400 then answers whatever a rule throws. */
  private readonly schemaFailed: boolean

  constructor(schemaErrors?: FieldErrors) {
    if (schemaErrors) mergeInto(this.errors, schemaErrors)
    this.schemaFailed = !!schemaErrors && Object.keys(schemaErrors).length > 0
  }

  /** Whether a field (by its top-level name) already has an error. */
  has(field: string): boolean {
    return field in this.errors
  }

  /** Whether any of the fields has an error. */
  hasAny(fields: readonly string[]): boolean {
    return fields.some((f) => f in this.errors)
  }

  add(field: string, message: string): void {
    mergeInto(this.errors, { [field]: [message] })
  }

  /**
   * Runs a rule unless one of the fields it needs already failed (then undefined); a 400 the rule
   * throws is recorded (undefined), any other error propagates.
   */
  async check<T>(needs: string | readonly string[], rule: () => T | Promise<T>): Promise<T | undefined> {
    if (this.hasAny(typeof needs === 'string' ? [needs] : needs)) return undefined
    try {
      return await rule()
    } catch (e) {
      if (!this.absorb(e)) throw e
      return undefined
    }
  }

  /** `check` for a synchronous rule. */
  checkSync<T>(needs: string | readonly string[], rule: () => T): T | undefined {
    if (this.hasAny(typeof needs === 'string' ? [needs] : needs)) return undefined
    try {
      return rule()
    } catch (e) {
      if (!this.absorb(e)) throw e
      return undefined
    }
  }

  /** One 400 with every error so far, if there is any. */
  throwIfAny(): void {
    if (Object.keys(this.errors).length) throw new AppError('invalid', this.errors)
  }

  /**
   * Runs the operation and answers one 400 for all its field errors: a 400 it throws is merged
   * with those gathered; while the body's schema failed, any other error it throws (403, 404,
   * 409, or a rule meeting a value of the wrong type) gives way to that 400, as when the schema
   * was checked before the operation ran.
   */
  async guard<T>(operation: () => Promise<T>): Promise<T> {
    try {
      const out = await operation()
      this.throwIfAny()
      return out
    } catch (e) {
      if (this.absorb(e) || this.schemaFailed) this.throwIfAny()
      throw e
    }
  }

  private absorb(e: unknown): boolean {
    if (!(e instanceof AppError) || e.kind !== 'invalid' || !isFieldErrors(e.body)) return false
    if (e.body !== this.errors) mergeInto(this.errors, e.body)
    return true
  }
}

/**
 * The field errors of a route registered with `attachValidation: true`: its body's schema errors,
 * to which the business rules add theirs. A failed path or query, or a body that is not an
 * object, answers 400 at once as before.
 */
export function fieldErrorsOf(request: FastifyRequest): FieldErrorSet {
  const error = request.validationError as (FastifyError & { validationContext?: string }) | undefined
  if (!error) return new FieldErrorSet()
  const body = request.body
  if (error.validationContext !== 'body' || !isFieldErrors(body)) throw error
  return new FieldErrorSet(validationBody(error.validation as ErrorObject[], 'body'))
}

function send(
  reply: FastifyReply,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  for (const [k, v] of Object.entries(headers)) void reply.header(k, v)
  if (body === null) {
    void reply.code(status).removeHeader('content-type').send()
    return
  }
  void reply.code(status).type('application/json; charset=utf-8').serializer(JSON.stringify).send(body)
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler(
    (error: FastifyError | AppError | Error, request: FastifyRequest, reply: FastifyReply) => {
      if (error instanceof AppError) {
        const body =
          error.body === null ? null : typeof error.body === 'string' ? { detail: error.body } : error.body
        send(reply, error.status, body, error.headers)
        return
      }
      const fe = error as FastifyError & { validationContext?: string }
      if (fe.validation) {
        send(reply, 400, validationBody(fe.validation as ErrorObject[], fe.validationContext))
        return
      }
      switch (fe.code) {
        case 'FST_ERR_CTP_INVALID_JSON_BODY':
          send(reply, 400, { detail: `JSON parse error - ${fe.message}` })
          return
        case 'FST_ERR_CTP_INVALID_MEDIA_TYPE': {
          const ct = String(request.headers['content-type'] ?? '').split(';')[0]
          send(reply, 415, { detail: `Unsupported media type "${ct}" in request.` })
          return
        }
        case 'FST_ERR_CTP_BODY_TOO_LARGE':
        case 'FST_REQ_FILE_TOO_LARGE':
          send(reply, 413, { detail: 'Request body is too large.' })
          return
        case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
          send(reply, 400, { detail: 'Invalid Content-Length header.' })
          return
        default:
          break
      }
      if (error instanceof SyntaxError) {
        send(reply, 400, { detail: `JSON parse error - ${error.message}` })
        return
      }
      const status = fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500 ? fe.statusCode : 500
      if (status === 500) {
        request.log.error({ err: error }, 'unhandled error')
        send(reply, 500, { detail: 'A server error occurred.' })
        return
      }
      send(reply, status, { detail: fe.message })
    },
  )

  app.setNotFoundHandler((_request, reply) => {
    send(reply, 404, { detail: 'Not found.' })
  })
}
