// Setup shared by the cloud tests: an app with its role graph, and records made through the API.
import assert from 'node:assert/strict'
import { buildTestApp, type TestApp } from './app.js'
import { client } from './client.js'
import { roleGraph, type Ref, type UserRef } from './fixtures.js'

export interface Linked {
  uuid: string
  url: string
}

/** POSTs `body` to `path` as `who`, expects 201 and answers the new record. */
export async function postCreated<T = Linked>(
  t: TestApp,
  who: UserRef,
  path: string,
  body: Record<string, unknown>,
): Promise<T> {
  const r = await client(t.app, who.token).post(path, body)
  assert.equal(r.status, 201, JSON.stringify(r.body))
  return r.body as T
}

/**
 * A cloudB test's world: the app, its role graph with a staff user, an owner and a project, and
 * shared cloudB service settings ("Cloud B") made by staff, with their database id.
 */
export async function cloudBWorld(): Promise<{
  t: TestApp
  g: ReturnType<typeof roleGraph>
  staff: UserRef
  owner: UserRef
  project: Ref
  settings: Linked & { id: number }
}> {
  const t = await buildTestApp()
  const g = roleGraph(t.ctx)
  const staff = await g.staff()
  const owner = await g.owner()
  const project = await g.project()
  const body = { name: 'Cloud B', type: 'cloudB', shared: true }
  const created = await postCreated(t, staff, '/api/service-settings/', body)
  const row = await t.ctx.db
    .selectFrom('service_settings')
    .select('id')
    .where('uuid', '=', created.uuid)
    .executeTakeFirstOrThrow()
  return { t, g, staff, owner, project, settings: { ...created, id: row.id } }
}
