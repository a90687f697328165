import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  backtrackingRisk,
  badPlaceholders,
  emailMatches,
  patternErrors,
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

test('dangerous and invalid patterns are reported and never match', () => {
  assert.equal(patternErrors(['(a+)+$']).length, 1)
  assert.equal(patternErrors(['x'.repeat(201)]).length, 1)
  assert.equal(patternErrors(['([']).length, 1)
  assert.deepEqual(patternErrors(['.*@uni\\.edu']), [])
  assert.equal(emailMatches('(a+)+', 'aaaa'), false)
})

test('patterns that backtrack badly are refused; ordinary ones pass', () => {
  for (const p of [
    '(a|a)*@x',
    '(.*a){3}@x',
    '.*.*.*@x',
    '(\\w+\\.)+@x',
    '(a)\\1',
    '(?<n>a)\\k<n>',
    'a{1,99}b+c*',
  ]) {
    assert.ok(backtrackingRisk(p), p)
  }
  for (const p of [
    '.*@cust-a\\.example',
    '[a-z.]+@(dept1|dept2)\\.uni\\.edu',
    '[^@]+@[^@]+\\.edu',
    '(boss|ceo)@cust-a\\.example',
    '[a-z]{2,8}\\d?@x\\.org',
  ]) {
    assert.equal(backtrackingRisk(p), null, p)
  }
  // Whatever passes runs in linear-ish time on the longest address.
  const started = Date.now()
  emailMatches('.*.*@x', 'a'.repeat(320))
  emailMatches('[a-z]+[a-z]+@x', 'a'.repeat(320))
  assert.ok(Date.now() - started < 200)
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
