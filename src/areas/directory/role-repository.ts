// SQL of roles and of the grants of roles to users on customers, projects and offerings.
import { sql, type ExpressionBuilder, type Insertable } from 'kysely'
import type { DB } from '../../db/tables.js'
import { countRows, scopedList } from '../../db/listing.js'
import { firstWhere, updateRow } from '../../db/rows.js'
import { grantUnexpired, icontains, iexact, isPostgres } from '../../db/sql.js'
import type { Db } from './repository.js'

/** The `name` filter of roles: the name, ignoring case. */
export function roleNamed(_eb: ExpressionBuilder<any, any>, name: string) {
  return iexact('roles.name', name)
}

export function rolesRepository(db: Db) {
  const all = () => db.selectFrom('roles').selectAll()
  return {
    /** Every role, for every caller. */
    ...scopedList(
      (_all: void) => db.selectFrom('roles'),
      (q) => q.selectAll(),
      'roles.id',
    ),
    findByUuid: (uuid: string) => firstWhere(all(), 'uuid', uuid),
    findByName: (name: string) => firstWhere(all(), 'name', name),
    findById: (id: number) => firstWhere(all(), 'id', id),
    update: (id: number, values: Record<string, unknown>) => updateRow(db, 'roles', id, values),
  }
}

export interface GrantFilters {
  roleId?: number
  user_uuid?: string
  user_username?: string
}

/** One user's role on one scope: the triple of which one grant at most is active. */
interface Triple {
  userId: number
  roleId: number
  scopeType: string
  scopeId: number
}

export function grantsRepository(db: Db) {
  /** The active grants (with their roles) on one customer, project or offering. */
  function activeOn(scopeType: string, scopeId: number) {
    return db
      .selectFrom('user_roles')
      .innerJoin('roles', 'roles.id', 'user_roles.role_id')
      .where('user_roles.scope_type', '=', scopeType)
      .where('user_roles.scope_id', '=', scopeId)
      .where('user_roles.is_active', '=', 1)
  }
  /** The active grants on one customer, project or offering that match the filters. */
  function filtered(scopeType: string, scopeId: number, f: GrantFilters) {
    let q = activeOn(scopeType, scopeId)
      .innerJoin('users', 'users.id', 'user_roles.user_id')
      .leftJoin('users as creator', 'creator.id', 'user_roles.created_by_id')
    if (f.roleId !== undefined) q = q.where('user_roles.role_id', '=', f.roleId)
    if (f.user_uuid) q = q.where('users.uuid', '=', f.user_uuid)
    if (f.user_username) q = q.where(icontains('users.username', f.user_username))
    return q
  }
  /** The active grants of a triple. */
  function active<Q extends { where: (...a: any[]) => any }>(q: Q, t: Triple): Q {
    return q
      .where('user_id', '=', t.userId)
      .where('role_id', '=', t.roleId)
      .where('scope_type', '=', t.scopeType)
      .where('scope_id', '=', t.scopeId)
      .where('is_active', '=', 1)
  }
  return {
    count: (scopeType: string, scopeId: number, f: GrantFilters) =>
      countRows(filtered(scopeType, scopeId, f)),
    list(scopeType: string, scopeId: number, f: GrantFilters, limit: number, offset: number) {
      return filtered(scopeType, scopeId, f)
        .select([
          'user_roles.uuid',
          'user_roles.expiration_time',
          'user_roles.created',
          'users.uuid as user_uuid',
          'users.username as user_username',
          'users.full_name as user_full_name',
          'users.email as user_email',
          'roles.name as role_name',
          'roles.uuid as role_uuid',
          'creator.full_name as created_by_full_name',
        ])
        .orderBy('user_roles.id')
        .limit(limit)
        .offset(offset)
        .execute()
    },
    findActive(t: Triple) {
      return active(db.selectFrom('user_roles').selectAll(), t).executeTakeFirst()
    },
    async insert(values: Omit<Insertable<DB['user_roles']>, 'is_active'>): Promise<boolean> {
      // The partial unique index over active rows decides between racing grants: the loser
      // inserts nothing (no error, so an enclosing transaction stays usable).
      const r = await db
        .insertInto('user_roles')
        .values({ ...values, is_active: 1 })
        .onConflict((oc) =>
          oc
            .columns(['user_id', 'role_id', 'scope_type', 'scope_id'])
            // The index's own predicate, as each dialect stores the flag.
            .where(sql.ref('is_active'), '=', sql.lit(isPostgres(db) ? true : 1))
            .doNothing(),
        )
        .returning('id')
        .executeTakeFirst()
      return r !== undefined
    },
    /** Ends every active grant of the triple; the uuids of those ended. */
    async deactivateAll(t: Triple): Promise<string[]> {
      const rows = await active(db.updateTable('user_roles').set({ is_active: 0 }), t)
        .returning('user_roles.uuid')
        .execute()
      return rows.map((r) => r.uuid)
    },
    /**
     * What the events of these grants tell, one row each in one query: the grant, its user's uuid,
     * its role's name, its scope's uuid, and the project, offering and organization the scope is
     * or belongs to.
     */
    eventFacts(uuids: readonly string[]) {
      if (!uuids.length) return Promise.resolve([])
      const scoped = (type: string, table: string) => (j: any) =>
        j.onRef(`${table}.id`, '=', 'user_roles.scope_id').on('user_roles.scope_type', '=', type)
      return db
        .selectFrom('user_roles')
        .innerJoin('users', 'users.id', 'user_roles.user_id')
        .innerJoin('roles', 'roles.id', 'user_roles.role_id')
        .leftJoin('customers as sc', scoped('customer', 'sc'))
        .leftJoin('projects as sp', scoped('project', 'sp'))
        .leftJoin('customers as pc', 'pc.id', 'sp.customer_id')
        .leftJoin('offerings as so', scoped('offering', 'so'))
        .leftJoin('customers as oc', 'oc.id', 'so.customer_id')
        .select((eb) => [
          'user_roles.uuid',
          'user_roles.scope_type',
          'user_roles.expiration_time',
          'users.uuid as user_uuid',
          'roles.name as role_name',
          eb.fn.coalesce('sc.uuid', 'sp.uuid', 'so.uuid').as('scope_uuid'),
          'sp.uuid as project_uuid',
          'so.uuid as offering_uuid',
          eb.fn.coalesce('sc.uuid', 'pc.uuid', 'oc.uuid').as('customer_uuid'),
        ])
        .where('user_roles.uuid', 'in', [...uuids])
        .orderBy('user_roles.id')
        .execute()
    },
    /**
     * Ends every active grant whose expiration time is `now` or earlier; the grants ended (their
     * uuid, user and scope).
     */
    expireDue(now: string) {
      return db
        .updateTable('user_roles')
        .set({ is_active: 0 })
        .where('is_active', '=', 1)
        .where('expiration_time', 'is not', null)
        .where('expiration_time', '<=', now)
        .returning(['uuid', 'user_id', 'scope_type', 'scope_id'])
        .execute()
    },
    /** The earliest expiration time after `now` of an active grant (null: none will expire). */
    async nextExpiration(now: string): Promise<string | null> {
      const r = await db
        .selectFrom('user_roles')
        .select((eb) => eb.fn.min('expiration_time').as('next'))
        .where('is_active', '=', 1)
        .where('expiration_time', '>', now)
        .executeTakeFirst()
      return r?.next ?? null
    },
    /** Is a run of the expiry job queued, due at `by` or earlier? */
    async expiryQueuedBy(by: string): Promise<boolean> {
      const r = await db
        .selectFrom('jobs')
        .select('id')
        .where('kind', '=', 'directory.expire-grants')
        .where('state', '=', 'queued')
        .where('run_at', '<=', by)
        .limit(1)
        .execute()
      return r.length > 0
    },
    /** Users holding any of these roles on a scope (e.g. the owners of a customer). */
    async userIdsWithRole(
      scopeType: string,
      scopeId: number,
      roleNames: string[],
      now: string,
    ): Promise<number[]> {
      const rows = await activeOn(scopeType, scopeId)
        .select('user_roles.user_id')
        .where('roles.name', 'in', roleNames)
        .where((eb) => grantUnexpired(eb, now))
        .execute()
      return [...new Set(rows.map((r) => r.user_id))]
    },
  }
}
