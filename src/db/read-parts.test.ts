// A joined row split into its parts: `<name>__<column>` goes to part `name`, a part without a row
// (its id null) is left out, and the function made for a statement's form serves its later rows.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { partSplitter, prefixed } from './read-parts.js'

test('each part takes its own columns; a part whose id is null is left out, and so are columns of no part', () => {
  const split = partSplitter()
  const row = {
    project__id: 7,
    project__name: 'Apollo',
    plan__id: null,
    plan__unit_price: null,
    customer__id: 3,
    customer__name: 'Acme',
    left_out: 0,
  }
  assert.deepEqual(split('a', row), {
    project: { id: 7, name: 'Apollo' },
    customer: { id: 3, name: 'Acme' },
  })
  assert.deepEqual(split('a', undefined), {})
})

test("the function made for a key serves that key's later rows, with their own values", () => {
  const split = partSplitter()
  assert.deepEqual(split('a', { offering__id: 1, offering__state: 'Active' }), {
    offering: { id: 1, state: 'Active' },
  })
  assert.deepEqual(split('a', { offering__id: 2, offering__state: 'Paused' }), {
    offering: { id: 2, state: 'Paused' },
  })
  assert.deepEqual(split('a', { offering__id: null, offering__state: null }), {})
  // Another key (another statement's form) gets a function of its own.
  assert.deepEqual(split('b', { plan__id: 4, plan__max_amount: 2 }), { plan: { id: 4, max_amount: 2 } })
})

test('a part without an id column is left out; names that need quoting are kept as they are', () => {
  const split = partSplitter()
  assert.deepEqual(split('a', { 'x__a"b': 1, y__id: 5, "y__it's": 'v' }), { y: { id: 5, "it's": 'v' } })
})

test('prefixed names a selection <name>__<column>, taking an alias when there is one', () => {
  assert.deepEqual(prefixed('project', ['projects.id', 'customers.name as customer_name']), [
    'projects.id as project__id',
    'customers.name as project__customer_name',
  ])
})
