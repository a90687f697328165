// HTTP for the directory: users, customers, projects, roles, grants, organization groups.
import type { FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppContext } from '../../context.js'
import { actorOf } from '../../http/auth.js'
import { DetailBody, errors, FieldQuery, NoContent, UuidParams } from '../../http/schemas.js'
import {
  boolFilter,
  pager,
  parseOrdering,
  single,
  uuidFilter,
  withFields,
  type Query,
} from '../../http/query.js'
import * as svc from './service.js'
import * as s from './schema.js'

const tag = (name: string) => ({ tags: [name] })

export async function directoryRoutes(fastify: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  // ---- auth ----
  app.post(
    '/api-auth/password/',
    {
      config: { auth: 'optional' },
      preHandler: fastify.loginThrottle,
      schema: {
        ...tag('auth'),
        summary: 'Log in with a username and password: answers an API token',
        security: [],
        body: s.LoginBody,
        response: { 200: s.TokenResponse, 400: errors[400] },
      },
    },
    async (request) => {
      const body = request.body
      return { token: await svc.obtainToken(ctx, body.username, body.password) }
    },
  )

  // ---- users ----
  const UserList = Type.Array(Type.Partial(s.UserSchema))
  app.get(
    '/api/users/',
    { schema: { ...tag('users'), querystring: s.UserListQuery, response: { 200: UserList, ...errors } } },
    async (request, reply) => {
      const q = request.query as Query
      const order = parseOrdering(q, s.USER_ORDERING, [{ column: 'username', desc: false }])
      const f = {
        username: single(q, 'username'),
        email: single(q, 'email'),
        full_name: single(q, 'full_name'),
        is_active: boolFilter(q, 'is_active'),
        is_staff: boolFilter(q, 'is_staff'),
        is_support: boolFilter(q, 'is_support'),
        uuid: uuidFilter(q, 'uuid'),
        query: single(q, 'query'),
      }
      return svc.listUsers(
        ctx,
        actorOf(request),
        f,
        order,
        request.baseUrl,
        pager(request, reply, s.USER_FIELDS),
      )
    },
  )
  app.get(
    '/api/users/me/',
    {
      schema: {
        ...tag('users'),
        querystring: FieldQuery,
        response: { 200: Type.Partial(s.UserSchema), ...errors },
      },
    },
    async (request) =>
      withFields(request, s.USER_FIELDS, await svc.getMe(ctx, actorOf(request), request.baseUrl)),
  )
  app.get(
    '/api/users/:uuid/',
    {
      schema: {
        ...tag('users'),
        params: UuidParams,
        querystring: FieldQuery,
        response: { 200: Type.Partial(s.UserSchema), ...errors },
      },
    },
    async (request) =>
      withFields(
        request,
        s.USER_FIELDS,
        await svc.getUser(ctx, actorOf(request), request.params.uuid, request.baseUrl),
      ),
  )
  app.post(
    '/api/users/',
    { schema: { ...tag('users'), body: s.UserCreateBody, response: { 201: s.UserSchema, ...errors } } },
    async (request, reply) => {
      const user = await svc.createUser(ctx, actorOf(request), request.body, request.baseUrl)
      return reply.code(201).send(user)
    },
  )
  for (const method of ['PUT', 'PATCH'] as const) {
    app.route({
      method,
      url: '/api/users/:uuid/',
      schema: {
        ...tag('users'),
        params: UuidParams,
        body: s.UserUpdateBody,
        response: { 200: s.UserSchema, ...errors },
      },
      handler: async (request) =>
        svc.updateUser(
          ctx,
          actorOf(request),
          request.params.uuid,
          request.body as s.UserUpdate,
          request.baseUrl,
        ),
    })
  }
  app.delete(
    '/api/users/:uuid/',
    { schema: { ...tag('users'), params: UuidParams, response: { 204: NoContent, ...errors } } },
    async (request, reply) => {
      await svc.deleteUser(ctx, actorOf(request), request.params.uuid)
      return reply.code(204).send()
    },
  )
  app.post(
    '/api/users/:uuid/password/',
    {
      schema: {
        ...tag('users'),
        params: UuidParams,
        body: s.PasswordBody,
        response: { 200: DetailBody, ...errors },
      },
    },
    async (request) => {
      await svc.setPassword(ctx, actorOf(request), request.params.uuid, request.body.password)
      return { detail: 'Password has been successfully updated.' }
    },
  )

  app.post(
    '/api/users/:uuid/confirm_email/',
    {
      schema: {
        ...tag('users'),
        summary: 'Make the pending e-mail address the confirmed one',
        params: UuidParams,
        body: s.ConfirmEmailBody,
        response: { 200: s.UserSchema, ...errors },
      },
      preValidation: async (request) => {
        if (request.body === undefined || request.body === null) request.body = {}
      },
    },
    async (request) =>
      svc.confirmEmail(ctx, actorOf(request), request.params.uuid, request.body.token, request.baseUrl),
  )

  // ---- organization groups ----
  const GroupList = Type.Array(Type.Partial(s.OrganizationGroupSchema))
  app.get(
    '/api/organization-groups/',
    {
      schema: {
        ...tag('organization-groups'),
        querystring: s.OrganizationGroupListQuery,
        response: { 200: GroupList, ...errors },
      },
    },
    async (request, reply) => {
      actorOf(request)
      const q = request.query as Query
      const order = parseOrdering(q, s.ORGANIZATION_GROUP_ORDERING, [
        { column: 'organization_groups.name', desc: false },
      ])
      const f = { name: single(q, 'name'), parent_uuid: uuidFilter(q, 'parent_uuid') }
      return svc.listOrganizationGroups(
        ctx,
        f,
        order,
        request.baseUrl,
        pager(request, reply, s.ORGANIZATION_GROUP_FIELDS),
      )
    },
  )
  app.get(
    '/api/organization-groups/:uuid/',
    {
      schema: {
        ...tag('organization-groups'),
        params: UuidParams,
        querystring: FieldQuery,
        response: { 200: Type.Partial(s.OrganizationGroupSchema), ...errors },
      },
    },
    async (request) => {
      actorOf(request)
      return withFields(
        request,
        s.ORGANIZATION_GROUP_FIELDS,
        await svc.getOrganizationGroup(ctx, request.params.uuid, request.baseUrl),
      )
    },
  )
  app.post(
    '/api/organization-groups/',
    {
      schema: {
        ...tag('organization-groups'),
        body: s.OrganizationGroupBody,
        response: { 201: s.OrganizationGroupSchema, ...errors },
      },
    },
    async (request, reply) => {
      const g = await svc.createOrganizationGroup(ctx, actorOf(request), request.body, request.baseUrl)
      return reply.code(201).send(g)
    },
  )
  for (const method of ['PUT', 'PATCH'] as const) {
    app.route({
      method,
      url: '/api/organization-groups/:uuid/',
      schema: {
        ...tag('organization-groups'),
        params: UuidParams,
        body: method === 'PUT' ? s.OrganizationGroupBody : s.OrganizationGroupPatchBody,
        response: { 200: s.OrganizationGroupSchema, ...errors },
      },
      handler: async (request) =>
        svc.updateOrganizationGroup(
          ctx,
          actorOf(request),
          request.params.uuid,
          request.body as any,
          request.baseUrl,
        ),
    })
  }
  app.delete(
    '/api/organization-groups/:uuid/',
    {
      schema: { ...tag('organization-groups'), params: UuidParams, response: { 204: NoContent, ...errors } },
    },
    async (request, reply) => {
      await svc.deleteOrganizationGroup(ctx, actorOf(request), request.params.uuid)
      return reply.code(204).send()
    },
  )

  // ---- customers ----
  const CustomerList = Type.Array(Type.Partial(s.CustomerSchema))
  app.get(
    '/api/customers/',
    {
      schema: {
        ...tag('customers'),
        querystring: s.CustomerListQuery,
        response: { 200: CustomerList, ...errors },
      },
    },
    async (request, reply) => {
      const q = request.query as Query
      const order = parseOrdering(q, s.CUSTOMER_ORDERING, [{ column: 'customers.name', desc: false }])
      const f = {
        name: single(q, 'name'),
        name_exact: single(q, 'name_exact'),
        abbreviation: single(q, 'abbreviation'),
        native_name: single(q, 'native_name'),
        slug: single(q, 'slug'),
        uuid: uuidFilter(q, 'uuid'),
        query: single(q, 'query'),
        organization_group_uuid: uuidFilter(q, 'organization_group_uuid'),
      }
      return svc.listCustomers(
        ctx,
        actorOf(request),
        f,
        order,
        request.baseUrl,
        pager(request, reply, s.CUSTOMER_FIELDS),
      )
    },
  )
  app.get(
    '/api/customers/:uuid/',
    {
      schema: {
        ...tag('customers'),
        params: UuidParams,
        querystring: FieldQuery,
        response: { 200: Type.Partial(s.CustomerSchema), ...errors },
      },
    },
    async (request) =>
      withFields(
        request,
        s.CUSTOMER_FIELDS,
        await svc.getCustomer(ctx, actorOf(request), request.params.uuid, request.baseUrl),
      ),
  )
  app.post(
    '/api/customers/',
    {
      schema: {
        ...tag('customers'),
        body: s.CustomerCreateBody,
        response: { 201: s.CustomerSchema, ...errors },
      },
    },
    async (request, reply) => {
      const c = await svc.createCustomer(ctx, actorOf(request), request.body, request.baseUrl)
      return reply.code(201).send(c)
    },
  )
  for (const method of ['PUT', 'PATCH'] as const) {
    app.route({
      method,
      url: '/api/customers/:uuid/',
      schema: {
        ...tag('customers'),
        params: UuidParams,
        body: method === 'PUT' ? s.CustomerCreateBody : s.CustomerUpdateBody,
        response: { 200: s.CustomerSchema, ...errors },
      },
      handler: async (request) =>
        svc.updateCustomer(ctx, actorOf(request), request.params.uuid, request.body as any, request.baseUrl),
    })
  }
  app.delete(
    '/api/customers/:uuid/',
    { schema: { ...tag('customers'), params: UuidParams, response: { 204: NoContent, ...errors } } },
    async (request, reply) => {
      await svc.deleteCustomer(ctx, actorOf(request), request.params.uuid)
      return reply.code(204).send()
    },
  )

  // ---- projects ----
  const ProjectList = Type.Array(Type.Partial(s.ProjectSchema))
  app.get(
    '/api/projects/',
    {
      schema: {
        ...tag('projects'),
        querystring: s.ProjectListQuery,
        response: { 200: ProjectList, ...errors },
      },
    },
    async (request, reply) => {
      const q = request.query as Query
      const order = parseOrdering(q, s.PROJECT_ORDERING, [{ column: 'projects.name', desc: false }])
      const customerLink = single(q, 'customer')
      const f = {
        name: single(q, 'name'),
        name_exact: single(q, 'name_exact'),
        customer_uuid: uuidFilter(q, 'customer_uuid'),
        customer_name: single(q, 'customer_name'),
        description: single(q, 'description'),
        slug: single(q, 'slug'),
        uuid: uuidFilter(q, 'uuid'),
        query: single(q, 'query'),
      }
      if (customerLink !== undefined) {
        const { uuidFromLink } = await import('../../http/links.js')
        const fromLink = uuidFromLink(customerLink, s.PATHS.customers)
        // A URL filter of the wrong kind matches nothing, as the reference does.
        f.customer_uuid = fromLink ?? '00000000-0000-0000-0000-000000000000'
      }
      return svc.listProjects(
        ctx,
        actorOf(request),
        f,
        order,
        request.baseUrl,
        pager(request, reply, s.PROJECT_FIELDS),
      )
    },
  )
  app.get(
    '/api/projects/:uuid/',
    {
      schema: {
        ...tag('projects'),
        params: UuidParams,
        querystring: FieldQuery,
        response: { 200: Type.Partial(s.ProjectSchema), ...errors },
      },
    },
    async (request) =>
      withFields(
        request,
        s.PROJECT_FIELDS,
        await svc.getProject(ctx, actorOf(request), request.params.uuid, request.baseUrl),
      ),
  )
  app.post(
    '/api/projects/',
    {
      schema: {
        ...tag('projects'),
        body: s.ProjectCreateBody,
        response: { 201: s.ProjectSchema, ...errors },
      },
    },
    async (request, reply) => {
      const p = await svc.createProject(ctx, actorOf(request), request.body, request.baseUrl)
      return reply.code(201).send(p)
    },
  )
  for (const method of ['PUT', 'PATCH'] as const) {
    app.route({
      method,
      url: '/api/projects/:uuid/',
      schema: {
        ...tag('projects'),
        params: UuidParams,
        body: method === 'PUT' ? s.ProjectCreateBody : s.ProjectUpdateBody,
        response: { 200: s.ProjectSchema, ...errors },
      },
      handler: async (request) =>
        svc.updateProject(ctx, actorOf(request), request.params.uuid, request.body as any, request.baseUrl),
    })
  }
  app.delete(
    '/api/projects/:uuid/',
    { schema: { ...tag('projects'), params: UuidParams, response: { 204: NoContent, ...errors } } },
    async (request, reply) => {
      await svc.deleteProject(ctx, actorOf(request), request.params.uuid)
      return reply.code(204).send()
    },
  )

  // ---- grants on customers and projects ----
  const GrantList = Type.Array(Type.Partial(s.GrantSchema))
  for (const kind of ['customer', 'project'] as const) {
    const path = kind === 'customer' ? s.PATHS.customers : s.PATHS.projects
    app.post(
      `/api/${path}/:uuid/add_user/`,
      {
        schema: {
          ...tag(path),
          params: UuidParams,
          body: s.GrantBody,
          response: { 201: s.GrantSchema, ...errors },
        },
      },
      async (request, reply) => {
        const actor = actorOf(request)
        const scope = await svc.grantScopeFor(ctx, actor, kind, request.params.uuid, true)
        const grant = await svc.addUser(ctx, actor, scope, request.body, request.baseUrl)
        return reply.code(201).send(grant)
      },
    )
    app.post(
      `/api/${path}/:uuid/delete_user/`,
      {
        schema: {
          ...tag(path),
          params: UuidParams,
          body: s.RevokeBody,
          response: { 204: NoContent, ...errors },
        },
      },
      async (request, reply) => {
        const actor = actorOf(request)
        const scope = await svc.grantScopeFor(ctx, actor, kind, request.params.uuid, true)
        await svc.deleteUserGrant(ctx, scope, request.body)
        return reply.code(204).send()
      },
    )
    app.get(
      `/api/${path}/:uuid/list_users/`,
      {
        schema: {
          ...tag(path),
          params: UuidParams,
          querystring: s.GrantListQuery,
          response: { 200: GrantList, ...errors },
        },
      },
      async (request, reply) => {
        const actor = actorOf(request)
        const scope = await svc.grantScopeFor(ctx, actor, kind, request.params.uuid, false)
        const q = request.query as Query
        const f = {
          role: single(q, 'role'),
          user_uuid: uuidFilter(q, 'user_uuid'),
          user_username: single(q, 'user_username'),
        }
        return svc.listGrants(ctx, scope, f, request.baseUrl, pager(request, reply, s.GRANT_FIELDS))
      },
    )
  }

  // ---- roles ----
  const RoleList = Type.Array(Type.Partial(s.RoleSchema))
  app.get(
    '/api/roles/',
    { schema: { ...tag('roles'), querystring: s.RoleListQuery, response: { 200: RoleList, ...errors } } },
    async (request, reply) => {
      actorOf(request)
      const q = request.query as Query
      return svc.listRoles(
        ctx,
        { name: single(q, 'name'), content_type: single(q, 'content_type') },
        request.baseUrl,
        pager(request, reply, s.ROLE_FIELDS),
      )
    },
  )
  app.get(
    '/api/roles/:uuid/',
    {
      schema: {
        ...tag('roles'),
        params: UuidParams,
        querystring: FieldQuery,
        response: { 200: Type.Partial(s.RoleSchema), ...errors },
      },
    },
    async (request) => {
      actorOf(request)
      return withFields(request, s.ROLE_FIELDS, await svc.getRole(ctx, request.params.uuid, request.baseUrl))
    },
  )
  app.patch(
    '/api/roles/:uuid/',
    {
      schema: {
        ...tag('roles'),
        params: UuidParams,
        body: s.RoleUpdateBody,
        response: { 200: s.RoleSchema, ...errors },
      },
    },
    async (request) =>
      svc.updateRole(ctx, actorOf(request), request.params.uuid, request.body as any, request.baseUrl),
  )
}
