import assert from 'node:assert/strict'
import { answer } from './client.js'
import { ownedProject, providerOffering, type Journey } from './world.js'

export const costPolicyJourneys: Journey[] = [
  {
    name: "a provider owner caps an offering's estimated cost with the minimal request; orders push it over the limit, the policy fires and the next order is refused",
    async run(w) {
      const { user: providerOwner, offering } = await providerOffering(
        w,
        'CUSTOMER.OWNER',
        'Marketplace.Basic',
      )
      const plan = await w.plan(offering, 100)
      const { project, owner: buyer } = await ownedProject(w)
      const as = w.api(providerOwner)

      const available = await answer(
        200,
        as.GET('/api/marketplace-offering-estimated-cost-policies/actions/'),
      )
      const actions = available.actions.split(',')
      assert.ok(actions.includes('notify_organization_owners'))
      assert.ok(actions.includes('block_creation_of_new_resources'))

      // The minimal request: scope, actions and limit_cost; the policy then covers every customer.
      const policy = await answer(
        201,
        as.POST('/api/marketplace-offering-estimated-cost-policies/', {
          body: {
            scope: offering.url,
            actions: 'notify_organization_owners,block_creation_of_new_resources',
            limit_cost: 150,
          },
        }),
      )
      assert.equal(policy.scope_uuid, offering.uuid)
      assert.equal(policy.limit_cost, 150)
      assert.equal(policy.has_fired, false)
      const path = { params: { path: { uuid: policy.uuid } } }

      const order = () =>
        answer(
          201,
          w.api(buyer).POST('/api/marketplace-orders/', {
            body: { offering: offering.url, plan: plan.url, project: project.url, type: 'Create' },
          }),
        )
      await order()
      await w.drain()
      let seen = await answer(200, as.GET('/api/marketplace-offering-estimated-cost-policies/{uuid}/', path))
      assert.equal(seen.has_fired, false, 'an estimate of 100 is within 150')

      w.clock.advanceHours(1)
      await order()
      await w.drain()
      seen = await answer(200, as.GET('/api/marketplace-offering-estimated-cost-policies/{uuid}/', path))
      assert.equal(seen.has_fired, true, 'an estimate of 200 is above 150')
      assert.equal(seen.fired_datetime, w.clock.now().toISOString())

      const listed = await answer(
        200,
        as.GET('/api/marketplace-offering-estimated-cost-policies/', {
          params: { query: { scope_uuid: offering.uuid } },
        }),
      )
      assert.deepEqual(
        listed.map((p) => [p.uuid, p.has_fired]),
        [[policy.uuid, true]],
      )

      const refused = await w.api(buyer).POST('/api/marketplace-orders/', {
        body: { offering: offering.url, plan: plan.url, project: project.url, type: 'Create' },
      })
      assert.equal(refused.response.status, 400)
      assert.match(JSON.stringify(refused.error), new RegExp(policy.uuid))
    },
  },
]
