// A plan's prices and amounts of its offering's components: how they are written (with a plan,
// or by `update_prices` / `update_quotas`), how they read on a day, and the plan components list.
import Big from 'big.js'
import type { AppContext } from '../../context.js'
import type { Listing } from '../../db/listing.js'
import { AppError, fieldError } from '../../http/errors.js'
import { pageOf, type Pager } from '../../http/resource.js'
import { parsePrice } from './prices.js'
import { nextMonthStart, priceOn } from './pricing.js'
import type { CatalogVisibility, Db } from './repository.js'
import {
  planComponentsRepository,
  type ListedPlanComponentRow,
  type PlanComponentRow,
} from './repository-components.js'
import type { PlanComponent } from './schema.js'

/** Decimal places of a component's price (the column is numeric(22, 10)). */
export const COMPONENT_PRICE_PLACES = 10

/** A component price (a Big, or a decimal as the database gives it) as the API renders it. */
export function componentPrice(v: unknown): string {
  try {
    const n = v instanceof Big ? v : new Big(typeof v === 'number' || typeof v === 'string' ? v : 0)
    return n.toFixed(COMPONENT_PRICE_PLACES)
  } catch {
    return new Big(0).toFixed(COMPONENT_PRICE_PLACES)
  }
}

/** Today (YYYY-MM-DD) by the context's clock: the day prices are read on. */
export function today(ctx: AppContext): string {
  return ctx.clock().toISOString().slice(0, 10)
}

/** What a plan's prices and amounts are written from: each a map by component type. */
export interface PlanPricing {
  prices?: Record<string, number | string>
  quotas?: Record<string, number>
}

/** A 400 under `field`, for the component `type`: `{"prices": {"cpu": ["..."]}}`. */
function perType(field: string, type: string, e: unknown): never {
  if (e instanceof AppError && e.kind === 'invalid' && e.body && typeof e.body === 'object') {
    const messages = Object.values(e.body)[0]
    throw new AppError('invalid', { [field]: { [type]: messages } })
  }
  throw e
}

function invalidComponents(field: string, given: readonly string[], valid: ReadonlySet<string>): void {
  const invalid = given.filter((t) => !valid.has(t)).sort()
  if (invalid.length) throw fieldError(field, `Invalid components ${invalid.join(', ')}.`)
}

/**
 * Writes a plan's `prices` (every component of its offering; those not named: 0) and `quotas`
 * (the amounts of its fixed components; those not named: 0), as the reference's update_prices and
 * update_quotas do. A price changes at once while no live resource uses the plan; otherwise the
 * new price waits until the first day of the next month (`future_prices`), so a period already
 * begun is billed at the price it began with. Unknown types are 400 on the field.
 */
export async function writePlanPricing(
  ctx: AppContext,
  db: Db,
  plan: { id: number; offering_id: number },
  body: PlanPricing,
): Promise<void> {
  if (body.prices === undefined && body.quotas === undefined) return
  const repo = planComponentsRepository(db)
  await repo.addMissing(plan.id, plan.offering_id)
  const rows = await repo.listByPlans([plan.id])
  const updates = new Map<number, Record<string, unknown>>()
  const set = (row: PlanComponentRow, values: Record<string, unknown>) =>
    updates.set(row.id, { ...updates.get(row.id), ...values })
  if (body.prices !== undefined) {
    const prices = body.prices
    invalidComponents('prices', Object.keys(prices), new Set(rows.map((r) => r.type)))
    const parsed = new Map<string, string>()
    for (const [type, v] of Object.entries(prices)) {
      try {
        parsed.set(type, parsePrice('prices', v))
      } catch (e) {
        perType('prices', type, e)
      }
    }
    const day = today(ctx)
    const inUse = ((await repo.resourceCounts([plan.id])).get(plan.id) ?? 0) > 0
    for (const row of rows) {
      const wanted = parsed.get(row.type) ?? '0'
      const now = priceOn(row, day).price
      if (!inUse) set(row, { price: wanted, future_price: null, future_price_start_date: null })
      else if (now.eq(wanted))
        set(row, { price: now.toString(), future_price: null, future_price_start_date: null })
      else {
        set(row, {
          price: now.toString(),
          future_price: wanted,
          future_price_start_date: nextMonthStart(day),
        })
      }
    }
  }
  if (body.quotas !== undefined) {
    const quotas = body.quotas
    invalidComponents(
      'quotas',
      Object.keys(quotas),
      new Set(rows.filter((r) => r.billing_type === 'fixed').map((r) => r.type)),
    )
    for (const row of rows) {
      if (row.billing_type === 'fixed') set(row, { amount: quotas[row.type] ?? 0 })
    }
  }
  for (const [id, values] of updates) await repo.update(id, values)
}

// ---- /api/marketplace-plan-components/ ----

function toPlanComponent(r: ListedPlanComponentRow, day: string): PlanComponent {
  const p = priceOn(r, day)
  return {
    offering_uuid: r.offering_uuid,
    offering_name: r.offering_name,
    plan_uuid: r.plan_uuid,
    plan_name: r.plan_name,
    plan_unit: r.plan_unit,
    component_name: r.component_name,
    measured_unit: r.measured_unit,
    billing_type: r.billing_type as PlanComponent['billing_type'],
    amount: Number(r.amount),
    price: componentPrice(p.price),
    future_price: p.future ? componentPrice(p.future) : null,
  }
}

/** The components of the plans of offerings the caller may see. */
export function listPlanComponents(
  ctx: AppContext,
  vis: CatalogVisibility,
  listing: Listing,
  page: Pager<PlanComponent>,
) {
  const day = today(ctx)
  return pageOf(page, planComponentsRepository(ctx.db), vis, listing, (r) => toPlanComponent(r, day))
}
