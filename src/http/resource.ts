// The resource kit: one declaration per resource (path, record, bodies, filters, orderings,
// visibility, service calls, actions) becomes its routes: list, HEAD count, retrieve, create,
// update, partial update, delete and the actions, each with the shared pagination, `field`, `o`,
// DRF error shapes and OpenAPI metadata (operationId, summary, tag). Everything that can be worked
// out from the declaration is worked out once, at registration; a request runs only the compiled
// query parser, the service call and the response.
import { Type, type TSchema } from '@sinclair/typebox'
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  FastifySchema,
  HTTPMethods,
  RouteOptions,
} from 'fastify'
import type { AppContext } from '../context.js'
import type { Listing, OrderBy } from '../db/listing.js'
import { actorOf } from './auth.js'
import { AppError } from './errors.js'
import { compileFilters, type FilterSet } from './filters.js'
import type { Actor } from './permissions.js'
import type { Resource, WriteOptions } from './resource-spec.js'
import { parseOrdering, sendJson, sendRendered, withFields, type Query } from './query.js'
import { ListRequestCall, RequestCall } from './resource-calls.js'
import {
  article,
  fieldParam,
  isArraySchema,
  operationId,
  orderParam,
  PAGE,
  PAGE_SIZE,
  parsedByHandler,
  RECORD_REQUIRED,
} from './resource-docs.js'
import { errors as standardErrors, NoContent, UuidParams } from './schemas.js'

export { pageOf } from './resource-calls.js'
export type {
  BodyCall,
  Call,
  ItemCall,
  JsonPager,
  ListCall,
  Pager,
  ScopedCall,
  ScopedRows,
} from './resource-calls.js'
export { operationId } from './resource-docs.js'

export {
  columnsOf,
  defineAction,
  defineResource,
  namedService,
  orderedBy,
  recordOperations,
} from './resource-spec.js'
export type {
  ActionSpec,
  ListSpec,
  RecordService,
  Resource,
  ResourceSpec,
  UpdateSpec,
  WriteSpec,
} from './resource-spec.js'

// ---- registration ----

/**
 * A parameter documented as one value that arrives repeated answers 400 "Not a valid string.",
 * all such parameters in one body (the answer of the query validator these routes had before).
 */
function rejectRepeated(q: Query, names: readonly string[]): void {
  let body: Record<string, string[]> | undefined
  for (const name of names) {
    const v = q[name]
    if (Array.isArray(v) && v.length > 1) (body ??= {})[name] = ['Not a valid string.']
  }
  if (body) throw new AppError('invalid', body)
}

/**
 * A GET action that answers a page of records filtered and ordered as a list is (an offering's
 * accounts, a provider's users' keys): its documented query (`query` of the action), and for each
 * request the `Listing` its filters and `o` give (the first malformed filter answers 400). The
 * action pages with `pager(c.request, c.reply, fields)`.
 */
export function actionList(spec: {
  fields: readonly string[]
  filters: FilterSet
  ordering: { fields: Readonly<Record<string, string>>; default: readonly OrderBy[] }
}) {
  const parse = compileFilters(spec.filters)
  const docs = Object.fromEntries(Object.entries(spec.filters).map(([n, f]) => [n, Type.Optional(f.doc)]))
  const singles = [
    'page',
    'page_size',
    ...Object.keys(spec.filters).filter((n) => !spec.filters[n]!.repeatable),
  ]
  const query = parsedByHandler(
    Type.Object(
      {
        page: Type.Optional(PAGE),
        page_size: Type.Optional(PAGE_SIZE),
        field: fieldParam(spec.fields),
        o: orderParam(spec.ordering.fields),
        ...docs,
      },
      { additionalProperties: true },
    ),
  )
  return {
    query,
    listing(request: FastifyRequest): Listing {
      const q = request.query as Query
      rejectRepeated(q, singles)
      const order = parseOrdering(q, spec.ordering.fields, [...spec.ordering.default])
      return { where: parse(q).where, order }
    },
  }
}

/** Registers every operation the resource declares. */
export function registerResource(app: FastifyInstance, ctx: AppContext, spec: Resource): void {
  const collection = `/api/${spec.path}/`
  const item = `${collection}:uuid/`
  const tags = [spec.tag ?? spec.path]
  const fields = spec.fields ?? Object.keys(spec.record.properties)
  const one = `${article(spec.noun)} ${spec.noun}`
  const many = spec.plural ?? `${spec.noun}s`
  // Any field may be left out (`field=` selects some); the document still lists which a whole
  // record always has: all but those the record declares optional (see `finishRecord`).
  const partial = Type.Partial(spec.record, { [RECORD_REQUIRED]: spec.record.required ?? [] })
  const visibility = spec.visibility

  const add = (
    method: HTTPMethods,
    url: string,
    suffix: string | null,
    summary: string,
    schema: Record<string, unknown>,
    handler: RouteOptions['handler'],
    extra: Partial<RouteOptions> & { public?: boolean; errors?: Record<number, TSchema> } = {},
  ) => {
    const { public: isPublic, errors = standardErrors, ...options } = extra
    const id = operationId(url, suffix)
    const response = { ...(schema.response as object), ...errors }
    app.route({
      method,
      url,
      handler,
      ...options,
      schema: {
        tags,
        summary,
        ...(method === 'HEAD' ? {} : { operationId: id }),
        ...schema,
        response,
        ...(isPublic ? { security: [] } : {}),
      },
      config: {
        ...(isPublic ? { auth: 'optional' as const } : {}),
        // The documentation generator leaves HEAD routes out unless asked, and renames the
        // operationId of those it keeps: the count's id is set when the document is made.
        ...(method === 'HEAD'
          ? {
              swagger: { exposeHeadRoute: true },
              swaggerTransform: ({ schema: s, url: u }: { schema: FastifySchema; url: string }) => ({
                schema: { ...s, operationId: id, response: { ...(s.response as object), 200: NoContent } },
                url: u,
              }),
            }
          : {}),
      },
    })
  }

  // A collection GET also answers HEAD with the headers only (`X-Result-Count`, `Link`): the
  // reference's `count` operation, documented as such.
  const addCollectionGet = (
    url: string,
    name: string | null,
    summary: string,
    schema: Record<string, unknown>,
    handler: RouteOptions['handler'],
    extra: Parameters<typeof add>[6] = {},
  ) => {
    // An action's url already ends with its name: its ids are `<path>_<name>_count` and
    // `<path>_<name>_list` (or `_retrieve` when it answers one object), as the list's are.
    const response = (schema.response as Record<number, TSchema | null> | undefined)?.[200] ?? null
    const getSuffix = name && !isArraySchema(response) ? 'retrieve' : 'list'
    add(
      'HEAD',
      url,
      'count',
      `Count ${name ? `the results of ${name}` : many}: headers only, no body`,
      {
        ...schema,
        // Serialized as the list route would (the body is dropped); documented as no body.
        response: { 200: {} },
      },
      handler,
      extra,
    )
    add('GET', url, getSuffix, summary, schema, handler, { ...extra, exposeHeadRoute: false })
  }

  if (spec.list) {
    const list = spec.list
    const ordering = list.ordering
    const filters = list.filters ?? {}
    const parseFilters = compileFilters(filters)
    const filterDocs = Object.fromEntries(Object.entries(filters).map(([n, f]) => [n, Type.Optional(f.doc)]))
    const querystring = parsedByHandler(
      Type.Object(
        {
          page: Type.Optional(PAGE),
          page_size: Type.Optional(PAGE_SIZE),
          field: fieldParam(fields),
          // A list in a fixed order declares no `o`.
          ...(ordering?.fields ? { o: orderParam(ordering.fields) } : {}),
          ...filterDocs,
        },
        { additionalProperties: true },
      ),
    )
    const singles = ['page', 'page_size', ...Object.keys(filters).filter((n) => !filters[n]!.repeatable)]
    const defaultOrder = (ordering?.default ?? []) as OrderBy[]
    const json = list.render === 'json'
    const handler = async (request: FastifyRequest, reply: FastifyReply) => {
      const q = request.query as Query
      rejectRepeated(q, singles)
      const order = ordering?.fields ? parseOrdering(q, ordering.fields, defaultOrder) : defaultOrder
      const parsed = parseFilters(q)
      const call = new ListRequestCall(
        ctx,
        request,
        reply,
        visibility,
        parsed.values,
        { where: parsed.where, order },
        fields,
      )
      const out = await list.run(call as any)
      if ((out as unknown) === reply) return reply
      return json ? sendRendered(request, reply, fields, out as string) : out
    }
    addCollectionGet(
      collection,
      null,
      list.summary ?? `List ${many}`,
      { querystring, response: { 200: Type.Array(partial) } },
      handler,
      { errors: list.errors, public: list.public },
    )
  }

  const fieldQuery = parsedByHandler(
    Type.Object({ field: fieldParam(fields) }, { additionalProperties: true }),
  )

  if (spec.retrieve) {
    const retrieve = spec.retrieve
    const json = retrieve.render === 'json'
    add(
      'GET',
      item,
      'retrieve',
      retrieve.summary ?? `Retrieve ${one}`,
      { params: UuidParams, querystring: fieldQuery, response: { 200: partial } },
      async (request, reply) => {
        const out = await retrieve.run(new RequestCall(ctx, request, reply, visibility) as any)
        if ((out as unknown) === reply) return reply
        return json
          ? sendRendered(request, reply, fields, out as string)
          : withFields(request, fields, out as object)
      },
      { errors: retrieve.errors, public: retrieve.public },
    )
  }

  if (spec.create) {
    const create = spec.create
    const status = create.status ?? 201
    add(
      'POST',
      collection,
      'create',
      create.summary ?? `Create ${one}`,
      { body: create.body, response: { [status]: create.response ?? spec.record } },
      writeHandler(ctx, create.run, status, create.render === 'json' ? 'json' : 'object', create.fieldErrors),
      { errors: create.errors, public: create.public, ...writeOptions(create) },
    )
  }

  if (spec.update) {
    const update = spec.update
    const render = update.render === 'json' ? 'json' : 'object'
    const handler = writeHandler(ctx, update.run, 200, render, update.fieldErrors)
    const options = { errors: update.errors, ...writeOptions(update) }
    const response = { 200: spec.record }
    if (update.put !== false) {
      add(
        'PUT',
        item,
        'update',
        update.summary ?? `Update ${one}`,
        { params: UuidParams, body: update.body, response },
        handler,
        options,
      )
    }
    add(
      'PATCH',
      item,
      'partial_update',
      `Partially update ${one}`,
      { params: UuidParams, body: update.patch ?? update.body, response },
      handler,
      options,
    )
  }

  if (spec.destroy) {
    const destroy = spec.destroy
    add(
      'DELETE',
      item,
      'destroy',
      destroy.summary ?? `Delete ${one}`,
      { params: UuidParams, response: { 204: NoContent } },
      async (request, reply) => {
        await destroy.run(new RequestCall(ctx, request, reply))
        return reply.code(204).send()
      },
      { errors: destroy.errors },
    )
  }

  for (const action of spec.actions ?? []) {
    const detail = action.detail ?? true
    const method = action.method ?? 'POST'
    const url = `${detail ? item : collection}${action.name}/`
    const status = action.status ?? 200
    const schema: Record<string, unknown> = {
      ...(action.description ? { description: action.description } : {}),
      ...(action.consumes ? { consumes: action.consumes } : {}),
      ...(detail ? { params: UuidParams } : {}),
      ...(action.body ? { body: action.body } : {}),
      ...(action.query ? { querystring: action.query } : {}),
      response: Object.fromEntries(
        [status, ...(action.otherStatuses ?? [])].map((code) => [code, action.response ?? NoContent]),
      ),
    }
    const render = action.response === null ? 'none' : action.render === 'json' ? 'json' : 'object'
    const handler = writeHandler(ctx, action.run, status, render, action.fieldErrors)
    const hooks = permissionHook(action.permission, action.bodyOptional)
    const extra = {
      errors: action.errors,
      public: action.public,
      ...hooks,
      ...(action.fieldErrors ? { attachValidation: true } : {}),
    }
    // A GET on the collection answering records is a list (with its HEAD count); one answering
    // one object is a retrieve.
    if (method === 'GET' && !detail && isArraySchema(action.response)) {
      addCollectionGet(url, action.name, action.summary, schema, handler, extra)
    } else {
      add(method, url, actionSuffix(method, action.response), action.summary, schema, handler, extra)
    }
  }
}

/**
 * The operationId suffix of an action, as the reference's generator gives it: none after a POST
 * action's name; `list` or `retrieve` for a GET; `update`, `partial_update`, `destroy` for PUT,
 * PATCH and DELETE (`..._update_user_attribute_config_partial_update`).
 */
function actionSuffix(method: string, response: TSchema | null): string | null {
  switch (method) {
    case 'GET':
      return isArraySchema(response) ? 'list' : 'retrieve'
    case 'PUT':
      return 'update'
    case 'PATCH':
      return 'partial_update'
    case 'DELETE':
      return 'destroy'
    default:
      return null
  }
}

/** The hooks that run before the body is validated: the permission, and an optional body. */
function permissionHook(
  permission: ((actor: Actor) => void) | undefined,
  bodyOptional = false,
): Pick<RouteOptions, 'preValidation'> {
  const hooks: NonNullable<RouteOptions['preValidation']> & unknown[] = []
  if (permission) {
    hooks.push(async (request: FastifyRequest) => {
      permission(actorOf(request))
    })
  }
  if (bodyOptional) {
    hooks.push(async (request: FastifyRequest) => {
      if (request.body === undefined || request.body === null) request.body = {}
    })
  }
  return hooks.length ? { preValidation: hooks } : {}
}

/** A write's route options: its permission hook, and the schema's errors kept for `fieldErrors`. */
function writeOptions(spec: WriteOptions): Partial<RouteOptions> {
  return { ...permissionHook(spec.permission), ...(spec.fieldErrors ? { attachValidation: true } : {}) }
}

/** Answers a write or an action: the record(s) with the status, JSON text as is, or no body. */
function writeHandler(
  ctx: AppContext,
  run: (c: any) => Promise<unknown>,
  status: number,
  render: 'object' | 'json' | 'none',
  fieldErrors = false,
): RouteOptions['handler'] {
  return async (request, reply) => {
    const call = new RequestCall(ctx, request, reply)
    const out = await (fieldErrors ? call.fieldErrors.guard(() => run(call)) : run(call))
    if (out === reply) return reply
    if (render === 'none') return reply.code(status).send()
    if (render === 'json') return sendJson(reply.code(status), out as string)
    if (status !== 200) void reply.code(status)
    return out
  }
}

/** An area's plugin from its resources (and whatever else it sets up first, e.g. its jobs). */
export function resourceRoutes(
  resources: readonly Resource[],
  setup?: (app: FastifyInstance, ctx: AppContext) => void | Promise<void>,
) {
  return async function routes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
    await setup?.(app, ctx)
    for (const resource of resources) registerResource(app, ctx, resource)
  }
}
