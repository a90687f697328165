// HTTP for /api/marketplace-offering-estimated-cost-policies/, and the evaluation job.
import type { FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppContext } from '../../context.js'
import { actorOf } from '../../http/auth.js'
import { errors, FieldQuery, NoContent, UuidParams } from '../../http/schemas.js'
import { uuidFromLink } from '../../http/links.js'
import { pager, single, uuidFilter, withFields, type Query } from '../../http/query.js'
import * as svc from './service.js'
import * as s from './schema.js'

const tags = ['marketplace-offering-estimated-cost-policies']
const BASE = '/api/marketplace-offering-estimated-cost-policies/'

export async function costPoliciesRoutes(fastify: FastifyInstance, { ctx }: { ctx: AppContext }) {
  ctx.jobs.define<{ offeringId: number }>(svc.EVALUATE_JOB, {
    run: (payload) => svc.evaluateOfferingPolicies(ctx, payload.offeringId),
    maxAttempts: 5,
    backoffMs: 2000,
  })

  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const Record = Type.Partial(s.PolicySchema)

  app.get(
    BASE,
    { schema: { tags, querystring: s.PolicyListQuery, response: { 200: Type.Array(Record), ...errors } } },
    async (request, reply) => {
      const actor = actorOf(request)
      const q = request.query as Query
      const scope = single(q, 'scope')
      // A URL of another kind matches nothing (reference §0.5), not 400.
      const byLink = scope === undefined ? undefined : uuidFromLink(scope, s.OFFERINGS_PATH)
      const byUuid = uuidFilter(q, 'scope_uuid')
      const f = {
        scope_uuid: byLink === null || (byLink && byUuid && byLink !== byUuid) ? null : (byLink ?? byUuid),
      }
      return svc.listPolicies(ctx, actor, f, request.baseUrl, pager(request, reply, s.POLICY_FIELDS))
    },
  )

  app.get(
    `${BASE}actions/`,
    {
      schema: {
        tags,
        summary: 'The actions a policy may take: `actions` lists them, `options` describes each',
        response: { 200: s.PolicyActionsSchema, ...errors },
      },
    },
    async (request) => {
      actorOf(request)
      return svc.availableActions()
    },
  )

  app.get(
    `${BASE}:uuid/`,
    { schema: { tags, params: UuidParams, querystring: FieldQuery, response: { 200: Record, ...errors } } },
    async (request) =>
      withFields(
        request,
        s.POLICY_FIELDS,
        await svc.getPolicy(ctx, actorOf(request), request.params.uuid, request.baseUrl),
      ),
  )

  app.post(
    BASE,
    { schema: { tags, body: s.PolicyCreateBody, response: { 201: s.PolicySchema, ...errors } } },
    async (request, reply) => {
      const p = await svc.createPolicy(ctx, actorOf(request), request.body, request.baseUrl)
      return reply.code(201).send(p)
    },
  )

  for (const method of ['PUT', 'PATCH'] as const) {
    app.route({
      method,
      url: `${BASE}:uuid/`,
      schema: {
        tags,
        params: UuidParams,
        body: method === 'PUT' ? s.PolicyCreateBody : s.PolicyPatchBody,
        response: { 200: s.PolicySchema, ...errors },
      },
      handler: async (request) =>
        svc.updatePolicy(ctx, actorOf(request), request.params.uuid, request.body, request.baseUrl),
    })
  }

  app.delete(
    `${BASE}:uuid/`,
    { schema: { tags, params: UuidParams, response: { 204: NoContent, ...errors } } },
    async (request, reply) => {
      await svc.deletePolicy(ctx, actorOf(request), request.params.uuid)
      return reply.code(204).send()
    },
  )
}
