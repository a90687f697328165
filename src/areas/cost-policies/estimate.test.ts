import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  estimatedCost,
  inWindow,
  monthlyPrice,
  monthsInWindow,
  nextMonthStart,
  periodStart,
} from './estimate.js'

const now = new Date('2026-03-15T12:00:00.000Z')

test('period windows start at the first of the current, 3rd or 12th last month; Total has none', () => {
  assert.equal(periodStart(1, now), null)
  assert.equal(periodStart(2, now)!.toISOString(), '2026-03-01T00:00:00.000Z')
  assert.equal(periodStart(3, now)!.toISOString(), '2026-01-01T00:00:00.000Z')
  assert.equal(periodStart(4, now)!.toISOString(), '2025-04-01T00:00:00.000Z')
  assert.equal(nextMonthStart(new Date('2026-12-31T23:59:59.999Z')).toISOString(), '2027-01-01T00:00:00.000Z')
})

test('a monthly price is unit price times units per month plus the fixed price', () => {
  assert.equal(monthlyPrice({ unit: 'month', unitPrice: 10, fixedPrice: 5 }).toNumber(), 15)
  assert.equal(monthlyPrice({ unit: 'day', unitPrice: 1, fixedPrice: 0 }).toNumber(), 30)
  assert.equal(monthlyPrice({ unit: 'hour', unitPrice: 0.5, fixedPrice: 0 }).toNumber(), 360)
  assert.equal(monthlyPrice({ unit: 'half_month', unitPrice: 3, fixedPrice: 0 }).toNumber(), 6)
  assert.equal(monthlyPrice({ unit: 'quantity', unitPrice: 7, fixedPrice: 1 }).toNumber(), 8)
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
  assert.equal(estimatedCost(2, resources, now).toNumber(), 135)
  assert.equal(estimatedCost(3, resources, now).toNumber(), 100 + 35 * 3)
  assert.equal(estimatedCost(2, [{ ...resources[0]!, count: 4 }], now).toNumber(), 400)
})

test('money is summed in decimal: no binary float error survives', () => {
  // 0.1 + 0.2 as a plan's unit and fixed price is 0.3 (floats: 0.30000000000000004).
  assert.equal(monthlyPrice({ unit: 'quantity', unitPrice: 0.1, fixedPrice: 0.2 }).toString(), '0.3')
  assert.equal(monthlyPrice({ unit: 'hour', unitPrice: '0.0001', fixedPrice: '0.2' }).toString(), '0.272')
  // 4 + 0.015 a month over three months is 12.045, which rounds to 12.05 (floats: 12.04, having
  // summed to 12.044999999999998).
  const quarter = [
    { created: '2026-01-01T00:00:00.000Z', unit: 'month', unitPrice: '4', fixedPrice: '0.015' },
  ]
  assert.equal(estimatedCost(3, quarter, now).toFixed(2), '12.05')
  // Ten components of 0.1 + 0.2 sum to exactly 3 (floats drift: 3.0000000000000004).
  const tenths = Array.from({ length: 10 }, () => ({
    created: '2026-03-01T00:00:00.000Z',
    unit: 'quantity',
    unitPrice: 0.1,
    fixedPrice: 0.2,
  }))
  assert.equal(estimatedCost(2, tenths, now).toString(), '3')
  // Large sums keep their cents.
  const big = [
    {
      created: '2026-03-01T00:00:00.000Z',
      count: 1000,
      unit: 'hour',
      unitPrice: '0.0137',
      fixedPrice: '9999999.99',
    },
  ]
  assert.equal(estimatedCost(2, big, now).toFixed(2), '10000009854.00')
})

test('a billing period counts in the windows it falls in, never after the current month', () => {
  assert.equal(inWindow(2, '2026-03-01', now), true)
  assert.equal(inWindow(2, '2026-02-01', now), false)
  assert.equal(inWindow(3, '2026-01-01', now), true)
  assert.equal(inWindow(3, '2025-12-01', now), false)
  assert.equal(inWindow(4, '2025-04-01', now), true)
  assert.equal(inWindow(4, '2025-03-01', now), false)
  assert.equal(inWindow(1, '1999-01-01', now), true)
  assert.equal(inWindow(1, '2026-04-01', now), false)
})

test("components add to a month; reported usage × price adds to its billing period's windows", () => {
  assert.equal(
    monthlyPrice({ unit: 'month', unitPrice: 5, fixedPrice: 0, components: '20' }).toString(),
    '25',
  )
  const resources = [
    { created: '2026-02-10T00:00:00.000Z', unit: 'month', unitPrice: 5, fixedPrice: 0, components: 20 },
  ]
  const usages = [
    { billingPeriod: '2026-03-01', usage: '1234.5', price: '0.05' },
    { billingPeriod: '2026-02-01', usage: '100', price: '0.05' },
  ]
  // 25 + 1234.5 × 0.05 = 86.725, rounded half up once at the end.
  assert.equal(estimatedCost(2, resources, now, usages).toFixed(2), '86.73')
  assert.equal(estimatedCost(3, resources, now, usages).toFixed(2), '116.73')
  // 0.1 × 0.1 × 3 reports is 0.03 exactly (floats: 0.030000000000000006).
  const tenths = Array.from({ length: 3 }, () => ({ billingPeriod: '2026-03-01', usage: 0.1, price: 0.1 }))
  assert.equal(estimatedCost(2, [], now, tenths).toString(), '0.03')
})
