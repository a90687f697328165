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
    /** What a grant's events tell besides the grant: its user's uuid, its role's name and its scope's owners. */
    async eventFacts(userId: number, roleId: number, scopeType: string, scopeId: number) {
      const user = await db.selectFrom('users').select('uuid').where('id', '=', userId).executeTakeFirst()
      const role = await db.selectFrom('roles').select('name').where('id', '=', roleId).executeTakeFirst()
      let customer: string | null = null
      let offering: string | null = null
      if (scopeType === 'customer') {
        customer =
          (await db.selectFrom('customers').select('uuid').where('id', '=', scopeId).executeTakeFirst())
            ?.uuid ?? null
      } else if (scopeType === 'project') {
        customer =
          (
            await db
              .selectFrom('projects')
              .innerJoin('customers', 'customers.id', 'projects.customer_id')
              .select('customers.uuid')
              .where('projects.id', '=', scopeId)
              .executeTakeFirst()
          )?.uuid ?? null
      } else if (scopeType === 'offering') {
        const o = await db
          .selectFrom('offerings')
          .innerJoin('customers', 'customers.id', 'offerings.customer_id')
          .select(['offerings.uuid as offering_uuid', 'customers.uuid as customer_uuid'])
          .where('offerings.id', '=', scopeId)
          .executeTakeFirst()
        customer = o?.customer_uuid ?? null
        offering = o?.offering_uuid ?? null
      }
      return { userUuid: user?.uuid ?? null, roleName: role?.name ?? null, customer, offering }
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
