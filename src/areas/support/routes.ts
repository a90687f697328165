// HTTP for /api/support-issues/ and /api/support-feedbacks/.
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
  dateTimeFilter,
  pager,
  parseOrdering,
  single,
  uuidFilter,
  withFields,
  type Query,
} from '../../http/query.js'
import type { FeedbackFilters } from './repository.js'
import * as svc from './service.js'
import * as s from './schema.js'

/** A URL filter: undefined when absent, null (matches nothing) when not a link of this kind. */
function linkFilter(q: Query, name: string, path: string): string | null | undefined {
  const v = single(q, name)
  return v === undefined ? undefined : uuidFromLink(v, path)
}

/** A URL filter and the uuid filter of the same relation: both must agree (null matches nothing). */
function combine(byLink: string | null | undefined, byUuid: string | undefined): string | null | undefined {
  if (byLink === null) return null
  if (byLink && byUuid && byLink !== byUuid) return null
  return byLink ?? byUuid
}

export async function supportRoutes(fastify: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  // ---- issues ----
  const issueTags = ['support-issues']
  const IssueRecord = Type.Partial(s.IssueSchema)
  app.get(
    '/api/support-issues/',
    {
      schema: {
        tags: issueTags,
        querystring: s.IssueListQuery,
        response: { 200: Type.Array(IssueRecord), ...errors },
      },
    },
    async (request, reply) => {
      const actor = actorOf(request)
      const q = request.query as Query
      const order = parseOrdering(q, s.ISSUE_ORDERING, [{ column: 'support_issues.created', desc: true }])
      const f = {
        key: single(q, 'key'),
        summary: single(q, 'summary'),
        state: single(q, 'state'),
        resolved: boolFilter(q, 'resolved'),
        caller_uuid: uuidFilter(q, 'caller_uuid'),
        customer_uuid: uuidFilter(q, 'customer_uuid'),
        project_uuid: uuidFilter(q, 'project_uuid'),
      }
      return svc.listIssues(ctx, actor, f, order, request.baseUrl, pager(request, reply, s.ISSUE_FIELDS))
    },
  )
  app.get(
    '/api/support-issues/:uuid/',
    {
      schema: {
        tags: issueTags,
        params: UuidParams,
        querystring: FieldQuery,
        response: { 200: IssueRecord, ...errors },
      },
    },
    async (request) =>
      withFields(
        request,
        s.ISSUE_FIELDS,
        await svc.getIssue(ctx, actorOf(request), request.params.uuid, request.baseUrl),
      ),
  )
  app.post(
    '/api/support-issues/',
    { schema: { tags: issueTags, body: s.IssueCreateBody, response: { 201: s.IssueSchema, ...errors } } },
    async (request, reply) => {
      const issue = await svc.createIssue(ctx, actorOf(request), request.body, request.baseUrl)
      return reply.code(201).send(issue)
    },
  )
  for (const method of ['PUT', 'PATCH'] as const) {
    app.route({
      method,
      url: '/api/support-issues/:uuid/',
      schema: {
        tags: issueTags,
        params: UuidParams,
        body: method === 'PUT' ? s.IssueCreateBody : s.IssuePatchBody,
        response: { 200: s.IssueSchema, ...errors },
      },
      handler: async (request) =>
        svc.updateIssue(ctx, actorOf(request), request.params.uuid, request.body, request.baseUrl),
    })
  }
  app.delete(
    '/api/support-issues/:uuid/',
    { schema: { tags: issueTags, params: UuidParams, response: { 204: NoContent, ...errors } } },
    async (request, reply) => {
      await svc.deleteIssue(ctx, actorOf(request), request.params.uuid)
      return reply.code(204).send()
    },
  )
  app.get(
    '/api/support-issues/:uuid/feedback_token/',
    {
      schema: {
        tags: issueTags,
        summary:
          'A signed token with which anyone holding it may leave feedback on the issue (staff, support)',
        params: UuidParams,
        response: { 200: s.FeedbackTokenResponse, ...errors },
      },
    },
    async (request) => svc.feedbackToken(ctx, actorOf(request), request.params.uuid, request.baseUrl),
  )

  // ---- feedbacks ----
  const feedbackTags = ['support-feedbacks']
  const FeedbackRecord = Type.Partial(s.FeedbackSchema)
  app.get(
    '/api/support-feedbacks/',
    {
      schema: {
        tags: feedbackTags,
        querystring: s.FeedbackListQuery,
        response: { 200: Type.Array(FeedbackRecord), ...errors },
      },
    },
    async (request, reply) => {
      const actor = actorOf(request)
      const q = request.query as Query
      const f: FeedbackFilters = {
        created_after: dateTimeFilter(q, 'created_after'),
        created_before: dateTimeFilter(q, 'created_before'),
        evaluations: choiceFilter(q, 'evaluation', s.EVALUATIONS).map(Number),
        issue_uuid: combine(linkFilter(q, 'issue', s.ISSUES_PATH), uuidFilter(q, 'issue_uuid')),
        issue_key: single(q, 'issue_key'),
        user_uuid: combine(linkFilter(q, 'user', 'users'), uuidFilter(q, 'user_uuid')),
        user_full_name: single(q, 'user_full_name'),
      }
      return svc.listFeedbacks(
        ctx,
        actor,
        f,
        [{ column: 'support_feedbacks.created', desc: false }],
        pager(request, reply, s.FEEDBACK_FIELDS),
      )
    },
  )
  app.get(
    '/api/support-feedbacks/:uuid/',
    {
      schema: {
        tags: feedbackTags,
        params: UuidParams,
        querystring: FieldQuery,
        response: { 200: FeedbackRecord, ...errors },
      },
    },
    async (request) =>
      withFields(
        request,
        s.FEEDBACK_FIELDS,
        await svc.getFeedback(ctx, actorOf(request), request.params.uuid),
      ),
  )
  app.post(
    '/api/support-feedbacks/',
    {
      config: { auth: 'optional' },
      schema: {
        tags: feedbackTags,
        summary: 'Leave feedback on a support issue with a feedback token (no login needed)',
        security: [],
        body: s.FeedbackCreateBody,
        response: { 201: s.FeedbackCreateResult, 400: errors[400], 401: errors[401] },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await svc.createFeedback(ctx, request.body, request.baseUrl)),
  )
}
