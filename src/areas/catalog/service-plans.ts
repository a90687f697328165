// Plans of offerings: listing, the record, and writes by whoever may update the offering. Plan
// values are also checked here for the plans given inline when an offering is created.
import type { AppContext } from '../../context.js'
import type { Listing } from '../../db/listing.js'
import { decimalString, fromBool, isoNow } from '../../db/values.js'
import { AppError, FieldErrorSet, fieldError, forbidden } from '../../http/errors.js'
import { ownLink, recordRenderer, relatedLink } from '../../http/links.js'
import type { Actor } from '../../http/permissions.js'
import { pageOf, type Pager } from '../../http/resource.js'
import { scheduleCostPolicyEvaluation } from '../cost-policies/service.js'
import { canUpdateOffering } from './access.js'
import type { CatalogVisibility, Db } from './repository.js'
import { plansRepository } from './repository-offerings.js'
import { PATHS, PLAN_UNITS, type Plan, type PlanWrite } from './schema.js'
import { parsePrice } from './prices.js'
import { findVisible, resolveOfferingLink, type PlanRow } from './service-links.js'

/** Decimal places plan prices are rendered with. */
const PRICE_PLACES = 7

const price = (v: unknown) => decimalString(v, PRICE_PLACES) ?? '0.0000000'

export const toPlan = recordRenderer<PlanRow, Plan>({
  ...ownLink(PATHS.plans),
  ...relatedLink('offering', PATHS.offerings, 'uuid', 'name'),
  name: 'copy',
  description: 'copy',
  unit: 'copy',
  unit_price: (r) => price(r.unit_price),
  fixed_price: (r) => price(r.fixed_price),
  activation_price: (r) => price(r.activation_price),
  archived: 'flag',
  created: 'copy',
})

function parseUnit(v: unknown): string {
  if (typeof v !== 'string' || !(PLAN_UNITS as readonly string[]).includes(v)) {
    throw fieldError('unit', `"${String(v)}" is not a valid choice.`)
  }
  return v
}

/**
 * Validated column values of a plan body (only the keys given); every bad field is named in one
 * 400, with the errors already gathered (a field that has one is not checked again).
 */
function planValues(body: PlanWrite, errors = new FieldErrorSet()): Record<string, unknown> {
  const values: Record<string, unknown> = {}
  if (body.name !== undefined) values.name = body.name
  if (body.description !== undefined) values.description = body.description
  if (body.unit !== undefined) errors.checkSync('unit', () => (values.unit = parseUnit(body.unit)))
  for (const k of ['unit_price', 'fixed_price', 'activation_price'] as const) {
    if (body[k] !== undefined) errors.checkSync(k, () => (values[k] = parsePrice(k, body[k])))
  }
  if (body.archived !== undefined) values.archived = fromBool(body.archived)
  errors.throwIfAny()
  return values
}

/** Inline plans of an offering: errors are nested as DRF does, `{"plans": [{}, {"unit": [...]}]}`. */
export function inlinePlanValues(plans: PlanWrite[]): Record<string, unknown>[] {
  return plans.map((p, i) => {
    try {
      return planValues(p)
    } catch (e) {
      if (e instanceof AppError && e.kind === 'invalid' && e.body && typeof e.body === 'object') {
        const nested: unknown[] = plans.map(() => ({}))
        nested[i] = e.body
        throw new AppError('invalid', { plans: nested })
      }
      throw e
    }
  })
}

export async function insertPlan(
  ctx: AppContext,
  db: Db,
  offeringId: number,
  values: Record<string, unknown>,
): Promise<number> {
  const t = isoNow(ctx.clock)
  return plansRepository(db).insert({
    uuid: ctx.newUuid(),
    offering_id: offeringId,
    name: values.name,
    description: values.description ?? '',
    unit: values.unit ?? 'month',
    unit_price: values.unit_price ?? '0',
    fixed_price: values.fixed_price ?? '0',
    activation_price: values.activation_price ?? '0',
    archived: values.archived ?? 0,
    created: t,
    modified: t,
  })
}

export function listPlans(
  ctx: AppContext,
  vis: CatalogVisibility,
  listing: Listing,
  base: string,
  page: Pager<Plan>,
) {
  return pageOf(page, plansRepository(ctx.db), vis, listing, (r) => toPlan(base, r))
}

function findVisiblePlan(ctx: AppContext, actor: Actor, uuid: string): Promise<PlanRow> {
  return findVisible(plansRepository(ctx.db), actor, uuid, 'Plan')
}

/** A plan the actor may edit (through its offering); 404, then 403. */
async function findWritablePlan(ctx: AppContext, actor: Actor, uuid: string): Promise<PlanRow> {
  const row = await findVisiblePlan(ctx, actor, uuid)
  if (!canUpdateOffering(actor, { id: row.offering_id, customer_id: row.offering_customer_id })) {
    throw forbidden()
  }
  return row
}

export async function getPlan(ctx: AppContext, actor: Actor, uuid: string, base: string) {
  return toPlan(base, await findVisiblePlan(ctx, actor, uuid))
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
  const id = await insertPlan(ctx, ctx.db, offering!.id, values)
  return toPlan(base, (await plansRepository(ctx.db).findById(id))!)
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
    // New prices change the estimated cost of the offering's resources.
    await scheduleCostPolicyEvaluation(ctx, trx, row.offering_id)
  })
  return toPlan(base, (await plansRepository(ctx.db).findById(row.id))!)
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
