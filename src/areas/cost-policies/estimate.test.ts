import { test } from 'node:test'
import assert from 'node:assert/strict'
import { estimatedCost, monthlyPrice, monthsInWindow, nextMonthStart, periodStart } from './estimate.js'

const now = new Date('2026-03-15T12:00:00.000Z')

test('period windows start at the first of the current, 3rd or 12th last month; Total has none', () => {
  assert.equal(periodStart(1, now), null)
  assert.equal(periodStart(2, now)!.toISOString(), '2026-03-01T00:00:00.000Z')
  assert.equal(periodStart(3, now)!.toISOString(), '2026-01-01T00:00:00.000Z')
  assert.equal(periodStart(4, now)!.toISOString(), '2025-04-01T00:00:00.000Z')
  assert.equal(nextMonthStart(new Date('2026-12-31T23:59:59.999Z')).toISOString(), '2027-01-01T00:00:00.000Z')
})

test('a monthly price is unit price times units per month plus the fixed price', () => {
  assert.equal(monthlyPrice({ unit: 'month', unitPrice: 10, fixedPrice: 5 }), 15)
  assert.equal(monthlyPrice({ unit: 'day', unitPrice: 1, fixedPrice: 0 }), 30)
  assert.equal(monthlyPrice({ unit: 'hour', unitPrice: 0.5, fixedPrice: 0 }), 360)
  assert.equal(monthlyPrice({ unit: 'half_month', unitPrice: 3, fixedPrice: 0 }), 6)
  assert.equal(monthlyPrice({ unit: 'quantity', unitPrice: 7, fixedPrice: 1 }), 8)
})

test('months count from the creation month, limited to the window', () => {
  const jan = new Date('2025-01-20T00:00:00.000Z')
  assert.equal(monthsInWindow(1, jan, now), 15)
  assert.equal(monthsInWindow(2, jan, now), 1)
  assert.equal(monthsInWindow(3, jan, now), 3)
  assert.equal(monthsInWindow(4, jan, now), 12)
  const feb = new Date('2026-02-28T23:00:00.000Z')
  assert.equal(monthsInWindow(3, feb, now), 2)
  assert.equal(monthsInWindow(2, new Date('2026-04-01T00:00:00.000Z'), now), 0)
})

test('the estimated cost sums every resource', () => {
  const resources = [
    { created: '2026-03-01T00:00:00.000Z', unit: 'month', unitPrice: 100, fixedPrice: 0 },
    { created: '2026-01-10T00:00:00.000Z', unit: 'day', unitPrice: 1.1, fixedPrice: 2 },
  ]
  assert.equal(estimatedCost(2, resources, now), 135)
  assert.equal(estimatedCost(3, resources, now), 100 + 35 * 3)
  assert.equal(estimatedCost(2, [{ ...resources[0]!, count: 4 }], now), 400)
})
