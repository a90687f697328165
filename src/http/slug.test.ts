import { test } from 'node:test'
import assert from 'node:assert/strict'
import { slugify, SLUG_PATTERN } from './slug.js'

test("slugify follows Django's rules", () => {
  const slugs: [string, string][] = [
    ['Hello World', 'hello-world'],
    ['  Déjà vu -- again_  ', 'deja-vu-again'],
    ['snake_case stays', 'snake_case-stays'],
    ['a/b.c:d', 'abcd'],
  ]
  for (const [text, slug] of slugs) assert.equal(slugify(text, 'x'), slug)
  // Nothing left to slug: the fallback.
  for (const text of ['日本語', '', '--_--']) assert.equal(slugify(text, 'order'), 'order')
})

test('a slug is cut to its length without a trailing hyphen, and always matches the pattern', () => {
  assert.equal(slugify('abc def', 'x', 4), 'abc')
  const re = new RegExp(SLUG_PATTERN)
  for (const s of ['x', 'Ünïcödé names', '\u0000\t\n', 'ÆØÅ', '🙂 smile', '-lead', 'trail_']) {
    assert.match(slugify(s, 'fallback'), re, s)
  }
})
