// Plans of offerings: listing, the record (with its component prices and sums), and writes by
// whoever may update the offering. Plan values are also checked here for the plans given inline
// when an offering is created.
import Big from 'big.js'
import type { AppContext } from '../../context.js'
import type { Listing } from '../../db/listing.js'
import { decimalString, fromBool, isoNow } from '../../db/values.js'
import { AppError, FieldErrorSet, fieldError, forbidden } from '../../http/errors.js'
import { ownLink, recordRenderer, relatedLink } from '../../http/links.js'
import type { Actor } from '../../http/permissions.js'
import type { Pager } from '../../http/resource.js'
import { pageOfRows } from '../../http/resource-calls.js'
import { scheduleCostPolicyEvaluation } from '../cost-policies/service.js'
import { organizationGroupsByIds, resolveOrganizationGroups } from '../directory/service.js'
import type { OrganizationGroup } from '../directory/schema.js'
import { canUpdateOffering } from './access.js'
import { planSums, priceOn } from './pricing.js'
import type { CatalogVisibility, Db } from './repository.js'
import { planComponentsRepository } from './repository-components.js'
import { plansRepository } from './repository-offerings.js'
import { PATHS, PLAN_UNITS, type NestedPlanComponent, type Plan, type PlanWrite } from './schema.js'
import { parsePrice } from './prices.js'
import { findVisible, resolveOfferingLink, type PlanRow } from './service-links.js'
import { componentPrice, today, writePlanPricing, type PlanPricing } from './service-plan-prices.js'

/** Decimal places plan prices are rendered with. */
const PRICE_PLACES = 7

const price = (v: unknown) => decimalString(v, PRICE_PLACES) ?? '0.0000000'

/** A plan row with what its record shows beside its columns, read for a page of plans at once. */
type PlanWithParts = PlanRow & {
  parts: {
    groups: OrganizationGroup[]
    components: NestedPlanComponent[]
    resourcesCount: number
    init: Big
    switchPrice: Big
    minimal: Big
    planType: string | null
  }
}

const byType = <T>(components: NestedPlanComponent[], value: (c: NestedPlanComponent) => T | null) =>
  Object.fromEntries(
    components.flatMap((c) => {
      const v = value(c)
      return v === null ? [] : [[c.type, v]]
    }),
  ) as Record<string, T>

const toPlan = recordRenderer<PlanWithParts, Plan>({
  ...ownLink(PATHS.plans),
  ...relatedLink('offering', PATHS.offerings, 'uuid', 'name'),
  name: 'copy',
  description: 'copy',
  unit: 'copy',
  unit_price: (r) => price(r.unit_price),
  fixed_price: (r) => price(r.fixed_price),
  activation_price: (r) => price(r.activation_price),
  archived: 'flag',
  article_code: 'copy',
  max_amount: 'copy',
  backend_id: 'copy',
  // Mirrors the reference's Plan.is_active: below its maximum of live resources, or no maximum.
  is_active: (r) => !r.max_amount || r.parts.resourcesCount < r.max_amount,
  init_price: (r) => r.parts.init.toNumber(),
  switch_price: (r) => r.parts.switchPrice.toNumber(),
  organization_groups: (r) => r.parts.groups,
  components: (r) => r.parts.components,
  prices: (r) => byType(r.parts.components, (c) => c.price),
  future_prices: (r) => byType(r.parts.components, (c) => c.future_price),
  quotas: (r) => byType(r.parts.components, (c) => c.amount),
  resources_count: (r) => r.parts.resourcesCount,
  plan_type: (r) => r.parts.planType,
  minimal_price: (r) => componentPrice(r.parts.minimal),
  created: 'copy',
})

/** The records of plan rows: their components, groups and resource counts read once for all. */
export async function toPlans(ctx: AppContext, base: string, rows: readonly PlanRow[]): Promise<Plan[]> {
  const ids = rows.map((r) => r.id)
  const repo = planComponentsRepository(ctx.db)
  const [components, counts, groupIds] = await Promise.all([
    repo.listByPlans(ids),
    repo.resourceCounts(ids),
    repo.groupIds(ids),
  ])
  const groups = await organizationGroupsByIds(ctx, base, [...groupIds.values()].flat())
  const day = today(ctx)
  const byPlan = new Map<
    number,
    { nested: NestedPlanComponent[]; priced: Parameters<typeof planSums>[0][number][] }
  >()
  for (const c of components) {
    const p = priceOn(c, day)
    const entry = byPlan.get(c.plan_id) ?? { nested: [], priced: [] }
    entry.nested.push({
      type: c.type,
      name: c.name,
      measured_unit: c.measured_unit,
      amount: Number(c.amount),
      price: componentPrice(p.price),
      future_price: p.future ? componentPrice(p.future) : null,
    })
    entry.priced.push({ billing_type: c.billing_type, price: p.price, amount: Number(c.amount) })
    byPlan.set(c.plan_id, entry)
  }
  return rows.map((r) => {
    const entry = byPlan.get(r.id) ?? { nested: [], priced: [] }
    const sums = planSums(entry.priced)
    return toPlan(base, {
      ...r,
      parts: {
        groups: (groupIds.get(r.id) ?? []).flatMap((g) => groups.get(g) ?? []),
        components: entry.nested,
        resourcesCount: counts.get(r.id) ?? 0,
        ...sums,
      },
    })
  })
}

function parseUnit(v: unknown): string {
  if (typeof v !== 'string' || !(PLAN_UNITS as readonly string[]).includes(v)) {
    throw fieldError('unit', `"${String(v)}" is not a valid choice.`)
  }
  return v
}

/**
 * Validated column values of a plan body (only the keys given); every bad field is named in one
 * 400, with the errors already gathered (a field that has one is not checked again). Its
 * component prices and amounts are written apart (`writePlanPricing`).
 */
function planValues(body: PlanWrite, errors = new FieldErrorSet()): Record<string, unknown> {
  const values: Record<string, unknown> = {}
  for (const k of ['name', 'description', 'article_code', 'max_amount', 'backend_id'] as const) {
    if (body[k] !== undefined) values[k] = body[k]
  }
  if (body.unit !== undefined) errors.checkSync('unit', () => (values.unit = parseUnit(body.unit)))
  for (const k of ['unit_price', 'fixed_price', 'activation_price'] as const) {
    if (body[k] !== undefined) errors.checkSync(k, () => (values[k] = parsePrice(k, body[k])))
  }
  if (body.archived !== undefined) values.archived = fromBool(body.archived)
  errors.throwIfAny()
  return values
}

/** A plan given inline: its columns, and its component prices and amounts. */
export interface InlinePlan {
  values: Record<string, unknown>
  pricing: PlanPricing
}

/** Errors of the inline plan `index` of `count`, nested as DRF does: `{"plans": [{}, {...}]}`. */
function nestedPlanError(e: unknown, index: number, count: number): unknown {
  if (e instanceof AppError && e.kind === 'invalid' && e.body && typeof e.body === 'object') {
    const nested: unknown[] = Array.from({ length: count }, () => ({}))
    nested[index] = e.body
    return new AppError('invalid', { plans: nested })
  }
  return e
}

/** Inline plans of an offering: errors are nested as DRF does, `{"plans": [{}, {"unit": [...]}]}`. */
export function inlinePlanValues(plans: PlanWrite[]): InlinePlan[] {
  return plans.map((p, i) => {
    try {
      return { values: planValues(p), pricing: { prices: p.prices, quotas: p.quotas } }
    } catch (e) {
      throw nestedPlanError(e, i, plans.length)
    }
  })
}

/** Writes the inline plans of a new offering (after its components), prices included. */
export async function insertInlinePlans(
  ctx: AppContext,
  db: Db,
  offeringId: number,
  plans: readonly InlinePlan[],
): Promise<void> {
  for (const [i, p] of plans.entries()) {
    const id = await insertPlan(ctx, db, offeringId, p.values)
    try {
      await writePlanPricing(ctx, db, { id, offering_id: offeringId }, p.pricing)
    } catch (e) {
      throw nestedPlanError(e, i, plans.length)
    }
  }
}

/** Inserts a plan, priced 0 for each component of its offering; its id back. */
export async function insertPlan(
  ctx: AppContext,
  db: Db,
  offeringId: number,
  values: Record<string, unknown>,
): Promise<number> {
  const t = isoNow(ctx.clock)
  const id = await plansRepository(db).insert({
    uuid: ctx.newUuid(),
    offering_id: offeringId,
    name: values.name,
    description: values.description ?? '',
    unit: values.unit ?? 'month',
    unit_price: values.unit_price ?? '0',
    fixed_price: values.fixed_price ?? '0',
    activation_price: values.activation_price ?? '0',
    archived: values.archived ?? 0,
    article_code: values.article_code ?? '',
    max_amount: values.max_amount ?? null,
    backend_id: values.backend_id ?? '',
    created: t,
    modified: t,
  })
  await planComponentsRepository(db).addMissing(id, offeringId)
  return id
}

export function listPlans(
  ctx: AppContext,
  vis: CatalogVisibility,
  listing: Listing,
  base: string,
  page: Pager<Plan>,
) {
  return pageOfRows(page, plansRepository(ctx.db), vis, listing, (rows) => toPlans(ctx, base, rows))
}

function findVisiblePlan(ctx: AppContext, actor: Actor, uuid: string): Promise<PlanRow> {
  return findVisible(plansRepository(ctx.db), actor, uuid, 'Plan')
}

/** A plan the actor may edit (through its offering); 404, then 403. */
export async function findWritablePlan(ctx: AppContext, actor: Actor, uuid: string): Promise<PlanRow> {
  const row = await findVisiblePlan(ctx, actor, uuid)
  if (!canUpdateOffering(actor, { id: row.offering_id, customer_id: row.offering_customer_id })) {
    throw forbidden()
  }
  return row
}

/** The record of the plan `id`, as a write answers it. */
export async function planRecord(ctx: AppContext, base: string, id: number): Promise<Plan> {
  return (await toPlans(ctx, base, [(await plansRepository(ctx.db).findById(id))!]))[0]!
}

export async function getPlan(ctx: AppContext, actor: Actor, uuid: string, base: string) {
  return (await toPlans(ctx, base, [await findVisiblePlan(ctx, actor, uuid)]))[0]!
}

/** Plans are created by whoever may update the offering (OFFERING.UPDATE) or staff. */
export async function createPlan(
  ctx: AppContext,
  actor: Actor,
  body: PlanWrite & { offering: string; name: string },
  base: string,
  errors = new FieldErrorSet(),
): Promise<Plan> {
  const offering = await errors.check('offering', () =>
    resolveOfferingLink(ctx, actor, 'offering', body.offering),
  )
  if (offering && !canUpdateOffering(actor, offering)) throw forbidden()
  const values = planValues(body, errors)
  const id = await ctx.db.transaction().execute(async (trx) => {
    const id = await insertPlan(ctx, trx, offering!.id, values)
    await writePlanPricing(ctx, trx, { id, offering_id: offering!.id }, body)
    return id
  })
  return planRecord(ctx, base, id)
}

export async function updatePlan(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: PlanWrite,
  base: string,
  errors = new FieldErrorSet(),
): Promise<Plan> {
  const row = await findWritablePlan(ctx, actor, uuid)
  if (body.offering !== undefined) {
    await errors.check('offering', async () => {
      const o = await resolveOfferingLink(ctx, actor, 'offering', body.offering)
      if (o.id !== row.offering_id) throw fieldError('offering', 'The offering of a plan cannot be changed.')
    })
  }
  const values = planValues(body, errors)
  values.modified = isoNow(ctx.clock)
  await ctx.db.transaction().execute(async (trx) => {
    await plansRepository(trx).update(row.id, values)
    await writePlanPricing(ctx, trx, row, body)
    // New prices change the estimated cost of the offering's resources.
    await scheduleCostPolicyEvaluation(ctx, trx, row.offering_id)
  })
  return planRecord(ctx, base, row.id)
}

/**
 * `update_prices` / `update_quotas`: the plan's component prices or fixed amounts, by whoever
 * may update its offering (see `writePlanPricing`).
 */
export async function updatePlanPricing(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: PlanPricing,
): Promise<void> {
  const row = await findWritablePlan(ctx, actor, uuid)
  await ctx.db.transaction().execute(async (trx) => {
    await writePlanPricing(ctx, trx, row, body)
    await plansRepository(trx).update(row.id, { modified: isoNow(ctx.clock) })
    await scheduleCostPolicyEvaluation(ctx, trx, row.offering_id)
  })
}

/**
 * `update_organization_groups` (the list given replaces the plan's) and
 * `delete_organization_groups` (none left): whoever may update the offering.
 */
export async function setPlanGroups(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  links: readonly string[],
): Promise<void> {
  const row = await findWritablePlan(ctx, actor, uuid)
  const ids = await resolveOrganizationGroups(ctx, 'organization_groups', [...links])
  await ctx.db.transaction().execute(async (trx) => {
    await planComponentsRepository(trx).setGroups(row.id, ids)
    await plansRepository(trx).update(row.id, { modified: isoNow(ctx.clock) })
  })
}

/** Deletes a plan, or archives it when resources still use it (their history keeps the link). */
export async function deletePlan(ctx: AppContext, actor: Actor, uuid: string): Promise<void> {
  const row = await findWritablePlan(ctx, actor, uuid)
  await ctx.db.transaction().execute(async (trx) => {
    const repo = plansRepository(trx)
    if ((await repo.resourceCount(row.id)) > 0) {
      await repo.update(row.id, { archived: 1, modified: isoNow(ctx.clock) })
    } else await repo.delete(row.id)
  })
}

/** The plan row by id, or undefined. */
export async function findPlanById(ctx: AppContext, id: number): Promise<PlanRow | undefined> {
  return plansRepository(ctx.db).findById(id)
}

/** Whether the plan may take one more resource: fewer live resources than its `max_amount`. */
export async function planHasRoom(ctx: AppContext, plan: { id: number; max_amount: number | null }) {
  if (!plan.max_amount) return true
  const counts = await planComponentsRepository(ctx.db).resourceCounts([plan.id])
  return (counts.get(plan.id) ?? 0) < plan.max_amount
}
