import { test } from 'node:test'
import assert from 'node:assert/strict'
import Big from 'big.js'
import { nextMonthStart, planSums, priceOn } from './pricing.js'

test('a future price is the price from its day on, and nothing is left to come', () => {
  const p = { price: '1.5', future_price: '2.25', future_price_start_date: '2026-02-01' }
  const before = priceOn(p, '2026-01-31')
  assert.equal(before.price.toString(), '1.5')
  assert.equal(before.future?.toString(), '2.25')
  const on = priceOn(p, '2026-02-01')
  assert.equal(on.price.toString(), '2.25')
  assert.equal(on.future, null)
  const none = priceOn({ price: 3, future_price: null, future_price_start_date: null }, '2026-01-01')
  assert.equal(none.price.toString(), '3')
  assert.equal(none.future, null)
})

test('the next month starts on its first day, across the year', () => {
  assert.equal(nextMonthStart('2026-01-15'), '2026-02-01')
  assert.equal(nextMonthStart('2026-09-30'), '2026-10-01')
  assert.equal(nextMonthStart('2026-12-31'), '2027-01-01')
})

const c = (billing_type: string, price: string, amount = 0) => ({
  billing_type,
  price: new Big(price),
  amount,
})

test('plan sums: one-time and switch prices, the minimal price, the plan type', () => {
  const sums = planSums([
    c('one', '0.1'),
    c('one', '0.2'),
    c('few', '5'),
    c('limit', '1.25'),
    c('fixed', '3', 4),
    c('usage', '7'),
  ])
  assert.equal(sums.init.toString(), '0.3', 'decimal, not 0.30000000000000004')
  assert.equal(sums.switchPrice.toString(), '5')
  // 1.25 (one unit of the limit component) + 3 × 4 (fixed) + 0.3 (one-time); usage and switch do not count.
  assert.equal(sums.minimal.toString(), '13.55')
  assert.equal(sums.planType, 'mixed')
})

test('the plan type names the only billing type priced; unpriced components do not count', () => {
  const types: [string, string][] = [
    ['usage', 'usage-based'],
    ['fixed', 'fixed'],
    ['one', 'one-time'],
    ['few', 'on-plan-switch'],
    ['limit', 'limit'],
  ]
  for (const [billing, planType] of types) {
    assert.equal(planSums([c(billing, '1'), c('usage', '0')]).planType, planType)
  }
  assert.equal(planSums([c('limit', '0')]).planType, null)
  assert.equal(planSums([]).planType, null)
  // A fixed component without an amount counts once.
  assert.equal(planSums([c('fixed', '2.5', 0)]).minimal.toString(), '2.5')
})
