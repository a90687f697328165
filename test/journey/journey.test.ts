// The generated-client journey: one realistic journey per contract area, every call in the nine
// areas made through the client generated from the reference's OpenAPI schema
// (test/journey/client.ts), against the app over a real socket. The journeys live beside this
// file; this file gives them a world to run in.
import { describe, test } from 'node:test'
import { sharedTestWorld } from '../support/shared-world.js'
import { journeyWorld } from '../support/journey-world.js'
import type { Journey } from './world.js'
import { orderJourneys } from './orders.js'
import { costPolicyJourneys } from './cost-policies.js'
import { siteAgentJourneys } from './site-agents.js'
import { backendRequestJourneys } from './backend-requests.js'
import { invitationJourneys } from './invitations.js'
import { paymentProfileJourneys } from './payment-profiles.js'
import { supportJourneys } from './support.js'
import { cloudAJourneys } from './cloud-a.js'
import { cloudBJourneys } from './cloud-b.js'

const AREAS: Record<string, Journey[]> = {
  'marketplace orders': orderJourneys,
  'offering estimated cost policies': costPolicyJourneys,
  'site agent services': siteAgentJourneys,
  'backend resource requests': backendRequestJourneys,
  'user group invitations': invitationJourneys,
  'payment profiles': paymentProfileJourneys,
  'support feedbacks': supportJourneys,
  'cloudA public IPs': cloudAJourneys,
  'cloudB floating IPs, routers and migrations': cloudBJourneys,
}

const { world } = sharedTestWorld(journeyWorld)

for (const [area, journeys] of Object.entries(AREAS)) {
  describe(area, () => {
    for (const j of journeys) test(j.name, () => j.run(world))
  })
}
