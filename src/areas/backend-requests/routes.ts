// HTTP for /api/backend-resource-requests/.
import type { FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppContext } from '../../context.js'
import { actorOf, staffOnly } from '../../http/auth.js'
import { errors, FieldQuery, StatusBody, UuidParams } from '../../http/schemas.js'
import {
  choiceFilter,
  dateTimeFilter,
  pager,
  parseOrdering,
  uuidFilter,
  withFields,
  type Query,
} from '../../http/query.js'
import * as svc from './service.js'
import * as s from './schema.js'
import type { Action } from './state-machine.js'

const tags = ['backend-resource-requests']
const BASE = '/api/backend-resource-requests/'

export async function backendRequestsRoutes(fastify: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const Record = Type.Partial(s.BackendRequestSchema)

  app.get(
    BASE,
    { schema: { tags, querystring: s.ListQuerySchema, response: { 200: Type.Array(Record), ...errors } } },
    async (request, reply) => {
      const actor = actorOf(request)
      const q = request.query as Query
      const order = parseOrdering(q, s.ORDERING, [
        { column: 'backend_resource_requests.created', desc: false },
      ])
      const f: svc.Filters = {
        offering_uuid: uuidFilter(q, 'offering_uuid'),
        states: choiceFilter(q, 'state', s.STATES),
        created: dateTimeFilter(q, 'created'),
        modified: dateTimeFilter(q, 'modified'),
        started: dateTimeFilter(q, 'started'),
        finished: dateTimeFilter(q, 'finished'),
      }
      return svc.list(ctx, actor, f, order, request.baseUrl, pager(request, reply, s.FIELDS))
    },
  )

  app.get(
    `${BASE}:uuid/`,
    { schema: { tags, params: UuidParams, querystring: FieldQuery, response: { 200: Record, ...errors } } },
    async (request) =>
      withFields(
        request,
        s.FIELDS,
        await svc.get(ctx, actorOf(request), request.params.uuid, request.baseUrl),
      ),
  )

  app.post(
    BASE,
    {
      schema: { tags, body: s.CreateBody, response: { 201: s.BackendRequestSchema, ...errors } },
      // Staff only: others get 403 whatever the body holds.
      preValidation: staffOnly,
    },
    async (request, reply) => {
      const r = await svc.create(ctx, actorOf(request), request.body, request.baseUrl)
      return reply.code(201).send(r)
    },
  )

  for (const action of ['start_processing', 'set_done'] as Action[]) {
    app.post(
      `${BASE}:uuid/${action}/`,
      { schema: { tags, params: UuidParams, response: { 200: StatusBody, ...errors } } },
      async (request) => svc.transition(ctx, actorOf(request), request.params.uuid, action),
    )
  }
  app.post(
    `${BASE}:uuid/set_erred/`,
    {
      schema: { tags, params: UuidParams, body: s.ErredBody, response: { 200: StatusBody, ...errors } },
      // A body-less call stores empty strings rather than failing on the missing object.
      preValidation: async (request) => {
        if (request.body === undefined || request.body === null) request.body = {}
      },
    },
    async (request) =>
      svc.transition(ctx, actorOf(request), request.params.uuid, 'set_erred', request.body ?? {}),
  )
}
