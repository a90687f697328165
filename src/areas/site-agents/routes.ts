// HTTP for /api/marketplace-site-agent-identities/, /api/marketplace-site-agent-services/ and
// /api/marketplace-site-agent-processors/ (the kit), and /api/marketplace-site-agent-stats/.
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Static, TSchema } from '@sinclair/typebox'
import type { AppContext } from '../../context.js'
import { actorOf } from '../../http/auth.js'
import { filter } from '../../http/filters.js'
import { requireStaff } from '../../http/permissions.js'
import {
  defineAction,
  defineResource,
  resourceRoutes,
  type BodyCall,
  type ItemCall,
} from '../../http/resource.js'
import { errors } from '../../http/schemas.js'
import * as maintenance from './maintenance.js'
import * as repo from './repository.js'
import * as svc from './service.js'
import * as s from './schema.js'
import { AgentEventSubscriptionBody, EventSubscriptionSchema } from '../event-subscriptions/service.js'

/** An action registering a part by its name: 201 when it created it, 200 when it updated it. */
function registration<B extends TSchema>(
  name: string,
  summary: string,
  body: B,
  response: TSchema,
  register: (c: ItemCall & BodyCall<Static<B>>) => Promise<{ created: boolean; record: unknown }>,
) {
  return defineAction({
    name,
    summary,
    body,
    otherStatuses: [201],
    response,
    run: async (c) => {
      const r = await register(c)
      return c.reply.code(r.created ? 201 : 200).send(r.record)
    },
  })
}

export const identities = defineResource({
  path: s.IDENTITY_PATH,
  noun: 'site agent identity',
  plural: 'site agent identities',
  record: s.IdentitySchema,
  visibility: svc.visibility,
  list: {
    filters: {
      offering_uuid: filter.uuid('offerings.uuid'),
      name: filter.exact('site_agent_identities.name'),
      version: filter.exact('site_agent_identities.version'),
      last_restarted: filter.after('site_agent_identities.last_restarted_at', {
        description: 'last restarted at or after (date-time)',
      }),
      orphaned: filter.boolean(repo.orphaned, { description: 'true: identities without services' }),
    },
    ordering: { default: [{ column: 'site_agent_identities.created', desc: false }] },
    run: (c) => svc.listIdentities(c.ctx, c.scope, c.listing, c.base, c.page),
  },
  retrieve: { run: (c) => svc.getIdentity(c.ctx, c.scope, c.uuid, c.base) },
  create: {
    body: s.IdentityCreateBody,
    run: (c) => svc.createIdentity(c.ctx, c.actor, c.body, c.base),
  },
  update: {
    body: s.IdentityCreateBody,
    patch: s.IdentityPatchBody,
    run: (c) => svc.updateIdentity(c.ctx, c.actor, c.uuid, c.body, c.base),
  },
  destroy: { run: (c) => svc.deleteIdentity(c.ctx, c.actor, c.uuid) },
  actions: [
    registration(
      'register_service',
      'Create (201) or update (200) a service of this identity; it becomes Active',
      s.RegisterServiceBody,
      s.ServiceSchema,
      (c) => svc.registerService(c.ctx, c.actor, c.uuid, c.body, c.base),
    ),
    registration(
      'register_event_subscription',
      "Create (201) or find again (200) this identity's event subscription for an object type",
      AgentEventSubscriptionBody,
      EventSubscriptionSchema,
      (c) => svc.registerEventSubscription(c.ctx, c.actor, c.uuid, c.body, c.request.ip, c.base),
    ),
  ],
})

export const services = defineResource({
  path: s.SERVICE_PATH,
  noun: 'site agent service',
  record: s.ServiceSchema,
  visibility: svc.visibility,
  list: {
    // The agents poll this list: the repository keeps its own compiled queries, given the values.
    filters: {
      identity_uuid: filter.uuid(),
      mode: filter.exact(),
      modified_after: filter.after(undefined, { description: 'modified strictly after (date-time)' }),
      modified_before: filter.before(undefined, { description: 'modified strictly before (date-time)' }),
      stale: filter.boolean(undefined, { description: 'true: not modified for more than 24 hours' }),
      state: filter.choice(s.STATE_CHOICES),
    },
    // A fixed order (oldest first), kept by the repository.
    run: (c) => {
      const f = c.filters
      return svc.listServices(
        c.ctx,
        c.scope,
        {
          identity_uuid: f.identity_uuid ?? undefined,
          mode: f.mode ?? undefined,
          modified_after: f.modified_after ?? undefined,
          modified_before: f.modified_before ?? undefined,
          stale: f.stale ?? undefined,
          states: (f.state ?? []).map(s.stateCode),
        },
        c.base,
        c.page,
      )
    },
  },
  retrieve: { run: (c) => svc.getService(c.ctx, c.scope, c.uuid, c.base) },
  destroy: { run: (c) => svc.deleteService(c.ctx, c.actor, c.uuid) },
  actions: [
    defineAction({
      name: 'cleanup_stale',
      detail: false,
      summary:
        'Staff only: report (dry_run, the default) or delete services not modified for older_than_hours',
      body: s.CleanupBody,
      bodyOptional: true,
      // Staff only, checked before the body is looked at (reference §3.4).
      permission: requireStaff,
      response: s.CleanupResult,
      run: (c) => maintenance.cleanupStale(c.ctx, c.body),
    }),
    registration(
      'register_processor',
      'Create (201) or update (200) a processor of this service; last_run becomes now',
      s.RegisterProcessorBody,
      s.ProcessorSchema,
      (c) => svc.registerProcessor(c.ctx, c.actor, c.uuid, c.body, c.base),
    ),
    defineAction({
      name: 'set_statistics',
      summary: 'Replace the statistics object',
      body: s.StatisticsBody,
      response: s.ServiceSchema,
      run: (c) => svc.setStatistics(c.ctx, c.actor, c.uuid, c.body.statistics, c.base),
    }),
  ],
})

export const processors = defineResource({
  path: s.PROCESSOR_PATH,
  noun: 'site agent processor',
  record: s.ProcessorSchema,
  visibility: svc.visibility,
  list: {
    summary: 'List the processors of the site agent services the caller sees',
    filters: {
      service_uuid: filter.uuid('site_agent_services.uuid', { description: 'uuid of the service' }),
      offering_uuid: filter.uuid('offerings.uuid', {
        description: "uuid of the service's identity's offering",
      }),
      backend_type: filter.exact('site_agent_processors.backend_type'),
      backend_version: filter.exact('site_agent_processors.backend_version'),
      last_run: filter.after('site_agent_processors.last_run', {
        description: 'last run at or after (date-time)',
      }),
      last_run_before: filter.before('site_agent_processors.last_run', {
        description: 'last run at or before (date-time)',
      }),
    },
    ordering: { default: [{ column: 'site_agent_processors.created', desc: false }] },
    run: (c) => svc.listProcessors(c.ctx, c.scope, c.listing, c.base, c.page),
  },
})

/** The idle sweep's job, and the stats (one object, not a resource). */
async function setup(fastify: FastifyInstance, ctx: AppContext) {
  ctx.jobs.define(maintenance.MARK_IDLE_JOB, {
    run: async () => {
      await maintenance.markIdle(ctx)
    },
    maxAttempts: 3,
  })
  fastify.withTypeProvider<TypeBoxTypeProvider>().get(
    `/api/${s.STATS_PATH}/`,
    {
      schema: {
        tags: [s.STATS_PATH],
        summary:
          'Staff and support: identities by offering, services by state and stale, processors by backend type and stale',
        response: { 200: s.StatsSchema, ...errors },
      },
    },
    async (request) => maintenance.stats(ctx, actorOf(request)),
  )
}

export const siteAgentsRoutes = resourceRoutes([identities, services, processors], setup)
