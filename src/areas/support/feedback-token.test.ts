import { test } from 'node:test'
import assert from 'node:assert/strict'
import { signFeedbackToken, verifyFeedbackToken } from './feedback-token.js'

const uuid = '0f8fad5b-d9cb-469f-a165-70867728950e'
const issued = new Date('2026-01-15T10:00:00.000Z')

test('a token has the <hex>:<timestamp>:<signature> layout and verifies back to the issue', () => {
  const token = signFeedbackToken('s3cret', uuid, issued)
  assert.match(token, /^0f8fad5bd9cb469fa16570867728950e:1768471200:[A-Za-z0-9_-]{43}$/)
  assert.deepEqual(verifyFeedbackToken('s3cret', token, issued, 60), { ok: true, issueUuid: uuid })
})

test('another secret, a changed uuid or timestamp, and garbage are refused', () => {
  const token = signFeedbackToken('s3cret', uuid, issued)
  assert.deepEqual(verifyFeedbackToken('other', token, issued, 60), { ok: false, reason: 'forged' })
  const [hex, ts, sig] = token.split(':') as [string, string, string]
  const otherHex = `1${hex.slice(1)}`
  assert.equal(verifyFeedbackToken('s3cret', `${otherHex}:${ts}:${sig}`, issued, 60).ok, false)
  assert.equal(verifyFeedbackToken('s3cret', `${hex}:${Number(ts) + 1}:${sig}`, issued, 60).ok, false)
  for (const bad of ['', 'garbage', `${hex}:${ts}`, `${token}x`, token.toUpperCase()]) {
    assert.equal(verifyFeedbackToken('s3cret', bad, issued, 60).ok, false, bad)
  }
})

test('a token is valid up to its maximum age and expired one second later', () => {
  const token = signFeedbackToken('s3cret', uuid, issued)
  const at = (s: number) => new Date(issued.getTime() + s * 1000)
  assert.equal(verifyFeedbackToken('s3cret', token, at(60), 60).ok, true)
  assert.deepEqual(verifyFeedbackToken('s3cret', token, at(61), 60), { ok: false, reason: 'expired' })
})
