// Query plumbing shared by every list: pagination, `field`, `o`, and filter value parsing.
// Parsers throw AppError with DRF messages keyed by the parameter name.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { AppError, fieldError } from './errors.js'
import { normalizeUuid } from './uuid.js'

export type Query = Record<string, unknown>

/** All values of a repeatable parameter (strings only). */
export function values(q: Query, name: string): string[] {
  const v = q[name]
  if (v === undefined || v === null) return []
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string')
  return typeof v === 'string' ? [v] : [String(v)]
}

/** The last value of a parameter, or undefined when absent or empty. */
export function single(q: Query, name: string): string | undefined {
  const all = values(q, name)
  const v = all[all.length - 1]
  return v === undefined || v === '' ? undefined : v
}

// ---- pagination ----

export interface PageRequest {
  page: number | 'last'
  pageSize: number
}

export interface Page {
  number: number
  size: number
  offset: number
  limit: number
  total: number
  lastNumber: number
}

export function parsePageRequest(q: Query, pageSizeDefault: number, pageSizeMax: number): PageRequest {
  let pageSize = pageSizeDefault
  const ps = single(q, 'page_size')
  if (ps !== undefined && /^\d+$/.test(ps)) {
    const n = Number(ps)
    if (n > 0) pageSize = Math.min(n, pageSizeMax)
  }
  const p = single(q, 'page')
  if (p === undefined) return { page: 1, pageSize }
  if (p === 'last') return { page: 'last', pageSize }
  if (!/^\d{1,9}$/.test(p) || Number(p) < 1) throw new AppError('not_found', 'Invalid page.')
  return { page: Number(p), pageSize }
}

export function resolvePage(req: PageRequest, total: number): Page {
  const lastNumber = Math.max(1, Math.ceil(total / req.pageSize))
  const number = req.page === 'last' ? lastNumber : req.page
  if (number > lastNumber) throw new AppError('not_found', 'Invalid page.')
  return {
    number,
    size: req.pageSize,
    offset: (number - 1) * req.pageSize,
    limit: req.pageSize,
    total,
    lastNumber,
  }
}

/**
 * The most the Link header may take. Node's and most clients' parsers refuse a response whose
 * headers are over 16 KB; the other headers take under 1 KB, and the margin is for what proxies
 * add on the way.
 */
export const LINK_LIMIT_BYTES = 12 * 1024

const NO_NAMES: ReadonlySet<string> = new Set()
const declaredNames = new WeakMap<object, ReadonlySet<string>>()

/** The query parameters the route declares in its query schema. */
function declaredQuery(request: FastifyRequest): ReadonlySet<string> {
  const schema = request.routeOptions.schema?.querystring as { properties?: object } | undefined
  if (!schema || typeof schema !== 'object') return NO_NAMES
  let names = declaredNames.get(schema)
  if (!names) {
    names = new Set(Object.keys(schema.properties ?? {}))
    declaredNames.set(schema, names)
  }
  return names
}

/**
 * What a list's links are made of: its URL without the query, and the query parameters the list
 * declares (filters, page_size, field, o), in the order given, without page. Anything else (an
 * unknown parameter, a token given as x-auth-token) is not repeated.
 */
function linkParts(request: FastifyRequest): { base: string; search: URLSearchParams } {
  const q = request.url.indexOf('?')
  const path = q < 0 ? request.url : request.url.slice(0, q)
  const search = new URLSearchParams()
  if (q >= 0) {
    const known = declaredQuery(request)
    for (const [k, v] of new URLSearchParams(request.url.slice(q + 1))) {
      if (k !== 'page' && known.has(k)) search.append(k, v)
    }
  }
  return { base: `${request.baseUrl}${path}`, search }
}

function pageLink(base: string, search: URLSearchParams, page: number | null): string {
  let qs = search.toString()
  if (page !== null) qs = qs ? `${qs}&page=${page}` : `page=${page}`
  return qs ? `${base}?${qs}` : base
}

/**
 * 414 when a page's links could not be carried: Link repeats the query in up to four links, and
 * its size must not depend on how many rows there are, so the worst case (four links, the page
 * numbers as long as they get) is what is measured.
 */
function assertLinksFit(parts: { base: string; search: URLSearchParams }): void {
  const longest = pageLink(parts.base, parts.search, 999999999).length + '<>; rel="first", '.length
  if (4 * longest > LINK_LIMIT_BYTES) {
    throw new AppError(
      'uri_too_long',
      "The query is too long to be repeated in the list's page links (Link header); send fewer query parameters.",
    )
  }
}

/** Sets `X-Result-Count` and `Link` (first, prev, next, last) as the reference does. */
export function setPageHeaders(
  reply: FastifyReply,
  page: Page,
  parts: { base: string; search: URLSearchParams },
): void {
  const { base, search } = parts
  const links = [`<${pageLink(base, search, null)}>; rel="first"`]
  if (page.number > 1) {
    links.push(`<${pageLink(base, search, page.number - 1 === 1 ? null : page.number - 1)}>; rel="prev"`)
  }
  if (page.number < page.lastNumber) links.push(`<${pageLink(base, search, page.number + 1)}>; rel="next"`)
  links.push(`<${pageLink(base, search, page.lastNumber === 1 ? null : page.lastNumber)}>; rel="last"`)
  void reply.header('x-result-count', String(page.total))
  void reply.header('link', links.join(', '))
}

/**
 * A page fetched together with the list's total, for a list whose total comes with its page's
 * statement (one round trip instead of two).
 */
export type CountedFetch<T> = (limit: number, offset: number) => Promise<{ total: number; rows: T[] }>

/**
 * Runs a paginated list: counts, resolves the page (404 "Invalid page." when out of range),
 * fetches that page and sets the headers. HEAD requests skip the fetch. With `counted`, a
 * numbered page of a GET is fetched with its total before the page is resolved (a page past the
 * last is fetched, empty, then answered 404); the last page and HEAD count first.
 */
export async function paginate<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  count: () => Promise<number>,
  fetch: (limit: number, offset: number) => Promise<T[]>,
  counted?: CountedFetch<T>,
): Promise<T[]> {
  const cfg = request.server.appConfig
  const pr = parsePageRequest(request.query as Query, cfg.pageSizeDefault, cfg.pageSizeMax)
  const links = linkParts(request)
  assertLinksFit(links)
  if (counted && pr.page !== 'last' && request.method !== 'HEAD') {
    const { total, rows } = await counted(pr.pageSize, (pr.page - 1) * pr.pageSize)
    setPageHeaders(reply, resolvePage(pr, total), links)
    return rows
  }
  const total = await count()
  const page = resolvePage(pr, total)
  setPageHeaders(reply, page, links)
  if (request.method === 'HEAD' || total === 0) return []
  return fetch(page.limit, page.offset)
}

// ---- field selection ----

/**
 * The fields asked for with `field` (repeatable; comma-separated values are split). Unknown names
 * are ignored; when none is known, null (all fields).
 */
export function selectedFields(q: Query, known: readonly string[]): Set<string> | null {
  const asked = values(q, 'field')
    .flatMap((v) => v.split(','))
    .map((s) => s.trim())
    .filter(Boolean)
  if (!asked.length) return null
  const set = new Set(asked.filter((f) => known.includes(f)))
  return set.size ? set : null
}

export function pickFields<T extends object>(obj: T, fields: Set<string> | null): Partial<T> {
  if (!fields) return obj
  const out: Record<string, unknown> = {}
  for (const f of fields) if (f in obj) out[f] = (obj as Record<string, unknown>)[f]
  return out as Partial<T>
}

// ---- ordering ----

export interface OrderTerm<C extends string = string> {
  column: C
  desc: boolean
}

/**
 * Parses `o` (comma-separated and repeatable; `-` descends) against an allow-list mapping API
 * names to columns. Unknown names → 400 on `o`. Falls back to `dflt`.
 */
export function parseOrdering<C extends string>(
  q: Query,
  allowed: Record<string, C>,
  dflt: OrderTerm<C>[],
): OrderTerm<C>[] {
  const terms = values(q, 'o')
    .flatMap((v) => v.split(','))
    .map((s) => s.trim())
    .filter(Boolean)
  if (!terms.length) return dflt
  const out: OrderTerm<C>[] = []
  const bad: string[] = []
  for (const t of terms) {
    const desc = t.startsWith('-')
    const name = desc ? t.slice(1) : t
    const column = Object.prototype.hasOwnProperty.call(allowed, name) ? allowed[name] : undefined
    if (column === undefined) bad.push(`Select a valid choice. ${t} is not one of the available choices.`)
    else out.push({ column, desc })
  }
  if (bad.length) throw new AppError('invalid', { o: bad })
  return out
}

// ---- filter values ----

/** A single value read by `parse`: undefined when absent, 400 with `message` when it reads as null. */
function parsedFilter(
  q: Query,
  name: string,
  parse: (v: string) => string | null,
  message: string,
): string | undefined {
  const v = single(q, name)
  if (v === undefined) return undefined
  const parsed = parse(v)
  if (!parsed) throw fieldError(name, message)
  return parsed
}

/** A uuid filter: undefined when absent, 400 "Enter a valid UUID." when malformed. */
export function uuidFilter(q: Query, name: string): string | undefined {
  return parsedFilter(q, name, normalizeUuid, 'Enter a valid UUID.')
}

/** Repeatable uuid filter. */
export function uuidListFilter(q: Query, name: string): string[] {
  const out: string[] = []
  for (const raw of values(q, name).flatMap((v) => v.split(','))) {
    if (!raw) continue
    const u = normalizeUuid(raw)
    if (!u) throw fieldError(name, 'Enter a valid UUID.')
    out.push(u)
  }
  return out
}

const DATE_TIME_RE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/

/** Parses an ISO-8601 date or date-time (UTC unless an offset is given) to our stored form. */
export function parseDateTime(v: string): string | null {
  const m = DATE_TIME_RE.exec(v.trim())
  if (!m) return null
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '0', tz = 'Z'] = m
  // Year 0 does not exist (nor in PostgreSQL).
  if (Number(y) < 1) return null
  const iso = `${y}-${mo}-${d}T${h}:${mi}:${s}.${frac.padEnd(3, '0').slice(0, 3)}${tz === 'Z' ? 'Z' : tz.length === 5 ? `${tz.slice(0, 3)}:${tz.slice(3)}` : tz}`
  const t = Date.parse(iso)
  if (Number.isNaN(t)) return null
  const date = new Date(t)
  // Reject roll-overs such as 2024-02-31.
  if (tz === 'Z' && date.getUTCDate() !== Number(d)) return null
  return date.toISOString()
}

export function dateTimeFilter(q: Query, name: string): string | undefined {
  return parsedFilter(q, name, parseDateTime, 'Enter a valid date/time.')
}

/** Boolean filters never error: anything but true/false/1/0 is ignored, as django-filter does. */
export function boolFilter(q: Query, name: string): boolean | undefined {
  const v = single(q, name)
  if (v === undefined) return undefined
  if (/^(true|1)$/i.test(v)) return true
  if (/^(false|0)$/i.test(v)) return false
  return undefined
}

/** Repeatable choice filter; unknown values → 400 "Select a valid choice." */
export function choiceFilter<T extends string>(q: Query, name: string, choices: readonly T[]): T[] {
  const out: T[] = []
  for (const v of values(q, name)) {
    if (v === '') continue
    if (!(choices as readonly string[]).includes(v)) {
      throw fieldError(name, `Select a valid choice. ${v} is not one of the available choices.`)
    }
    out.push(v as T)
  }
  return out
}

export function intFilter(q: Query, name: string): number | undefined {
  const v = single(q, name)
  if (v === undefined) return undefined
  if (!/^-?\d{1,15}$/.test(v)) throw fieldError(name, 'Enter a whole number.')
  return Number(v)
}

/** A page of records with `field` applied: the common body of every list route. */
export async function listResponse<T extends object>(
  request: FastifyRequest,
  reply: FastifyReply,
  known: readonly string[],
  count: () => Promise<number>,
  fetch: (limit: number, offset: number) => Promise<T[]>,
  counted?: CountedFetch<T>,
): Promise<Partial<T>[]> {
  const fields = selectedFields(request.query as Query, known)
  const items = await paginate(request, reply, count, fetch, counted)
  return fields ? items.map((i) => pickFields(i, fields)) : items
}

/**
 * The paging function for records already rendered as JSON text: `page(count, fetch)` answers the
 * page as a JSON array (the route sends it as is; the response schema still documents it).
 */
export function jsonPager(request: FastifyRequest, reply: FastifyReply) {
  return async (
    count: () => Promise<number>,
    fetch: (limit: number, offset: number) => Promise<string[]>,
  ): Promise<string> => `[${(await paginate(request, reply, count, fetch)).join(',')}]`
}

/** Sends JSON text as the body (no serialization). */
export function sendJson(reply: FastifyReply, body: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(body)
}

/**
 * Sends a record or a page of records rendered as JSON text, with `field` applied: as is when no
 * field is selected, else the selected fields of the parsed records (serialized by the route's
 * response schema).
 */
export function sendRendered(
  request: FastifyRequest,
  reply: FastifyReply,
  known: readonly string[],
  body: string,
): FastifyReply {
  const fields = selectedFields(request.query as Query, known)
  if (!fields) return sendJson(reply, body)
  const parsed = JSON.parse(body) as object | object[]
  return reply.send(
    Array.isArray(parsed) ? parsed.map((r) => pickFields(r, fields)) : pickFields(parsed, fields),
  )
}

/** A single record with `field` applied. */
export function withFields<T extends object>(
  request: FastifyRequest,
  known: readonly string[],
  record: T,
): Partial<T> {
  return pickFields(record, selectedFields(request.query as Query, known))
}

/** The paging function handed to services: `page(count, fetch, counted?)`. */
export function pager<T extends object>(
  request: FastifyRequest,
  reply: FastifyReply,
  known: readonly string[],
) {
  return (
    count: () => Promise<number>,
    fetch: (limit: number, offset: number) => Promise<T[]>,
    counted?: CountedFetch<T>,
  ) => listResponse(request, reply, known, count, fetch, counted) as Promise<T[]>
}
