// HTTP for /api/user-group-invitations/ and /api/user-permission-requests/.
import type { FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppContext } from '../../context.js'
import { filter } from '../../http/filters.js'
import { uuidFromLink } from '../../http/links.js'
import { pager, single } from '../../http/query.js'
import { defineAction, defineResource, resourceRoutes, columnsOf, orderedBy } from '../../http/resource.js'
import { errors, UuidParams } from '../../http/schemas.js'
import * as requests from './requests.js'
import { requestsOfScope, type InvitationScopeRef } from './repository.js'
import * as svc from './service.js'
import * as s from './schema.js'

/** `scope_type`: customer or project; any other value does not filter. */
const scopeType = filter.custom(
  Type.String({ description: 'customer or project; other values do not filter' }),
  (q, name) => {
    const v = single(q, name)
    return v === 'customer' || v === 'project' ? v : undefined
  },
  'user_group_invitations.scope_type',
)

/** A `scope` filter's value: a customer's or a project's URL (another URL matches nothing). */
function scopeOfLink(url: string): InvitationScopeRef | null {
  const customer = uuidFromLink(url, 'customers')
  if (customer) return { type: 'customer', uuid: customer }
  const project = uuidFromLink(url, 'projects')
  return project ? { type: 'project', uuid: project } : null
}

export const invitations = defineResource({
  path: s.PATH,
  noun: 'invitation',
  record: s.InvitationSchema,
  list: {
    public: true,
    filters: {
      customer_uuid: filter.uuid('c.uuid'),
      is_active: filter.boolean('user_group_invitations.is_active'),
      is_public: filter.boolean('user_group_invitations.is_public'),
      role_name: filter.exact('r.name'),
      role_uuid: filter.uuid('r.uuid'),
      scope_type: scopeType,
    },
    ordering: orderedBy(columnsOf('user_group_invitations', 'created'), '-created'),
    run: (c) => svc.listInvitations(c.ctx, c.maybeActor, c.listing, c.base, c.page),
  },
  retrieve: { public: true, run: (c) => svc.getInvitation(c.ctx, c.maybeActor, c.uuid, c.base) },
  create: { body: s.CreateBody, run: (c) => svc.createInvitation(c.ctx, c.actor, c.body, c.base) },
  destroy: { run: (c) => svc.deleteInvitation(c.ctx, c.actor, c.uuid) },
  actions: [
    defineAction({
      name: 'cancel',
      summary: 'Deactivate the invitation',
      response: null,
      run: (c) => svc.cancelInvitation(c.ctx, c.actor, c.uuid),
    }),
    defineAction({
      name: 'submit_request',
      summary: 'Request the invitation role for the caller (auto-approved when configured and matching)',
      response: s.SubmitResult,
      run: (c) => requests.submitRequest(c.ctx, c.actor, c.uuid),
    }),
  ],
})

const review = (name: string, decision: 'approved' | 'rejected', summary: string) =>
  defineAction({
    name,
    summary,
    body: s.ReviewBody,
    bodyOptional: true,
    response: null,
    run: (c) => requests.review(c.ctx, c.actor, c.uuid, decision, c.body.comment),
  })

export const permissionRequests = defineResource({
  path: s.REQUEST_PATH,
  noun: 'permission request',
  record: s.PermissionRequestSchema,
  visibility: requests.requestVisibility,
  list: {
    filters: {
      state: filter.choice(s.REQUEST_FILTER_STATES, 'user_permission_requests.state'),
      invitation_uuid: filter.uuid('i.uuid'),
      invitation: filter.uuid('i.uuid', { description: 'uuid of the invitation' }),
      customer_uuid: filter.uuid('c.uuid', { description: "uuid of the invitation's customer" }),
      customer: filter.uuid('c.uuid', { description: "uuid of the invitation's customer (older name)" }),
      project: filter.uuid('p.uuid', { description: "uuid of the invitation's project" }),
      created_by: filter.uuid('ru.uuid', { description: 'uuid of the user who made the request' }),
      scope: filter.custom(
        Type.String({ format: 'uri', description: "URL of the invitation's customer or project" }),
        (q, name) => {
          const v = single(q, name)
          return v === undefined ? undefined : scopeOfLink(v)
        },
        requestsOfScope,
      ),
    },
    ordering: orderedBy(columnsOf('user_permission_requests', 'created', 'state'), '-created'),
    run: (c) => requests.listRequests(c.ctx, c.scope, c.listing, c.base, c.page),
  },
  retrieve: { run: (c) => requests.getRequest(c.ctx, c.scope, c.uuid, c.base) },
  actions: [
    review('approve', 'approved', 'Approve the request: its role is granted'),
    review('reject', 'rejected', 'Reject the request'),
    defineAction({
      name: 'cancel_request',
      summary: "Withdraw the caller's own pending request",
      response: s.CancelRequestResult,
      run: (c) => requests.cancelRequest(c.ctx, c.actor, c.uuid),
    }),
  ],
})

/** GET {uuid}/projects/: a page of the customer's projects (its own query, as a list). */
async function setup(fastify: FastifyInstance, ctx: AppContext) {
  fastify.withTypeProvider<TypeBoxTypeProvider>().get(
    `/api/${s.PATH}/:uuid/projects/`,
    {
      config: { auth: 'optional' },
      schema: {
        tags: [s.PATH],
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
}

export const invitationsRoutes = resourceRoutes([invitations, permissionRequests], setup)
