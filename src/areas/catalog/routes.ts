// HTTP for the catalog: the declarations of service providers, categories, offerings (with their
// state actions and managers) and plans; and the table of offering types. Marketplace resources
// are declared in routes-resources.ts.
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { actorOf } from '../../http/auth.js'
import { filter } from '../../http/filters.js'
import { pager, single, uuidFilter, values, type Query } from '../../http/query.js'
import {
  defineAction,
  defineResource,
  namedService,
  recordOperations,
  resourceRoutes,
  columnsOf,
  orderedBy,
} from '../../http/resource.js'
import { errors, StatusBody } from '../../http/schemas.js'
import { GRANT_FIELDS, GrantBody, GrantListQuery, GrantSchema, RevokeBody } from '../directory/schema.js'
import * as svc from './service.js'
import * as offerings from './service-offerings.js'
import * as components from './service-components.js'
import * as plans from './service-plans.js'
import * as planPrices from './service-plan-prices.js'
import { marketplaceResources, providerResources } from './routes-resources.js'
import * as s from './schema.js'
import type { OfferingAction } from './state-machine.js'

export const serviceProviders = defineResource({
  path: s.PATHS.providers,
  noun: 'service provider',
  record: s.ServiceProviderSchema,
  list: {
    filters: {
      customer_uuid: filter.uuid('customers.uuid'),
      name: filter.contains('customers.name', { description: 'customer name contains' }),
    },
    ordering: orderedBy({ name: 'customers.name', created: 'service_providers.created' }, 'name'),
    run: (c) => svc.listServiceProviders(c.ctx, undefined, c.listing, c.base, c.page),
  },
  ...recordOperations(namedService(svc, 'ServiceProvider'), {
    create: s.ServiceProviderCreateBody,
    put: s.ServiceProviderUpdateBody,
    patch: s.ServiceProviderUpdateBody,
  }),
})

export const categories = defineResource({
  path: s.PATHS.categories,
  noun: 'category',
  plural: 'categories',
  record: s.CategorySchema,
  list: {
    filters: { title: filter.contains('categories.title') },
    ordering: orderedBy(columnsOf('categories', 'title', 'created'), 'title'),
    run: (c) => svc.listCategories(c.ctx, undefined, c.listing, c.base, c.page),
  },
  ...recordOperations(namedService(svc, 'Category'), { create: s.CategoryBody, patch: s.CategoryPatchBody }),
})

/** One offering state action: POST /api/marketplace-provider-offerings/<uuid>/<action>/. */
const stateAction = (name: OfferingAction, summary: string) =>
  defineAction({
    name,
    summary,
    response: StatusBody,
    run: (c) => offerings.changeOfferingState(c.ctx, c.actor, c.uuid, name),
  })

/** The types of an offering: repeated, each as given (empty values ignored). */
const offeringTypeFilter = filter.custom(
  Type.Array(Type.String()),
  (q, name) => {
    const types = values(q, name).filter(Boolean)
    return types.length ? types : undefined
  },
  'offerings.type',
  { repeatable: true, op: 'in' },
)

export const providerOfferings = defineResource({
  path: s.PATHS.offerings,
  noun: 'offering',
  record: s.OfferingSchema,
  visibility: svc.catalogVisibility,
  list: {
    filters: {
      name: filter.contains('offerings.name'),
      name_exact: filter.exact('offerings.name'),
      customer_uuid: filter.uuid('provider.uuid'),
      category_uuid: filter.uuid('categories.uuid'),
      type: offeringTypeFilter,
      state: filter.choice(s.OFFERING_STATES, 'offerings.state'),
      shared: filter.boolean('offerings.shared'),
      billable: filter.boolean('offerings.billable'),
      uuid: filter.uuid('offerings.uuid'),
      slug: filter.exact('offerings.slug'),
      scope_uuid: filter.uuid('service_settings.uuid'),
      parent_uuid: filter.uuid('parent.uuid'),
    },
    ordering: orderedBy(columnsOf('offerings', 'name', 'created', 'type', 'state'), 'name'),
    run: (c) => offerings.listOfferings(c.ctx, c.scope, c.listing, c.base, c.page),
  },
  ...recordOperations(namedService(offerings, 'Offering'), {
    create: s.OfferingCreateBody,
    put: s.OfferingUpdateBody,
    patch: s.OfferingPatchBody,
  }),
  actions: [
    stateAction('activate', 'Activate an offering: it is shown and orderable'),
    stateAction('pause', 'Pause an offering: no new orders'),
    stateAction('unpause', 'Unpause an offering: orderable again'),
    stateAction('archive', 'Archive an offering'),
    defineAction({
      name: 'create_offering_component',
      summary: 'Add a component (a measured unit and how it is billed) to the offering',
      body: s.OfferingComponentBody,
      fieldErrors: true,
      status: 201,
      response: s.OfferingComponentSchema,
      run: (c) => components.createOfferingComponent(c.ctx, c.actor, c.uuid, c.body, c.fieldErrors),
    }),
    defineAction({
      name: 'update_offering_component',
      summary: 'Change the fields given of the component the body names by its uuid',
      body: s.UpdateOfferingComponentBody,
      fieldErrors: true,
      response: s.OfferingComponentSchema,
      run: (c) => components.updateOfferingComponent(c.ctx, c.actor, c.uuid, c.body, c.fieldErrors),
    }),
    defineAction({
      name: 'remove_offering_component',
      summary: 'Remove the component the body names by its uuid (not once the offering has resources)',
      body: s.RemoveOfferingComponentBody,
      response: null,
      run: (c) => components.removeOfferingComponent(c.ctx, c.actor, c.uuid, c.body),
    }),
    defineAction({
      name: 'add_user',
      summary: 'Grant OFFERING.MANAGER on the offering',
      body: GrantBody,
      status: 201,
      response: GrantSchema,
      run: (c) => offerings.addOfferingUser(c.ctx, c.actor, c.uuid, c.body, c.base),
    }),
    defineAction({
      name: 'delete_user',
      summary: 'Revoke a role on the offering',
      body: RevokeBody,
      status: 204,
      response: null,
      run: (c) => offerings.deleteOfferingUser(c.ctx, c.actor, c.uuid, c.body),
    }),
    defineAction({
      name: 'list_users',
      method: 'GET',
      summary: 'List the roles granted on the offering',
      query: GrantListQuery,
      response: Type.Array(Type.Partial(GrantSchema)),
      run: (c) => {
        const q = c.request.query as Query
        const f = {
          role: single(q, 'role'),
          user_uuid: uuidFilter(q, 'user_uuid'),
          user_username: single(q, 'user_username'),
        }
        return offerings.listOfferingUsers(
          c.ctx,
          c.actor,
          c.uuid,
          f,
          c.base,
          pager(c.request, c.reply, GRANT_FIELDS),
        )
      },
    }),
  ],
})

export const marketplacePlans = defineResource({
  path: s.PATHS.plans,
  noun: 'plan',
  record: s.PlanSchema,
  visibility: svc.catalogVisibility,
  list: {
    filters: {
      offering_uuid: filter.uuid('offerings.uuid'),
      archived: filter.boolean('plans.archived'),
    },
    ordering: orderedBy(columnsOf('plans', 'name', 'created'), 'name'),
    run: (c) => plans.listPlans(c.ctx, c.scope, c.listing, c.base, c.page),
  },
  retrieve: { run: (c) => plans.getPlan(c.ctx, c.actor, c.uuid, c.base) },
  // The body's schema errors and the plan's rules answer in one 400.
  create: {
    body: s.PlanCreateBody,
    fieldErrors: true,
    run: (c) => plans.createPlan(c.ctx, c.actor, c.body, c.base, c.fieldErrors),
  },
  update: {
    body: s.PlanUpdateBody,
    patch: s.PlanPatchBody,
    fieldErrors: true,
    run: (c) => plans.updatePlan(c.ctx, c.actor, c.uuid, c.body, c.base, c.fieldErrors),
  },
  destroy: {
    summary: 'Delete a plan, or archive it while resources use it',
    run: (c) => plans.deletePlan(c.ctx, c.actor, c.uuid),
  },
  actions: [
    defineAction({
      name: 'update_prices',
      summary: "Set the plan's price of each component (those not named: 0)",
      body: s.PricesUpdateBody,
      response: null,
      run: (c) => plans.updatePlanPricing(c.ctx, c.actor, c.uuid, { prices: c.body.prices }),
    }),
    defineAction({
      name: 'update_quotas',
      summary: "Set the plan's amount of each fixed component (those not named: 0)",
      body: s.QuotasUpdateBody,
      response: null,
      run: (c) => plans.updatePlanPricing(c.ctx, c.actor, c.uuid, { quotas: c.body.quotas }),
    }),
    defineAction({
      name: 'update_organization_groups',
      summary: 'Restrict the plan to these organization groups (replaces the list)',
      body: s.OrganizationGroupsBody,
      bodyOptional: true,
      response: null,
      run: (c) => plans.setPlanGroups(c.ctx, c.actor, c.uuid, c.body.organization_groups ?? []),
    }),
    defineAction({
      name: 'delete_organization_groups',
      summary: 'Open the plan to every organization again',
      response: null,
      run: (c) => plans.setPlanGroups(c.ctx, c.actor, c.uuid, []),
    }),
  ],
})

export const planComponents = defineResource({
  path: s.PATHS.planComponents,
  noun: 'plan component',
  record: s.PlanComponentSchema,
  visibility: svc.catalogVisibility,
  list: {
    filters: {
      offering_uuid: filter.uuid('offerings.uuid'),
      plan_uuid: filter.uuid('plans.uuid'),
      archived: filter.boolean('plans.archived'),
      shared: filter.boolean('offerings.shared'),
    },
    // Fixed: by offering, plan and component name.
    ordering: {
      default: [
        { column: 'offerings.name', desc: false },
        { column: 'plans.name', desc: false },
        { column: 'component.name', desc: false },
      ],
    },
    run: (c) => planPrices.listPlanComponents(c.ctx, c.scope, c.listing, c.page),
  },
})

/** The offering types: one fixed table, answered whole (no pages). */
function offeringTypesRoute(fastify: FastifyInstance): void {
  fastify.withTypeProvider<TypeBoxTypeProvider>().get(
    '/api/marketplace-offering-types/',
    {
      schema: {
        tags: ['marketplace-offering-types'],
        response: { 200: Type.Array(s.OfferingTypeSchema), 401: errors[401] },
      },
    },
    async (request) => {
      actorOf(request)
      return svc.offeringTypes()
    },
  )
}

export const catalogRoutes = resourceRoutes(
  [
    serviceProviders,
    categories,
    providerOfferings,
    marketplacePlans,
    planComponents,
    marketplaceResources,
    providerResources,
  ],
  offeringTypesRoute,
)
