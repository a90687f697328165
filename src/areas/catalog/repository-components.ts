// SQL of what offerings bill: their components, and each plan's price and amount of them.
import { countRows, scopedList } from '../../db/listing.js'
import { insertReturningId, perDatabase } from '../../db/compiled.js'
import { deleteRow, firstWhere, organizationGroupLinks, updateRow } from '../../db/rows.js'
import { offeringVisible, type CatalogVisibility, type Db } from './repository.js'

/** Resources in this state hold nothing: their limits and plans no longer count. */
const GONE = 'Terminated'

export const componentsRepository = perDatabase((db: Db) => {
  const base = () =>
    db
      .selectFrom('offering_components')
      .innerJoin('offerings', 'offerings.id', 'offering_components.offering_id')
      .leftJoin('offering_components as overage', 'overage.id', 'offering_components.overage_component_id')
      .selectAll('offering_components')
      .select([
        'offerings.uuid as offering_uuid',
        'offerings.type as offering_type',
        'overage.uuid as overage_uuid',
      ])
  return {
    /** The components of each offering, by name (as the reference orders them). */
    listByOfferings(offeringIds: readonly number[]) {
      if (!offeringIds.length) return Promise.resolve([])
      return base()
        .where('offering_components.offering_id', 'in', [...offeringIds])
        .orderBy('offering_components.name')
        .orderBy('offering_components.id')
        .execute()
    },
    /** One component of the offering by its uuid (normalised), or undefined. */
    findInOffering(offeringId: number, uuid: string) {
      return base()
        .where('offering_components.offering_id', '=', offeringId)
        .where('offering_components.uuid', '=', uuid)
        .executeTakeFirst()
    },
    findByType(offeringId: number, type: string) {
      return base()
        .where('offering_components.offering_id', '=', offeringId)
        .where('offering_components.type', '=', type)
        .executeTakeFirst()
    },
    findById: (id: number) => firstWhere(base(), 'offering_components.id', id),
    insert: (values: Record<string, unknown>) => insertReturningId(db, 'offering_components', values),
    update: (id: number, values: Record<string, unknown>) => updateRow(db, 'offering_components', id, values),
    delete: (id: number) => deleteRow(db, 'offering_components', id),
    /** Whether any resource (in any state) was ever ordered from the offering. */
    async offeringHasResources(offeringId: number): Promise<boolean> {
      return (await countRows(db.selectFrom('resources').where('offering_id', '=', offeringId))) > 0
    },
    /**
     * The limits of the offering's resources that still hold them (not terminated), but the one
     * being changed: what a component's `max_available_limit` is shared among.
     */
    async otherResourcesLimits(offeringId: number, exceptResourceId: number | null): Promise<unknown[]> {
      let q = db
        .selectFrom('resources')
        .select('limits')
        .where('offering_id', '=', offeringId)
        .where('state', '!=', GONE)
      if (exceptResourceId !== null) q = q.where('id', '!=', exceptResourceId)
      return (await q.execute()).map((r) => r.limits)
    },
  }
})

export type ComponentRow = NonNullable<
  Awaited<ReturnType<ReturnType<typeof componentsRepository>['findById']>>
>

export const planComponentsRepository = perDatabase((db: Db) => {
  const base = () =>
    db
      .selectFrom('plan_components')
      .innerJoin('offering_components as component', 'component.id', 'plan_components.component_id')
      .select([
        'plan_components.id',
        'plan_components.plan_id',
        'plan_components.component_id',
        'plan_components.amount',
        'plan_components.price',
        'plan_components.future_price',
        'plan_components.future_price_start_date',
        'component.type',
        'component.name',
        'component.measured_unit',
        'component.billing_type',
      ])
  /** The list of `/api/marketplace-plan-components/`: the components of plans a caller may see. */
  const listed = () =>
    db
      .selectFrom('plan_components')
      .innerJoin('offering_components as component', 'component.id', 'plan_components.component_id')
      .innerJoin('plans', 'plans.id', 'plan_components.plan_id')
      .innerJoin('offerings', 'offerings.id', 'plans.offering_id')
  const groups = organizationGroupLinks(db, 'plan_organization_groups', 'plan_id', 'name')
  return {
    /** The components of each plan, by the component's name. */
    listByPlans(planIds: readonly number[]) {
      if (!planIds.length) return Promise.resolve([])
      return base()
        .where('plan_components.plan_id', 'in', [...planIds])
        .orderBy('component.name')
        .orderBy('plan_components.id')
        .execute()
    },
    /** Adds a zero price and amount for each of the components the plan has no row of yet. */
    async addMissing(planId: number, offeringId: number): Promise<void> {
      const missing = await db
        .selectFrom('offering_components')
        .select('id')
        .where('offering_id', '=', offeringId)
        .where((eb) =>
          eb.not(
            eb.exists(
              eb
                .selectFrom('plan_components')
                .select('plan_components.id')
                .whereRef('plan_components.component_id', '=', 'offering_components.id')
                .where('plan_components.plan_id', '=', planId),
            ),
          ),
        )
        .execute()
      if (!missing.length) return
      await db
        .insertInto('plan_components')
        .values(missing.map((c) => ({ plan_id: planId, component_id: c.id })))
        .execute()
    },
    /** A new component is priced 0 in every plan of its offering. */
    async addToEveryPlan(componentId: number, offeringId: number): Promise<void> {
      const plans = await db.selectFrom('plans').select('id').where('offering_id', '=', offeringId).execute()
      if (!plans.length) return
      await db
        .insertInto('plan_components')
        .values(plans.map((p) => ({ plan_id: p.id, component_id: componentId })))
        .execute()
    },
    update: (id: number, values: Record<string, unknown>) => updateRow(db, 'plan_components', id, values),
    ...scopedList(
      (vis: CatalogVisibility) => listed().where((eb) => offeringVisible(eb, vis)),
      (q) =>
        q.select([
          'plan_components.id',
          'plan_components.amount',
          'plan_components.price',
          'plan_components.future_price',
          'plan_components.future_price_start_date',
          'component.name as component_name',
          'component.measured_unit',
          'component.billing_type',
          'plans.uuid as plan_uuid',
          'plans.name as plan_name',
          'plans.unit as plan_unit',
          'offerings.uuid as offering_uuid',
          'offerings.name as offering_name',
        ]),
      'plan_components.id',
    ),
    /** Resources using each plan that still hold it (not terminated). */
    async resourceCounts(planIds: readonly number[]): Promise<Map<number, number>> {
      const out = new Map<number, number>()
      if (!planIds.length) return out
      const rows = await db
        .selectFrom('resources')
        .select((eb) => ['plan_id', eb.fn.countAll<number | string>().as('n')])
        .where('plan_id', 'in', [...planIds])
        .where('state', '!=', GONE)
        .groupBy('plan_id')
        .execute()
      for (const r of rows) if (r.plan_id !== null) out.set(r.plan_id, Number(r.n))
      return out
    },
    /** The ids of each plan's organization groups, by name; `setGroups` replaces one plan's. */
    async groupIds(planIds: readonly number[]): Promise<Map<number, number[]>> {
      const out = new Map<number, number[]>()
      if (!planIds.length) return out
      const rows = await db
        .selectFrom('plan_organization_groups as link')
        .innerJoin('organization_groups', 'organization_groups.id', 'link.organization_group_id')
        .select(['link.plan_id', 'link.organization_group_id'])
        .where('link.plan_id', 'in', [...planIds])
        .orderBy('organization_groups.name')
        .orderBy('organization_groups.id')
        .execute()
      for (const r of rows) out.set(r.plan_id, [...(out.get(r.plan_id) ?? []), r.organization_group_id])
      return out
    },
    setGroups: groups.set,
  }
})

export type PlanComponentRow = Awaited<
  ReturnType<ReturnType<typeof planComponentsRepository>['listByPlans']>
>[number]
export type ListedPlanComponentRow = Awaited<
  ReturnType<ReturnType<typeof planComponentsRepository>['list']>
>[number]
