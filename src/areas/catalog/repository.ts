// SQL of the catalog: what a caller may see of it (visibility → 404), service providers,
// categories, and the uuids of backend objects linked to resources. Offerings and plans are in
// `repository-offerings.ts`, marketplace resources in `repository-resources.ts`.
import {
  sql,
  type Expression,
  type ExpressionBuilder,
  type Kysely,
  type SqlBool,
  type Transaction,
} from 'kysely'
import type { DB } from '../../db/tables.js'
import { none } from '../../db/sql.js'
import { slottedLists } from '../../db/compiled.js'
import { countRows } from '../../db/listing.js'
import { firstWhere, tableRecords } from '../../db/rows.js'

export type Db = Kysely<DB> | Transaction<DB>

/**
 * What a caller may see in the catalog: everything (staff, support), or rows reached through
 * these grants. `customerIds`: customer roles; `connectedCustomerIds`: customer roles plus the
 * customers of projects with a project role; `projectIds`: project roles; `offeringIds`:
 * offering roles.
 */
export type CatalogVisibility =
  | { all: true }
  | {
      all: false
      customerIds: number[]
      connectedCustomerIds: number[]
      projectIds: number[]
      offeringIds: number[]
    }

/** Offering states everybody (authenticated) may see when the offering is shared. */
export const PUBLIC_OFFERING_STATES = ['Active', 'Paused']

/** A catalog visibility with its ids as slots (from `from`), for a compiled query; see `slottedLists`. */
export function slottedCatalogVisibility(
  vis: CatalogVisibility,
  from = 0,
): {
  slotted: CatalogVisibility
  values: number[]
  form: string
} {
  if (vis.all) return { slotted: vis, values: [], form: 'all' }
  const lists = [vis.customerIds, vis.connectedCustomerIds, vis.projectIds, vis.offeringIds].map(none)
  const { slots, values, form } = slottedLists(lists, from)
  const [customerIds, connectedCustomerIds, projectIds, offeringIds] = slots as [
    number[],
    number[],
    number[],
    number[],
  ]
  return { slotted: { all: false, customerIds, connectedCustomerIds, projectIds, offeringIds }, values, form }
}

/**
 * The visibility condition of an offering row (table reference `offerings`):
 * - shared offerings in Active/Paused: everybody;
 * - every state: the provider's people (customer roles) and the offering's managers;
 * - private offerings in Active/Paused: people connected to the customer of their project.
 */
export function offeringVisible(
  eb: ExpressionBuilder<any, any>,
  vis: CatalogVisibility,
): Expression<SqlBool> {
  if (vis.all) return eb.lit(true)
  return eb.or([
    eb.and([eb('offerings.shared', '=', 1), eb('offerings.state', 'in', PUBLIC_OFFERING_STATES)]),
    eb('offerings.customer_id', 'in', none(vis.customerIds)),
    eb('offerings.id', 'in', none(vis.offeringIds)),
    eb.and([
      eb('offerings.shared', '=', 0),
      eb('offerings.state', 'in', PUBLIC_OFFERING_STATES),
      eb(
        'offerings.project_id',
        'in',
        eb
          .selectFrom('projects')
          .select('projects.id')
          .where('projects.customer_id', 'in', none(vis.connectedCustomerIds)),
      ),
    ]),
  ])
}

// ---- service providers (everybody sees them all) ----

export function serviceProvidersRepository(db: Db) {
  const base = () =>
    db.selectFrom('service_providers').innerJoin('customers', 'customers.id', 'service_providers.customer_id')
  const columns = [
    'service_providers.id',
    'service_providers.uuid',
    'service_providers.customer_id',
    'service_providers.description',
    'service_providers.image',
    'service_providers.created',
    'customers.uuid as customer_uuid',
    'customers.name as customer_name',
  ] as const
  const select = (q: ReturnType<typeof base>) => q.select(columns)
  return {
    ...tableRecords(db, { table: 'service_providers', base, visible: (_all: undefined) => base(), select }),
    findByCustomer: (customerId: number) =>
      firstWhere(select(base()), 'service_providers.customer_id', customerId),
  }
}

// ---- categories (everybody sees them all) ----

export function categoriesRepository(db: Db) {
  const base = () => db.selectFrom('categories')
  function withCount(q: ReturnType<typeof base>) {
    return q.selectAll('categories').select((eb) =>
      eb
        .selectFrom('offerings')
        .whereRef('offerings.category_id', '=', 'categories.id')
        .where('offerings.state', '=', 'Active')
        .where('offerings.shared', '=', 1)
        .select((e) => e.fn.countAll<number>().as('c'))
        .as('offering_count'),
    )
  }
  return {
    ...tableRecords(db, {
      table: 'categories',
      base,
      visible: (_all: undefined) => base(),
      select: withCount,
    }),
    findByUuid: (uuid: string) => firstWhere(withCount(base()), 'categories.uuid', uuid),
    offeringCount(id: number): Promise<number> {
      return countRows(db.selectFrom('offerings').where('category_id', '=', id))
    },
  }
}

// ---- backend objects linked to resources ----

/** uuid of each row id of `table` (a table with `id` and `uuid` columns). */
export async function uuidsOf(db: Db, table: string, ids: number[]): Promise<Map<number, string>> {
  const out = new Map<number, string>()
  if (!ids.length) return out
  const r = await sql<{
    id: number
    uuid: string
  }>`select id, uuid from ${sql.table(table)} where id in (${sql.join(ids)})`.execute(db)
  for (const row of r.rows) out.set(Number(row.id), row.uuid)
  return out
}
