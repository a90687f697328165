// The migration that completes the resource record gives existing resources the slugs new ones
// get (`<name>-<n>`, numbered in creation order per name) and a last sync, and leaves the
// counters where the next resource of each name continues.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { beforeMigration } from './support/migration.js'
import { insertResource } from '../src/areas/catalog/service.js'

const MIGRATION = '2026-11-29T1000_resource_record'

test('existing resources get unique slugs in creation order, and new ones continue the count', () =>
  beforeMigration(MIGRATION, async ({ database, db, pg, migrateToLatest }) => {
    const t0 = '2026-01-15T10:00:00.000Z'
    const flag = (v: boolean) => (pg ? v : v ? 1 : 0)
    const uuid = () => crypto.randomUUID()
    const { id: customerId } = await db
      .insertInto('customers')
      .values({
        uuid: uuid(),
        name: 'Org',
        slug: 'org',
        created: t0,
        modified: t0,
        blocked: flag(false),
        archived: flag(false),
      })
      .returning('id')
      .executeTakeFirstOrThrow()
    const { id: projectId } = await db
      .insertInto('projects')
      .values({ uuid: uuid(), name: 'P', customer_id: customerId, slug: 'p', created: t0, modified: t0 })
      .returning('id')
      .executeTakeFirstOrThrow()
    const { id: offeringId } = await db
      .insertInto('offerings')
      .values({
        uuid: uuid(),
        name: 'O',
        slug: 'o',
        customer_id: customerId,
        type: 'Marketplace.Basic',
        plugin_options: '{}',
        shared: flag(true),
        billable: flag(true),
        created: t0,
        modified: t0,
      })
      .returning('id')
      .executeTakeFirstOrThrow()
    const resource = async (name: string, modified: string) =>
      (
        await db
          .insertInto('resources')
          .values({
            uuid: uuid(),
            name,
            offering_id: offeringId,
            project_id: projectId,
            customer_id: customerId,
            attributes: '{}',
            limits: '{}',
            created: t0,
            modified,
          })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id as number
    const a1 = await resource('Alloc A', '2026-02-01T00:00:00.000Z')
    const b1 = await resource('other', t0)
    const a2 = await resource('alloc a', t0)
    const empty = await resource('', t0)
    await migrateToLatest()
    const rows = await db.selectFrom('resources').select(['id', 'slug', 'last_sync']).orderBy('id').execute()
    const slug = (id: number) => rows.find((r) => r.id === id)!.slug
    assert.deepEqual([a1, b1, a2, empty].map(slug), ['alloc-a-1', 'other-1', 'alloc-a-2', 'resource-1'])
    const lastSync = rows.find((r) => r.id === a1)!.last_sync
    assert.equal(new Date(lastSync).toISOString(), '2026-02-01T00:00:00.000Z')
    const next = await insertResource(
      database.db,
      {
        uuid: uuid(),
        name: 'ALLOC a',
        offering_id: offeringId,
        project_id: projectId,
        customer_id: customerId,
        attributes: '{}',
        limits: '{}',
        created: t0,
        modified: t0,
      },
      'O',
    )
    assert.equal(next.slug, 'alloc-a-3')
    // A slug taken meanwhile (a staff member set it) is skipped.
    await db.updateTable('resources').set({ slug: 'other-2' }).where('id', '=', b1).execute()
    const other = await insertResource(database.db, {
      uuid: uuid(),
      name: 'Other',
      offering_id: offeringId,
      project_id: projectId,
      customer_id: customerId,
      attributes: '{}',
      limits: '{}',
      created: t0,
      modified: t0,
    })
    assert.equal(other.slug, 'other-3')
  }))
