// The epochs that guard the answers kept between requests (an order search's matches, the stale
// services' total; db/epochs.ts): each write raises those it may change and no other, the same
// on both databases (SQLite's row triggers since 2026-11-24T1200_match_epochs, PostgreSQL's
// statement triggers since 2026-12-06T1000_pg_match_epochs); and on PostgreSQL that migration
// adds them and its `down` takes them away.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { sql } from 'kysely'
import { buildTestApp, type TestApp } from './support/app.js'
import { insertRef, makeProject, type Ref } from './support/fixtures.js'
import {
  createOrderColumns,
  makeResource,
  ownOfferingWorld,
  type OfferingRef,
} from './support/catalog-fixtures.js'
import { beforeMigration } from './support/migration.js'
import { toJson } from '../src/db/values.js'

const MIGRATION = '2026-12-06T1000_pg_match_epochs'
const EPOCHS = ['order_slugs', 'project_names', 'resource_names', 'site_agent_services']

let t: TestApp
let customer: Ref
let project: Ref
let offering: OfferingRef
let identityId: number

before(async () => {
  t = await buildTestApp()
  ;({ customer, project, offering } = await ownOfferingWorld(t.ctx))
  identityId = (
    await insertRef(t.ctx, 'site_agent_identities', 'x', { name: 'agent', offering_id: offering.id })
  ).id
})
after(() => t.close())

async function epochs(): Promise<Record<string, number>> {
  const rows = await t.ctx.db
    .selectFrom('record_epochs')
    .select(['name', 'n'])
    .where('name', 'in', EPOCHS)
    .execute()
  return Object.fromEntries(rows.map((r) => [r.name, Number(r.n)]))
}

/** The epochs `write` raised. */
async function raised(write: () => Promise<unknown>): Promise<string[]> {
  const before = await epochs()
  assert.deepEqual(Object.keys(before).sort(), EPOCHS)
  await write()
  const after = await epochs()
  return EPOCHS.filter((name) => after[name] !== before[name])
}

const order = (slug: string) =>
  insertRef(t.ctx, 'orders', 'marketplace-orders', createOrderColumns({ customer, project, offering }, slug))

const service = (name: string) =>
  insertRef(t.ctx, 'site_agent_services', 'x', {
    identity_id: identityId,
    name,
    mode: null,
    statistics: toJson({}),
  })

test('each write raises the epochs of what it may change, and no other', async () => {
  const db = t.ctx.db
  // Projects: inserted, renamed, deleted; another column set is no rename.
  let other!: Ref
  assert.deepEqual(await raised(async () => (other = await makeProject(t.ctx, customer))), ['project_names'])
  const projects = db.updateTable('projects').where('id', '=', other.id)
  assert.deepEqual(await raised(() => projects.set({ description: 'changed' }).execute()), [])
  assert.deepEqual(await raised(() => projects.set({ name: 'Renamed' }).execute()), ['project_names'])
  assert.deepEqual(await raised(() => db.deleteFrom('projects').where('id', '=', other.id).execute()), [
    'project_names',
  ])
  // Resources likewise.
  let resource!: Ref
  assert.deepEqual(await raised(async () => (resource = await makeResource(t.ctx, offering, project))), [
    'resource_names',
  ])
  const resources = db.updateTable('resources').where('id', '=', resource.id)
  assert.deepEqual(await raised(() => resources.set({ state: 'Erred' }).execute()), [])
  assert.deepEqual(await raised(() => resources.set({ name: 'renamed' }).execute()), ['resource_names'])
  assert.deepEqual(await raised(() => db.deleteFrom('resources').where('id', '=', resource.id).execute()), [
    'resource_names',
  ])
  // Orders: only a slug that a search can match (an empty one matches nothing).
  let unnamed!: { id: number }
  let named!: { id: number }
  assert.deepEqual(await raised(async () => (unnamed = await order(''))), [])
  assert.deepEqual(await raised(async () => (named = await order('a-slug'))), ['order_slugs'])
  const orders = db.updateTable('orders').where('id', '=', named.id)
  assert.deepEqual(await raised(() => orders.set({ state: 'executing' }).execute()), [])
  assert.deepEqual(await raised(() => orders.set({ slug: 'another' }).execute()), ['order_slugs'])
  assert.deepEqual(await raised(() => db.deleteFrom('orders').where('id', '=', unnamed.id).execute()), [])
  assert.deepEqual(await raised(() => db.deleteFrom('orders').where('id', '=', named.id).execute()), [
    'order_slugs',
  ])
  // Site agent services: any write of a row, and a statement that writes none raises nothing.
  let s!: { id: number }
  assert.deepEqual(await raised(async () => (s = await service('svc'))), ['site_agent_services'])
  const services = db.updateTable('site_agent_services')
  assert.deepEqual(await raised(() => services.set({ state: 2 }).where('id', '=', s.id).execute()), [
    'site_agent_services',
  ])
  assert.deepEqual(await raised(() => services.set({ state: 3 }).where('id', '=', -1).execute()), [])
  const none = db.deleteFrom('site_agent_services').where('id', '=', -1)
  assert.deepEqual(await raised(() => none.execute()), [])
  assert.deepEqual(
    await raised(() => db.deleteFrom('site_agent_services').where('id', '=', s.id).execute()),
    ['site_agent_services'],
  )
})

test('on PostgreSQL the migration adds the epochs and their triggers, and its down takes them away', () =>
  beforeMigration(MIGRATION, async ({ db, pg, migrateToLatest, migrateBack }) => {
    const kept = async () =>
      (await db.selectFrom('record_epochs').select('name').where('name', 'in', EPOCHS).execute())
        .map((r) => r.name as string)
        .sort()
    const triggers = async () =>
      pg
        ? (
            await sql<{ n: number }>`select count(*)::int as n from pg_trigger
              where tgname like '%\\_epoch\\_%' and tgrelid::regclass::text in
              ('projects', 'resources', 'orders', 'site_agent_services')`.execute(db)
          ).rows[0]!.n
        : null
    // SQLite has had them since 2026-11-24T1200_match_epochs; PostgreSQL not yet.
    assert.deepEqual(await kept(), pg ? [] : EPOCHS)
    assert.equal(await triggers(), pg ? 0 : null)
    await migrateToLatest()
    assert.deepEqual(await kept(), EPOCHS)
    assert.equal(await triggers(), pg ? 12 : null)
    await migrateBack()
    assert.deepEqual(await kept(), pg ? [] : EPOCHS)
    assert.equal(await triggers(), pg ? 0 : null)
  }))
