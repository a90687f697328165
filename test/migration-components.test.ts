// The migration that brings offering components gives the offerings that already exist the
// built-in components of their type, on both databases.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { randomUUID } from 'node:crypto'
import { beforeMigration } from './support/migration.js'

const MIGRATION = '2026-11-29T1100_offering_components'

test('offerings of a type with built-in components get them; others get none', () =>
  beforeMigration(MIGRATION, async ({ db, migrateToLatest }) => {
    const now = '2026-01-15T10:00:00.000Z'
    const { id: customerId } = await db
      .insertInto('customers')
      .values({ uuid: randomUUID(), name: 'Provider', slug: 'provider', created: now, modified: now })
      .returning('id')
      .executeTakeFirstOrThrow()
    const offering = async (type: string) =>
      (
        await db
          .insertInto('offerings')
          .values({
            uuid: randomUUID(),
            name: type,
            slug: 'o',
            customer_id: customerId,
            type,
            plugin_options: '{}',
            created: now,
            modified: now,
          })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id as number
    const tenant = await offering('CloudB.Tenant')
    const basic = await offering('Marketplace.Basic')
    await migrateToLatest()
    const rows = await db
      .selectFrom('offering_components')
      .select(['offering_id', 'type', 'name', 'measured_unit', 'billing_type', 'limit_period'])
      .orderBy('type')
      .execute()
    assert.deepEqual(rows, [
      {
        offering_id: tenant,
        type: 'cores',
        name: 'Cores',
        measured_unit: 'cores',
        billing_type: 'limit',
        limit_period: 'month',
      },
      {
        offering_id: tenant,
        type: 'ram',
        name: 'RAM',
        measured_unit: 'GB',
        billing_type: 'limit',
        limit_period: 'month',
      },
      {
        offering_id: tenant,
        type: 'storage',
        name: 'Storage',
        measured_unit: 'GB',
        billing_type: 'limit',
        limit_period: 'month',
      },
    ])
    assert.ok(!rows.some((r) => r.offering_id === basic))
  }))
