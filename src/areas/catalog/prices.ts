// Plan prices as requests give them. Pure.
import { fieldError } from '../../http/errors.js'

/**
 * A price from a request: a JSON number or a numeric string, not negative, at most 12 digits
 * before the decimal point (the column is numeric(22, 10)). Returned as a plain decimal string.
 */
export function parsePrice(field: string, v: unknown): string {
  let text: string
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw fieldError(field, 'A valid number is required.')
    text = String(v)
  } else if (typeof v === 'string') {
    text = v.trim()
  } else {
    throw fieldError(field, 'A valid number is required.')
  }
  if (/e/i.test(text)) {
    const n = Number(text)
    if (!Number.isFinite(n)) throw fieldError(field, 'A valid number is required.')
    text = n.toFixed(10)
  }
  const m = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(text)
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) throw fieldError(field, 'A valid number is required.')
  const intPart = (m[2] ?? '').replace(/^0+(?=\d)/, '') || '0'
  const frac = (m[3] ?? '').replace(/0+$/, '')
  const isZero = /^0*$/.test(intPart) && frac === ''
  if (m[1] === '-' && !isZero) throw fieldError(field, 'Ensure this value is greater than or equal to 0.')
  if (intPart.length > 12) {
    throw fieldError(field, 'Ensure that there are no more than 12 digits before the decimal point.')
  }
  if (frac.length > 10) throw fieldError(field, 'Ensure that there are no more than 10 decimal places.')
  return frac ? `${intPart}.${frac}` : intPart
}
