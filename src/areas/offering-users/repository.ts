// All SQL of offering users: the records a caller sees, the rows the provisioning reads and writes
// (the eligible offerings of a project, its members, the accounts of a user), and the offerings'
// user attribute configs.
import { sql, type ExpressionBuilder, type Kysely, type Transaction } from 'kysely'
import type { DB } from '../../db/tables.js'
import { tableRecords, updateRow } from '../../db/rows.js'
import { joined, unlessAll } from '../../db/joins.js'
import { PROVIDER_OF_OFFERING } from '../../db/relations.js'
import { grantUnexpired, iexact, inAnyOf, isPostgres } from '../../db/sql.js'
import { reusable, slot } from '../../db/compiled.js'

export type Db = Kysely<DB> | Transaction<DB>

/**
 * Who sees which offering users: staff and support all; others their own accounts, and the
 * accounts on offerings of organizations where they hold a customer role, or on offerings they
 * manage.
 */
export type OfferingUserVisibility =
  { all: true } | { all: false; userId: number; customerIds: number[]; offeringIds: number[] }

/** `user_username`: the user's username, ignoring case. */
export const usernameIs = (_eb: ExpressionBuilder<any, any>, v: string) => iexact('users.username', v)

/** `offering_has_active_tos`: the offering has terms of service (or has none). */
export const hasTermsOfService = (eb: ExpressionBuilder<any, any>, v: boolean) =>
  v ? eb('offerings.terms_of_service', '<>', '') : eb('offerings.terms_of_service', '=', '')

/** What an offering user's events tell of it: its state and username, its user, offering and provider. */
export interface OfferingUserTold {
  id: number
  uuid: string
  state: string
  username: string | null
  user_uuid: string
  offering_uuid: string
  /** The offering's organization (the provider). */
  customer_uuid: string
}

/** An offering user row's told values, selected from (or returned by a write of) `offering_users`. */
function told(eb: ExpressionBuilder<DB, 'offering_users'>) {
  const ofOffering = () =>
    eb.selectFrom('offerings').whereRef('offerings.id', '=', 'offering_users.offering_id')
  return [
    'offering_users.id',
    'offering_users.uuid',
    'offering_users.state',
    'offering_users.username',
    eb
      .selectFrom('users')
      .select('users.uuid')
      .whereRef('users.id', '=', 'offering_users.user_id')
      .$asScalar()
      .$notNull()
      .as('user_uuid'),
    ofOffering().select('offerings.uuid').$asScalar().$notNull().as('offering_uuid'),
    ofOffering()
      .innerJoin('customers', 'customers.id', 'offerings.customer_id')
      .select('customers.uuid')
      .$asScalar()
      .$notNull()
      .as('customer_uuid'),
  ] as const
}

export function offeringUsersRepository(db: Db) {
  const base = () =>
    joined(db, 'offering_users', [
      ['inner', 'offerings', 'offering_users.offering_id'],
      PROVIDER_OF_OFFERING,
      ['inner', 'users', 'offering_users.user_id'],
      ['left', 'offerings as parent', 'offerings.parent_id'],
      ['left', 'offering_user_attribute_configs as config', 'offering_users.offering_id', 'offering_id'],
    ])
  const visible = unlessAll(base, (q, vis: Extract<OfferingUserVisibility, { all: false }>) =>
    q.where((eb) =>
      eb.or([
        eb('offering_users.user_id', '=', vis.userId),
        inAnyOf(eb, [
          ['offerings.customer_id', vis.customerIds],
          ['offerings.id', vis.offeringIds],
        ]),
      ]),
    ),
  )
  const columns = [
    'offering_users.id',
    'offering_users.uuid',
    'offering_users.offering_id',
    'offering_users.user_id',
    'offering_users.username',
    'offering_users.state',
    'offering_users.runtime_state',
    'offering_users.is_restricted',
    'offering_users.service_provider_comment',
    'offering_users.service_provider_comment_url',
    'offering_users.created',
    'offering_users.modified',
    'offerings.uuid as offering_uuid',
    'offerings.name as offering_name',
    'offerings.customer_id as offering_customer_id',
    'offerings.terms_of_service as offering_terms_of_service',
    'provider.uuid as customer_uuid',
    'provider.name as customer_name',
    'users.uuid as user_uuid',
    'users.username as user_username',
    'users.full_name as user_full_name',
    'users.email as user_email',
    'users.civil_number as user_civil_number',
    'users.affiliations as user_affiliations',
    'users.identity_source as user_identity_source',
    'config.exposed as config_exposed',
  ] as const
  return {
    ...tableRecords(db, {
      table: 'offering_users',
      base,
      visible,
      // The accounts without a username sort as the empty one on both databases.
      select: (q) =>
        q.select(columns).select(sql<string>`coalesce(offering_users.username, '')`.as('username_key')),
    }),
    findByOfferingAndUser(offeringId: number, userId: number) {
      return db
        .selectFrom('offering_users')
        .select(['id', 'uuid', 'username', 'state'])
        .where('offering_id', '=', offeringId)
        .where('user_id', '=', userId)
        .executeTakeFirst()
    },
    /** Inserts the account unless the pair has one already; its told values, if it was inserted. */
    insertTold(values: {
      uuid: string
      offering_id: number
      user_id: number
      username: string | null
      state: string
      created: string
      modified: string
    }): Promise<OfferingUserTold | undefined> {
      return db
        .insertInto('offering_users')
        .values(values)
        .onConflict((oc) => oc.columns(['offering_id', 'user_id']).doNothing())
        .returning((eb) => told(eb))
        .executeTakeFirst()
    },
    /**
     * Writes `set` when the account is in one of the `from` states: a conditional UPDATE, so of
     * two racing changes exactly one wins. Its state and username before and its told values
     * after, or undefined when the state did not allow it. PostgreSQL does it in one statement
     * (the row locked and read as it was in the FROM subquery); SQLite, one writer at a time,
     * reads the row first.
     */
    async moveTold(
      id: number,
      from: readonly string[],
      set: Record<string, unknown>,
    ): Promise<{ before: { state: string; username: string | null }; after: OfferingUserTold } | undefined> {
      if (isPostgres(db)) {
        const old = db
          .selectFrom('offering_users')
          .select(['id', 'state', 'username'])
          .where('id', '=', id)
          .forUpdate()
        const r = await db
          .updateTable('offering_users')
          .set(set)
          .from(old.as('old'))
          .whereRef('offering_users.id', '=', 'old.id')
          .where('offering_users.state', 'in', [...from])
          .returning((eb) => [...told(eb), 'old.state as state_before', 'old.username as username_before'])
          .executeTakeFirst()
        return r && { before: { state: r.state_before, username: r.username_before }, after: r }
      }
      const was = await db
        .selectFrom('offering_users')
        .select(['state', 'username'])
        .where('id', '=', id)
        .executeTakeFirst()
      if (!was || !from.includes(was.state)) return undefined
      const after = await db
        .updateTable('offering_users')
        .set(set)
        .where('id', '=', id)
        .returning((eb) => told(eb))
        .executeTakeFirst()
      return after && { before: was, after }
    },
    /** Deletes the account; its told values as they were, or undefined when it was gone. */
    deleteTold(id: number): Promise<OfferingUserTold | undefined> {
      return db
        .deleteFrom('offering_users')
        .where('id', '=', id)
        .returning((eb) => told(eb))
        .executeTakeFirst()
    },
    /** Writes columns that are neither the state nor the username (those go through `moveTold`). */
    write(id: number, set: Record<string, unknown>) {
      if ('state' in set || 'username' in set)
        throw new Error("an offering user's state and username are written by moveTold")
      return updateRow(db, 'offering_users', id, set)
    },
    /** The usernames already given on an offering that start with `prefix` (ignoring case). */
    async usernamesStartingWith(offeringId: number, prefix: string): Promise<string[]> {
      const rows = await db
        .selectFrom('offering_users')
        .select('username')
        .where('offering_id', '=', offeringId)
        .where(
          sql<boolean>`lower(username) like ${`${prefix.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`} escape '\\'`,
        )
        .execute()
      return rows.map((r) => r.username ?? '')
    },
    /** The accounts of these users on an offering: username and state by user id. */
    async ofUsers(offeringId: number, userIds: readonly number[]) {
      if (!userIds.length) return []
      return db
        .selectFrom('offering_users')
        .select(['user_id', 'uuid', 'username', 'state'])
        .where('offering_id', '=', offeringId)
        .where('user_id', 'in', [...userIds])
        .execute()
    },
    /** The users whose account on an offering has one of these usernames. */
    async usersWithUsernames(offeringId: number, usernames: readonly string[]) {
      if (!usernames.length) return []
      return db
        .selectFrom('offering_users')
        .select(['user_id', 'username'])
        .where('offering_id', '=', offeringId)
        .where('username', 'in', [...usernames])
        .execute()
    },
  }
}

export type OfferingUserRow = NonNullable<
  Awaited<ReturnType<ReturnType<typeof offeringUsersRepository>['findById']>>
>

/**
 * The offerings of a project's resources that keep user accounts (`eligibleOfferings`), compiled
 * once per number of types: it runs on every Create order's approval, and building the query with
 * its sub-select anew cost more than running it.
 */
const eligibleOfferingsOf = reusable((db: Db, types: number) =>
  db
    .selectFrom('resources')
    .innerJoin('offerings', 'offerings.id', 'resources.offering_id')
    .select(['offerings.id', 'offerings.uuid', 'offerings.customer_id', 'offerings.plugin_options'])
    .distinct()
    .where('resources.project_id', '=', slot<number>(0))
    .where(
      'offerings.type',
      'in',
      Array.from({ length: types }, (_, i) => slot<string>(i + 1)),
    )
    .where((eb) =>
      eb.or([
        eb('resources.state', '=', 'OK'),
        eb.and([
          eb('resources.state', '=', 'Creating'),
          eb.exists(
            eb
              .selectFrom('orders')
              .select('orders.id')
              .whereRef('orders.resource_id', '=', 'resources.id')
              .where('orders.type', '=', 'Create')
              .where('orders.state', 'in', ['pending-provider', 'executing']),
          ),
        ]),
      ]),
    ),
)

/** The offerings and users the provisioning reads. */
export function provisioningRepository(db: Db) {
  return {
    /**
     * The offerings of a project's resources that keep user accounts: of the given types, with a
     * resource in OK, or still Creating under a Create order the provider is looking at or executing.
     */
    async eligibleOfferings(projectId: number, types: readonly string[]) {
      return (await eligibleOfferingsOf(db, [types.length], [projectId, ...types])).rows
    },
    /** The offering, if it is of one of the given types (the account-keeping offering of a new resource). */
    /** The users holding a role on the project now. */
    async projectMembers(projectId: number, now: string) {
      return db
        .selectFrom('user_roles')
        .innerJoin('users', 'users.id', 'user_roles.user_id')
        .select(['users.id', 'users.username', 'users.full_name'])
        .distinct()
        .where('user_roles.scope_type', '=', 'project')
        .where('user_roles.scope_id', '=', projectId)
        .where('user_roles.is_active', '=', 1)
        .where((eb) => grantUnexpired(eb, now))
        .execute()
    },
    offeringByUuid(uuid: string) {
      return db
        .selectFrom('offerings')
        .select(['id', 'uuid', 'name', 'customer_id', 'plugin_options', 'created', 'modified'])
        .where('uuid', '=', uuid)
        .executeTakeFirst()
    },
    userByUuid(uuid: string) {
      return db
        .selectFrom('users')
        .select(['id', 'username', 'full_name'])
        .where('uuid', '=', uuid)
        .executeTakeFirst()
    },
    userById(id: number) {
      return db
        .selectFrom('users')
        .select(['id', 'username', 'full_name'])
        .where('id', '=', id)
        .executeTakeFirst()
    },
    /**
     * A user's accounts in the given states, on offerings whose options ask for accounts to go
     * when access goes, with whether a resource of the offering (not Terminated) is still in a
     * project the user reaches: a project role, or a customer role on the project's organization.
     */
    async accountsOf(userId: number, states: readonly string[], now: string) {
      const rows = await db
        .selectFrom('offering_users')
        .innerJoin('offerings', 'offerings.id', 'offering_users.offering_id')
        .select((eb) => [
          'offering_users.id',
          'offering_users.username',
          'offering_users.state',
          'offerings.plugin_options',
          eb
            .exists(
              eb
                .selectFrom('resources')
                .innerJoin('projects', 'projects.id', 'resources.project_id')
                .select('resources.id')
                .whereRef('resources.offering_id', '=', 'offering_users.offering_id')
                .where('resources.state', '<>', 'Terminated')
                .where((w) =>
                  w.exists(
                    w
                      .selectFrom('user_roles')
                      .select('user_roles.id')
                      .where('user_roles.user_id', '=', userId)
                      .where('user_roles.is_active', '=', 1)
                      .where((g) => grantUnexpired(g, now))
                      .where((g) =>
                        g.or([
                          g.and([
                            g('user_roles.scope_type', '=', 'project'),
                            g('user_roles.scope_id', '=', g.ref('projects.id')),
                          ]),
                          g.and([
                            g('user_roles.scope_type', '=', 'customer'),
                            g('user_roles.scope_id', '=', g.ref('projects.customer_id')),
                          ]),
                        ]),
                      ),
                  ),
                ),
            )
            .as('has_access'),
        ])
        .where('offering_users.user_id', '=', userId)
        .where('offering_users.state', 'in', [...states])
        .execute()
      return rows
    },
  }
}

/** The offerings' user attribute configs. */
export function attributeConfigsRepository(db: Db) {
  return {
    findByOffering(offeringId: number) {
      return db
        .selectFrom('offering_user_attribute_configs')
        .selectAll()
        .where('offering_id', '=', offeringId)
        .executeTakeFirst()
    },
    async upsert(offeringId: number, exposed: string, uuid: string, now: string): Promise<void> {
      await db
        .insertInto('offering_user_attribute_configs')
        .values({ uuid, offering_id: offeringId, exposed, created: now, modified: now })
        .onConflict((oc) => oc.column('offering_id').doUpdateSet({ exposed, modified: now }))
        .execute()
    },
    async delete(offeringId: number): Promise<void> {
      await db.deleteFrom('offering_user_attribute_configs').where('offering_id', '=', offeringId).execute()
    },
  }
}
