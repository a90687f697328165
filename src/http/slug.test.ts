import { test } from 'node:test'
import assert from 'node:assert/strict'
import { slugify, SLUG_PATTERN } from './slug.js'

test("slugify follows Django's rules", () => {
  assert.equal(slugify('Hello World', 'x'), 'hello-world')
  assert.equal(slugify('  Déjà vu -- again_  ', 'x'), 'deja-vu-again')
  assert.equal(slugify('snake_case stays', 'x'), 'snake_case-stays')
  assert.equal(slugify('a/b.c:d', 'x'), 'abcd')
  assert.equal(slugify('日本語', 'order'), 'order')
  assert.equal(slugify('', 'order'), 'order')
  assert.equal(slugify('--_--', 'order'), 'order')
})

test('a slug is cut to its length without a trailing hyphen, and always matches the pattern', () => {
  assert.equal(slugify('abc def', 'x', 4), 'abc')
  const re = new RegExp(SLUG_PATTERN)
  for (const s of ['x', 'Ünïcödé names', '\u0000\t\n', 'ÆØÅ', '🙂 smile', '-lead', 'trail_']) {
    assert.match(slugify(s, 'fallback'), re, s)
  }
})
