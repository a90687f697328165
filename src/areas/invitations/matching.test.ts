import { test } from 'node:test'
import assert from 'node:assert/strict'
import { badPlaceholders, emailMatches, patternErrors, renderProjectName, userMatches } from './matching.js'

test('e-mail patterns match at the start only', () => {
  assert.equal(emailMatches('.*@example\\.com$', 'a@example.com'), true)
  assert.equal(emailMatches('example', 'a@example.com'), false)
  assert.equal(emailMatches('a@', 'a@example.com'), true)
})

test('dangerous and invalid patterns are reported and never match', () => {
  assert.equal(patternErrors(['(a+)+$']).length, 1)
  assert.equal(patternErrors(['x'.repeat(201)]).length, 1)
  assert.equal(patternErrors(['([']).length, 1)
  assert.deepEqual(patternErrors(['.*@uni\\.edu']), [])
  assert.equal(emailMatches('(a+)+', 'aaaa'), false)
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
