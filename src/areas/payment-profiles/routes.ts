// HTTP for /api/payment-profiles/.
import type { FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppContext } from '../../context.js'
import { actorOf } from '../../http/auth.js'
import { errors, FieldQuery, NoContent, UuidParams } from '../../http/schemas.js'
import { uuidFromLink } from '../../http/links.js'
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
import * as svc from './service.js'
import * as s from './schema.js'

const tags = ['payment-profiles']

export async function paymentProfilesRoutes(fastify: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const Record = Type.Partial(s.PaymentProfileSchema)

  app.get(
    '/api/payment-profiles/',
    {
      schema: {
        tags,
        querystring: s.PaymentProfileListQuery,
        response: { 200: Type.Array(Record), ...errors },
      },
    },
    async (request, reply) => {
      const actor = actorOf(request)
      const q = request.query as Query
      const order = parseOrdering(q, s.PAYMENT_PROFILE_ORDERING, [
        { column: 'payment_profiles.name', desc: false },
      ])
      const organization = single(q, 'organization')
      const byUuid = uuidFilter(q, 'organization_uuid')
      // A URL of another kind matches nothing (reference §0.5), not 400.
      const byLink = organization === undefined ? undefined : uuidFromLink(organization, 'customers')
      const f = {
        is_active: boolFilter(q, 'is_active'),
        organization_uuid:
          byLink === null || (byLink && byUuid && byLink !== byUuid) ? null : (byLink ?? byUuid),
        payment_types: choiceFilter(q, 'payment_type', s.PAYMENT_TYPES),
      }
      return svc.listPaymentProfiles(
        ctx,
        actor,
        f,
        order,
        request.baseUrl,
        pager(request, reply, s.PAYMENT_PROFILE_FIELDS),
      )
    },
  )

  app.get(
    '/api/payment-profiles/:uuid/',
    {
      schema: { tags, params: UuidParams, querystring: FieldQuery, response: { 200: Record, ...errors } },
    },
    async (request) =>
      withFields(
        request,
        s.PAYMENT_PROFILE_FIELDS,
        await svc.getPaymentProfile(ctx, actorOf(request), request.params.uuid, request.baseUrl),
      ),
  )

  app.post(
    '/api/payment-profiles/',
    {
      schema: {
        tags,
        body: s.PaymentProfileCreateBody,
        response: { 201: s.PaymentProfileSchema, ...errors },
      },
    },
    async (request, reply) => {
      const p = await svc.createPaymentProfile(ctx, actorOf(request), request.body, request.baseUrl)
      return reply.code(201).send(p)
    },
  )

  for (const method of ['PUT', 'PATCH'] as const) {
    app.route({
      method,
      url: '/api/payment-profiles/:uuid/',
      schema: {
        tags,
        params: UuidParams,
        body: method === 'PUT' ? s.PaymentProfileCreateBody : s.PaymentProfilePatchBody,
        response: { 200: s.PaymentProfileSchema, ...errors },
      },
      handler: async (request) =>
        svc.updatePaymentProfile(ctx, actorOf(request), request.params.uuid, request.body, request.baseUrl),
    })
  }

  app.delete(
    '/api/payment-profiles/:uuid/',
    { schema: { tags, params: UuidParams, response: { 204: NoContent, ...errors } } },
    async (request, reply) => {
      await svc.deletePaymentProfile(ctx, actorOf(request), request.params.uuid)
      return reply.code(204).send()
    },
  )

  app.post(
    '/api/payment-profiles/:uuid/enable/',
    {
      schema: {
        tags,
        summary: 'Make this the active profile of its organization (the others become inactive)',
        params: UuidParams,
        response: { 200: NoContent, ...errors },
      },
    },
    async (request, reply) => {
      await svc.enablePaymentProfile(ctx, actorOf(request), request.params.uuid)
      return reply.code(200).send()
    },
  )
}
