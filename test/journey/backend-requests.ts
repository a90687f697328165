import assert from 'node:assert/strict'
import { answer, uuidsOf } from './client.js'
import { providerOffering, type Journey } from './world.js'

export const backendRequestJourneys: Journey[] = [
  {
    name: 'staff ask the site agent for the importable resources of an offering; the agent takes the request from Sent through Processing to Done',
    async run(w) {
      const staff = await w.user({ staff: true })
      const { user: manager, offering } = await providerOffering(w, 'CUSTOMER.MANAGER', 'Marketplace.Slurm')

      const sent = await answer(
        201,
        w.api(staff).POST('/api/backend-resource-requests/', { body: { offering: offering.uuid } }),
      )
      assert.equal(sent.state, 'Sent')
      assert.equal(sent.offering, offering.uuid)
      assert.equal(sent.offering_url, offering.url)
      assert.equal(sent.started, null)
      const agent = w.api(manager)
      const path = { params: { path: { uuid: sent.uuid } } }
      assert.deepEqual(
        await uuidsOf(
          agent.GET('/api/backend-resource-requests/', {
            params: { query: { offering_uuid: offering.uuid, state: ['Sent'] } },
          }),
        ),
        [sent.uuid],
      )

      w.clock.advanceHours(1)
      const started = await answer(
        200,
        agent.POST('/api/backend-resource-requests/{uuid}/start_processing/', path),
      )
      assert.equal(typeof started.status, 'string')
      const processing = await answer(200, agent.GET('/api/backend-resource-requests/{uuid}/', path))
      assert.equal(processing.state, 'Processing')
      assert.equal(processing.started, w.clock.now().toISOString())

      w.clock.advanceHours(1)
      await answer(200, agent.POST('/api/backend-resource-requests/{uuid}/set_done/', path))
      const done = await answer(200, agent.GET('/api/backend-resource-requests/{uuid}/', path))
      assert.equal(done.state, 'Done')
      assert.equal(done.finished, w.clock.now().toISOString())
      assert.equal(done.started, processing.started)
    },
  },
]
