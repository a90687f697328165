// HTTP for marketplace resources: the consumer's and provider's view (/api/marketplace-resources/,
// where the orders area adds the order-placing actions) and the provider's own view with its
// actions (/api/marketplace-provider-resources/). Both list with the same filters and ordering.
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { filter } from '../../http/filters.js'
import { providerVisibility, requireStaff } from '../../http/permissions.js'
import { single } from '../../http/query.js'
import { defineAction, defineResource, orderedBy } from '../../http/resource.js'
import type { BodyCall, ItemCall } from '../../http/resource-calls.js'
import { StatusBody } from '../../http/schemas.js'
import { resourceHasEndDate, resourceOrderInStates, resourceQueryMatches } from './repository-resources.js'
import * as svc from './service.js'
import * as resources from './service-resources.js'
import * as provider from './service-provider-resources.js'
import * as s from './schema.js'

/** The filters of both views of resources, in the order they are checked. */
const resourceFilters = {
  uuid: filter.uuid('resources.uuid'),
  name: filter.contains('resources.name'),
  name_exact: filter.exact('resources.name'),
  slug: filter.exact('resources.slug'),
  query: filter.custom(
    Type.String({ description: 'name contains; or the exact uuid, slug or backend id' }),
    single,
    resourceQueryMatches,
  ),
  backend_id: filter.exact('resources.backend_id'),
  state: filter.choice(s.RESOURCE_STATES, 'resources.state'),
  project: filter.link(s.PATHS.projects, 'projects.uuid'),
  project_uuid: filter.uuid('projects.uuid'),
  project_name: filter.contains('projects.name', { description: 'project name contains' }),
  customer: filter.link(s.PATHS.customers, 'customers.uuid'),
  customer_uuid: filter.uuid('customers.uuid'),
  offering: filter.link(s.PATHS.offerings, 'offerings.uuid'),
  offering_uuid: filter.uuids('offerings.uuid', {
    description: 'offering uuids, repeated or comma-separated',
  }),
  offering_slug: filter.strings('offerings.slug', {
    description: 'offering slugs, repeated or comma-separated',
  }),
  offering_type: filter.exact('offerings.type'),
  offering_shared: filter.boolean('offerings.shared'),
  offering_billable: filter.boolean('offerings.billable'),
  parent_offering_uuid: filter.uuid('parent_offering.uuid'),
  provider_uuid: filter.uuid('provider.uuid'),
  category_uuid: filter.uuid('categories.uuid'),
  plan_uuid: filter.uuid('plans.uuid'),
  paused: filter.boolean('resources.paused'),
  downscaled: filter.boolean('resources.downscaled'),
  restrict_member_access: filter.boolean('resources.restrict_member_access'),
  has_terminate_date: filter.boolean(resourceHasEndDate, { description: 'has an end date' }),
  order_state: filter.strings(resourceOrderInStates, {
    description: 'has an order in one of these states (repeated or comma-separated)',
  }),
  created: filter.after('resources.created', { description: 'created at or after' }),
  created_before: filter.before('resources.created', { description: 'created at or before' }),
  modified: filter.after('resources.modified', { description: 'modified at or after' }),
  modified_before: filter.before('resources.modified', { description: 'modified at or before' }),
}

const resourceOrdering = orderedBy(
  {
    name: 'resources.name',
    created: 'resources.created',
    state: 'resources.state',
    backend_id: 'resources.backend_id',
    end_date: 'resources.end_date',
    project_name: 'projects.name',
    customer_name: 'customers.name',
    offering_name: 'offerings.name',
    plan_name: 'plans.name',
  },
  '-created',
)

export const marketplaceResources = defineResource({
  path: s.PATHS.resources,
  noun: 'resource',
  record: s.ResourceSchema,
  visibility: svc.catalogVisibility,
  list: {
    filters: resourceFilters,
    ordering: resourceOrdering,
    run: (c) => resources.listResources(c.ctx, c.actor, c.scope, c.listing, c.base, c.page),
  },
  retrieve: { run: (c) => resources.getResource(c.ctx, c.actor, c.uuid, c.base) },
})

/** A provider action answering `{"status": ...}`. */
function statusAction<B extends TSchema>(
  name: string,
  summary: string,
  body: B,
  run: (c: ItemCall & BodyCall<Static<B>>) => Promise<{ status: string }>,
  permission?: typeof requireStaff,
) {
  return defineAction({
    name,
    summary,
    body,
    response: StatusBody,
    run,
    ...(permission ? { permission } : {}),
  })
}

export const providerResources = defineResource({
  path: s.PATHS.providerResources,
  noun: 'provider resource',
  record: s.ResourceSchema,
  visibility: providerVisibility,
  list: {
    summary: 'List the resources of the offerings the caller provides or manages',
    filters: resourceFilters,
    ordering: resourceOrdering,
    run: (c) => resources.listProviderResources(c.ctx, c.actor, c.scope, c.listing, c.base, c.page),
  },
  retrieve: { run: (c) => resources.getProviderResource(c.ctx, c.actor, c.uuid, c.base) },
  actions: [
    defineAction({
      name: 'team',
      method: 'GET',
      summary: "List the users of the resource's project with their roles",
      query: s.TeamQuery,
      response: Type.Array(s.ProjectUserSchema),
      run: (c) => provider.resourceTeam(c.ctx, c.actor, c.uuid, c.base),
    }),
    statusAction('set_backend_id', "Set the resource's backend id", s.SetBackendIdBody, (c) =>
      provider.setBackendId(c.ctx, c.actor, c.uuid, c.body.backend_id),
    ),
    statusAction(
      'set_effective_id',
      "Set the resource's effective id (a downstream provider's)",
      s.SetEffectiveIdBody,
      (c) => provider.setEffectiveId(c.ctx, c.actor, c.uuid, c.body.effective_id),
    ),
    statusAction('set_limits', "Set the resource's limits, bypassing orders", s.SetLimitsBody, (c) =>
      provider.setLimits(c.ctx, c.actor, c.uuid, c.body.limits),
    ),
    statusAction(
      'set_backend_metadata',
      "Set the resource's backend metadata",
      s.SetBackendMetadataBody,
      (c) => provider.setBackendMetadata(c.ctx, c.actor, c.uuid, c.body.backend_metadata),
    ),
    statusAction('set_endpoints', "Replace the resource's access endpoints", s.SetEndpointsBody, (c) =>
      provider.setEndpoints(c.ctx, c.actor, c.uuid, c.body.endpoints),
    ),
    statusAction('submit_report', "Replace the provider's report on the resource", s.SubmitReportBody, (c) =>
      provider.submitReport(c.ctx, c.actor, c.uuid, c.body.report),
    ),
    defineAction({
      name: 'set_as_ok',
      summary: 'Set the resource OK, clearing its error',
      response: null,
      run: (c) => provider.setAsOk(c.ctx, c.actor, c.uuid),
    }),
    defineAction({
      name: 'set_state_ok',
      summary: 'Set the resource OK from a state in progress or Erred',
      response: StatusBody,
      run: (c) => provider.setStateOk(c.ctx, c.actor, c.uuid),
    }),
    defineAction({
      name: 'set_as_erred',
      summary: 'Set the resource Erred, with an error message and traceback',
      body: s.SetErredBody,
      bodyOptional: true,
      response: null,
      run: (c) => provider.setAsErred(c.ctx, c.actor, c.uuid, c.body),
    }),
    defineAction({
      name: 'refresh_last_sync',
      summary: "Record that the provider's agent has just synced the resource",
      response: null,
      run: (c) => provider.refreshLastSync(c.ctx, c.actor, c.uuid),
    }),
    defineAction({
      name: 'set_membership_sync_statuses',
      summary: "Replace the resource's membership sync statuses with the agent's report",
      body: s.MemberSyncStatusesBody,
      response: s.MemberSyncStatusesResult,
      run: (c) => provider.setMembershipSyncStatuses(c.ctx, c.actor, c.uuid, c.body.statuses),
    }),
    defineAction({
      name: 'set_end_date_by_provider',
      summary: "Set (or clear) the resource's end date, at least 7 days ahead",
      body: s.SetEndDateBody,
      response: null,
      run: (c) => provider.setEndDateByProvider(c.ctx, c.actor, c.uuid, c.body.end_date),
    }),
    statusAction(
      'set_paused',
      'Set the paused flag (staff)',
      s.SetPausedBody,
      (c) => provider.setFlag(c.ctx, c.actor, c.uuid, 'paused', c.body.paused),
      requireStaff,
    ),
    statusAction(
      'set_downscaled',
      'Set the downscaled flag (staff)',
      s.SetDownscaledBody,
      (c) => provider.setFlag(c.ctx, c.actor, c.uuid, 'downscaled', c.body.downscaled),
      requireStaff,
    ),
    statusAction(
      'set_restrict_member_access',
      'Set the restrict-member-access flag (staff)',
      s.SetRestrictMemberAccessBody,
      (c) =>
        provider.setFlag(c.ctx, c.actor, c.uuid, 'restrict_member_access', c.body.restrict_member_access),
      requireStaff,
    ),
    statusAction(
      'set_slug',
      "Set the resource's slug (staff)",
      s.SetSlugBody,
      (c) => provider.setSlug(c.ctx, c.actor, c.uuid, c.body.slug),
      requireStaff,
    ),
  ],
})
