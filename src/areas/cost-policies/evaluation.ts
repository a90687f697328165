// The evaluation of an offering's cost policies: the estimate each policy reads (see estimate.ts)
// and the job that fires and resets policies against their limits.
import type Big from 'big.js'
import type { AppContext } from '../../context.js'
import { toBool, toJson } from '../../db/values.js'
import { userIdsWithRole } from '../directory/service.js'
import { estimatedCost, nextMonthStart, periodStart, PERIODS, type Period } from './estimate.js'
import { policiesRepository } from './repository.js'
import { PATH } from './schema.js'
import { emitEvent } from '../events/service.js'

export const EVALUATE_JOB = 'cost-policy.evaluate'

/** What a policy's estimate reads now: the resources it covers and their estimated cost. */
export interface Estimate {
  resources: number
  cost: Big
}

/**
 * The estimates the evaluation fires on (see estimate.ts), for these policies at `now`, from one
 * query: the resources each covers and their estimated cost over its period.
 */
export async function estimatesOf(
  db: AppContext['db'],
  policies: readonly { id: number; period: unknown }[],
  now: Date,
): Promise<Estimate[]> {
  const inputs = await policiesRepository(db).costInputs(policies.map((p) => p.id))
  return policies.map((p) => {
    const own = inputs.filter((r) => Number(r.policy_id) === p.id)
    const cost = estimatedCost(
      Number(p.period) as Period,
      own.map((r) => ({
        created: `${r.month}-01T00:00:00.000Z`,
        count: Number(r.n),
        unit: r.unit,
        unitPrice: decimalText(r.unit_price),
        fixedPrice: decimalText(r.fixed_price),
      })),
      now,
    )
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
