// All SQL of offering cost policies, including the inputs of their cost estimate.
import { sql, type ExpressionBuilder, type Kysely, type Transaction } from 'kysely'
import type { DB } from '../../db/tables.js'
import { isoText, isPostgres } from '../../db/sql.js'
import { reusable, slot } from '../../db/compiled.js'
import { columnWhere, organizationGroupLinks, tableRecords } from '../../db/rows.js'
import { joined } from '../../db/joins.js'
import { visibleToProvider } from '../../db/relations.js'

type Db = Kysely<DB> | Transaction<DB>

/** The customers of policies' organization groups (`pg.policy_id` names the policy). */
function groupCustomers(eb: ExpressionBuilder<DB, any>) {
  return eb
    .selectFrom('customer_organization_groups as cg')
    .innerJoin(
      'cost_policy_organization_groups as pg',
      'pg.organization_group_id',
      'cg.organization_group_id',
    )
    .select('cg.customer_id')
}

/** The first 7 characters (YYYY-MM) of a resource's creation time, on both databases. */
function creationMonth(db: Db) {
  return isPostgres(db)
    ? sql<string>`${sql.raw(isoText('resources.created'))}::varchar(7)`
    : sql<string>`substr(resources.created, 1, 7)`
}

/**
 * The resources the policies cover, a row per (policy, resource): those of the policy's offering
 * that are not Terminated, of every customer neither blocked nor archived (`apply_to_all`) or of
 * the customers of its organization groups.
 */
function covered(db: Db, policyIds: readonly number[]) {
  return db
    .selectFrom('cost_policies as cp')
    .innerJoin('resources', 'resources.offering_id', 'cp.offering_id')
    .innerJoin('customers', 'customers.id', 'resources.customer_id')
    .where('cp.id', 'in', [...policyIds])
    .where('resources.state', '!=', 'Terminated')
    .where((eb) =>
      eb.or([
        eb.and([
          eb('cp.apply_to_all', '=', 1),
          eb('customers.blocked', '=', 0),
          eb('customers.archived', '=', 0),
        ]),
        eb.and([
          eb('cp.apply_to_all', '=', 0),
          eb('resources.customer_id', 'in', groupCustomers(eb).whereRef('pg.policy_id', '=', 'cp.id')),
        ]),
      ]),
    )
}

const policyOfOffering = reusable((db: Db) =>
  db.selectFrom('cost_policies').select('id').where('offering_id', '=', slot(0)).limit(1),
)

/** A policy (`cost_policies`) that has fired and blocks new resources for the customer. */
function blocksNewResources(e: ExpressionBuilder<DB, any>, customerId: any) {
  return e.and([
    e('cost_policies.has_fired', '=', 1),
    sql<boolean>`(',' || cost_policies.actions || ',') like '%,block_creation_of_new_resources,%'`,
    e.or([
      e('cost_policies.apply_to_all', '=', 1),
      e.exists(
        groupCustomers(e)
          .whereRef('pg.policy_id', '=', 'cost_policies.id')
          .where('cg.customer_id', '=', customerId),
      ),
    ]),
  ])
}

/**
 * Whether a new resource of the offering for the customer is refused, as scalar subqueries
 * (`offeringId` and `customerId` are slots, or columns of the read they are part of, e.g. a new
 * order's with its organization): `policy_any`, whether the offering has a policy, and
 * `policy_uuid` and `policy_limit_cost` of the first that blocks new resources for the customer
 * (null: none). Each subquery walks the offering's policies in id order on their index, with
 * nothing to sort.
 */
export function newResourcePolicyColumns(eb: ExpressionBuilder<DB, any>, offeringId: any, customerId: any) {
  const ofOffering = () => eb.selectFrom('cost_policies').where('cost_policies.offering_id', '=', offeringId)
  const blocking = () =>
    ofOffering()
      .where((e) => blocksNewResources(e, customerId))
      .orderBy('cost_policies.id')
      .limit(1)
  return [
    eb.exists(ofOffering().select('cost_policies.id')).as('policy_any'),
    blocking().select('cost_policies.uuid').as('policy_uuid'),
    blocking().select('cost_policies.limit_cost').as('policy_limit_cost'),
  ] as const
}

export function policiesRepository(db: Db) {
  const base = () =>
    joined(db, 'cost_policies', [
      ['inner', 'offerings', 'cost_policies.offering_id'],
      ['left', 'users as creator', 'cost_policies.created_by_id'],
    ])
  const visible = visibleToProvider(base)
  const columns = [
    'cost_policies.id',
    'cost_policies.uuid',
    'cost_policies.offering_id',
    'cost_policies.actions',
    'cost_policies.options',
    'cost_policies.limit_cost',
    'cost_policies.period',
    'cost_policies.apply_to_all',
    'cost_policies.has_fired',
    'cost_policies.fired_datetime',
    'cost_policies.created',
    'offerings.uuid as offering_uuid',
    'offerings.name as offering_name',
    'offerings.customer_id as offering_customer_id',
    'creator.full_name as created_by_full_name',
    'creator.username as created_by_username',
  ] as const
  const groups = organizationGroupLinks(db, 'cost_policy_organization_groups', 'policy_id', 'id')
  return {
    ...tableRecords(db, { table: 'cost_policies', base, visible, select: (q) => q.select(columns) }),
    listForOffering(offeringId: number) {
      return base()
        .select(columns)
        .where('cost_policies.offering_id', '=', offeringId)
        .orderBy('cost_policies.id')
        .execute()
    },
    groupUuids: (policyIds: number[]) => groups.uuidsOf(policyIds),
    groupIds: (policyId: number): Promise<number[]> =>
      columnWhere(db, 'cost_policy_organization_groups', 'organization_group_id', 'policy_id', policyId),
    setGroups: (policyId: number, groupIds: number[]) => groups.set(policyId, groupIds),
    findOffering(id: number) {
      return db
        .selectFrom('offerings')
        .select(['id', 'uuid', 'name', 'customer_id'])
        .where('id', '=', id)
        .executeTakeFirst()
    },
    /**
     * Marks the policy fired (fired_datetime now) or reset (fired_datetime stays as the record of
     * the last firing) unless it already is; true when this call made the change.
     */
    async setFired(id: number, fired: boolean, now: string): Promise<boolean> {
      const r = await db
        .updateTable('cost_policies')
        .set(fired ? { has_fired: 1, fired_datetime: now, modified: now } : { has_fired: 0, modified: now })
        .where('id', '=', id)
        .where('has_fired', '=', fired ? 0 : 1)
        .executeTakeFirst()
      return Number(r.numUpdatedRows) === 1
    },
    /** One event per user (a notification addressed to each), uuids from `newUuid`: one insert. */
    async notifyUsers(
      userIds: readonly number[],
      event: { newUuid: () => string; event_type: string; message: string; context: string; created: string },
    ): Promise<void> {
      if (!userIds.length) return
      const { newUuid, ...values } = event
      await db
        .insertInto('events')
        .values(userIds.map((userId) => ({ uuid: newUuid(), ...values, recipient_user_id: userId })))
        .execute()
    },
    async setRecheck(offeringId: number, at: string): Promise<void> {
      await db
        .updateTable('cost_policies')
        .set({ recheck_at: at })
        .where('offering_id', '=', offeringId)
        .execute()
    },
    async recheckPending(offeringId: number, at: string): Promise<boolean> {
      const r = await db
        .selectFrom('cost_policies')
        .select('id')
        .where('offering_id', '=', offeringId)
        .where((eb) => eb.or([eb('recheck_at', 'is', null), eb('recheck_at', '!=', at)]))
        .limit(1)
        .executeTakeFirst()
      return !r
    },
    /**
     * The cost inputs of several policies in one query: per policy, the resources it covers
     * aggregated by plan and creation month (a row per (policy, plan, month), not per resource;
     * the month is the first 7 characters of the ISO text). A policy with `apply_to_all` covers
     * every customer not blocked or archived, else the customers of its organization groups.
     */
    costInputs(policyIds: readonly number[]) {
      if (!policyIds.length) return Promise.resolve([])
      const month = creationMonth(db)
      return (
        covered(db, policyIds)
          // Resources without a plan cost nothing but are covered (affected_resources_count).
          .leftJoin('plans', 'plans.id', 'resources.plan_id')
          .select((eb) => [
            'cp.id as policy_id',
            'resources.plan_id',
            month.as('month'),
            'plans.unit',
            'plans.unit_price',
            'plans.fixed_price',
            eb.fn.countAll<number>().as('n'),
          ])
          .groupBy([
            'cp.id',
            'resources.plan_id',
            'plans.unit',
            'plans.unit_price',
            'plans.fixed_price',
            month,
          ])
          .execute()
      )
    },
    /**
     * The priced components of these plans billed by a fixed amount, a limit or usage: the
     * stored price (and the one to come), the plan's amount, and the offering's type (its
     * built-in components divide a limit by their factor).
     */
    planComponentPrices(planIds: readonly number[]) {
      if (!planIds.length) return Promise.resolve([])
      return db
        .selectFrom('plan_components as pc')
        .innerJoin('offering_components as oc', 'oc.id', 'pc.component_id')
        .innerJoin('offerings', 'offerings.id', 'oc.offering_id')
        .select([
          'pc.plan_id',
          'oc.type',
          'oc.billing_type',
          'pc.amount',
          'pc.price',
          'pc.future_price',
          'pc.future_price_start_date',
          'offerings.type as offering_type',
        ])
        .where('pc.plan_id', 'in', [...planIds])
        .where('oc.billing_type', 'in', ['fixed', 'limit', 'usage'])
        .execute()
    },
    /**
     * The limits of the covered resources whose plan prices a limit-billed component (a row per
     * policy and resource: a limit is the resource's own).
     */
    limitInputs(policyIds: readonly number[]) {
      if (!policyIds.length) return Promise.resolve([])
      return covered(db, policyIds)
        .select([
          'cp.id as policy_id',
          'resources.plan_id',
          'resources.limits',
          creationMonth(db).as('month'),
        ])
        .where((eb) =>
          eb.exists(
            eb
              .selectFrom('plan_components as pc')
              .innerJoin('offering_components as oc', 'oc.id', 'pc.component_id')
              .select('pc.id')
              .whereRef('pc.plan_id', '=', 'resources.plan_id')
              .where('oc.billing_type', '=', 'limit'),
          ),
        )
        .execute()
    },
    /**
     * The reported usages of the covered resources' usage-billed components (a row per policy,
     * resource, component and billing period), from the billing period `since` on (null: all).
     */
    usageInputs(policyIds: readonly number[], since: string | null) {
      if (!policyIds.length) return Promise.resolve([])
      let q = covered(db, policyIds)
        .innerJoin('component_usages as cu', 'cu.resource_id', 'resources.id')
        .innerJoin('offering_components as oc', 'oc.id', 'cu.component_id')
        .select(['cp.id as policy_id', 'resources.plan_id', 'oc.type', 'cu.billing_period', 'cu.usage'])
        .where('oc.billing_type', '=', 'usage')
        .where('resources.plan_id', 'is not', null)
      if (since !== null) q = q.where('cu.billing_period', '>=', since)
      return q.execute()
    },
  }
}

// The checks an order's creation and transitions make, callable without building the
// repository (building it prepares its query builders, which would cost every order).

/** Whether the offering has any cost policy (its evaluation is then scheduled). */
export async function offeringHasPolicies(db: Db, offeringId: number): Promise<boolean> {
  return (await policyOfOffering(db, [], [offeringId])).rows.length > 0
}

/** `newResourcePolicyColumns` read on their own, for the offering and the customer. */
const newResourcePolicyOf = reusable((db: Db) =>
  db.selectNoFrom((eb) =>
    newResourcePolicyColumns(eb as ExpressionBuilder<DB, any>, slot<number>(0), slot<number>(1)),
  ),
)
export async function newResourcePolicies(db: Db, offeringId: number, customerId: number) {
  return (await newResourcePolicyOf(db, [], [offeringId, customerId])).rows[0]!
}

export type PolicyRow = NonNullable<Awaited<ReturnType<ReturnType<typeof policiesRepository>['findById']>>>
