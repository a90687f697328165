// The estimated cost of an offering's resources over a policy period. Pure (no clock, no
// database) so the formula is unit-tested beside this file; docs/cost-policies.md states it.
//
//   monthly price of a resource = plan.unit_price × units per month(plan.unit) + plan.fixed_price
//                                 + Σ fixed components: price × the plan's amount
//                                 + Σ limit components: price × the resource's limit / factor
//   cost over the period        = Σ monthly price × calendar months of the period window in which
//                                 the resource existed (its creation month counts in full)
//                                 + Σ usage components: price × the usage reported for each
//                                   billing period of the window
//
// Windows (UTC calendar months, ending with the current month): Total = since each resource's
// creation; 1 month = the current month; 3 month = current + 2 previous; 12 month = current + 11
// previous. Whole months make the estimate change only when resources or plans change and at
// month starts, which is when policies are re-evaluated.
//
// Money is summed in decimal (big.js), never in binary floats: 4.015 × 3 is 12.045 and rounds to
// 12.05, where floats give 12.044999999999998 and 12.04.
import Big from 'big.js'

export const PERIODS = { 1: 'Total', 2: '1 month', 3: '3 month', 4: '12 month' } as const
export type Period = keyof typeof PERIODS

/** Calendar months in each period's window (Total: unbounded). */
const WINDOW_MONTHS: Record<Period, number | null> = { 1: null, 2: 1, 3: 3, 4: 12 }

/** How many plan units a month holds. Units not listed (quantity, ...) count once a month. */
export const UNITS_PER_MONTH: Record<string, number> = {
  month: 1,
  half_month: 2,
  day: 30,
  hour: 720,
}

export interface CostInput {
  /** ISO-8601 creation time of the resource (only its month matters). */
  created: string
  /** How many resources share these values (default 1). */
  count?: number
  unit: string | null
  /** Decimal prices, as the database gives them (numeric text) or as numbers. */
  unitPrice: number | string
  fixedPrice: number | string
  /** What its fixed and limit-billed components add to a month, per resource (default 0). */
  components?: Big | number | string
}

/** The usage of a usage-billed component reported for a billing period, and its price. */
export interface UsageInput {
  /** YYYY-MM-DD, the first day of the billing month. */
  billingPeriod: string
  /** How many resources share these values (default 1). */
  count?: number
  usage: Big | number | string
  price: Big | number | string
}

function monthIndex(d: Date): number {
  return d.getUTCFullYear() * 12 + d.getUTCMonth()
}

/** First instant of the period's window, or null for Total. */
export function periodStart(period: Period, now: Date): Date | null {
  const months = WINDOW_MONTHS[period]
  if (months === null) return null
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - (months - 1), 1))
}

/** First instant of the next calendar month: when every period's window moves. */
export function nextMonthStart(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1))
}

export function monthlyPrice(r: Pick<CostInput, 'unit' | 'unitPrice' | 'fixedPrice' | 'components'>): Big {
  const units = UNITS_PER_MONTH[r.unit ?? ''] ?? 1
  return new Big(r.unitPrice)
    .times(units)
    .plus(r.fixedPrice)
    .plus(r.components ?? 0)
}

/** Months of the window (ending with `now`'s month) during which a resource created at `created` existed. */
export function monthsInWindow(period: Period, created: Date, now: Date): number {
  const current = monthIndex(now)
  const months = WINDOW_MONTHS[period]
  const first = Math.max(monthIndex(created), months === null ? -Infinity : current - months + 1)
  return Math.max(0, current - first + 1)
}

/** Whether a billing period (its first day, YYYY-MM-DD) is one of the window's months. */
export function inWindow(period: Period, billingPeriod: string, now: Date): boolean {
  const current = monthIndex(now)
  const months = WINDOW_MONTHS[period]
  const [y, m] = billingPeriod.split('-').map(Number) as [number, number]
  const index = y * 12 + (m - 1)
  return index <= current && (months === null || index > current - months)
}

/**
 * The estimated cost of these resources over the period, with the reported usages of the
 * window's billing periods, rounded to cents (half up).
 */
export function estimatedCost(
  period: Period,
  resources: CostInput[],
  now: Date,
  usages: UsageInput[] = [],
): Big {
  let total = new Big(0)
  for (const r of resources) {
    const months = monthsInWindow(period, new Date(r.created), now)
    if (months > 0) total = total.plus(monthlyPrice(r).times(months * (r.count ?? 1)))
  }
  for (const u of usages) {
    if (inWindow(period, u.billingPeriod, now))
      total = total.plus(new Big(u.usage).times(u.price).times(u.count ?? 1))
  }
  return total.round(2, Big.roundHalfUp)
}
