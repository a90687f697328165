// SQL of customers (organizations) and the organization groups they belong to.
import type { ExpressionBuilder } from 'kysely'
import { insertReturningId, reusable, slot, perDatabase } from '../../db/compiled.js'
import { scopedList } from '../../db/listing.js'
import { deleteRow, organizationGroupLinks, updateRow } from '../../db/rows.js'
import { icontainsAny, none } from '../../db/sql.js'
import { unlessAll } from '../../db/joins.js'
import type { Db, Visibility } from './repository.js'

/** Ids for an `in` list; an empty list matches nothing. */

const customerById = reusable((db: Db) => db.selectFrom('customers').selectAll().where('id', '=', slot(0)))

/** The `query` filter of customers: name, abbreviation or native name. */
export const searchCustomers = icontainsAny([
  'customers.name',
  'customers.abbreviation',
  'customers.native_name',
])

/** Customers in the organization group of this uuid. */
export function customerInGroup(eb: ExpressionBuilder<any, any>, groupUuid: string) {
  return eb(
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
      .where('organization_groups.uuid', '=', groupUuid),
  )
}

// ---- organization groups ----

export function organizationGroupsRepository(db: Db) {
  function base() {
    return db
      .selectFrom('organization_groups')
      .leftJoin('organization_groups as parent', 'parent.id', 'organization_groups.parent_id')
  }
  /** A group's columns, its parent's and how many customers it holds. */
  function record(q: ReturnType<typeof base>) {
    return q
      .select([
        'organization_groups.id',
        'organization_groups.uuid',
        'organization_groups.name',
        'organization_groups.created',
        'parent.uuid as parent_uuid',
        'parent.name as parent_name',
      ])
      .select((eb) =>
        eb
          .selectFrom('customer_organization_groups')
          .whereRef('customer_organization_groups.organization_group_id', '=', 'organization_groups.id')
          .select((e) => e.fn.countAll<number>().as('c'))
          .as('customers_count'),
      )
  }
  return {
    /** Every group, for every caller. */
    ...scopedList((_all: void) => base(), record, 'organization_groups.id'),
    findByUuid(uuid: string) {
      return record(base()).where('organization_groups.uuid', '=', uuid).executeTakeFirst()
    },
    findByIds(ids: readonly number[]) {
      if (!ids.length) return Promise.resolve([])
      return record(base())
        .where('organization_groups.id', 'in', [...ids])
        .execute()
    },
    insert(values: {
      uuid: string
      name: string
      parent_id: number | null
      created: string
      modified: string
    }) {
      return insertReturningId(db, 'organization_groups', values)
    },
    update: (id: number, values: Record<string, unknown>) => updateRow(db, 'organization_groups', id, values),
    delete: (id: number) => deleteRow(db, 'organization_groups', id),
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

/** The SQL of the table, built once per database handle (`perDatabase`). */
export const customersRepository = perDatabase((db: Db) => {
  const customers = () => db.selectFrom('customers')
  /** Customers the caller has a role in, directly or through one of their projects. */
  const visible = unlessAll(customers, (q, vis: Extract<Visibility, { all: false }>) =>
    q.where((eb) =>
      eb.or([
        eb('customers.id', 'in', none(vis.customerIds)),
        eb(
          'customers.id',
          'in',
          eb
            .selectFrom('projects')
            .select('projects.customer_id')
            .where('projects.id', 'in', none(vis.projectIds)),
        ),
      ]),
    ),
  )
  function withCounts(q: ReturnType<typeof customers>) {
    return q.selectAll('customers').select((eb) =>
      eb
        .selectFrom('projects')
        .whereRef('projects.customer_id', '=', 'customers.id')
        .select((e) => e.fn.countAll<number>().as('c'))
        .as('projects_count'),
    )
  }
  const groups = organizationGroupLinks(db, 'customer_organization_groups', 'customer_id', 'id')
  return {
    ...scopedList(visible, withCounts, 'customers.id'),
    findVisibleByUuid(vis: Visibility, uuid: string) {
      return withCounts(visible(vis)).where('customers.uuid', '=', uuid).executeTakeFirst()
    },
    findByUuid(uuid: string) {
      return db.selectFrom('customers').selectAll().where('uuid', '=', uuid).executeTakeFirst()
    },
    /** The customer `id` with its projects' count, as its record shows it. */
    findRecordById(id: number) {
      return withCounts(customers()).where('customers.id', '=', id).executeTakeFirst()
    },
    async findById(id: number) {
      return (await customerById(db, [], [id])).rows[0]
    },
    /** The uuids of each customer's organization groups, oldest group first. */
    groupUuids: groups.uuidsOf,
    insert: (values: Record<string, unknown>) => insertReturningId(db, 'customers', values),
    update: (id: number, values: Record<string, unknown>) => updateRow(db, 'customers', id, values),
    setGroups: groups.set,
    async delete(id: number): Promise<void> {
      await deleteGrantsOn(db, 'customer', id)
      await deleteRow(db, 'customers', id)
    },
  }
})

/** Ends every grant on a customer or project that is being deleted. */
export async function deleteGrantsOn(db: Db, scopeType: 'customer' | 'project', id: number): Promise<void> {
  await db.deleteFrom('user_roles').where('scope_type', '=', scopeType).where('scope_id', '=', id).execute()
}
