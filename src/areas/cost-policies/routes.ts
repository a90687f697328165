// HTTP for /api/marketplace-offering-estimated-cost-policies/, and the evaluation job.
import { filter } from '../../http/filters.js'
import { defineResource, namedService, recordOperations, resourceRoutes } from '../../http/resource.js'
import { EVALUATE_JOB, evaluateOfferingPolicies } from './evaluation.js'
import * as svc from './service.js'
import * as s from './schema.js'

export const costPolicies = defineResource({
  path: s.PATH,
  noun: 'offering estimated cost policy',
  plural: 'offering estimated cost policies',
  record: s.PolicySchema,
  visibility: svc.visibility,
  list: {
    filters: {
      // The offering by URL or by uuid; given both, they must agree. A URL of another kind
      // matches nothing, not 400.
      scope: filter.link(s.OFFERINGS_PATH, 'offerings.uuid', { description: 'offering URL' }),
      scope_uuid: filter.uuid('offerings.uuid'),
    },
    // A fixed order: the list takes no `o`.
    ordering: {
      default: [
        { column: 'cost_policies.created', desc: true },
        { column: 'cost_policies.id', desc: true },
      ],
    },
    run: (c) => svc.listPolicies(c.ctx, c.scope, c.listing, c.base, c.page),
  },
  ...recordOperations(namedService(svc, 'Policy'), { create: s.PolicyCreateBody, patch: s.PolicyPatchBody }),
  actions: [
    {
      name: 'actions',
      method: 'GET',
      detail: false,
      summary: 'The actions a policy may take: `actions` lists them, `options` describes each',
      response: s.PolicyActionsSchema,
      run: async () => svc.AVAILABLE_ACTIONS,
    },
  ],
})

export const costPoliciesRoutes = resourceRoutes([costPolicies], (_app, ctx) => {
  ctx.jobs.define<{ offeringId: number }>(EVALUATE_JOB, {
    run: (payload) => evaluateOfferingPolicies(ctx, payload.offeringId),
    maxAttempts: 5,
    backoffMs: 2000,
  })
})
