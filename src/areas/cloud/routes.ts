// HTTP for /api/service-settings/, and the cloud lifecycle job (defined once per app here, so
// the cloud areas registered after this plugin can enqueue steps).
import type { FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppContext } from '../../context.js'
import { actorOf } from '../../http/auth.js'
import { errors, FieldQuery, NoContent, UuidParams } from '../../http/schemas.js'
import {
  boolFilter,
  choiceFilter,
  pager,
  parseOrdering,
  single,
  uuidFilter,
  withFields,
  type Query,
} from '../../http/query.js'
import { CLOUD_KINDS } from './driver.js'
import { defineLifecycleJobs } from './lifecycle.js'
import * as svc from './service.js'
import * as s from './schema.js'

const tags = ['service-settings']

export async function cloudRoutes(fastify: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  defineLifecycleJobs(ctx)
  const Record = Type.Partial(s.ServiceSettingsSchema)

  app.get(
    '/api/service-settings/',
    {
      schema: {
        tags,
        querystring: s.ServiceSettingsListQuery,
        response: { 200: Type.Array(Record), ...errors },
      },
    },
    async (request, reply) => {
      const actor = actorOf(request)
      const q = request.query as Query
      const order = parseOrdering(q, s.SETTINGS_ORDERING, [{ column: 'service_settings.name', desc: false }])
      const byCustomer = uuidFilter(q, 'customer')
      const byCustomerUuid = uuidFilter(q, 'customer_uuid')
      const f = {
        name: single(q, 'name'),
        name_exact: single(q, 'name_exact'),
        types: choiceFilter(q, 'type', CLOUD_KINDS),
        shared: boolFilter(q, 'shared'),
        customer_uuid:
          byCustomer && byCustomerUuid && byCustomer !== byCustomerUuid
            ? null
            : (byCustomer ?? byCustomerUuid),
        state: choiceFilter(q, 'state', s.SETTINGS_STATES),
        uuid: uuidFilter(q, 'uuid'),
      }
      return svc.listServiceSettings(
        ctx,
        actor,
        f,
        order,
        request.baseUrl,
        pager(request, reply, s.SETTINGS_FIELDS),
      )
    },
  )

  app.get(
    '/api/service-settings/:uuid/',
    { schema: { tags, params: UuidParams, querystring: FieldQuery, response: { 200: Record, ...errors } } },
    async (request) =>
      withFields(
        request,
        s.SETTINGS_FIELDS,
        await svc.getServiceSettings(ctx, actorOf(request), request.params.uuid, request.baseUrl),
      ),
  )

  app.post(
    '/api/service-settings/',
    {
      schema: {
        tags,
        body: s.ServiceSettingsCreateBody,
        response: { 201: s.ServiceSettingsSchema, ...errors },
      },
    },
    async (request, reply) => {
      const r = await svc.createServiceSettings(ctx, actorOf(request), request.body, request.baseUrl)
      return reply.code(201).send(r)
    },
  )

  for (const method of ['PUT', 'PATCH'] as const) {
    app.route({
      method,
      url: '/api/service-settings/:uuid/',
      schema: {
        tags,
        params: UuidParams,
        body: method === 'PUT' ? s.ServiceSettingsCreateBody : s.ServiceSettingsPatchBody,
        response: { 200: s.ServiceSettingsSchema, ...errors },
      },
      handler: async (request) =>
        svc.updateServiceSettings(ctx, actorOf(request), request.params.uuid, request.body, request.baseUrl),
    })
  }

  app.delete(
    '/api/service-settings/:uuid/',
    { schema: { tags, params: UuidParams, response: { 204: NoContent, ...errors } } },
    async (request, reply) => {
      await svc.deleteServiceSettings(ctx, actorOf(request), request.params.uuid)
      return reply.code(204).send()
    },
  )
}
