// Every area, in registration order. Each exports a Fastify plugin taking { ctx }.
import type { FastifyInstance } from 'fastify'
import type { AppContext } from '../context.js'
import { backendRequestsRoutes } from './backend-requests/routes.js'
import { catalogRoutes } from './catalog/routes.js'
import { cloudRoutes } from './cloud/routes.js'
import { cloudBRoutes } from './cloud-b/routes.js'
import { cloudARoutes } from './cloud-a/routes.js'
import { costPoliciesRoutes } from './cost-policies/routes.js'
import { directoryRoutes } from './directory/routes.js'
import { eventSubscriptionsRoutes } from './event-subscriptions/routes.js'
import { eventsRoutes } from './events/routes.js'
import { invitationsRoutes } from './invitations/routes.js'
import { offeringUsersRoutes } from './offering-users/routes.js'
import { ordersRoutes } from './orders/routes.js'
import { paymentProfilesRoutes } from './payment-profiles/routes.js'
import { siteAgentsRoutes } from './site-agents/routes.js'
import { sshKeysRoutes } from './ssh-keys/routes.js'
import { supportRoutes } from './support/routes.js'
import { usageRoutes } from './usage/routes.js'

export type Area = (app: FastifyInstance, opts: { ctx: AppContext }) => Promise<void>

export const areas: Area[] = [
  directoryRoutes,
  catalogRoutes,
  ordersRoutes,
  costPoliciesRoutes,
  paymentProfilesRoutes,
  supportRoutes,
  backendRequestsRoutes,
  siteAgentsRoutes,
  eventSubscriptionsRoutes,
  invitationsRoutes,
  offeringUsersRoutes,
  usageRoutes,
  sshKeysRoutes,
  cloudRoutes,
  cloudBRoutes,
  cloudARoutes,
  eventsRoutes,
]
