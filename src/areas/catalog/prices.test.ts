import { test } from 'node:test'
import assert from 'node:assert/strict'
import { AppError } from '../../http/errors.js'
import { parsePrice } from './prices.js'

const rejects = (v: unknown, message: string) =>
  assert.throws(
    () => parsePrice('unit_price', v),
    (e: unknown) =>
      e instanceof AppError && JSON.stringify(e.body) === JSON.stringify({ unit_price: [message] }),
  )

test('numbers and numeric strings become plain decimal strings', () => {
  const decimals: [unknown, string][] = [
    [10, '10'],
    [0.25, '0.25'],
    ['012.5000', '12.5'],
    [' 3 ', '3'],
    ['.5', '0.5'],
    ['1e3', '1000'],
    ['-0', '0'],
    ['999999999999.9999999999', '999999999999.9999999999'],
  ]
  for (const [given, decimal] of decimals) assert.equal(parsePrice('p', given), decimal)
})

test('negative, non-numeric and out-of-range prices are refused with DRF messages', () => {
  for (const v of [-1, '-0.01']) rejects(v, 'Ensure this value is greater than or equal to 0.')
  for (const v of ['abc', '', '.', '1.2.3', true, Number.NaN]) rejects(v, 'A valid number is required.')
  rejects('1234567890123', 'Ensure that there are no more than 12 digits before the decimal point.')
  rejects('1.00000000001', 'Ensure that there are no more than 10 decimal places.')
})
