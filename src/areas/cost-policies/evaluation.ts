// The evaluation of an offering's cost policies: the estimate each policy reads (see estimate.ts)
// and the job that fires and resets policies against their limits.
import Big from 'big.js'
import type { AppContext } from '../../context.js'
import { parseJson, toBool, toJson } from '../../db/values.js'
import { builtinComponents, priceOn } from '../catalog/service.js'
import { userIdsWithRole } from '../directory/service.js'
import {
  estimatedCost,
  nextMonthStart,
  periodStart,
  PERIODS,
  type CostInput,
  type Period,
  type UsageInput,
} from './estimate.js'
import { policiesRepository } from './repository.js'
import { PATH } from './schema.js'
import { emitEvent } from '../events/service.js'

export const EVALUATE_JOB = 'cost-policy.evaluate'

/** What a policy's estimate reads now: the resources it covers and their estimated cost. */
export interface Estimate {
  resources: number
  cost: Big
}

/** A plan's component prices in effect: what its fixed components add to a month, the price
 * and factor of each limit-billed component and the price of each usage-billed one. */
interface PlanPrices {
  fixed: Big
  limit: Map<string, { price: Big; factor: number }>
  usage: Map<string, Big>
}

/** The plans' component prices in effect on `day` (YYYY-MM-DD), by plan id. */
function pricesByPlan(
  rows: Awaited<ReturnType<ReturnType<typeof policiesRepository>['planComponentPrices']>>,
  day: string,
): Map<number, PlanPrices> {
  const out = new Map<number, PlanPrices>()
  for (const r of rows) {
    const plan = out.get(r.plan_id) ?? { fixed: new Big(0), limit: new Map(), usage: new Map() }
    out.set(r.plan_id, plan)
    const { price } = priceOn(r, day)
    if (r.billing_type === 'fixed') plan.fixed = plan.fixed.plus(price.times(Number(r.amount) || 1))
    if (r.billing_type === 'usage') plan.usage.set(r.type, price)
    if (r.billing_type === 'limit') {
      const builtin = builtinComponents(r.offering_type).find((b) => b.type === r.type)
      plan.limit.set(r.type, { price, factor: builtin?.factor ?? 1 })
    }
  }
  return out
}

/** What a resource's limits add to a month: each priced limit component's price × limit / factor. */
function limitsCost(prices: PlanPrices | undefined, limits: unknown): Big {
  let total = new Big(0)
  if (!prices) return total
  const given = parseJson<Record<string, unknown>>(limits, {})
  for (const [type, { price, factor }] of prices.limit) {
    const v = given[type]
    if (typeof v !== 'number' && typeof v !== 'string') continue
    try {
      total = total.plus(price.times(v).div(factor))
    } catch {
      // A limit that is not a number costs nothing.
    }
  }
  return total
}

/** The first billing period (YYYY-MM-DD) any of these policies' windows reads; null with a Total one. */
function earliestPeriod(policies: readonly { period: unknown }[], now: Date): string | null {
  let first = now
  for (const p of policies) {
    const start = periodStart(Number(p.period) as Period, now)
    if (start === null) return null
    if (start < first) first = start
  }
  return first.toISOString().slice(0, 8) + '01'
}

/**
 * The estimates the evaluation fires on (see estimate.ts), for these policies at `now`: the
 * resources each covers and their estimated cost over its period, from the plans' prices, the
 * resources' limits and the usage reported for the window's billing periods.
 */
export async function estimatesOf(
  db: AppContext['db'],
  policies: readonly { id: number; period: unknown }[],
  now: Date,
): Promise<Estimate[]> {
  const repo = policiesRepository(db)
  const ids = policies.map((p) => p.id)
  const inputs = await repo.costInputs(ids)
  const limits = await repo.limitInputs(ids)
  const usages = await repo.usageInputs(ids, earliestPeriod(policies, now))
  const planIds = [...new Set(inputs.map((r) => r.plan_id).filter((id): id is number => id !== null))]
  const prices = pricesByPlan(await repo.planComponentPrices(planIds), now.toISOString().slice(0, 10))
  return policies.map((p) => {
    const own = inputs.filter((r) => Number(r.policy_id) === p.id)
    const resources: CostInput[] = own.map((r) => ({
      created: `${r.month}-01T00:00:00.000Z`,
      count: Number(r.n),
      unit: r.unit,
      unitPrice: decimalText(r.unit_price),
      fixedPrice: decimalText(r.fixed_price),
      components: r.plan_id === null ? 0 : (prices.get(r.plan_id)?.fixed ?? 0),
    }))
    for (const r of limits) {
      if (Number(r.policy_id) !== p.id || r.plan_id === null) continue
      resources.push({
        created: `${r.month}-01T00:00:00.000Z`,
        unit: null,
        unitPrice: 0,
        fixedPrice: 0,
        components: limitsCost(prices.get(r.plan_id), r.limits),
      })
    }
    const reported: UsageInput[] = []
    for (const u of usages) {
      if (Number(u.policy_id) !== p.id || u.plan_id === null) continue
      const price = prices.get(u.plan_id)?.usage.get(u.type)
      if (price) reported.push({ billingPeriod: u.billing_period, usage: decimalText(u.usage), price })
    }
    const cost = estimatedCost(Number(p.period) as Period, resources, now, reported)
    return { resources: own.reduce((t, r) => t + Number(r.n), 0), cost }
  })
}

/** A price as the database gives it (numeric text, or a number on SQLite) for big.js; none is 0. */
function decimalText(v: unknown): string | number {
  if (typeof v === 'number') return Number.isFinite(v) ? v : 0
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return v.trim()
  return 0
}

/**
 * The evaluation job: for each policy of the offering, the estimated cost over its period
 * (see estimate.ts) against limit_cost. Strictly above the limit fires a policy that has not
 * fired (once per period: has_fired, fired_datetime, then the immediate actions); a policy that
 * fired in an earlier period, or whose cost is no longer above the limit, is reset first
 * (has_fired false, fired_datetime kept). A re-evaluation is queued for the next month start,
 * when every period's window moves.
 */
export async function evaluateOfferingPolicies(ctx: AppContext, offeringId: number): Promise<void> {
  const repo = policiesRepository(ctx.db)
  const offering = await repo.findOffering(offeringId)
  if (!offering) return
  const policies = await repo.listForOffering(offeringId)
  if (!policies.length) return
  const now = ctx.clock()
  const nowIso = now.toISOString()
  let owners: number[] | null = null
  const estimates = await estimatesOf(ctx.db, policies, now)
  for (const [i, p] of policies.entries()) {
    const period = Number(p.period) as Period
    const { cost } = estimates[i]!
    const limit = Number(p.limit_cost)
    const above = cost.gt(limit)
    const start = periodStart(period, now)
    const stale = start !== null && p.fired_datetime !== null && p.fired_datetime < start.toISOString()
    const actions = p.actions.split(',')
    if (actions.includes('notify_organization_owners') && above && owners === null) {
      owners = await userIdsWithRole(ctx, 'customer', offering.customer_id, ['CUSTOMER.OWNER'])
    }
    await ctx.db.transaction().execute(async (trx) => {
      const tx = policiesRepository(trx)
      let fired = toBool(p.has_fired)
      if (fired && (!above || stale)) {
        await tx.setFired(p.id, false, nowIso)
        fired = false
      }
      if (!fired && above && (await tx.setFired(p.id, true, nowIso))) {
        if (actions.includes('notify_organization_owners')) {
          const message = `Policy ${p.uuid} of offering "${offering.name}" has fired: the estimated cost ${cost.toFixed(2)} exceeds the limit ${limit}.`
          await tx.notifyUsers(owners ?? [], {
            newUuid: ctx.newUuid,
            event_type: 'policy_notification',
            message,
            context: toJson({
              policy_uuid: p.uuid,
              offering_uuid: offering.uuid,
              estimated_cost: cost.toNumber(),
              limit_cost: limit,
              period: PERIODS[period],
            }),
            created: nowIso,
          })
        }
        await emitEvent(ctx, trx, {
          type: 'marketplace.cost_policy.fired',
          objectType: 'cost_policy',
          objectUuid: p.uuid,
          path: `/api/${PATH}/${p.uuid}/`,
          offeringUuid: offering.uuid,
          data: {
            estimated_cost: cost.toFixed(2),
            limit_cost: String(p.limit_cost),
            period: PERIODS[period],
            actions,
          },
        })
        ctx.log.info({ policy: p.uuid, cost: cost.toNumber(), limit }, 'cost policy fired')
      }
    })
  }
  const recheck = nextMonthStart(now).toISOString()
  if (!(await repo.recheckPending(offeringId, recheck))) {
    await ctx.db.transaction().execute(async (trx) => {
      await policiesRepository(trx).setRecheck(offeringId, recheck)
      await ctx.jobs.enqueue(trx, EVALUATE_JOB, { offeringId }, { runAt: new Date(recheck) })
    })
  }
}
