// The conditions of an order list, from its filters and the caller's visibility, each a compiled
// form with its values (src/db/compiled.ts), in a fixed order; and what a `query` text matches,
// looked up before the list is counted and paged.
import { sql, type Expression, type ExpressionBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely'
import type { DB } from '../../db/tables.js'
import type { ResourceSidesVisibility } from '../../db/relations.js'
import { EpochCache } from '../../db/epochs.js'
import { notifiedCaches } from '../../db/change-feed.js'
import { containsPattern, ilike, isPostgres } from '../../db/sql.js'
import { anyOf, reusable, slot, type Condition } from '../../db/compiled.js'
import type { Db } from './record-json.js'

/** What a caller may see: everything, or orders tied to these scopes. */
export type OrderVisibility = ResourceSidesVisibility

export interface OrderFilters {
  canApproveAsConsumer?: { projectIds: number[]; customerIds: number[] } | 'all' | 'state-only'
  canApproveAsProvider?: { customerIds: number[]; offeringIds: number[] } | 'all' | 'state-only'
  category_uuid?: string
  /** Lower bounds of `created` (each one applies). */
  created_after?: string[]
  created_before?: string
  customer_uuid?: string
  /** Lower bounds of `modified` (each one applies). */
  modified_after?: string[]
  modified_before?: string
  offering_uuids?: string[]
  offering_slugs?: string[]
  offering_types?: string[]
  parent_offering_uuid?: string
  project_uuid?: string
  provider_uuid?: string
  /** `matches`: what the text matches, found beforehand (`matchQuery`); without it, sub-selects. */
  query?: { text: string; uuid: string | null; matches?: QueryMatches }
  resource_uuid?: string
  resource_name?: string
  service_manager_uuid?: string
  slug?: string
  states?: string[]
  types?: string[]
  /** Whether the order was placed without waiting for the consumer's review (`auto_approved`). */
  was_auto_approved?: boolean
  /** A filter that can match nothing (a URL filter of the wrong kind). */
  none?: boolean
}

/**
 * Resources whose name contains `text` (case-insensitive): the value to bind and the `id IN`
 * sub-select given its slot. On SQLite a text of three or more characters is looked up in the
 * trigram index (a phrase of trigrams is a substring match); PostgreSQL's trigram index serves the
 * LIKE itself.
 */
function resourcesNamed(db: Db, text: string) {
  const form = !isPostgres(db) && [...text].length >= 3 ? 'fts' : 'like'
  return {
    form,
    value: form === 'fts' ? `"${text.replace(/"/g, '""')}"` : containsPattern(text),
    ids: (s: unknown) => resourceIdsNamed(db, form, s),
  }
}

/** The ids of the resources a `resourcesNamed` value matches, given its form and slot. */
function resourceIdsNamed(db: Db, form: string, s: unknown): SelectQueryBuilder<DB, any, { id: number }> {
  if (form === 'fts') {
    return db
      .selectFrom(sql<{ id: number }>`resources_name_fts`.as('f'))
      .select(sql<number>`rowid`.as('id'))
      .where(sql<boolean>`resources_name_fts match ${s}`)
  }
  return db.selectFrom('resources').select('resources.id as id').where(ilike('resources.name', s))
}

/** Orders whose slug is the text, or (given a uuid) whose uuid is that uuid. */
function slugOrUuid(eb: ExpressionBuilder<DB, 'orders'>, slug: unknown, uuid: unknown): Expression<SqlBool> {
  return eb.or([
    eb('orders.slug', '=', slug as string),
    ...(uuid === null ? [] : [eb('orders.uuid', '=', uuid as string)]),
  ])
}

/** The ids of the projects whose names match a `containsPattern` (a value or a slot). */
function projectIdsNamed(db: Db, pattern: unknown) {
  return db.selectFrom('projects').select('projects.id as id').where(ilike('projects.name', pattern))
}

export type OrdersQuery = SelectQueryBuilder<DB, 'orders', object>

/**
 * A condition of a list. `counted`: it reads only the order's project and state, so it also
 * applies to `order_counts` (aliased `orders`), and a list of such conditions is counted there.
 */
export type OrderCondition = Condition<OrdersQuery> & { counted?: boolean }

/**
 * What a `query` text matches, found before the list is counted and paged: the orders with that
 * uuid or slug, the projects and the resources whose names contain it. A list is null when more
 * than `MATCHES_MAX` matched (the list query then keeps a sub-select for that branch).
 */
export interface QueryMatches {
  orderIds: number[] | null
  projectIds: number[] | null
  resourceIds: number[] | null
}

const MATCHES_MAX = 1000

/** The epochs raised when what a text matches may have changed: names and slugs it is matched against. */
const MATCH_EPOCHS = ['project_names', 'resource_names', 'order_slugs']

/**
 * What a text's matches are read from, as the change feed names them: the orders, the match
 * epochs, and the orders' records' epoch (also raised by a project's or a resource's rename).
 */
export const MATCH_TABLES = ['orders', 'epoch orders', ...MATCH_EPOCHS.map((e) => `epoch ${e}`)]

/** What texts matched (see matchQuery), for the last few hundred texts searched. */
const queryMatches = new EpochCache<QueryMatches>(MATCH_EPOCHS, 256)

/** Ids padded with -1 to a power of two: compiled forms for a few lengths, not for each. */
function padded(ids: readonly number[]): number[] {
  let n = 1
  while (n < ids.length) n *= 2
  return [...ids, ...Array<number>(n - ids.length).fill(-1)]
}

type Where = (eb: ExpressionBuilder<DB, 'orders'>, s: readonly unknown[]) => Expression<SqlBool>

/**
 * The `query` condition: the order's uuid (when the text is one), its slug, its project's name or
 * its resource's name. Branches found beforehand (`matches`) are id lists, those that matched
 * nothing are left out; so a text that names only projects is one range of the (project_id,
 * created) index, counted from order_counts.
 */
function queryCondition(db: Db, query: NonNullable<OrderFilters['query']>): OrderCondition {
  const { text, uuid, matches } = query
  const branches: { form: string; values: unknown[]; where: Where; counted?: boolean }[] = []
  const ids = (
    form: string,
    column: 'orders.id' | 'orders.project_id' | 'orders.resource_id',
    found: number[],
  ) => {
    const values = padded(found)
    branches.push({
      form: `${form}:${values.length}`,
      values,
      where: (eb, s) => eb(column, 'in', s as number[]),
      counted: column === 'orders.project_id',
    })
  }
  if (!matches || !matches.orderIds) {
    branches.push({
      form: uuid ? 'slug-uuid' : 'slug',
      values: uuid ? [text, uuid] : [text],
      where: (eb, [slug, u]) => slugOrUuid(eb, slug, uuid ? u : null),
    })
  } else if (matches.orderIds.length) ids('orders', 'orders.id', matches.orderIds)
  if (!matches || !matches.projectIds) {
    branches.push({
      form: 'projects-named',
      values: [containsPattern(text)],
      where: (eb, [pattern]) => eb('orders.project_id', 'in', projectIdsNamed(db, pattern)),
    })
  } else if (matches.projectIds.length) ids('projects', 'orders.project_id', matches.projectIds)
  if (!matches || !matches.resourceIds) {
    const named = resourcesNamed(db, text)
    branches.push({
      form: `resources-named-${named.form}`,
      values: [named.value],
      where: (eb, [value]) => eb('orders.resource_id', 'in', named.ids(value)),
    })
  } else if (matches.resourceIds.length) ids('resources', 'orders.resource_id', matches.resourceIds)
  return {
    form: `query:${branches.map((b) => b.form).join('+')}`,
    values: branches.flatMap((b) => b.values),
    counted: branches.every((b) => b.counted),
    apply: (q, s) => {
      let next = 0
      const slotted = branches.map((b) => {
        const mine = s.slice(next, (next += b.values.length))
        return (eb: ExpressionBuilder<DB, 'orders'>) => b.where(eb, mine)
      })
      return q.where((eb) => (slotted.length ? eb.or(slotted.map((w) => w(eb))) : sql<boolean>`1 = 0`))
    },
  }
}

/** The id of the row of `table` whose uuid is `uuid` (a slot), as a sub-select. */
function sub(table: 'projects' | 'customers' | 'offerings' | 'categories' | 'resources', uuid: unknown) {
  return sql<number>`(select id from ${sql.table(table)} where uuid = ${uuid})`
}

/** Orders of the offerings whose `column` is the row of `table` with the slot's uuid. */
function offeringsWith(
  column: 'offerings.category_id' | 'offerings.parent_id',
  table: 'categories' | 'offerings',
): OrderCondition['apply'] {
  return (q, [s]) =>
    q.where('orders.offering_id', 'in', (eb) =>
      eb.selectFrom('offerings').select('offerings.id').where(column, '=', sub(table, s)),
    )
}

/** The conditions of a list, in a fixed order. */
export function conditions(db: Db, vis: OrderVisibility, f: OrderFilters): OrderCondition[] {
  if (f.none) return [{ form: 'none', values: [], apply: (q) => q.where(sql<boolean>`1 = 0`) }]
  const out: OrderCondition[] = []
  const add = (form: string, values: readonly unknown[], apply: OrderCondition['apply'], counted = false) =>
    out.push({ form, values, apply, counted })
  if (!vis.all) {
    // Only the scopes the caller has: a project member's orders are then one range of the
    // (project_id, created) index, already in list order, instead of a union to sort.
    out.push({
      ...anyOf('visible', [
        ['orders.project_id', vis.projectIds],
        ['orders.customer_id', vis.customerIds],
        ['orders.provider_customer_id', vis.customerIds],
        ['orders.offering_id', vis.offeringIds],
      ]),
      counted: !vis.customerIds.length && !vis.offeringIds.length,
    })
  }
  const c = f.canApproveAsConsumer
  if (c) {
    add('consumer-approvable', [], (q) => q.where('orders.state', '=', 'pending-consumer'), true)
    if (typeof c === 'object') {
      out.push({
        ...anyOf('consumer-approver', [
          ['orders.project_id', c.projectIds],
          ['orders.customer_id', c.customerIds],
        ]),
        counted: !c.customerIds.length,
      })
    }
  }
  const p = f.canApproveAsProvider
  if (p) {
    add('provider-approvable', [], (q) => q.where('orders.state', '=', 'pending-provider'), true)
    if (typeof p === 'object') {
      out.push(
        anyOf('provider-approver', [
          ['orders.provider_customer_id', p.customerIds],
          ['orders.offering_id', p.offeringIds],
        ]),
      )
    }
  }
  if (f.project_uuid) {
    add('project', [f.project_uuid], (q, [s]) => q.where('orders.project_id', '=', sub('projects', s)), true)
  }
  if (f.customer_uuid) {
    add('customer', [f.customer_uuid], (q, [s]) => q.where('orders.customer_id', '=', sub('customers', s)))
  }
  if (f.provider_uuid) {
    add('provider', [f.provider_uuid], (q, [s]) =>
      q.where('orders.provider_customer_id', '=', sub('customers', s)),
    )
  }
  const offeringsWhere = (name: string, column: 'uuid' | 'slug' | 'type', values?: string[]) => {
    if (!values?.length) return
    add(`${name}:${values.length}`, values, (q, s) =>
      q.where('orders.offering_id', 'in', (eb) =>
        eb.selectFrom('offerings').select('id').where(column, 'in', s),
      ),
    )
  }
  offeringsWhere('offerings', 'uuid', f.offering_uuids)
  offeringsWhere('offering-slugs', 'slug', f.offering_slugs)
  offeringsWhere('offering-types', 'type', f.offering_types)
  if (f.category_uuid)
    add('category', [f.category_uuid], offeringsWith('offerings.category_id', 'categories'))
  if (f.parent_offering_uuid) {
    add('parent-offering', [f.parent_offering_uuid], offeringsWith('offerings.parent_id', 'offerings'))
  }
  if (f.service_manager_uuid) {
    // Orders of offerings whose provider organization the user manages (CUSTOMER.MANAGER) or
    // that the user manages directly (OFFERING.MANAGER).
    add('service-manager', [f.service_manager_uuid], (q, [user]) =>
      q.where((eb) => {
        const scopesAs = (role: string) =>
          eb
            .selectFrom('user_roles')
            .innerJoin('roles', 'roles.id', 'user_roles.role_id')
            .innerJoin('users', 'users.id', 'user_roles.user_id')
            .select('user_roles.scope_id')
            .where('users.uuid', '=', user)
            .where('roles.name', '=', role)
            .where('user_roles.is_active', '=', 1)
        return eb.or([
          eb('orders.provider_customer_id', 'in', scopesAs('CUSTOMER.MANAGER')),
          eb('orders.offering_id', 'in', scopesAs('OFFERING.MANAGER')),
        ])
      }),
    )
  }
  if (f.resource_uuid) {
    add('resource', [f.resource_uuid], (q, [s]) => q.where('orders.resource_id', '=', sub('resources', s)))
  }
  if (f.resource_name) {
    const named = resourcesNamed(db, f.resource_name)
    add(`resource-name:${named.form}`, [named.value], (q, [s]) =>
      q.where('orders.resource_id', 'in', named.ids(s)),
    )
  }
  if (f.query) out.push(queryCondition(db, f.query))
  if (f.states?.length) {
    add(`states:${f.states.length}`, f.states, (q, s) => q.where('orders.state', 'in', s), true)
  }
  if (f.types?.length) add(`types:${f.types.length}`, f.types, (q, s) => q.where('orders.type', 'in', s))
  // Time bounds, each a range of its (created, id) or (modified) index.
  for (const [i, bound] of (f.created_after ?? []).entries()) {
    add(`created-after:${i}`, [bound], (q, [s]) => q.where('orders.created', '>=', s))
  }
  if (f.created_before) {
    add('created-before', [f.created_before], (q, [s]) => q.where('orders.created', '<=', s))
  }
  for (const [i, bound] of (f.modified_after ?? []).entries()) {
    add(`modified-after:${i}`, [bound], (q, [s]) => q.where('orders.modified', '>=', s))
  }
  if (f.modified_before) {
    add('modified-before', [f.modified_before], (q, [s]) => q.where('orders.modified', '<=', s))
  }
  if (f.slug !== undefined) add('slug', [f.slug], (q, [s]) => q.where('orders.slug', '=', s))
  if (f.was_auto_approved !== undefined) {
    // A flag compares with a parameter (1 or 0), which both dialects take for their flag type.
    add('auto-approved', [f.was_auto_approved ? 1 : 0], (q, [s]) => q.where('orders.auto_approved', '=', s))
  }
  return out
}

/**
 * The look-ups of what a `query` text matches (see QueryMatches), at most one more than
 * MATCHES_MAX of each, their slots numbered from `first` in the order of `matchParams`.
 */
function matching(db: Db, withUuid: boolean, form: string, first = 0) {
  let next = first
  const text = slot(next++)
  const uuid = withUuid ? slot(next++) : null
  const pattern = slot(next++)
  const named = slot(next++)
  return {
    orders: db
      .selectFrom('orders')
      .select('orders.id')
      .where((eb) => slugOrUuid(eb, text, uuid))
      .limit(MATCHES_MAX + 1),
    projects: projectIdsNamed(db, pattern).limit(MATCHES_MAX + 1),
    resources: resourceIdsNamed(db, form, named).limit(MATCHES_MAX + 1),
  }
}

type Matching = keyof ReturnType<typeof matching>

/** The values of `matching`'s slots: the text, the uuid (when given), the name pattern, the resource names' value. */
function matchParams(text: string, uuid: string | null, named: ReturnType<typeof resourcesNamed>): unknown[] {
  return [text, ...(uuid ? [uuid] : []), containsPattern(text), named.value]
}

// SQLite: each look-up a statement of its own.
const lookUpOf = reusable(
  (db: Db, withUuid: string, form: string, which: Matching) => matching(db, withUuid !== '', form)[which],
)

// PostgreSQL: the epochs and, unless they are still those of the matches kept for the text (slots
// from 0, see EpochCache.held), the three look-ups as id arrays. One statement sees one snapshot,
// so the matches kept are computed in the snapshot their epochs are read in, and matches are
// used only when their epochs are those of the snapshot the statement sees: a rename committed
// before it started shows in the epochs it reads and is looked up, one committed after it is in
// the next request's epochs. The total and the page that follow are later statements (later
// snapshots under READ COMMITTED), as they were after matches looked up afresh. When the epochs
// hold, each look-up is null and none is made (a CASE evaluates only the branch it takes).
const matchesWithEpochs = reusable((db: Db, withUuid: string, form: string) => {
  const m = matching(db, withUuid !== '', form, queryMatches.size)
  const unlessHeld = (q: SelectQueryBuilder<any, any, any>) =>
    sql<number[] | null>`case when ${queryMatches.held(0)} then null else array(${q}) end`
  return queryMatches
    .from(db)
    .select([
      unlessHeld(m.orders).as('orders'),
      unlessHeld(m.projects).as('projects'),
      unlessHeld(m.resources).as('resources'),
    ])
})

/** The ids found, or null when more than MATCHES_MAX were. */
const found = (ids: readonly (number | string)[]): number[] | null =>
  ids.length > MATCHES_MAX ? null : ids.map(Number)

/**
 * What a `query` text matches, looked up once before a list is counted and paged. Kept two ways:
 * in memory while the database's freshness tells no change (`toldMatchesOf`: no statement), and
 * by epoch (`lookUpMatches`: while no project or resource name and no order slug has changed, the
 * epochs read and the look-ups skipped).
 */
export async function matchQuery(db: Db, text: string, uuid: string | null): Promise<QueryMatches> {
  const told = toldMatchesOf(db)
  if (!told) return (await lookUpMatches(db, text, uuid)).matches
  const found = await told.get(
    `${uuid ?? ''} ${text}`,
    () => lookUpMatches(db, text, uuid),
    (k) => k.epochs,
  )
  return found.matches
}

/**
 * What a text matched, kept while the database's freshness (src/db/change-feed.ts) tells no change
 * that could alter it: no order written (its slug, or a new order by the uuid searched) and none
 * of the epochs raised (a project's or a resource's name, an order's slug), so a search asked
 * again costs no statement. On a SQLite file any commit drops them; none for in-memory SQLite or
 * a transaction's handle (the epochs are read instead, `lookUpMatches`).
 */
const toldMatchesOf = notifiedCaches<LookedUp>(MATCH_TABLES, 256)

/**
 * What a text matched, and whether every epoch that tells its changes was there when it was read
 * (PostgreSQL: an epoch's row gone raises nothing, so what was read then is not used again).
 */
interface LookedUp {
  matches: QueryMatches
  epochs: boolean
}

/**
 * What a text matches, asked of the database and kept between requests while no project or
 * resource name and no order slug has changed. A text that is a uuid is always looked up: the
 * order with that uuid may be created at any time. SQLite reads the epochs, then (unless they
 * hold) makes the three look-ups; PostgreSQL sends one statement for all of it.
 */
async function lookUpMatches(db: Db, text: string, uuid: string | null): Promise<LookedUp> {
  const named = resourcesNamed(db, text)
  const variant = [uuid ? 'uuid' : '', named.form] as const
  const params = matchParams(text, uuid, named)
  if (isPostgres(db)) {
    const kept = uuid ? undefined : queryMatches.kept(db, text)
    const { rows } = await matchesWithEpochs(db, [...variant], [...queryMatches.heldParams(kept), ...params])
    const row = rows[0]
    const version = queryMatches.versionOf(row)
    if (kept && row && row.orders === null) return { matches: kept.value, epochs: version !== null }
    const matches = {
      orderIds: found(row?.orders ?? []),
      projectIds: found(row?.projects ?? []),
      resourceIds: found(row?.resources ?? []),
    }
    if (!uuid) queryMatches.keep(db, text, version, matches)
    return { matches, epochs: version !== null }
  }
  const lookUp = async (): Promise<QueryMatches> => {
    const ids = async (which: Matching) =>
      found((await lookUpOf(db, [...variant, which], params)).rows.map((r) => r.id))
    const [orderIds, projectIds, resourceIds] = await Promise.all([
      ids('orders'),
      ids('projects'),
      ids('resources'),
    ])
    return { orderIds, projectIds, resourceIds }
  }
  // A SQLite file's kept answers go with any commit: a missing epoch is no concern of theirs.
  return { matches: await (uuid ? lookUp() : queryMatches.get(db, text, lookUp)), epochs: true }
}
