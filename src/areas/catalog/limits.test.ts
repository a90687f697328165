import { test } from 'node:test'
import assert from 'node:assert/strict'
import { allocatedLimits, limitErrors, takesLimits, type LimitComponent } from './limits.js'

const component = (type: string, over: Partial<LimitComponent> = {}): LimitComponent => ({
  type,
  billing_type: 'limit',
  is_prepaid: false,
  min_value: null,
  max_value: null,
  max_available_limit: null,
  ...over,
})

test('limit components and prepaid one-time components take limits; others do not', () => {
  assert.equal(takesLimits({ billing_type: 'limit', is_prepaid: false }), true)
  assert.equal(takesLimits({ billing_type: 'one', is_prepaid: true }), true)
  assert.equal(takesLimits({ billing_type: 'one', is_prepaid: false }), false)
  for (const billing_type of ['usage', 'fixed', 'few']) {
    assert.equal(takesLimits({ billing_type, is_prepaid: true }), false, billing_type)
  }
})

test('unknown types and types of components without limits are named together, sorted', () => {
  const components = [component('cpu'), component('hours', { billing_type: 'usage' })]
  assert.deepEqual(limitErrors(components, { ram: 1, cpu: 2, hours: 3, gpu: 1 }), {
    limits: ['Invalid types: gpu, hours, ram'],
  })
  assert.deepEqual(limitErrors([], { cpu: 1 }), { limits: ['Invalid types: cpu'] })
  assert.equal(limitErrors([], {}), null)
})

test('bounds: each component over its maximum or under its minimum is named under its type', () => {
  const components = [
    component('cpu', { min_value: 2, max_value: 10 }),
    component('ram', { max_value: 100 }),
    component('disk'),
  ]
  assert.equal(limitErrors(components, { cpu: 2, ram: 100, disk: 10 ** 9 }), null)
  assert.equal(limitErrors(components, { cpu: 10 }), null)
  assert.deepEqual(limitErrors(components, { cpu: 11, ram: 101, disk: 0 }), {
    limits: {
      cpu: ['The limit 11 value cannot be more than 10.'],
      ram: ['The limit 101 value cannot be more than 100.'],
    },
  })
  assert.deepEqual(limitErrors(components, { cpu: 1 }), {
    limits: { cpu: ['The limit 1 value cannot be less than 2.'] },
  })
})

test('a bound of 0 is no bound, as in the reference', () => {
  assert.equal(limitErrors([component('cpu', { min_value: 0, max_value: 0 })], { cpu: 99 }), null)
})

test('amounts must be whole numbers, not negative', () => {
  const components = [component('cpu')]
  assert.deepEqual(limitErrors(components, { cpu: 1.5 }), {
    limits: { cpu: ['A valid integer is required.'] },
  })
  assert.deepEqual(limitErrors(components, { cpu: '3' }), {
    limits: { cpu: ['A valid integer is required.'] },
  })
  assert.deepEqual(limitErrors(components, { cpu: -1 }), {
    limits: { cpu: ['Ensure this value is greater than or equal to 0.'] },
  })
})

test('max_available_limit is shared with what the other resources hold', () => {
  const components = [component('cpu', { max_available_limit: 100 })]
  assert.equal(limitErrors(components, { cpu: 100 }), null)
  assert.equal(limitErrors(components, { cpu: 40 }, new Map([['cpu', 60]])), null)
  assert.deepEqual(limitErrors(components, { cpu: 41 }, new Map([['cpu', 60]])), {
    limits: {
      cpu: [
        'Requested cpu cannot be provisioned due to offering safety limit. You can allocate up to 40 of cpu.',
      ],
    },
  })
  assert.deepEqual(limitErrors(components, { cpu: 1 }, new Map([['cpu', 120]])), {
    limits: {
      cpu: [
        'Requested cpu cannot be provisioned due to offering safety limit. You can allocate up to 0 of cpu.',
      ],
    },
  })
})

test('allocated limits add up each type over resources, skipping what is not a number', () => {
  const got = allocatedLimits([{ cpu: 2, ram: 10 }, { cpu: 3 }, { cpu: 'x', gpu: null }, {}])
  assert.deepEqual([...got.entries()].sort(), [
    ['cpu', 5],
    ['ram', 10],
  ])
})
