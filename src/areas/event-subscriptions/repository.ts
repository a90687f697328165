// All SQL of event subscriptions, their queues, and the relay's position and lease.
import { sql, type Kysely, type Transaction } from 'kysely'
import type { DB } from '../../db/tables.js'
import { tableRecords } from '../../db/rows.js'
import { joined } from '../../db/joins.js'
import { scopedList } from '../../db/listing.js'
import { grantUnexpired } from '../../db/sql.js'

export type Db = Kysely<DB> | Transaction<DB>

/** Which subscriptions a caller reaches: every one (staff and support) or its own. */
export type SubscriptionScope = { all: true } | { all: false; userId: number }

export function subscriptionsRepository(db: Db) {
  const base = () => joined(db, 'event_subscriptions', [['inner', 'users', 'event_subscriptions.user_id']])
  const visible = (scope: SubscriptionScope) =>
    scope.all ? base() : base().where('event_subscriptions.user_id', '=', scope.userId)
  const select = (q: ReturnType<typeof base>) =>
    q.select([
      'event_subscriptions.id',
      'event_subscriptions.uuid',
      'event_subscriptions.user_id',
      'event_subscriptions.identity_id',
      'event_subscriptions.description',
      'event_subscriptions.observable_objects',
      'event_subscriptions.source_ip',
      'event_subscriptions.created',
      'event_subscriptions.modified',
      'users.uuid as user_uuid',
      'users.username as user_username',
      'users.full_name as user_full_name',
    ])
  return {
    ...tableRecords(db, { table: 'event_subscriptions', base, visible, select }),
    /** The subscription an identity registered for this user and object type, if any. */
    async registered(userId: number, identityId: number, objectType: string) {
      const rows = await select(base())
        .where('event_subscriptions.user_id', '=', userId)
        .where('event_subscriptions.identity_id', '=', identityId)
        .orderBy('event_subscriptions.id')
        .execute()
      return rows.find((r) => observedTypes(r.observable_objects).includes(objectType))
    },
  }
}

export type SubscriptionRow = NonNullable<
  Awaited<ReturnType<ReturnType<typeof subscriptionsRepository>['findById']>>
>

/** The object types a subscription's `observable_objects` (JSON) names. */
export function observedTypes(value: unknown): string[] {
  const list = typeof value === 'string' ? (JSON.parse(value) as unknown) : value
  if (!Array.isArray(list)) return []
  return list
    .map((o) => (o && typeof o === 'object' ? (o as { object_type?: unknown }).object_type : undefined))
    .filter((t): t is string => typeof t === 'string')
}

export function queuesRepository(db: Db) {
  const base = () =>
    joined(db, 'event_subscription_queues', [
      ['inner', 'event_subscriptions', 'event_subscription_queues.subscription_id'],
      ['inner', 'users', 'event_subscriptions.user_id'],
      ['inner', 'offerings', 'event_subscription_queues.offering_id'],
    ])
  const select = (q: ReturnType<typeof base>) =>
    q.select([
      'event_subscription_queues.id',
      'event_subscription_queues.uuid',
      'event_subscription_queues.object_type',
      'event_subscription_queues.created',
      'event_subscriptions.id as subscription_id',
      'event_subscriptions.uuid as subscription_uuid',
      'event_subscriptions.user_id',
      'users.uuid as user_uuid',
      'offerings.id as offering_id',
      'offerings.uuid as offering_uuid',
      'offerings.customer_id as offering_customer_id',
    ])
  const visible = (scope: SubscriptionScope) =>
    scope.all ? base() : base().where('event_subscriptions.user_id', '=', scope.userId)
  return {
    /** The list and count of the queues of the subscriptions a caller sees. */
    scoped: () => scopedList(visible, select, 'event_subscription_queues.id'),
    visibleByUuid(scope: SubscriptionScope, uuid: string) {
      return select(visible(scope)).where('event_subscription_queues.uuid', '=', uuid).executeTakeFirst()
    },
    byKey(subscriptionId: number, offeringId: number, objectType: string) {
      return select(base())
        .where('event_subscription_queues.subscription_id', '=', subscriptionId)
        .where('event_subscription_queues.offering_id', '=', offeringId)
        .where('event_subscription_queues.object_type', '=', objectType)
        .executeTakeFirst()
    },
    byId(id: number) {
      return select(base()).where('event_subscription_queues.id', '=', id).executeTakeFirstOrThrow()
    },
    ofSubscription(subscriptionId: number) {
      return select(base())
        .where('event_subscription_queues.subscription_id', '=', subscriptionId)
        .orderBy('event_subscription_queues.id')
        .execute()
    },
    /** The queues observing these offerings (by uuid), oldest first. */
    observing(offeringUuids: readonly string[]) {
      if (!offeringUuids.length) return Promise.resolve([])
      return select(base())
        .where('offerings.uuid', 'in', [...offeringUuids])
        .orderBy('event_subscription_queues.id')
        .execute()
    },
    insert(values: {
      uuid: string
      subscription_id: number
      offering_id: number
      object_type: string
      created: string
    }) {
      return db.insertInto('event_subscription_queues').values(values).execute()
    },
  }
}

export type QueueRow = Awaited<ReturnType<ReturnType<typeof queuesRepository>['byId']>>

/** The offering a queue is asked for, by uuid. */
export function offeringByUuid(db: Db, uuid: string) {
  return db
    .selectFrom('offerings')
    .select(['id', 'uuid', 'customer_id'])
    .where('uuid', '=', uuid)
    .executeTakeFirst()
}

/** The relay's stored position and its lease (one row per relay name). */
export function relayPositions(db: Db, name: string) {
  return {
    /** Makes sure the row exists (position 0: every event the log still keeps). */
    async ensure(now: string): Promise<void> {
      await db
        .insertInto('event_relay_positions')
        .values({ name, position: 0, holder: null, lease_until: null, modified: now })
        .onConflict((oc) => oc.column('name').doNothing())
        .execute()
    },
    /** Takes or renews the lease for `holder` until `until`; true when it holds it. */
    async lease(holder: string, now: string, until: string): Promise<boolean> {
      const r = await db
        .updateTable('event_relay_positions')
        .set({ holder, lease_until: until, modified: now })
        .where('name', '=', name)
        .where((eb) =>
          eb.or([eb('holder', '=', holder), eb('holder', 'is', null), eb('lease_until', '<', now)]),
        )
        .executeTakeFirst()
      return Number(r.numUpdatedRows) === 1
    },
    async release(holder: string, now: string): Promise<void> {
      await db
        .updateTable('event_relay_positions')
        .set({ holder: null, lease_until: null, modified: now })
        .where('name', '=', name)
        .where('holder', '=', holder)
        .execute()
    },
    async position(): Promise<number> {
      const r = await db
        .selectFrom('event_relay_positions')
        .select('position')
        .where('name', '=', name)
        .executeTakeFirst()
      return Number(r?.position ?? 0)
    },
    /** Moves the position forward, only while `holder` holds the lease; true when it moved. */
    async advance(holder: string, position: number, now: string): Promise<boolean> {
      const r = await db
        .updateTable('event_relay_positions')
        .set({ position, modified: now })
        .where('name', '=', name)
        .where('holder', '=', holder)
        .where('position', '<', position)
        .executeTakeFirst()
      return Number(r.numUpdatedRows) === 1
    },
  }
}

/**
 * In one query: the usernames of these users, and the name of each of these projects with the
 * offerings of its resources that are not Terminated (a row per resource; none: one row, offering
 * null). Users and projects are found by uuid; those missing are left out.
 */
export async function grantFactsRows(
  db: Db,
  userUuids: readonly string[],
  projectUuids: readonly string[],
): Promise<{ kind: 'user' | 'project'; uuid: string; name: string; offering_uuid: string | null }[]> {
  const users = () =>
    db
      .selectFrom('users')
      .select([
        sql<'user' | 'project'>`'user'`.as('kind'),
        'users.uuid as uuid',
        'users.username as name',
        sql<string | null>`null`.as('offering_uuid'),
      ])
      .where('users.uuid', 'in', [...userUuids])
  const projects = () =>
    db
      .selectFrom('projects')
      .leftJoin('resources', (j) =>
        j.onRef('resources.project_id', '=', 'projects.id').on('resources.state', '<>', 'Terminated'),
      )
      .leftJoin('offerings', 'offerings.id', 'resources.offering_id')
      .select([
        sql<'user' | 'project'>`'project'`.as('kind'),
        'projects.uuid as uuid',
        'projects.name as name',
        'offerings.uuid as offering_uuid',
      ])
      .where('projects.uuid', 'in', [...projectUuids])
  if (!projectUuids.length) return userUuids.length ? users().execute() : []
  if (!userUuids.length) return projects().execute()
  return users().unionAll(projects()).execute()
}

/**
 * In one query: the backend ids of the resources (not Terminated, with a backend id) of these
 * accounts' offerings in the projects where their users hold a role now, a row per user, offering
 * and resource (pairs besides those asked may come too). None asked: no query.
 */
export async function accountResourceRows(
  db: Db,
  accounts: readonly { user: string; offering: string }[],
  now: string,
): Promise<{ user_uuid: string; offering_uuid: string; backend_id: string }[]> {
  if (!accounts.length) return []
  return db
    .selectFrom('resources')
    .innerJoin('offerings', 'offerings.id', 'resources.offering_id')
    .innerJoin('user_roles', (j) =>
      j
        .onRef('user_roles.scope_id', '=', 'resources.project_id')
        .on('user_roles.scope_type', '=', 'project')
        .on('user_roles.is_active', '=', 1),
    )
    .innerJoin('users', 'users.id', 'user_roles.user_id')
    .select(['users.uuid as user_uuid', 'offerings.uuid as offering_uuid', 'resources.backend_id'])
    .distinct()
    .where('users.uuid', 'in', [...new Set(accounts.map((a) => a.user))])
    .where('offerings.uuid', 'in', [...new Set(accounts.map((a) => a.offering))])
    .where('resources.state', '<>', 'Terminated')
    .where('resources.backend_id', '<>', '')
    .where((eb) => grantUnexpired(eb, now))
    .execute()
}
