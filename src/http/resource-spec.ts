// The resource kit's declarations: what a resource or an action declares (see resource.ts, which
// registers them, and docs/development.md).
import type { Static, TObject, TSchema } from '@sinclair/typebox'
import type { FastifyReply } from 'fastify'
import type { AppContext } from '../context.js'
import type { OrderBy } from '../db/listing.js'
import type { FilterSet } from './filters.js'
import type { Actor } from './permissions.js'
import type { BodyCall, Call, ItemCall, ListCall, ScopedCall } from './resource-calls.js'

export type Rec<R extends TObject> = Static<R>

/**
 * An operation's answer: the record(s); JSON text the service rendered (`render: 'json'`); or the
 * reply itself, when the call sent the answer on its own (`c.reply`).
 */
export type Answer<T> = Promise<T | string | FastifyReply>

export interface OperationOptions {
  /** A one-line summary instead of the one made from the resource's noun. */
  summary?: string
  /** Documented error statuses (default 400, 401, 403, 404, 409). */
  errors?: Record<number, TSchema>
  /**
   * The service answers JSON text it rendered itself (a hot path that keeps rendered records);
   * `field` is still applied, and the response schema still documents the record.
   */
  render?: 'json'
}

/** A list or retrieve anyone may call: no token needed (documented with no security requirement). */
export interface ReadOptions extends OperationOptions {
  public?: boolean
}

export interface ListSpec<T, F extends FilterSet, S> extends ReadOptions {
  /** The filters, in the order they are checked (the first malformed one answers 400). */
  filters?: F
  /**
   * `o`: API names → columns, and the order without `o`. Without `fields` the order is fixed
   * and `o` is ignored.
   */
  ordering?: { fields?: Readonly<Record<string, string>>; default: readonly OrderBy[] }
  run: (c: ListCall<T, F, S>) => Answer<T[]>
}

export interface WriteOptions extends OperationOptions {
  /** Checked before the body is read (e.g. staff only: 403 whatever the body holds). */
  permission?: (actor: Actor) => void
  /**
   * The body's schema errors and the service's field rules answer in one 400: the route keeps
   * the schema's errors and runs the service in `c.fieldErrors.guard`, the service adding its own.
   */
  fieldErrors?: boolean
}

export interface WriteSpec<T, B extends TSchema, C> extends WriteOptions {
  body: B
  run: (c: C & BodyCall<Static<B>>) => Answer<T>
}

export interface UpdateSpec<T, B extends TSchema, P extends TSchema> extends WriteOptions {
  /** The PUT body. */
  body: B
  /** The PATCH body (default: the PUT body). */
  patch?: P
  /** `false`: partial updates only (PATCH); a PUT answers 405. */
  put?: false
  run: (c: ItemCall & BodyCall<Static<B> | Static<P>>) => Answer<T>
}

export interface ActionSpec<B extends TSchema = TSchema> {
  /** The last path segment, and the operationId's last word. */
  name: string
  /** Default POST. */
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  /** On one record (`/<uuid>/<name>/`, the default) or on the collection (`/<name>/`). */
  detail?: boolean
  summary: string
  /** A longer description, and the media types of a body the call reads itself (a file upload). */
  description?: string
  consumes?: string[]
  body?: B
  /**
   * The query string's schema, validated as written; the call reads it from `c.request` (a GET
   * action that pages with `pager` or applies `field` with `withFields`).
   */
  query?: TSchema
  /** A missing or `null` body counts as `{}`. */
  bodyOptional?: boolean
  /** Checked before the body is read. */
  permission?: (actor: Actor) => void
  /** As a write's: the body's schema errors and the service's field rules answer in one 400. */
  fieldErrors?: boolean
  /** No token needed (documented with no security requirement). */
  public?: boolean
  /** Default 200. */
  status?: number
  /**
   * Other success statuses the call may answer with the same body, sending it itself through
   * `c.reply` (e.g. 201 when an upsert created the record, 200 when it updated it).
   */
  otherStatuses?: readonly number[]
  /** The response body's schema; null: no body. */
  response: TSchema | null
  errors?: Record<number, TSchema>
  render?: 'json'
  run: (c: ItemCall & BodyCall<Static<B>>) => Promise<unknown>
}

export interface ResourceSpec<
  R extends TObject,
  F extends FilterSet,
  S,
  CB extends TSchema,
  UB extends TSchema,
  PB extends TSchema,
  CR extends TSchema = R,
> {
  /** The path after `/api/`, as the spec spells it: `payment-profiles`. */
  path: string
  /** The OpenAPI tag (default: the path). */
  tag?: string
  /** For summaries: `payment profile`; the plural defaults to the noun and `s`. */
  noun: string
  plural?: string
  /** The record: what retrieve, create and update answer (lists and retrieve apply `field`). */
  record: R
  /** Names `field` may select (default: the record's properties). */
  fields?: readonly string[]
  /** What a caller may see (a repository scope); list and retrieve receive it as `scope`. */
  visibility?: (actor: Actor) => S
  list?: ListSpec<Rec<R>, F, S>
  retrieve?: ReadOptions & { run: (c: ItemCall & ScopedCall<S>) => Answer<Rec<R>> }
  create?: WriteSpec<Static<CR>, CB, Call> & {
    /** Default 201. */
    status?: number
    /** No token needed (documented with no security requirement). */
    public?: boolean
    /** What the create answers, when it is not the record. */
    response?: CR
  }
  update?: UpdateSpec<Rec<R>, UB, PB>
  destroy?: OperationOptions & { run: (c: ItemCall) => Promise<void> }
  actions?: readonly ActionSpec<any>[]
}

export type Resource = ResourceSpec<TObject, FilterSet, any, TSchema, TSchema, TSchema>

/** Declares a resource (the kit registers it with `registerResource` or `resourceRoutes`). */
export function defineResource<
  R extends TObject,
  F extends FilterSet = FilterSet,
  S = never,
  CB extends TSchema = TSchema,
  UB extends TSchema = TSchema,
  PB extends TSchema = UB,
  CR extends TSchema = R,
>(spec: ResourceSpec<R, F, S, CB, UB, PB, CR>): Resource {
  return spec as unknown as Resource
}

/** Declares an action (typed by its body schema). */
export function defineAction<B extends TSchema = TSchema>(spec: ActionSpec<B>): ActionSpec<B> {
  return spec
}

/**
 * The use cases of a record read and written by the path's uuid, each taking the caller:
 * `recordOperations` turns them into the kit's retrieve, create, update and delete.
 */
export interface RecordService<T, C, U> {
  get(ctx: AppContext, actor: Actor, uuid: string, base: string): Promise<T>
  create(ctx: AppContext, actor: Actor, body: C, base: string): Promise<T>
  update(ctx: AppContext, actor: Actor, uuid: string, body: U, base: string): Promise<T>
  destroy(ctx: AppContext, actor: Actor, uuid: string): Promise<void>
}

/**
 * Retrieve, create, update (PUT: `bodies.put`, by default the create body; PATCH: `bodies.patch`)
 * and delete of a record, for `defineResource`.
 */
export function recordOperations<T, CB extends TSchema, PB extends TSchema>(
  service: RecordService<T, Static<CB>, Static<PB>>,
  bodies: { create: CB; patch: PB; put?: TSchema },
) {
  return {
    retrieve: { run: (c: ItemCall) => service.get(c.ctx, c.actor, c.uuid, c.base) },
    create: {
      body: bodies.create,
      run: (c: Call & BodyCall<Static<CB>>) => service.create(c.ctx, c.actor, c.body, c.base),
    },
    update: {
      body: bodies.put ?? bodies.create,
      patch: bodies.patch,
      run: (c: ItemCall & BodyCall<unknown>) => service.update(c.ctx, c.actor, c.uuid, c.body, c.base),
    },
    destroy: { run: (c: ItemCall) => service.destroy(c.ctx, c.actor, c.uuid) },
  }
}

/**
 * A record's service from a module whose functions follow the names `get<Name>`, `create<Name>`,
 * `update<Name>` and `delete<Name>` (for `recordOperations`).
 */
export function namedService<
  N extends string,
  M extends { readonly [K in `get${N}` | `create${N}` | `update${N}` | `delete${N}`]: unknown },
>(
  module: M,
  name: N,
): { get: M[`get${N}`]; create: M[`create${N}`]; update: M[`update${N}`]; destroy: M[`delete${N}`] } {
  return {
    get: module[`get${name}`],
    create: module[`create${name}`],
    update: module[`update${name}`],
    destroy: module[`delete${name}`],
  }
}

/** API names that are the columns of the same name of one table: `{ name: '<table>.name', … }`. */
export function columnsOf<K extends string>(table: string, ...names: K[]): Record<K, string> {
  return Object.fromEntries(names.map((n) => [n, `${table}.${n}`])) as Record<K, string>
}

/**
 * A list's ordering as DRF declares it: `o`'s API names → columns, and the order without `o` by
 * those names (`'-created'`: newest first).
 */
export function orderedBy<F extends Readonly<Record<string, string>>>(
  fields: F,
  ...defaults: `${'' | '-'}${keyof F & string}`[]
): { fields: F; default: OrderBy[] } {
  return {
    fields,
    default: defaults.map((name) => {
      const desc = name.startsWith('-')
      return { column: fields[desc ? name.slice(1) : name]!, desc }
    }),
  }
}
