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
  assert.equal(parsePrice('p', 10), '10')
  assert.equal(parsePrice('p', 0.25), '0.25')
  assert.equal(parsePrice('p', '012.5000'), '12.5')
  assert.equal(parsePrice('p', ' 3 '), '3')
  assert.equal(parsePrice('p', '.5'), '0.5')
  assert.equal(parsePrice('p', '1e3'), '1000')
  assert.equal(parsePrice('p', '-0'), '0')
  assert.equal(parsePrice('p', '999999999999.9999999999'), '999999999999.9999999999')
})

test('negative, non-numeric and out-of-range prices are refused with DRF messages', () => {
  rejects(-1, 'Ensure this value is greater than or equal to 0.')
  rejects('-0.01', 'Ensure this value is greater than or equal to 0.')
  rejects('abc', 'A valid number is required.')
  rejects('', 'A valid number is required.')
  rejects('.', 'A valid number is required.')
  rejects('1.2.3', 'A valid number is required.')
  rejects(true, 'A valid number is required.')
  rejects(Number.NaN, 'A valid number is required.')
  rejects('1234567890123', 'Ensure that there are no more than 12 digits before the decimal point.')
  rejects('1.00000000001', 'Ensure that there are no more than 10 decimal places.')
})
