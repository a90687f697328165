// HTTP for /api/user-group-invitations/ and /api/user-permission-requests/.
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
import * as svc from './service.js'
import * as s from './schema.js'

const INV = '/api/user-group-invitations/'
const REQ = '/api/user-permission-requests/'

export async function invitationsRoutes(fastify: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const tags = ['user-group-invitations']
  const Record = Type.Partial(s.InvitationSchema)

  app.get(
    INV,
    {
      config: { auth: 'optional' },
      schema: { tags, querystring: s.InvitationListQuery, response: { 200: Type.Array(Record), ...errors } },
    },
    async (request, reply) => {
      const q = request.query as Query
      const order = parseOrdering(q, s.ORDERING, [{ column: 'user_group_invitations.created', desc: true }])
      const f: svc.InvitationFilters = {
        customer_uuid: uuidFilter(q, 'customer_uuid'),
        is_active: boolFilter(q, 'is_active'),
        is_public: boolFilter(q, 'is_public'),
        role_name: single(q, 'role_name'),
        role_uuid: uuidFilter(q, 'role_uuid'),
        scope_type: single(q, 'scope_type'),
      }
      return svc.listInvitations(
        ctx,
        request.actor ?? null,
        f,
        order,
        request.baseUrl,
        pager(request, reply, s.FIELDS),
      )
    },
  )

  app.get(
    `${INV}:uuid/`,
    {
      config: { auth: 'optional' },
      schema: { tags, params: UuidParams, querystring: FieldQuery, response: { 200: Record, ...errors } },
    },
    async (request) =>
      withFields(
        request,
        s.FIELDS,
        await svc.getInvitation(ctx, request.actor ?? null, request.params.uuid, request.baseUrl),
      ),
  )

  app.post(
    INV,
    { schema: { tags, body: s.CreateBody, response: { 201: s.InvitationSchema, ...errors } } },
    async (request, reply) =>
      reply.code(201).send(await svc.createInvitation(ctx, actorOf(request), request.body, request.baseUrl)),
  )

  app.delete(
    `${INV}:uuid/`,
    { schema: { tags, params: UuidParams, response: { 204: NoContent, ...errors } } },
    async (request, reply) => {
      await svc.deleteInvitation(ctx, actorOf(request), request.params.uuid)
      return reply.code(204).send()
    },
  )

  app.post(
    `${INV}:uuid/cancel/`,
    {
      schema: {
        tags,
        summary: 'Deactivate the invitation',
        params: UuidParams,
        response: { 200: NoContent, ...errors },
      },
    },
    async (request, reply) => {
      await svc.cancelInvitation(ctx, actorOf(request), request.params.uuid)
      return reply.code(200).send()
    },
  )

  app.get(
    `${INV}:uuid/projects/`,
    {
      config: { auth: 'optional' },
      schema: {
        tags,
        summary: 'Projects of a customer-scoped invitation, paginated',
        params: UuidParams,
        querystring: s.ProjectListQuery,
        response: { 200: Type.Array(Type.Partial(s.ProjectItem)), ...errors },
      },
    },
    async (request, reply) =>
      svc.invitationProjects(
        ctx,
        request.actor ?? null,
        request.params.uuid,
        request.baseUrl,
        pager(request, reply, s.PROJECT_ITEM_FIELDS),
      ),
  )

  app.post(
    `${INV}:uuid/submit_request/`,
    {
      schema: {
        tags,
        summary: 'Request the invitation role for the caller (auto-approved when configured and matching)',
        params: UuidParams,
        response: { 200: s.SubmitResult, ...errors },
      },
    },
    async (request) => svc.submitRequest(ctx, actorOf(request), request.params.uuid),
  )

  // ---- permission requests ----
  const rtags = ['user-permission-requests']
  const RequestRecord = Type.Partial(s.PermissionRequestSchema)

  app.get(
    REQ,
    {
      schema: {
        tags: rtags,
        querystring: s.RequestListQuery,
        response: { 200: Type.Array(RequestRecord), ...errors },
      },
    },
    async (request, reply) => {
      const q = request.query as Query
      return svc.listRequests(
        ctx,
        actorOf(request),
        {
          states: choiceFilter(q, 'state', s.REQUEST_STATES),
          invitation_uuid: uuidFilter(q, 'invitation_uuid'),
        },
        request.baseUrl,
        pager(request, reply, s.REQUEST_FIELDS),
      )
    },
  )

  app.get(
    `${REQ}:uuid/`,
    {
      schema: {
        tags: rtags,
        params: UuidParams,
        querystring: FieldQuery,
        response: { 200: RequestRecord, ...errors },
      },
    },
    async (request) =>
      withFields(
        request,
        s.REQUEST_FIELDS,
        await svc.getRequest(ctx, actorOf(request), request.params.uuid, request.baseUrl),
      ),
  )

  for (const [action, decision] of [
    ['approve', 'approved'],
    ['reject', 'rejected'],
  ] as const) {
    app.post(
      `${REQ}:uuid/${action}/`,
      {
        schema: {
          tags: rtags,
          params: UuidParams,
          body: s.ReviewBody,
          response: { 200: NoContent, ...errors },
        },
        preValidation: async (request) => {
          if (request.body === undefined || request.body === null) request.body = {}
        },
      },
      async (request, reply) => {
        await svc.review(ctx, actorOf(request), request.params.uuid, decision, request.body.comment)
        return reply.code(200).send()
      },
    )
  }

  app.post(
    `${REQ}:uuid/cancel_request/`,
    {
      schema: { tags: rtags, params: UuidParams, response: { 200: s.CancelRequestResult, ...errors } },
    },
    async (request) => svc.cancelRequest(ctx, actorOf(request), request.params.uuid),
  )
}
