import type { Kysely } from 'kysely'
import { clearedWith, ownedBy } from './_columns.js'
import { createIndexes, dropTables, types, withId } from './_helpers.js'

// Site agents' event subscriptions (a user's, registered through one of its agent identities), the
// RabbitMQ queues made for them (one per offering and object type), and the relay's position in
// the event log: the last event it published to every queue that observes it, with the lease that
// lets one process at a time relay.

export async function up(db: Kysely<any>): Promise<void> {
  const t = types(db)
  const record = (name: string) =>
    withId(db, db.schema.createTable(name)).addColumn('uuid', t.uuid, (c) => c.notNull().unique())

  await record('event_subscriptions')
    .addColumn('user_id', 'integer', ownedBy('users'))
    .addColumn('identity_id', 'integer', clearedWith('site_agent_identities'))
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    // [{"object_type": ..., "offering_uuid": ...}]
    .addColumn('observable_objects', t.json, (c) => c.notNull().defaultTo('[]'))
    .addColumn('source_ip', 'varchar(45)')
    .addColumn('created', t.timestamp, (c) => c.notNull())
    .addColumn('modified', t.timestamp, (c) => c.notNull())
    .execute()
  await createIndexes(db, 'event_subscriptions', {
    event_subscriptions_user_idx: ['user_id'],
    event_subscriptions_identity_idx: ['identity_id'],
  })

  await record('event_subscription_queues')
    .addColumn('subscription_id', 'integer', ownedBy('event_subscriptions'))
    .addColumn('offering_id', 'integer', ownedBy('offerings'))
    .addColumn('object_type', 'varchar(40)', (c) => c.notNull())
    .addColumn('created', t.timestamp, (c) => c.notNull())
    .addUniqueConstraint('event_subscription_queues_key', ['subscription_id', 'offering_id', 'object_type'])
    .execute()
  await createIndexes(db, 'event_subscription_queues', {
    event_subscription_queues_route_idx: ['offering_id', 'object_type'],
  })

  await db.schema
    .createTable('event_relay_positions')
    .addColumn('name', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('position', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('holder', 'varchar(100)')
    .addColumn('lease_until', t.timestamp)
    .addColumn('modified', t.timestamp, (c) => c.notNull())
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await dropTables(db, ['event_relay_positions', 'event_subscription_queues', 'event_subscriptions'])
}
