// A map kept to a size: a key's value is made once, and a full map drops its oldest entry first.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { keptOrMade } from './kept.js'

test("a key's value is made once; a null value is kept too", () => {
  const map = new Map<string, number | null>()
  let made = 0
  const make = (v: number | null) => () => (made++, v)
  assert.equal(keptOrMade(map, 'a', 10, make(1)), 1)
  assert.equal(keptOrMade(map, 'a', 10, make(2)), 1)
  assert.equal(keptOrMade(map, 'b', 10, make(null)), null)
  assert.equal(keptOrMade(map, 'b', 10, make(3)), null)
  assert.equal(made, 2)
})

test('a full map drops its oldest entry before keeping a new one', () => {
  const map = new Map<string, number>()
  for (const [i, k] of ['a', 'b', 'c'].entries()) keptOrMade(map, k, 3, () => i)
  assert.equal(
    keptOrMade(map, 'd', 3, () => 3),
    3,
  )
  assert.deepEqual([...map.keys()], ['b', 'c', 'd'])
  assert.equal(
    keptOrMade(map, 'a', 3, () => 9),
    9,
    "'a' was dropped, so it is made again",
  )
})
