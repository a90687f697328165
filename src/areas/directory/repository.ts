// All SQL of the directory area.
import { sql, type Kysely, type SelectQueryBuilder, type Transaction } from 'kysely'
import type { DB } from '../../db/tables.js'
import { icontains, iexact, isPostgres } from '../../db/sql.js'
import { reusable, reusableByForm, slot, slottedLists } from '../../db/compiled.js'
import type { OrderTerm } from '../../http/query.js'

type Db = Kysely<DB> | Transaction<DB>

/** What a caller may see: everything, or rows tied to these ids. */
export type Visibility =
  { all: true } | { all: false; userId: number; customerIds: number[]; projectIds: number[] }

const customerById = reusable((db: Db) => db.selectFrom('customers').selectAll().where('id', '=', slot(0)))
const projectByUuid = reusableByForm()

function applyOrder<QB extends SelectQueryBuilder<any, any, any>>(
  qb: QB,
  order: OrderTerm[],
  tiebreak: string,
): QB {
  let q = qb
  for (const t of order) q = q.orderBy(t.column as any, t.desc ? 'desc' : 'asc') as QB
  return q.orderBy(tiebreak as any, 'asc') as QB
}

// ---- users ----

export interface UserFilters {
  username?: string
  email?: string
  full_name?: string
  is_active?: boolean
  is_staff?: boolean
  is_support?: boolean
  uuid?: string
  query?: string
}

export function usersRepository(db: Db) {
  function filtered(vis: Visibility, f: UserFilters) {
    let q = db.selectFrom('users')
    if (!vis.all) q = q.where('users.id', '=', vis.userId)
    if (f.username) q = q.where(icontains('users.username', f.username))
    if (f.email) q = q.where(icontains('users.email', f.email))
    if (f.full_name) q = q.where(icontains('users.full_name', f.full_name))
    if (f.is_active !== undefined) q = q.where('users.is_active', '=', f.is_active ? 1 : 0)
    if (f.is_staff !== undefined) q = q.where('users.is_staff', '=', f.is_staff ? 1 : 0)
    if (f.is_support !== undefined) q = q.where('users.is_support', '=', f.is_support ? 1 : 0)
    if (f.uuid) q = q.where('users.uuid', '=', f.uuid)
    if (f.query) {
      const v = f.query
      q = q.where((eb) =>
        eb.or([icontains('users.username', v), icontains('users.full_name', v), icontains('users.email', v)]),
      )
    }
    return q
  }
  return {
    async count(vis: Visibility, f: UserFilters): Promise<number> {
      const r = await filtered(vis, f)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
      return Number(r.n)
    },
    list(vis: Visibility, f: UserFilters, order: OrderTerm[], limit: number, offset: number) {
      return applyOrder(filtered(vis, f).selectAll('users'), order, 'users.id')
        .limit(limit)
        .offset(offset)
        .execute()
    },
    findByUuid(uuid: string) {
      return db.selectFrom('users').selectAll().where('uuid', '=', uuid).executeTakeFirst()
    },
    findById(id: number) {
      return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst()
    },
    findByUsername(username: string) {
      return db.selectFrom('users').selectAll().where('username', '=', username).executeTakeFirst()
    },
    async insert(values: Record<string, unknown>): Promise<number> {
      const r = await db
        .insertInto('users')
        .values(values as any)
        .returning('id')
        .executeTakeFirstOrThrow()
      return r.id
    },
    async update(id: number, values: Record<string, unknown>): Promise<void> {
      await db
        .updateTable('users')
        .set(values as any)
        .where('id', '=', id)
        .execute()
    },
    async delete(id: number): Promise<void> {
      await db.deleteFrom('users').where('id', '=', id).execute()
    },
    async insertToken(userId: number, keyHash: string, created: string): Promise<void> {
      await db.insertInto('tokens').values({ user_id: userId, key_hash: keyHash, created }).execute()
    },
    async hasToken(keyHash: string): Promise<boolean> {
      return !!(await db.selectFrom('tokens').select('id').where('key_hash', '=', keyHash).executeTakeFirst())
    },
  }
}

// ---- organization groups ----

export function organizationGroupsRepository(db: Db) {
  function base() {
    return db
      .selectFrom('organization_groups')
      .leftJoin('organization_groups as parent', 'parent.id', 'organization_groups.parent_id')
  }
  function filtered(f: { name?: string; parent_uuid?: string }) {
    let q = base()
    if (f.name) q = q.where(icontains('organization_groups.name', f.name))
    if (f.parent_uuid) q = q.where('parent.uuid', '=', f.parent_uuid)
    return q
  }
  const columns = [
    'organization_groups.id',
    'organization_groups.uuid',
    'organization_groups.name',
    'organization_groups.created',
    'parent.uuid as parent_uuid',
    'parent.name as parent_name',
  ] as const
  return {
    async count(f: { name?: string; parent_uuid?: string }): Promise<number> {
      const r = await filtered(f)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
      return Number(r.n)
    },
    list(f: { name?: string; parent_uuid?: string }, order: OrderTerm[], limit: number, offset: number) {
      return applyOrder(
        filtered(f)
          .select(columns)
          .select((eb) =>
            eb
              .selectFrom('customer_organization_groups')
              .whereRef('customer_organization_groups.organization_group_id', '=', 'organization_groups.id')
              .select((e) => e.fn.countAll<number>().as('c'))
              .as('customers_count'),
          ),
        order,
        'organization_groups.id',
      )
        .limit(limit)
        .offset(offset)
        .execute()
    },
    findByUuid(uuid: string) {
      return base()
        .select(columns)
        .select((eb) =>
          eb
            .selectFrom('customer_organization_groups')
            .whereRef('customer_organization_groups.organization_group_id', '=', 'organization_groups.id')
            .select((e) => e.fn.countAll<number>().as('c'))
            .as('customers_count'),
        )
        .where('organization_groups.uuid', '=', uuid)
        .executeTakeFirst()
    },
    async insert(values: {
      uuid: string
      name: string
      parent_id: number | null
      created: string
      modified: string
    }) {
      const r = await db
        .insertInto('organization_groups')
        .values(values)
        .returning('id')
        .executeTakeFirstOrThrow()
      return r.id
    },
    async update(id: number, values: Record<string, unknown>) {
      await db
        .updateTable('organization_groups')
        .set(values as any)
        .where('id', '=', id)
        .execute()
    },
    async delete(id: number) {
      await db.deleteFrom('organization_groups').where('id', '=', id).execute()
    },
    /** The ancestors of a group (to refuse cycles). */
    async ancestorIds(id: number): Promise<number[]> {
      const out: number[] = []
      let current: number | null = id
      while (current !== null && out.length < 100) {
        const row: { parent_id: number | null } | undefined = await db
          .selectFrom('organization_groups')
          .select('parent_id')
          .where('id', '=', current)
          .executeTakeFirst()
        current = row?.parent_id ?? null
        if (current !== null) out.push(current)
      }
      return out
    },
  }
}

// ---- customers ----

export interface CustomerFilters {
  name?: string
  name_exact?: string
  abbreviation?: string
  native_name?: string
  slug?: string
  uuid?: string
  query?: string
  organization_group_uuid?: string
}

export function customersRepository(db: Db) {
  function filtered(vis: Visibility, f: CustomerFilters) {
    let q = db.selectFrom('customers')
    if (!vis.all) {
      const ids = vis.customerIds
      const pids = vis.projectIds
      q = q.where((eb) =>
        eb.or([
          eb('customers.id', 'in', ids.length ? ids : [-1]),
          eb(
            'customers.id',
            'in',
            eb
              .selectFrom('projects')
              .select('projects.customer_id')
              .where('projects.id', 'in', pids.length ? pids : [-1]),
          ),
        ]),
      )
    }
    if (f.name) q = q.where(icontains('customers.name', f.name))
    if (f.name_exact) q = q.where('customers.name', '=', f.name_exact)
    if (f.abbreviation) q = q.where(icontains('customers.abbreviation', f.abbreviation))
    if (f.native_name) q = q.where(icontains('customers.native_name', f.native_name))
    if (f.slug) q = q.where('customers.slug', '=', f.slug)
    if (f.uuid) q = q.where('customers.uuid', '=', f.uuid)
    if (f.query) {
      const v = f.query
      q = q.where((eb) =>
        eb.or([
          icontains('customers.name', v),
          icontains('customers.abbreviation', v),
          icontains('customers.native_name', v),
        ]),
      )
    }
    if (f.organization_group_uuid) {
      const g = f.organization_group_uuid
      q = q.where((eb) =>
        eb(
          'customers.id',
          'in',
          eb
            .selectFrom('customer_organization_groups')
            .innerJoin(
              'organization_groups',
              'organization_groups.id',
              'customer_organization_groups.organization_group_id',
            )
            .select('customer_organization_groups.customer_id')
            .where('organization_groups.uuid', '=', g),
        ),
      )
    }
    return q
  }
  function withCounts<QB extends SelectQueryBuilder<DB, 'customers', any>>(q: QB) {
    return q.selectAll('customers').select((eb) =>
      eb
        .selectFrom('projects')
        .whereRef('projects.customer_id', '=', 'customers.id')
        .select((e) => e.fn.countAll<number>().as('c'))
        .as('projects_count'),
    )
  }
  return {
    async count(vis: Visibility, f: CustomerFilters): Promise<number> {
      const r = await filtered(vis, f)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
      return Number(r.n)
    },
    list(vis: Visibility, f: CustomerFilters, order: OrderTerm[], limit: number, offset: number) {
      return applyOrder(withCounts(filtered(vis, f)), order, 'customers.id')
        .limit(limit)
        .offset(offset)
        .execute()
    },
    findVisibleByUuid(vis: Visibility, uuid: string) {
      return withCounts(filtered(vis, {})).where('customers.uuid', '=', uuid).executeTakeFirst()
    },
    findByUuid(uuid: string) {
      return db.selectFrom('customers').selectAll().where('uuid', '=', uuid).executeTakeFirst()
    },
    async findById(id: number) {
      return (await customerById(db, [], [id])).rows[0]
    },
    async groupUuids(customerIds: number[]): Promise<Map<number, string[]>> {
      const out = new Map<number, string[]>()
      if (!customerIds.length) return out
      const rows = await db
        .selectFrom('customer_organization_groups')
        .innerJoin(
          'organization_groups',
          'organization_groups.id',
          'customer_organization_groups.organization_group_id',
        )
        .select(['customer_organization_groups.customer_id', 'organization_groups.uuid'])
        .where('customer_organization_groups.customer_id', 'in', customerIds)
        .orderBy('organization_groups.id')
        .execute()
      for (const r of rows) out.set(r.customer_id, [...(out.get(r.customer_id) ?? []), r.uuid])
      return out
    },
    async insert(values: Record<string, unknown>): Promise<number> {
      const r = await db
        .insertInto('customers')
        .values(values as any)
        .returning('id')
        .executeTakeFirstOrThrow()
      return r.id
    },
    async update(id: number, values: Record<string, unknown>): Promise<void> {
      await db
        .updateTable('customers')
        .set(values as any)
        .where('id', '=', id)
        .execute()
    },
    async setGroups(customerId: number, groupIds: number[]): Promise<void> {
      await db.deleteFrom('customer_organization_groups').where('customer_id', '=', customerId).execute()
      if (groupIds.length) {
        await db
          .insertInto('customer_organization_groups')
          .values([...new Set(groupIds)].map((g) => ({ customer_id: customerId, organization_group_id: g })))
          .execute()
      }
    },
    async delete(id: number): Promise<void> {
      await db
        .deleteFrom('user_roles')
        .where('scope_type', '=', 'customer')
        .where('scope_id', '=', id)
        .execute()
      await db.deleteFrom('customers').where('id', '=', id).execute()
    },
  }
}

// ---- projects ----

export interface ProjectFilters {
  name?: string
  name_exact?: string
  customer_uuid?: string
  customer_name?: string
  description?: string
  slug?: string
  uuid?: string
  query?: string
}

export function projectsRepository(db: Db) {
  function filtered(vis: Visibility, f: ProjectFilters) {
    let q = db.selectFrom('projects').innerJoin('customers', 'customers.id', 'projects.customer_id')
    if (!vis.all) {
      const cids = vis.customerIds
      const pids = vis.projectIds
      q = q.where((eb) =>
        eb.or([
          eb('projects.customer_id', 'in', cids.length ? cids : [-1]),
          eb('projects.id', 'in', pids.length ? pids : [-1]),
        ]),
      )
    }
    if (f.name) q = q.where(icontains('projects.name', f.name))
    if (f.name_exact) q = q.where('projects.name', '=', f.name_exact)
    if (f.customer_uuid) q = q.where('customers.uuid', '=', f.customer_uuid)
    if (f.customer_name) q = q.where(icontains('customers.name', f.customer_name))
    if (f.description) q = q.where(icontains('projects.description', f.description))
    if (f.slug) q = q.where('projects.slug', '=', f.slug)
    if (f.uuid) q = q.where('projects.uuid', '=', f.uuid)
    if (f.query) {
      const v = f.query
      q = q.where((eb) => eb.or([icontains('projects.name', v), icontains('projects.description', v)]))
    }
    return q
  }
  const columns = [
    'projects.id',
    'projects.uuid',
    'projects.name',
    'projects.customer_id',
    'projects.description',
    'projects.slug',
    'projects.start_date',
    'projects.end_date',
    'projects.created',
    'projects.modified',
    'customers.uuid as customer_uuid',
    'customers.name as customer_name',
    'customers.abbreviation as customer_abbreviation',
    'customers.native_name as customer_native_name',
  ] as const
  return {
    async count(vis: Visibility, f: ProjectFilters): Promise<number> {
      const r = await filtered(vis, f)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
      return Number(r.n)
    },
    list(vis: Visibility, f: ProjectFilters, order: OrderTerm[], limit: number, offset: number) {
      return applyOrder(filtered(vis, f).select(columns), order, 'projects.id')
        .limit(limit)
        .offset(offset)
        .execute()
    },
    /** Compiled once per form of the caller's scopes: order creation resolves a project each time. */
    async findVisibleByUuid(vis: Visibility, uuid: string) {
      let slotted: Visibility = vis
      let values: number[] = []
      let form = 'all'
      if (!vis.all) {
        const lists = slottedLists([vis.customerIds, vis.projectIds])
        const [customerIds, projectIds] = lists.slots as [number[], number[]]
        slotted = { all: false, userId: vis.userId, customerIds, projectIds }
        values = lists.values
        form = lists.form
      }
      const build = () =>
        filtered(slotted, {}).select(columns).where('projects.uuid', '=', slot(values.length))
      return (await projectByUuid(db, form, build, [...values, uuid])).rows[0]
    },
    findByUuid(uuid: string) {
      return filtered({ all: true }, {}).select(columns).where('projects.uuid', '=', uuid).executeTakeFirst()
    },
    findById(id: number) {
      return filtered({ all: true }, {}).select(columns).where('projects.id', '=', id).executeTakeFirst()
    },
    /** Names of the customer's projects that begin with `prefix` (exact, case-sensitive). */
    async namesStartingWith(prefix: string, customerId: number): Promise<string[]> {
      const rows = await db
        .selectFrom('projects')
        .select('name')
        .where('customer_id', '=', customerId)
        .where(sql<boolean>`substr(name, 1, ${prefix.length}) = ${prefix}`)
        .execute()
      return rows.map((r) => r.name)
    },
    async insert(values: Record<string, unknown>): Promise<number> {
      const r = await db
        .insertInto('projects')
        .values(values as any)
        .returning('id')
        .executeTakeFirstOrThrow()
      return r.id
    },
    async update(id: number, values: Record<string, unknown>): Promise<void> {
      await db
        .updateTable('projects')
        .set(values as any)
        .where('id', '=', id)
        .execute()
    },
    async delete(id: number): Promise<void> {
      await db
        .deleteFrom('user_roles')
        .where('scope_type', '=', 'project')
        .where('scope_id', '=', id)
        .execute()
      await db.deleteFrom('projects').where('id', '=', id).execute()
    },
  }
}

// ---- roles and grants ----

export function rolesRepository(db: Db) {
  return {
    list(f: { name?: string; content_type?: string }, limit: number, offset: number) {
      let q = db.selectFrom('roles').selectAll()
      if (f.name) q = q.where(iexact('name', f.name))
      if (f.content_type) q = q.where('content_type', '=', f.content_type)
      return q.orderBy('id').limit(limit).offset(offset).execute()
    },
    async count(f: { name?: string; content_type?: string }) {
      let q = db.selectFrom('roles')
      if (f.name) q = q.where(iexact('name', f.name))
      if (f.content_type) q = q.where('content_type', '=', f.content_type)
      const r = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
      return Number(r.n)
    },
    findByUuid(uuid: string) {
      return db.selectFrom('roles').selectAll().where('uuid', '=', uuid).executeTakeFirst()
    },
    findByName(name: string) {
      return db.selectFrom('roles').selectAll().where('name', '=', name).executeTakeFirst()
    },
    findById(id: number) {
      return db.selectFrom('roles').selectAll().where('id', '=', id).executeTakeFirst()
    },
    async update(id: number, values: Record<string, unknown>) {
      await db
        .updateTable('roles')
        .set(values as any)
        .where('id', '=', id)
        .execute()
    },
  }
}

export interface GrantFilters {
  roleId?: number
  user_uuid?: string
  user_username?: string
}

export function grantsRepository(db: Db) {
  function filtered(scopeType: string, scopeId: number, f: GrantFilters) {
    let q = db
      .selectFrom('user_roles')
      .innerJoin('users', 'users.id', 'user_roles.user_id')
      .innerJoin('roles', 'roles.id', 'user_roles.role_id')
      .leftJoin('users as creator', 'creator.id', 'user_roles.created_by_id')
      .where('user_roles.scope_type', '=', scopeType)
      .where('user_roles.scope_id', '=', scopeId)
      .where('user_roles.is_active', '=', 1)
    if (f.roleId !== undefined) q = q.where('user_roles.role_id', '=', f.roleId)
    if (f.user_uuid) q = q.where('users.uuid', '=', f.user_uuid)
    if (f.user_username) q = q.where(icontains('users.username', f.user_username))
    return q
  }
  return {
    async count(scopeType: string, scopeId: number, f: GrantFilters) {
      const r = await filtered(scopeType, scopeId, f)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
      return Number(r.n)
    },
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
    findActive(userId: number, roleId: number, scopeType: string, scopeId: number) {
      return db
        .selectFrom('user_roles')
        .selectAll()
        .where('user_id', '=', userId)
        .where('role_id', '=', roleId)
        .where('scope_type', '=', scopeType)
        .where('scope_id', '=', scopeId)
        .where('is_active', '=', 1)
        .executeTakeFirst()
    },
    async insert(values: {
      uuid: string
      user_id: number
      role_id: number
      scope_type: string
      scope_id: number
      expiration_time: string | null
      created_by_id: number | null
      created: string
    }): Promise<boolean> {
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
    async updateExpiration(id: number, expiration: string | null) {
      await db.updateTable('user_roles').set({ expiration_time: expiration }).where('id', '=', id).execute()
    },
    /** Ends every active grant of the triple; how many were ended. */
    async deactivateAll(userId: number, roleId: number, scopeType: string, scopeId: number) {
      const r = await db
        .updateTable('user_roles')
        .set({ is_active: 0 })
        .where('user_id', '=', userId)
        .where('role_id', '=', roleId)
        .where('scope_type', '=', scopeType)
        .where('scope_id', '=', scopeId)
        .where('is_active', '=', 1)
        .executeTakeFirst()
      return Number(r.numUpdatedRows)
    },
    /** Users holding any of these roles on a scope (e.g. the owners of a customer). */
    async userIdsWithRole(
      scopeType: string,
      scopeId: number,
      roleNames: string[],
      now: string,
    ): Promise<number[]> {
      const rows = await db
        .selectFrom('user_roles')
        .innerJoin('roles', 'roles.id', 'user_roles.role_id')
        .select('user_roles.user_id')
        .where('user_roles.scope_type', '=', scopeType)
        .where('user_roles.scope_id', '=', scopeId)
        .where('user_roles.is_active', '=', 1)
        .where('roles.name', 'in', roleNames)
        .where((eb) =>
          eb.or([eb('user_roles.expiration_time', 'is', null), eb('user_roles.expiration_time', '>', now)]),
        )
        .execute()
      return [...new Set(rows.map((r) => r.user_id))]
    },
  }
}
