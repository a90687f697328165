// The record cache: an entry answers only for the version it was rendered at, and a full cache
// drops the oldest entry not read since, keeping those read.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { RecordCache } from './record-cache.js'

test('an entry answers for its own version only; another version drops it', () => {
  const c = new RecordCache(10)
  c.set('a', '1.0', 'A1')
  assert.equal(c.get('a', '1.0'), 'A1')
  assert.equal(c.get('a', '2.0'), undefined)
  assert.equal(c.get('a', '1.0'), undefined, 'dropped when its version was outdated')
  c.set('a', '2.0', 'A2')
  c.set('a', '3.0', 'A3')
  assert.equal(c.get('a', '3.0'), 'A3')
  assert.equal(c.size, 1)
})

test('a full cache drops the oldest entry not read since it was added', () => {
  const c = new RecordCache(3)
  c.set('a', '1', 'A')
  c.set('b', '1', 'B')
  c.set('c', '1', 'C')
  assert.equal(c.get('a', '1'), 'A')
  c.set('d', '1', 'D')
  assert.equal(c.size, 3)
  assert.equal(c.get('b', '1'), undefined, 'b was the oldest unread')
  assert.equal(c.get('a', '1'), 'A')
  assert.equal(c.get('d', '1'), 'D')
  // Every entry read (in the order c, a, d): each loses its mark in turn, and then the oldest goes.
  assert.equal(c.get('c', '1'), 'C')
  c.set('e', '1', 'E')
  assert.equal(c.size, 3)
  assert.equal(c.get('c', '1'), undefined)
  for (const k of ['a', 'd', 'e']) assert.equal(c.get(k, '1'), k.toUpperCase())
})

test('a cache of size 0 keeps nothing', () => {
  const c = new RecordCache(0)
  c.set('a', '1', 'A')
  assert.equal(c.get('a', '1'), undefined)
  assert.equal(c.size, 0)
})
