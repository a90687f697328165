// All SQL of reported usage: the usages and per-account usages a caller sees (the resource's
// consumer and provider sides), the resource and components a report names, the writes of a
// report (one row per resource, component and billing period) and the reads that check it.
import { sql, type ExpressionBuilder, type Kysely, type Transaction } from 'kysely'
import type { DB } from '../../db/tables.js'
import { tableRecords } from '../../db/rows.js'
import { joined } from '../../db/joins.js'
import { visibleToResourceSides } from '../../db/relations.js'

export type Db = Kysely<DB> | Transaction<DB>

const U = 'component_usages'
const UU = 'component_user_usages'

/** A usage's resource, the resource's offering, project and organization, and its component. */
const USAGE_JOINS = [
  ['inner', 'resources', `${U}.resource_id`],
  ['inner', 'offerings', 'resources.offering_id'],
  ['inner', 'projects', 'resources.project_id'],
  ['inner', 'customers', 'projects.customer_id'],
  ['inner', 'offering_components as component', `${U}.component_id`],
] as const

/** The columns a usage's record shows (its resource's and component's among them). */
const USAGE_COLUMNS = [
  'resources.uuid as resource_uuid',
  'resources.name as resource_name',
  'resources.offering_id',
  'offerings.uuid as offering_uuid',
  'offerings.name as offering_name',
  'offerings.customer_id as offering_customer_id',
  'projects.uuid as project_uuid',
  'projects.name as project_name',
  'customers.uuid as customer_uuid',
  'customers.name as customer_name',
  'component.type',
  'component.name',
  'component.measured_unit',
  `${U}.billing_period`,
] as const

export function usagesRepository(db: Db) {
  const base = () => joined(db, U, USAGE_JOINS)
  const visible = visibleToResourceSides(base)
  const columns = [
    `${U}.id`,
    `${U}.uuid`,
    `${U}.created`,
    `${U}.description`,
    `${U}.usage`,
    `${U}.date`,
    `${U}.missing_usage_policy`,
    `${U}.modified_by_id`,
    `${U}.resource_id`,
    ...USAGE_COLUMNS,
  ] as const
  return {
    ...tableRecords(db, { table: U, base, visible, select: (q) => q.select(columns) }),
    /**
     * Writes the usages of a report, one per resource, component and billing period: each
     * inserted, or (reported again in the period) replaced. One statement, so two racing reports
     * leave one row per key; a key must not come twice in `rows`.
     */
    async upsert(
      rows: readonly {
        uuid: string
        resource_id: number
        component_id: number
        billing_period: string
        usage: string
        date: string
        description: string
        missing_usage_policy: string
        modified_by_id: number | null
      }[],
      now: string,
    ): Promise<void> {
      if (!rows.length) return
      await db
        .insertInto(U)
        .values(rows.map((r) => ({ ...r, created: now, modified: now })))
        .onConflict((oc) =>
          oc.columns(['resource_id', 'component_id', 'billing_period']).doUpdateSet((eb) => ({
            usage: eb.ref('excluded.usage'),
            date: eb.ref('excluded.date'),
            description: eb.ref('excluded.description'),
            missing_usage_policy: eb.ref('excluded.missing_usage_policy'),
            modified_by_id: eb.ref('excluded.modified_by_id'),
            modified: now,
          })),
        )
        .execute()
    },
    /**
     * For each component, the sum of its usages of the resource in the billing periods of its
     * window (`from` to `to`, inclusive) but `except`: one read for every capped component.
     */
    async sumsOfPeriods(
      resourceId: number,
      windows: readonly { componentId: number; from: string; to: string }[],
      except: string,
    ): Promise<Map<number, unknown>> {
      if (!windows.length) return new Map()
      const rows = await db
        .selectFrom(U)
        .select(['component_id', (eb) => eb.fn.sum<string | number | null>('usage').as('total')])
        .where('resource_id', '=', resourceId)
        .where('billing_period', '<>', except)
        .where((eb) =>
          eb.or(
            windows.map((w) =>
              eb.and([
                eb('component_id', '=', w.componentId),
                eb('billing_period', '>=', w.from),
                eb('billing_period', '<=', w.to),
              ]),
            ),
          ),
        )
        .groupBy('component_id')
        .execute()
      return new Map(rows.map((r) => [r.component_id, r.total]))
    },
    /** The usages of a resource's latest reported billing period, by component type. */
    async latestPeriod(resourceId: number) {
      const latest = db
        .selectFrom(U)
        .select((eb) => eb.fn.max('billing_period').as('p'))
        .where('resource_id', '=', resourceId)
      return db
        .selectFrom(U)
        .innerJoin('offering_components as component', 'component.id', `${U}.component_id`)
        .select(['component.type', `${U}.usage`])
        .where(`${U}.resource_id`, '=', resourceId)
        .where(`${U}.billing_period`, '=', (eb) => eb.selectFrom(latest.as('l')).select('l.p'))
        .orderBy('component.type')
        .execute()
    },
  }
}

export type UsageRow = NonNullable<Awaited<ReturnType<ReturnType<typeof usagesRepository>['findById']>>>

export function userUsagesRepository(db: Db) {
  const base = () =>
    joined(db, UU, [
      ['inner', U, `${UU}.component_usage_id`],
      ...USAGE_JOINS,
      ['left', 'offering_users', `${UU}.offering_user_id`],
      ['left', 'users as account_user', 'offering_users.user_id'],
    ])
  const visible = visibleToResourceSides(base)
  const columns = [
    `${UU}.id`,
    `${UU}.uuid`,
    `${UU}.username`,
    `${UU}.usage`,
    `${UU}.description`,
    `${UU}.backend_id`,
    `${UU}.created`,
    `${UU}.modified`,
    'offering_users.uuid as user_uuid',
    `${U}.uuid as component_usage_uuid`,
    `${U}.date`,
    ...USAGE_COLUMNS,
  ] as const
  return {
    ...tableRecords(db, { table: UU, base, visible, select: (q) => q.select(columns) }),
    /**
     * Writes the accounts' usages under a component usage, in one statement: each inserted, or
     * replaced for its username (which must not come twice in `rows`).
     */
    async upsert(
      rows: readonly {
        uuid: string
        component_usage_id: number
        username: string
        offering_user_id: number | null
        usage: string
      }[],
      now: string,
    ): Promise<void> {
      if (!rows.length) return
      await db
        .insertInto(UU)
        .values(rows.map((r) => ({ ...r, created: now, modified: now })))
        .onConflict((oc) =>
          oc.columns(['component_usage_id', 'username']).doUpdateSet((eb) => ({
            usage: eb.ref('excluded.usage'),
            offering_user_id: eb.ref('excluded.offering_user_id'),
            modified: now,
          })),
        )
        .execute()
    },
  }
}

export type UserUsageRow = NonNullable<
  Awaited<ReturnType<ReturnType<typeof userUsagesRepository>['findById']>>
>

/** What a report names: the resource, its offering's components and accounts. */
export function reportRepository(db: Db) {
  return {
    /** The resource a report names, with its offering's organization (the side that reports). */
    resourceByUuid(uuid: string) {
      return db
        .selectFrom('resources')
        .innerJoin('offerings', 'offerings.id', 'resources.offering_id')
        .select([
          'resources.id',
          'resources.state',
          'resources.offering_id',
          'offerings.customer_id as offering_customer_id',
        ])
        .where('resources.uuid', '=', uuid)
        .executeTakeFirst()
    },
    /** The offering's components usage may be reported for: those billed by usage or by limit. */
    reportableComponents(offeringId: number) {
      return db
        .selectFrom('offering_components')
        .select(['id', 'type', 'billing_type', 'limit_period', 'limit_amount'])
        .where('offering_id', '=', offeringId)
        .where('billing_type', 'in', ['usage', 'limit'])
        .execute()
    },
    /**
     * The accounts a report of shares names, in one read: those of the offering with these
     * usernames (id by username), and those of these uuids, of any offering (by uuid).
     */
    async accountsNamed(
      offeringId: number,
      usernames: readonly string[],
      uuids: readonly string[],
    ): Promise<{
      byUsername: Map<string, number>
      byUuid: Map<string, { id: number; offering_id: number }>
    }> {
      const byUsername = new Map<string, number>()
      const byUuid = new Map<string, { id: number; offering_id: number }>()
      if (!usernames.length && !uuids.length) return { byUsername, byUuid }
      const names = new Set(usernames)
      const ids = new Set(uuids)
      const rows = await db
        .selectFrom('offering_users')
        .select(['id', 'uuid', 'username', 'offering_id'])
        .where((eb) =>
          eb.or([
            ...(names.size
              ? [eb.and([eb('offering_id', '=', offeringId), eb('username', 'in', [...names])])]
              : []),
            ...(ids.size ? [eb('uuid', 'in', [...ids])] : []),
          ]),
        )
        .execute()
      for (const r of rows) {
        if (ids.has(r.uuid)) byUuid.set(r.uuid, { id: r.id, offering_id: r.offering_id })
        if (r.offering_id === offeringId && r.username !== null && names.has(r.username))
          byUsername.set(r.username, r.id)
      }
      return { byUsername, byUuid }
    },
    async setCurrentUsages(resourceId: number, usages: string, now: string): Promise<void> {
      await db
        .updateTable('resources')
        .set({ current_usages: usages, modified: now })
        .where('id', '=', resourceId)
        .execute()
    },
  }
}

/** `billing_period_year` / `billing_period_month`: a part of the period's YYYY-MM-DD text. */
export const periodPart = (part: 'year' | 'month') => (eb: ExpressionBuilder<any, any>, v: number) =>
  part === 'year'
    ? eb(sql`substr(${sql.ref(`${U}.billing_period`)}, 1, 4)`, '=', String(v).padStart(4, '0'))
    : eb(sql`substr(${sql.ref(`${U}.billing_period`)}, 6, 2)`, '=', String(v).padStart(2, '0'))
