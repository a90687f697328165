import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  badPlaceholders,
  emailMatches,
  MAX_PATTERN_SIZE,
  patternErrors,
  patternSize,
  renderProjectName,
  userMatches,
} from './matching.js'

test('e-mail patterns match the whole address', () => {
  assert.equal(emailMatches('.*@example\\.com', 'a@example.com'), true)
  assert.equal(emailMatches('example', 'a@example.com'), false)
  assert.equal(emailMatches('a@', 'a@example.com'), false)
  assert.equal(emailMatches('boss@cust-a\\.example', 'boss@cust-a.example'), true)
  assert.equal(emailMatches('boss@cust-a\\.example', 'boss@cust-a.example.evil.org'), false)
  assert.equal(emailMatches('.*@cust-a\\.example', 'x@cust-a.example\nx@evil.org'), false)
  assert.equal(emailMatches('a|b', 'ab'), false)
  assert.equal(emailMatches('.*', ''), false)
})

test('invalid, unbalanced, over-long and over-repeating patterns are reported and never match', () => {
  assert.equal(patternErrors(['x'.repeat(201)]).length, 1)
  assert.equal(patternErrors(['([']).length, 1)
  assert.equal(patternErrors(['a)|(.*']).length, 1)
  assert.equal(emailMatches('a)|(.*', 'b@x.org'), false)
  assert.equal(patternErrors(['(a)\\1']).length, 1) // no back-references in a linear-time engine
  assert.equal(patternErrors(['(?=a)a']).length, 1)
  assert.equal(patternErrors(['(?:.{0,30}){0,30}@x']).length, 1)
  assert.equal(patternErrors(['.{0,100}'.repeat(6)]).length, 1)
  assert.deepEqual(patternErrors(['.*@uni\\.edu']), [])
  assert.deepEqual(patternErrors(Array.from({ length: 21 }, (_, i) => `a${i}@x`)), [
    'Ensure this list has at most 20 patterns.',
  ])
  assert.equal(emailMatches('(?:.{0,30}){0,30}', 'aaaa'), false)
})

test('the expanded size counts repetitions, nested ones multiplied', () => {
  assert.equal(patternSize('abc'), 3)
  assert.equal(patternSize('a{5}'), 6)
  assert.equal(patternSize('(ab){3}'), 8)
  assert.equal(patternSize('((a){2}){3}'), 12)
  assert.equal(patternSize('[a-z]+@x'), 4)
  assert.equal(patternSize('\\d{2,8}'), 9)
  assert.ok(patternSize('(?:.{0,999}){0,999}') > MAX_PATTERN_SIZE)
})

test('patterns that backtrack in other engines are accepted and still run in linear time', () => {
  const started = performance.now()
  for (const p of [
    '(a|a)*@x',
    '(a+)+!',
    '(.*a){3}@x',
    '.*.*.*.*@x',
    '(\\w+\\.)+@x',
    '.{0,10}'.repeat(12) + '!',
    '.{0,10}'.repeat(24) + '!',
    '(?:.{0,9}){0,9}'.repeat(4) + '!',
    '[^@]{0,40}'.repeat(12) + '!',
  ]) {
    assert.deepEqual(patternErrors([p]), [], p)
    for (const len of [22, 64, 320]) assert.equal(emailMatches(p, 'a'.repeat(len)), false)
  }
  assert.ok(performance.now() - started < 1500, `${performance.now() - started} ms`)
  for (const p of [
    '.*@cust-a\\.example',
    '[a-z.]+@(dept1|dept2)\\.uni\\.edu',
    '[^@]+@[^@]+\\.edu',
    '(boss|ceo)@cust-a\\.example',
    '[a-z]{2,8}\\d?@x\\.org',
  ]) {
    assert.deepEqual(patternErrors([p]), [], p)
  }
  assert.equal(emailMatches('[a-z.]+@(dept1|dept2)\\.uni\\.edu', 'ann.b@dept2.uni.edu'), true)
})

test('one worst-case pattern answers within milliseconds on every address length', () => {
  const p = '.{0,10}'.repeat(12) + '!'
  emailMatches(p, 'warm-up')
  for (const len of [22, 40, 120, 320]) {
    const started = performance.now()
    assert.equal(emailMatches(p, 'a'.repeat(len)), false)
    assert.ok(performance.now() - started < 100, `${len}: ${performance.now() - started} ms`)
  }
})

test('restrictions are OR-combined and none means everyone', () => {
  const u = { email: 'x@uni.edu', affiliations: ['staff'], identitySource: 'eduGAIN' }
  assert.equal(userMatches({ emailPatterns: [], affiliations: [], identitySources: [] }, u), true)
  assert.equal(
    userMatches({ emailPatterns: ['nobody'], affiliations: ['staff'], identitySources: [] }, u),
    true,
  )
  assert.equal(
    userMatches({ emailPatterns: ['nobody'], affiliations: [], identitySources: ['eduGAIN'] }, u),
    true,
  )
  assert.equal(
    userMatches({ emailPatterns: ['nobody'], affiliations: ['student'], identitySources: [] }, u),
    false,
  )
})

test('templates accept only the three variables and render them', () => {
  assert.deepEqual(badPlaceholders('{username}-{org}'), ['org'])
  assert.deepEqual(badPlaceholders('{username} {email} {full_name}'), [])
  const u = { username: 'ann', email: 'ann@x.org', fullName: '' }
  assert.equal(renderProjectName('{full_name} / {email}', u), 'ann / ann@x.org')
  assert.equal(renderProjectName('', u), 'ann_project')
})
