// The estimated cost of an offering's resources over a policy period. Pure (no clock, no
// database) so the formula is unit-tested beside this file; docs/cost-policies.md states it.
//
//   monthly price of a resource = plan.unit_price × units per month(plan.unit) + plan.fixed_price
//   cost over the period        = Σ monthly price × calendar months of the period window in which
//                                 the resource existed (its creation month counts in full)
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

export function monthlyPrice(r: Pick<CostInput, 'unit' | 'unitPrice' | 'fixedPrice'>): Big {
  const units = UNITS_PER_MONTH[r.unit ?? ''] ?? 1
  return new Big(r.unitPrice).times(units).plus(r.fixedPrice)
}

/** Months of the window (ending with `now`'s month) during which a resource created at `created` existed. */
export function monthsInWindow(period: Period, created: Date, now: Date): number {
  const current = monthIndex(now)
  const months = WINDOW_MONTHS[period]
  const first = Math.max(monthIndex(created), months === null ? -Infinity : current - months + 1)
  return Math.max(0, current - first + 1)
}

/** The estimated cost of these resources over the period, rounded to cents (half up). */
export function estimatedCost(period: Period, resources: CostInput[], now: Date): Big {
  let total = new Big(0)
  for (const r of resources) {
    const months = monthsInWindow(period, new Date(r.created), now)
    if (months > 0) total = total.plus(monthlyPrice(r).times(months * (r.count ?? 1)))
  }
  return total.round(2, Big.roundHalfUp)
}
