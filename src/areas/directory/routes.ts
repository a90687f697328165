// HTTP for the directory: users, customers, projects, roles, grants, organization groups.
import type { FastifyInstance } from 'fastify'
import { Type, type TSchema } from '@sinclair/typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppContext } from '../../context.js'
import { DetailBody, errors, FieldQuery } from '../../http/schemas.js'
import { pager, single, uuidFilter, withFields, type Query } from '../../http/query.js'
import { filter } from '../../http/filters.js'
import {
  defineAction,
  defineResource,
  namedService,
  recordOperations,
  registerResource,
  columnsOf,
  orderedBy,
} from '../../http/resource.js'
import { customerInGroup, roleNamed, searchCustomers, searchProjects, searchUsers } from './repository.js'
import * as svc from './service.js'
import * as s from './schema.js'

const users = defineResource({
  path: s.PATHS.users,
  noun: 'user',
  record: s.UserSchema,
  visibility: svc.visibilityOf,
  list: {
    filters: {
      username: filter.contains('users.username'),
      email: filter.contains('users.email'),
      full_name: filter.contains('users.full_name'),
      is_active: filter.boolean('users.is_active'),
      is_staff: filter.boolean('users.is_staff'),
      is_support: filter.boolean('users.is_support'),
      uuid: filter.uuid('users.uuid'),
      query: filter.exact(searchUsers, { description: 'search in username, full name and email' }),
    },
    ordering: orderedBy(columnsOf('users', 'username', 'full_name', 'email', 'created'), 'username'),
    run: (c) => svc.listUsers(c.ctx, c.scope, c.listing, c.base, c.page),
  },
  ...recordOperations(namedService(svc, 'User'), s.UserBodies),
  actions: [
    defineAction({
      name: 'me',
      method: 'GET',
      detail: false,
      summary: 'Retrieve the calling user',
      query: FieldQuery,
      response: Type.Partial(s.UserSchema),
      run: async (c) => withFields(c.request, s.USER_FIELDS, await svc.getMe(c.ctx, c.actor, c.base)),
    }),
    defineAction({
      name: 'password',
      summary: "Set the user's password",
      body: s.PasswordBody,
      response: DetailBody,
      run: (c) => svc.setPassword(c.ctx, c.actor, c.uuid, c.body.password),
    }),
    defineAction({
      name: 'confirm_email',
      summary: 'Make the pending e-mail address the confirmed one',
      body: s.ConfirmEmailBody,
      bodyOptional: true,
      response: s.UserSchema,
      run: (c) => svc.confirmEmail(c.ctx, c.actor, c.uuid, c.body.token, c.base),
    }),
  ],
})

const organizationGroups = defineResource({
  path: s.PATHS.organizationGroups,
  noun: 'organization group',
  record: s.OrganizationGroupSchema,
  list: {
    filters: {
      name: filter.contains('organization_groups.name'),
      parent_uuid: filter.uuid('parent.uuid'),
    },
    ordering: orderedBy(columnsOf('organization_groups', 'name', 'created'), 'name'),
    run: (c) => svc.listOrganizationGroups(c.ctx, c.listing, c.base, c.page),
  },
  ...recordOperations(namedService(svc, 'OrganizationGroup'), {
    create: s.OrganizationGroupBody,
    patch: s.OrganizationGroupPatchBody,
  }),
})

/** `add_user`, `delete_user` and `list_users` on a customer or a project: its role grants. */
function grantActions(kind: 'customer' | 'project') {
  return [
    defineAction({
      name: 'add_user',
      summary: `Grant a user a role on this ${kind}`,
      body: s.GrantBody,
      status: 201,
      response: s.GrantSchema,
      run: async (c) => {
        const scope = await svc.grantScopeFor(c.ctx, c.actor, kind, c.uuid, true)
        return svc.addUser(c.ctx, c.actor, scope, c.body, c.base)
      },
    }),
    defineAction({
      name: 'delete_user',
      summary: `Revoke a role of a user on this ${kind}`,
      body: s.RevokeBody,
      status: 204,
      response: null,
      run: async (c) => {
        const scope = await svc.grantScopeFor(c.ctx, c.actor, kind, c.uuid, true)
        await svc.deleteUserGrant(c.ctx, scope, c.body)
      },
    }),
    defineAction({
      name: 'list_users',
      method: 'GET',
      summary: `List the role grants on this ${kind}`,
      query: s.GrantListQuery,
      response: Type.Array(Type.Partial(s.GrantSchema)),
      run: async (c) => {
        const scope = await svc.grantScopeFor(c.ctx, c.actor, kind, c.uuid, false)
        const q = c.request.query as Query
        const f = {
          role: single(q, 'role'),
          user_uuid: uuidFilter(q, 'user_uuid'),
          user_username: single(q, 'user_username'),
        }
        return svc.listGrants(c.ctx, scope, f, c.base, pager(c.request, c.reply, s.GRANT_FIELDS))
      },
    }),
  ]
}

/** The first filters of a customer or project list: its name contains, or is, the text. */
function nameFilters<T extends 'customers' | 'projects'>(table: T) {
  return { name: filter.contains(`${table}.name`), name_exact: filter.exact(`${table}.name`) }
}

/**
 * What a customer and a project declare alike: the path, the noun, the record, the caller's
 * visibility and the role grants.
 */
function grantScope<R extends TSchema>(kind: 'customer' | 'project', record: R) {
  return {
    path: s.PATHS[`${kind}s`],
    noun: kind,
    record,
    visibility: svc.visibilityOf,
    actions: grantActions(kind),
  }
}

const customers = defineResource({
  ...grantScope('customer', s.CustomerSchema),
  list: {
    filters: {
      ...nameFilters('customers'),
      abbreviation: filter.contains('customers.abbreviation'),
      native_name: filter.contains('customers.native_name'),
      slug: filter.exact('customers.slug'),
      uuid: filter.uuid('customers.uuid'),
      query: filter.exact(searchCustomers, { description: 'search in name, abbreviation and native name' }),
      organization_group_uuid: filter.uuid(customerInGroup),
    },
    ordering: orderedBy(columnsOf('customers', 'name', 'abbreviation', 'created'), 'name'),
    run: (c) => svc.listCustomers(c.ctx, c.scope, c.listing, c.base, c.page),
  },
  ...recordOperations(namedService(svc, 'Customer'), s.CustomerBodies),
})

const projects = defineResource({
  ...grantScope('project', s.ProjectSchema),
  list: {
    filters: {
      ...nameFilters('projects'),
      // The customer's uuid, or its URL (which wins when both are given): the service applies it.
      customer_uuid: filter.uuid(),
      customer_name: filter.contains('customers.name'),
      description: filter.contains('projects.description'),
      slug: filter.exact('projects.slug'),
      uuid: filter.uuid('projects.uuid'),
      query: filter.exact(searchProjects, { description: 'search in name and description' }),
      customer: filter.link(s.PATHS.customers, undefined, { description: 'customer URL' }),
    },
    ordering: orderedBy(
      {
        name: 'projects.name',
        created: 'projects.created',
        customer_name: 'customers.name',
        end_date: 'projects.end_date',
      },
      'name',
    ),
    run: (c) => svc.listProjects(c.ctx, c.scope, c.filters, c.listing, c.base, c.page),
  },
  ...recordOperations(namedService(svc, 'Project'), s.ProjectBodies),
})

const roles = defineResource({
  path: s.PATHS.roles,
  noun: 'role',
  record: s.RoleSchema,
  list: {
    filters: {
      name: filter.exact(roleNamed, { description: 'the name, ignoring case' }),
      content_type: filter.exact('roles.content_type'),
    },
    ordering: { default: [{ column: 'roles.id', desc: false }] },
    run: (c) => svc.listRoles(c.ctx, c.listing, c.base, c.page),
  },
  retrieve: { run: (c) => svc.getRole(c.ctx, c.uuid, c.base) },
  update: {
    put: false,
    body: s.RoleUpdateBody,
    run: (c) => svc.updateRole(c.ctx, c.actor, c.uuid, c.body, c.base),
  },
})

/** The directory's plugin: the login, then its resources. */
export async function directoryRoutes(fastify: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  app.post(
    '/api-auth/password/',
    {
      config: { auth: 'optional' },
      preHandler: fastify.loginThrottle,
      onSend: fastify.loginFailed,
      schema: {
        tags: ['auth'],
        summary: 'Log in with a username and password: answers an API token',
        security: [],
        body: s.LoginBody,
        response: { 200: s.TokenResponse, 400: errors[400] },
      },
    },
    async (request) => ({ token: await svc.obtainToken(ctx, request.body.username, request.body.password) }),
  )
  for (const resource of [users, organizationGroups, customers, projects, roles]) {
    registerResource(fastify, ctx, resource)
  }
  ctx.jobs.define(svc.EXPIRE_GRANTS_JOB, {
    maxAttempts: 3,
    run: () => svc.expireGrants(ctx).then(() => undefined),
  })
  // With a worker, a run is queued at start: it ends what expired while none ran, and queues the next.
  if (ctx.config.workerEnabled) {
    fastify.addHook('onReady', async () => {
      await svc.scheduleGrantExpiry(ctx)
    })
  }
}
