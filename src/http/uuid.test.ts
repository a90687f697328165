// Uuids: the accepted forms, and the new ones made in time order.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { normalizeUuid, uuid7 } from './uuid.js'

test('hyphenated and bare forms are accepted, anything else is not', () => {
  const u = '0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b'
  assert.equal(normalizeUuid(u.toUpperCase()), u)
  assert.equal(normalizeUuid(u.replace(/-/g, '')), u)
  assert.equal(normalizeUuid(u.replace(/-/g, '').toUpperCase()), u)
  assert.equal(normalizeUuid(u), u)
  for (const bad of [
    '',
    'x',
    `${u}0`,
    u.replace(/-/g, '').slice(1),
    '0193a1b2c3d4-7e5f-8a9b-0c1d2e3f4a5b',
    42,
  ]) {
    assert.equal(normalizeUuid(bad), null, String(bad))
  }
})

test('new uuids are version 7: their time, then random bits; they sort in the order made', () => {
  const at = Date.parse('2026-11-24T12:00:00.000Z')
  const u = uuid7(at)
  assert.match(u, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  assert.equal(parseInt(u.replace(/-/g, '').slice(0, 12), 16), at)
  assert.equal(normalizeUuid(u), u)
  const made = Array.from({ length: 20000 }, (_, i) => uuid7(at + i))
  assert.equal(new Set(made).size, made.length)
  assert.deepEqual([...made].sort(), made)
  // Within one millisecond they differ in their random bits.
  const same = Array.from({ length: 1000 }, () => uuid7(at))
  assert.equal(new Set(same).size, same.length)
})
