// HTTP for offering users (/api/marketplace-offering-users/), the offerings' user attribute
// configs, project service accounts and course accounts (on their own paths and listed per
// offering), and per-user component limits (/api/component-user-usage-limits/).
import { Type } from '@sinclair/typebox'
import { filter } from '../../http/filters.js'
import {
  actionList,
  columnsOf,
  defineAction,
  defineResource,
  orderedBy,
  resourceRoutes,
} from '../../http/resource.js'
import { pager, single } from '../../http/query.js'
import { icontainsAny } from '../../db/sql.js'
import * as svc from './service.js'
import * as config from './attribute-config.js'
import * as accounts from './accounts.js'
import * as limits from './usage-limits.js'
import * as s from './schema.js'
import { hasTermsOfService, usernameIs } from './repository.js'
import type { OfferingUserAction } from './state-machine.js'

const T = 'offering_users'

/** A state action without a body (200, no body). */
const move = (name: OfferingUserAction, summary: string) =>
  defineAction({
    name,
    summary,
    response: null,
    run: (c) => svc.transition(c.ctx, c.actor, c.uuid, name),
  })

/** A state action that may carry a comment for the user. */
const moveWithComment = (name: OfferingUserAction, summary: string) =>
  defineAction({
    name,
    summary,
    body: s.StateTransitionBody,
    bodyOptional: true,
    response: null,
    run: (c) => svc.transition(c.ctx, c.actor, c.uuid, name, c.body),
  })

export const offeringUsers = defineResource({
  path: s.PATHS.offeringUsers,
  noun: 'offering user',
  record: s.OfferingUserSchema,
  visibility: svc.visibility,
  list: {
    filters: {
      offering_uuid: filter.uuids('offerings.uuid'),
      offering: filter.link(s.PATHS.offerings, 'offerings.uuid'),
      offering_slug: filter.strings('offerings.slug'),
      parent_offering_uuid: filter.uuid('parent.uuid'),
      provider_uuid: filter.uuid('provider.uuid', { description: "the provider organization's uuid" }),
      user_uuid: filter.uuid('users.uuid'),
      user_username: filter.custom(
        Type.String({ description: "the user's username (ignoring case)" }),
        single,
        usernameIs,
      ),
      is_restricted: filter.boolean(`${T}.is_restricted`),
      state: filter.choice(s.OFFERING_USER_STATES, `${T}.state`),
      runtime_state: filter.choice(s.RUNTIME_STATES, `${T}.runtime_state`),
      offering_has_active_tos: filter.boolean(hasTermsOfService),
      created: filter.after(`${T}.created`, { description: 'created at or after' }),
      created_before: filter.before(`${T}.created`, { description: 'created at or before' }),
      modified: filter.after(`${T}.modified`, { description: 'modified at or after' }),
      modified_before: filter.before(`${T}.modified`, { description: 'modified at or before' }),
      query: filter.custom(
        Type.String({ description: "offering name, account username, user's name or username contains" }),
        single,
        icontainsAny(['offerings.name', `${T}.username`, 'users.full_name', 'users.username']),
      ),
    },
    ordering: orderedBy(
      {
        username: 'username_key',
        created: `${T}.created`,
        modified: `${T}.modified`,
        // The server keeps one full name; both name orders follow it.
        user_first_name: 'users.full_name',
        user_last_name: 'users.full_name',
      },
      'username',
    ),
    run: (c) => svc.listOfferingUsers(c.ctx, c.scope, c.listing, c.base, c.page),
  },
  retrieve: { run: (c) => svc.getOfferingUser(c.ctx, c.actor, c.uuid, c.base) },
  create: {
    body: s.OfferingUserCreateBody,
    run: (c) => svc.createOfferingUser(c.ctx, c.actor, c.body, c.base),
  },
  update: {
    body: s.OfferingUserUpdateBody,
    summary: "Update an offering user's username",
    run: (c) => svc.updateOfferingUser(c.ctx, c.actor, c.uuid, c.body, c.base),
  },
  destroy: { run: (c) => svc.deleteOfferingUser(c.ctx, c.actor, c.uuid) },
  actions: [
    move('begin_creating', 'Begin creating the account on the backend'),
    move('set_ok', 'Mark the account as OK'),
    moveWithComment('set_pending_account_linking', 'Wait for the user to link an existing account'),
    moveWithComment('set_pending_additional_validation', 'Wait for an additional validation of the user'),
    move('set_validation_complete', 'Finish a pending linking or validation: the account is OK'),
    move('set_error_creating', 'Mark the account as failed to create'),
    move('request_deletion', 'Request the deletion of the account'),
    move('set_deleting', 'Begin deleting the account on the backend'),
    move('set_deleted', 'Mark the account as deleted'),
    move('set_error_deleting', 'Mark the account as failed to delete'),
    defineAction({
      name: 'update_restricted',
      summary: 'Restrict the account, or lift the restriction',
      body: s.RestrictionBody,
      response: null,
      run: (c) => svc.updateRestricted(c.ctx, c.actor, c.uuid, c.body),
    }),
    defineAction({
      name: 'update_runtime_state',
      summary: "Set the account's runtime state",
      body: s.RuntimeStateBody,
      response: null,
      run: (c) => svc.updateRuntimeState(c.ctx, c.actor, c.uuid, c.body),
    }),
    defineAction({
      name: 'update_comments',
      method: 'PATCH',
      summary: "Update the provider's comments on the account",
      body: s.CommentsBody,
      bodyOptional: true,
      response: s.CommentsSchema,
      run: (c) => svc.updateComments(c.ctx, c.actor, c.uuid, c.body),
    }),
  ],
})

const configUpdate = (method: 'POST' | 'PUT' | 'PATCH') =>
  defineAction({
    name: 'update-user-attribute-config',
    method,
    summary:
      method === 'PATCH'
        ? "Change some of the offering's user attribute flags"
        : 'Set which user attributes the offering exposes to its provider',
    body: s.AttributeConfigBody,
    bodyOptional: true,
    response: s.AttributeConfigSchema,
    run: (c) => config.updateAttributeConfig(c.ctx, c.actor, c.uuid, c.body, method === 'PATCH'),
  })

// ---- project service accounts and course accounts ----

const PSA = 'project_service_accounts'
const serviceAccountList = {
  filters: {
    project: filter.link(s.PATHS.projects, 'projects.uuid'),
    project_uuid: filter.uuid('projects.uuid'),
    username: filter.contains(`${PSA}.username`),
    email: filter.contains(`${PSA}.email`),
    state: filter.choice(s.SERVICE_ACCOUNT_STATES, `${PSA}.state`),
  },
  ordering: orderedBy(columnsOf(PSA, 'created', 'modified', 'username', 'state'), 'created'),
}

export const projectServiceAccounts = defineResource({
  path: s.PATHS.projectServiceAccounts,
  noun: 'project service account',
  record: s.ProjectServiceAccountSchema,
  visibility: accounts.visibility,
  list: {
    ...serviceAccountList,
    run: (c) => accounts.listServiceAccounts(c.ctx, c.scope, c.listing, c.base, c.page),
  },
  retrieve: { run: (c) => accounts.getServiceAccount(c.ctx, c.actor, c.uuid, c.base) },
})

const CA = 'course_accounts'
const courseAccountList = {
  filters: {
    project_uuid: filter.uuid('projects.uuid'),
    username: filter.contains(`${CA}.username`),
    email: filter.contains(`${CA}.email`),
    state: filter.choice(s.COURSE_ACCOUNT_STATES, `${CA}.state`),
  },
  ordering: orderedBy(
    {
      ...columnsOf(CA, 'created', 'modified', 'username', 'email', 'state'),
      project_name: 'projects.name',
      project_start_date: 'projects.start_date',
      project_end_date: 'projects.end_date',
    },
    'created',
  ),
}

export const courseAccounts = defineResource({
  path: s.PATHS.courseAccounts,
  noun: 'course account',
  record: s.CourseAccountSchema,
  visibility: accounts.visibility,
  list: {
    ...courseAccountList,
    run: (c) => accounts.listCourseAccounts(c.ctx, c.scope, c.listing, c.base, c.page),
  },
  retrieve: { run: (c) => accounts.getCourseAccount(c.ctx, c.actor, c.uuid, c.base) },
})

const serviceAccountFields = Object.keys(s.ProjectServiceAccountSchema.properties)
const courseAccountFields = Object.keys(s.CourseAccountSchema.properties)
const offeringServiceAccounts = actionList({ fields: serviceAccountFields, ...serviceAccountList })
const offeringCourseAccounts = actionList({ fields: courseAccountFields, ...courseAccountList })

/** The provider offering's user attribute config and accounts: their operations on the offering's path. */
export const offeringAttributeConfigs = defineResource({
  path: s.PATHS.offerings,
  noun: 'offering',
  record: s.AttributeConfigSchema,
  actions: [
    defineAction({
      name: 'list_project_service_accounts',
      method: 'GET',
      summary: 'List the service accounts of the projects with a live resource of the offering',
      query: offeringServiceAccounts.query,
      response: Type.Array(Type.Partial(s.ProjectServiceAccountSchema)),
      run: (c) =>
        accounts.listOfferingServiceAccounts(
          c.ctx,
          c.actor,
          c.uuid,
          offeringServiceAccounts.listing(c.request),
          c.base,
          pager(c.request, c.reply, serviceAccountFields),
        ),
    }),
    defineAction({
      name: 'list_course_accounts',
      method: 'GET',
      summary: 'List the course accounts of the projects with a live resource of the offering',
      query: offeringCourseAccounts.query,
      response: Type.Array(Type.Partial(s.CourseAccountSchema)),
      run: (c) =>
        accounts.listOfferingCourseAccounts(
          c.ctx,
          c.actor,
          c.uuid,
          offeringCourseAccounts.listing(c.request),
          c.base,
          pager(c.request, c.reply, courseAccountFields),
        ),
    }),
    defineAction({
      name: 'user-attribute-config',
      method: 'GET',
      summary: 'Which user attributes the offering exposes to its provider',
      response: s.AttributeConfigSchema,
      run: (c) => config.getAttributeConfig(c.ctx, c.actor, c.uuid),
    }),
    configUpdate('POST'),
    configUpdate('PUT'),
    configUpdate('PATCH'),
    defineAction({
      name: 'delete-user-attribute-config',
      method: 'DELETE',
      summary: 'Remove the offering’s user attribute config: the default set applies again',
      status: 204,
      response: null,
      run: (c) => config.deleteAttributeConfig(c.ctx, c.actor, c.uuid),
    }),
  ],
})

// ---- per-user component limits ----

const L = 'component_user_usage_limits'
export const usageLimits = defineResource({
  path: s.PATHS.usageLimits,
  noun: 'component user usage limit',
  record: s.UsageLimitSchema,
  visibility: limits.visibility,
  list: {
    filters: {
      resource: filter.link(s.PATHS.resources, 'resources.uuid'),
      resource_uuid: filter.uuid('resources.uuid'),
      offering_uuid: filter.uuid('offerings.uuid'),
      component_type: filter.exact(`${L}.component_type`),
      username: filter.exact('offering_users.username', { description: "the account's username" }),
    },
    ordering: orderedBy(columnsOf(L, 'created', 'component_type'), 'created'),
    run: (c) => limits.listUsageLimits(c.ctx, c.scope, c.listing, c.base, c.page),
  },
  retrieve: { run: (c) => limits.getUsageLimit(c.ctx, c.actor, c.uuid, c.base) },
  create: {
    body: s.UsageLimitCreateBody,
    run: (c) => limits.createUsageLimit(c.ctx, c.actor, c.body, c.base),
  },
  update: {
    body: s.UsageLimitCreateBody,
    patch: s.UsageLimitPatchBody,
    run: (c) => limits.updateUsageLimit(c.ctx, c.actor, c.uuid, c.body, c.base),
  },
  destroy: { run: (c) => limits.deleteUsageLimit(c.ctx, c.actor, c.uuid) },
})

export const offeringUsersRoutes = resourceRoutes([
  offeringUsers,
  offeringAttributeConfigs,
  projectServiceAccounts,
  courseAccounts,
  usageLimits,
])
