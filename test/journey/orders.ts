import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { answer, uuidsOf, formData } from './client.js'
import type { paths } from './generated/reference-api.js'
import { ownedProject, providerOffering, userWith, type Journey, type User } from './world.js'

const PDF = Buffer.from('%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n')

/** A local listener standing in for the consumer's system that follows the order. */
async function callbackListener() {
  const received: { uuid: string; state: string }[] = []
  const server = createServer((req, res) => {
    let data = ''
    req.on('data', (c: Buffer) => (data += c.toString()))
    req.on('end', () => {
      received.push(JSON.parse(data) as { uuid: string; state: string })
      res.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${port}/order-events`,
    statesOf: (uuid: string) => received.filter((e) => e.uuid === uuid).map((e) => e.state),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

type OrderQuery = NonNullable<paths['/api/marketplace-orders/']['get']['parameters']['query']>

export const orderJourneys: Journey[] = [
  {
    name: 'a project manager orders a site-agent offering with an attachment; the owner and the provider approve, the agent completes it, and the callback URL hears every state',
    async run(w) {
      const { project, owner } = await ownedProject(w)
      const manager = await userWith(w, 'PROJECT.MANAGER', project)
      const {
        provider,
        user: providerOwner,
        offering,
      } = await providerOffering(w, 'CUSTOMER.OWNER', 'Marketplace.Slurm')
      // The provider bills CPU by the limit ordered (setup outside the contract areas).
      const component = await w.http(
        'POST',
        `/api/marketplace-provider-offerings/${offering.uuid}/create_offering_component/`,
        providerOwner,
        { billing_type: 'limit', type: 'cpu', name: 'CPU', measured_unit: 'cores' },
      )
      assert.equal(component.status, 201)
      const plan = await w.plan(offering, 12)
      const agent = await userWith(w, 'OFFERING.MANAGER', offering)
      /** The uuids of the orders `user` lists with `query`. */
      const listed = (user: User, query: OrderQuery) =>
        uuidsOf(w.api(user).GET('/api/marketplace-orders/', { params: { query } }))
      const hook = await callbackListener()
      try {
        const created = await answer(
          201,
          w.api(manager).POST('/api/marketplace-orders/', {
            body: {
              offering: offering.url,
              plan: plan.url,
              project: project.url,
              type: 'Create',
              attributes: { name: 'Genome run 7' },
              limits: { cpu: 4 },
              callback_url: hook.url,
              request_comment: 'for the spring batch',
            },
          }),
        )
        const uuid = created.uuid!
        assert.equal(created.state, 'pending-consumer')
        assert.equal(created.slug, 'genome-run-7')
        assert.equal(created.project_uuid, project.uuid)
        assert.equal(created.offering_uuid, offering.uuid)
        assert.equal(created.callback_url, hook.url)
        const path = { params: { path: { uuid } } }
        await w.drain()
        assert.deepEqual(hook.statesOf(uuid), ['pending-consumer'])

        // The attachment travels as multipart form data while the order is pending.
        const attached = await answer(
          200,
          w.api(manager).POST('/api/marketplace-orders/{uuid}/update_attachment/', {
            ...path,
            body: { attachment: new Blob([PDF], { type: 'application/pdf' }) },
            bodySerializer: (body) => formData(body ?? {}, 'data-management-plan.pdf'),
          }),
        )
        assert.ok(attached.attachment?.startsWith(`${w.baseUrl}/api/marketplace-orders/${uuid}/`))
        const withFile = await answer(200, w.api(manager).GET('/api/marketplace-orders/{uuid}/', path))
        assert.equal(withFile.attachment, attached.attachment)

        const counted = await w.api(manager).HEAD('/api/marketplace-orders/', {
          params: { query: { project_uuid: project.uuid } },
        })
        assert.equal(counted.response.headers.get('x-result-count'), '1')
        assert.deepEqual(
          await uuidsOf(
            w.api(manager).GET('/api/marketplace-orders/', {
              params: { query: { project_uuid: project.uuid, o: ['-created', 'state'] } },
              // The schema declares `o` a comma-separated list (form style, not exploded).
              querySerializer: { array: { style: 'form', explode: false } },
            }),
          ),
          [uuid],
        )

        assert.deepEqual(await listed(owner, { can_approve_as_consumer: true, project_uuid: project.uuid }), [
          uuid,
        ])
        await answer(200, w.api(owner).POST('/api/marketplace-orders/{uuid}/approve_by_consumer/', path))
        const reviewed = await answer(200, w.api(owner).GET('/api/marketplace-orders/{uuid}/', path))
        assert.equal(reviewed.state, 'pending-provider')
        assert.equal(reviewed.consumer_reviewed_by, owner.username)
        await w.drain()

        assert.deepEqual(
          await listed(providerOwner, { can_approve_as_provider: true, provider_uuid: provider.uuid }),
          [uuid],
        )
        await answer(
          200,
          w.api(providerOwner).POST('/api/marketplace-orders/{uuid}/approve_by_provider/', path),
        )
        const executing = await answer(200, w.api(agent).GET('/api/marketplace-orders/{uuid}/', path))
        assert.equal(executing.state, 'executing')
        assert.equal(executing.provider_reviewed_by, providerOwner.username)
        await w.drain()

        // The site agent records the backend id and reports the order done.
        const recorded = await answer(
          200,
          w.api(providerOwner).POST('/api/marketplace-orders/{uuid}/set_backend_id/', {
            ...path,
            body: { backend_id: 'slurm-job-7' },
          }),
        )
        assert.equal(typeof recorded.status, 'string')
        await answer(200, w.api(agent).POST('/api/marketplace-orders/{uuid}/set_state_done/', path))
        const done = await answer(200, w.api(manager).GET('/api/marketplace-orders/{uuid}/', path))
        assert.equal(done.state, 'done')
        assert.equal(done.backend_id, 'slurm-job-7')
        assert.ok(done.completed_at)
        const ordered = await answer(
          200,
          w.api(manager).GET('/api/marketplace-orders/{uuid}/offering/', path),
        )
        assert.equal(ordered.uuid, offering.uuid)
        assert.equal(ordered.url, offering.url)

        await w.drain()
        assert.deepEqual(hook.statesOf(uuid), ['pending-consumer', 'pending-provider', 'executing', 'done'])
      } finally {
        await hook.close()
      }
    },
  },
]
