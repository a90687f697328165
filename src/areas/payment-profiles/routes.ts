// HTTP for /api/payment-profiles/: the resource's declaration (the worked example of the kit in
// docs/development.md).
import { filter } from '../../http/filters.js'
import {
  defineResource,
  recordOperations,
  resourceRoutes,
  columnsOf,
  orderedBy,
} from '../../http/resource.js'
import * as svc from './service.js'
import * as s from './schema.js'

export const paymentProfiles = defineResource({
  path: s.PATH,
  noun: 'payment profile',
  record: s.PaymentProfileSchema,
  visibility: svc.visibility,
  list: {
    filters: {
      is_active: filter.boolean('payment_profiles.is_active'),
      // The organization by URL or by uuid; given both, they must agree.
      organization: filter.link('customers', 'customers.uuid', { description: 'organization URL' }),
      organization_uuid: filter.uuid('customers.uuid'),
      payment_type: filter.choice(s.PAYMENT_TYPES, 'payment_profiles.payment_type'),
    },
    ordering: orderedBy(columnsOf('payment_profiles', 'name', 'payment_type', 'is_active'), 'name'),
    run: (c) => svc.listPaymentProfiles(c.ctx, c.scope, c.listing, c.base, c.page),
  },
  ...recordOperations(svc.paymentProfileService, {
    create: s.PaymentProfileCreateBody,
    patch: s.PaymentProfilePatchBody,
  }),
  actions: [
    {
      name: 'enable',
      summary: 'Make this the active profile of its organization (the others become inactive)',
      response: null,
      run: (c) => svc.enablePaymentProfile(c.ctx, c.actor, c.uuid),
    },
  ],
})

export const paymentProfilesRoutes = resourceRoutes([paymentProfiles])
