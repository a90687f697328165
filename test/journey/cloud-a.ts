import assert from 'node:assert/strict'
import { answer } from './client.js'
import { ownedProject, type Journey } from './world.js'

export const cloudAJourneys: Journey[] = [
  {
    name: 'a project owner creates a cloudA public IP, pulls it from the backend and deletes it; staff unlink a second one stuck in the service',
    async run(w) {
      const staff = await w.user({ staff: true })
      const { project, owner } = await ownedProject(w)
      // The cloud account, its location and a resource group are set up outside the contract areas.
      const settings = await w.http<{ url: string }>('POST', '/api/service-settings/', staff, {
        name: 'Cloud A north',
        type: 'cloudA',
        shared: true,
      })
      assert.equal(settings.status, 201, JSON.stringify(settings.body))
      const location = await w.http<{ url: string }>('POST', '/api/cloudA-locations/', staff, {
        name: 'northeurope',
        service_settings: settings.body.url,
      })
      assert.equal(location.status, 201, JSON.stringify(location.body))
      const group = await w.http<{ url: string }>('POST', '/api/cloudA-resource-groups/', owner, {
        name: 'rg-web',
        service_settings: settings.body.url,
        location: location.body.url,
        project: project.url,
      })
      assert.equal(group.status, 201, JSON.stringify(group.body))
      const cloud = w.api(owner)
      const body = {
        service_settings: settings.body.url,
        project: project.url,
        location: location.body.url,
        resource_group: group.body.url,
      }

      const ip = await answer(
        201,
        cloud.POST('/api/cloudA-public-ips/', {
          body: { name: 'web-front', description: 'the shop', ...body },
        }),
      )
      assert.equal(ip.state, 'CREATION_SCHEDULED')
      assert.equal(ip.location, location.body.url)
      assert.equal(ip.resource_group, group.body.url)
      const path = { params: { path: { uuid: ip.uuid! } } }
      await w.drain()
      const created = await answer(200, cloud.GET('/api/cloudA-public-ips/{uuid}/', path))
      assert.equal(created.state, 'OK')
      assert.ok(created.backend_id)

      await answer(202, cloud.POST('/api/cloudA-public-ips/{uuid}/pull/', path))
      await w.drain()
      const pulled = await answer(200, cloud.GET('/api/cloudA-public-ips/{uuid}/', path))
      assert.equal(pulled.state, 'OK')
      const listed = await answer(
        200,
        cloud.GET('/api/cloudA-public-ips/', {
          params: { query: { project_uuid: project.uuid, field: ['uuid', 'state', 'backend_id'] } },
        }),
      )
      assert.deepEqual(listed, [{ uuid: ip.uuid, state: 'OK', backend_id: created.backend_id }])

      await answer(204, cloud.DELETE('/api/cloudA-public-ips/{uuid}/', path))
      const deleting = await answer(200, cloud.GET('/api/cloudA-public-ips/{uuid}/', path))
      assert.equal(deleting.state, 'DELETION_SCHEDULED')
      await w.drain()
      await answer(404, cloud.GET('/api/cloudA-public-ips/{uuid}/', path))

      // A second IP left in CREATION_SCHEDULED (no worker ran) is removed by staff without the backend.
      const stuck = await answer(
        201,
        cloud.POST('/api/cloudA-public-ips/', { body: { name: 'web-spare', ...body } }),
      )
      const stuckPath = { params: { path: { uuid: stuck.uuid! } } }
      await answer(204, w.api(staff).POST('/api/cloudA-public-ips/{uuid}/unlink/', stuckPath))
      await answer(404, cloud.GET('/api/cloudA-public-ips/{uuid}/', stuckPath))
      await w.drain()
    },
  },
]
