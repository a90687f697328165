import assert from 'node:assert/strict'
import { answer, uuidsOf } from './client.js'
import { providerOffering, type Journey } from './world.js'

export const siteAgentJourneys: Journey[] = [
  {
    name: 'a site agent service registers a processor, reports statistics, falls silent and is cleaned up by staff',
    async run(w) {
      const staff = await w.user({ staff: true })
      const { user: providerOwner, offering } = await providerOffering(
        w,
        'CUSTOMER.OWNER',
        'Marketplace.Slurm',
      )
      // The agent's identity and its service are registered outside the contract areas.
      const identity = await w.http<{ uuid: string }>(
        'POST',
        '/api/marketplace-site-agent-identities/',
        providerOwner,
        { name: 'hpc-agent', offering: offering.url, version: '0.9.0' },
      )
      assert.equal(identity.status, 201, JSON.stringify(identity.body))
      const registered = await w.http<{ uuid: string }>(
        'POST',
        `/api/marketplace-site-agent-identities/${identity.body.uuid}/register_service/`,
        providerOwner,
        { name: 'order-processing', mode: 'order_process' },
      )
      assert.equal(registered.status, 201, JSON.stringify(registered.body))
      const agent = w.api(providerOwner)
      const path = { params: { path: { uuid: registered.body.uuid } } }

      const processor = await answer(
        201,
        agent.POST('/api/marketplace-site-agent-services/{uuid}/register_processor/', {
          ...path,
          body: { name: 'slurm-orders', backend_type: 'SLURM' },
        }),
      )
      assert.equal(processor.service, registered.body.uuid)
      assert.equal(processor.backend_type, 'SLURM')
      w.clock.advanceHours(1)
      const again = await answer(
        200,
        agent.POST('/api/marketplace-site-agent-services/{uuid}/register_processor/', {
          ...path,
          body: { name: 'slurm-orders', backend_type: 'SLURM', backend_version: '23.11' },
        }),
      )
      assert.equal(again.uuid, processor.uuid)
      assert.equal(again.backend_version, '23.11')

      const reported = await answer(
        200,
        agent.POST('/api/marketplace-site-agent-services/{uuid}/set_statistics/', {
          ...path,
          body: { statistics: { orders_processed: 12, last_error: null } },
        }),
      )
      assert.deepEqual(reported.statistics, { orders_processed: 12, last_error: null })
      const service = await answer(200, agent.GET('/api/marketplace-site-agent-services/{uuid}/', path))
      assert.deepEqual(
        service.processors.map((p) => [p.name, p.backend_version]),
        [['slurm-orders', '23.11']],
      )
      assert.deepEqual(
        await uuidsOf(
          agent.GET('/api/marketplace-site-agent-services/', {
            params: { query: { identity_uuid: identity.body.uuid } },
          }),
        ),
        [registered.body.uuid],
      )

      // A day and more of silence: the service is stale, and staff clean it up.
      w.clock.advanceHours(25)
      const stale = await answer(
        200,
        agent.GET('/api/marketplace-site-agent-services/', {
          params: { query: { identity_uuid: identity.body.uuid, stale: true } },
        }),
      )
      assert.equal(stale.length, 1)
      const cleaner = w.api(staff)
      const preview = await answer(
        200,
        cleaner.POST('/api/marketplace-site-agent-services/cleanup_stale/', {
          body: { dry_run: true, older_than_hours: 24 },
        }),
      )
      assert.equal(preview.dry_run, true)
      assert.ok(preview.items.some((i) => i.uuid === registered.body.uuid))
      await answer(200, agent.GET('/api/marketplace-site-agent-services/{uuid}/', path))
      const cleaned = await answer(
        200,
        cleaner.POST('/api/marketplace-site-agent-services/cleanup_stale/', {
          body: { dry_run: false, older_than_hours: 24 },
        }),
      )
      assert.equal(cleaned.dry_run, false)
      assert.ok(cleaned.deleted_count >= 1)
      assert.ok(cleaned.items.some((i) => i.uuid === registered.body.uuid))
      await answer(404, agent.GET('/api/marketplace-site-agent-services/{uuid}/', path))
    },
  },
]
