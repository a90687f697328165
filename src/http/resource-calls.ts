// What a resource's service calls receive: the request's caller, scope, path uuid, body, and for a
// list its filters, conditions, order and pager. One object a request; its parts are read lazily.
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { AppContext } from '../context.js'
import type { Listing } from '../db/listing.js'
import { actorOf } from './auth.js'
import { fieldErrorsOf, type FieldErrorSet } from './errors.js'
import type { FilterSet, FilterValues } from './filters.js'
import type { Actor } from './permissions.js'
import { listResponse, paginate, type CountedFetch } from './query.js'

/**
 * A page of records: `page(count, fetch)` counts, fetches the requested page and sets the headers;
 * `counted`, when given, fetches a page with the total in one go (see `paginate`).
 */
export type Pager<T> = (
  count: () => Promise<number>,
  fetch: (limit: number, offset: number) => Promise<T[]>,
  counted?: CountedFetch<T>,
) => Promise<T[]>

/** A page of records rendered as JSON text, answered as one JSON array text. */
export type JsonPager = (
  count: () => Promise<number>,
  fetch: (limit: number, offset: number) => Promise<string[]>,
) => Promise<string>

/** The count and pages of the rows a scope may see: what `scopedList` gives a repository. */
export interface ScopedRows<S, Row> {
  count(scope: S, listing: Listing): Promise<number>
  list(scope: S, listing: Listing, limit: number, offset: number): Promise<Row[]>
}

/** A service's list: the page of a repository's scoped rows, each rendered as a record. */
export function pageOf<S, Row, T>(
  page: Pager<T>,
  rows: ScopedRows<S, Row>,
  scope: S,
  listing: Listing,
  render: (row: Row) => T,
): Promise<T[]> {
  return pageOfRows(page, rows, scope, listing, (page) => page.map((r) => render(r)))
}

export interface Call {
  readonly ctx: AppContext
  readonly request: FastifyRequest
  readonly reply: FastifyReply
  /** The authenticated caller (on a public operation: 401 when there is none). */
  readonly actor: Actor
  /** The caller, or null on a public operation called anonymously. */
  readonly maybeActor: Actor | null
  /** Scheme and host of every absolute URL in the response. */
  readonly base: string
}

/** An operation on one record: `/api/<path>/<uuid>/...`. */
export interface ItemCall extends Call {
  /** The `{uuid}` of the path, as given (a malformed one should simply match nothing: 404). */
  readonly uuid: string
}

export interface ScopedCall<S> extends Call {
  /** What the caller may see, by the resource's visibility rule. */
  readonly scope: S
}

export interface ListCall<T, F extends FilterSet, S> extends ScopedCall<S> {
  /** Every filter's parsed value by name (null: the value can match nothing). */
  readonly filters: FilterValues<F>
  /** The filters' conditions and the order, for the repository. */
  readonly listing: Listing
  readonly page: Pager<T>
  readonly pageJson: JsonPager
}

export interface BodyCall<B> extends Call {
  readonly body: B
  /** The body's schema errors, to which the service adds its field rules' (`fieldErrors: true`). */
  readonly fieldErrors: FieldErrorSet
}

export class RequestCall {
  private scopeValue: unknown = undefined
  private fieldErrorSet: FieldErrorSet | undefined
  constructor(
    readonly ctx: AppContext,
    readonly request: FastifyRequest,
    readonly reply: FastifyReply,
    private readonly visibility?: (actor: Actor) => unknown,
  ) {}
  get actor(): Actor {
    return actorOf(this.request)
  }
  get maybeActor(): Actor | null {
    return this.request.actor
  }
  get base(): string {
    return this.request.baseUrl
  }
  get uuid(): string {
    return (this.request.params as { uuid: string }).uuid
  }
  get body(): any {
    return this.request.body
  }
  get fieldErrors(): FieldErrorSet {
    return (this.fieldErrorSet ??= fieldErrorsOf(this.request))
  }
  get scope(): any {
    if (this.scopeValue === undefined) this.scopeValue = this.visibility!(this.actor)
    return this.scopeValue
  }
}

export class ListRequestCall extends RequestCall {
  constructor(
    ctx: AppContext,
    request: FastifyRequest,
    reply: FastifyReply,
    visibility: ((actor: Actor) => unknown) | undefined,
    readonly filters: any,
    readonly listing: Listing,
    private readonly fields: readonly string[],
  ) {
    super(ctx, request, reply, visibility)
  }
  get page(): Pager<any> {
    return (count, fetch, counted) =>
      listResponse(this.request, this.reply, this.fields, count, fetch, counted)
  }
  get pageJson(): JsonPager {
    return async (count, fetch) => `[${(await paginate(this.request, this.reply, count, fetch)).join(',')}]`
  }
}

/**
 * `pageOf` for records rendered a page at a time: `render` takes the page's rows together, so the
 * parts they share (plans, groups, linked objects) are read in one query per page.
 */
export function pageOfRows<S, Row, T>(
  page: Pager<T>,
  rows: ScopedRows<S, Row>,
  scope: S,
  listing: Listing,
  render: (rows: Row[]) => Promise<T[]> | T[],
): Promise<T[]> {
  return page(
    () => rows.count(scope, listing),
    async (limit, offset) => render(await rows.list(scope, listing, limit, offset)),
  )
}
