// What a plan's component prices add up to, and which price is in effect on a day. Pure: prices
// are decimal strings or numbers as the database gives them, added with big.js.
import Big from 'big.js'
import type { BillingType } from './schema.js'

/** One component's price in a plan, as stored. */
export interface StoredPrice {
  price: unknown
  future_price: unknown
  /** YYYY-MM-DD: the day `future_price` becomes the price. */
  future_price_start_date: string | null
}

const big = (v: unknown): Big => {
  try {
    return new Big(v === null || v === undefined || v === '' ? 0 : (v as string | number))
  } catch {
    return new Big(0)
  }
}

/**
 * The price in effect on `day` (YYYY-MM-DD) and the one still to come: a future price whose day
 * has come is the price, with nothing more to come.
 */
export function priceOn(p: StoredPrice, day: string): { price: Big; future: Big | null } {
  const hasFuture = p.future_price !== null && p.future_price !== undefined
  if (hasFuture && p.future_price_start_date !== null && p.future_price_start_date <= day) {
    return { price: big(p.future_price), future: null }
  }
  return { price: big(p.price), future: hasFuture ? big(p.future_price) : null }
}

/** The first day of the month after `day` (YYYY-MM-DD). */
export function nextMonthStart(day: string): string {
  const [y, m] = day.split('-').map(Number) as [number, number]
  return m === 12 ? `${y + 1}-01-01` : `${y}-${String(m + 1).padStart(2, '0')}-01`
}

/** A plan's component with the price in effect. */
export interface PricedComponent {
  billing_type: string
  price: Big
  amount: number
}

const PLAN_TYPES: Record<BillingType, string> = {
  usage: 'usage-based',
  fixed: 'fixed',
  one: 'one-time',
  few: 'on-plan-switch',
  limit: 'limit',
}

/**
 * A plan's sums as the reference shows them: `init_price` (its one-time components' prices),
 * `switch_price` (its on-plan-switch components'), `plan_type` (the billing type of its priced
 * components, `mixed` when they differ, null when none has a price) and `minimal_price` (what a
 * resource costs at least a period: each limit component's price for one unit, each fixed
 * component's price times its amount (at least one), each one-time component's price).
 */
export function planSums(components: readonly PricedComponent[]) {
  let init = new Big(0)
  let switchPrice = new Big(0)
  let minimal = new Big(0)
  const priced = new Set<string>()
  for (const c of components) {
    if (c.billing_type === 'one') init = init.plus(c.price)
    if (c.billing_type === 'few') switchPrice = switchPrice.plus(c.price)
    if (c.price.eq(0)) continue
    priced.add(c.billing_type)
    if (c.billing_type === 'limit' || c.billing_type === 'one') minimal = minimal.plus(c.price)
    if (c.billing_type === 'fixed') minimal = minimal.plus(c.price.times(c.amount || 1))
  }
  const [only] = priced
  const planType = priced.size > 1 ? 'mixed' : only ? (PLAN_TYPES[only as BillingType] ?? null) : null
  return { init, switchPrice, minimal, planType }
}
