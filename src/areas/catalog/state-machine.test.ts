import { test } from 'node:test'
import assert from 'node:assert/strict'
import { AppError } from '../../http/errors.js'
import { OFFERING_TRANSITIONS, offeringTransition, resourceTransition } from './state-machine.js'

test('activate moves Draft and Paused offerings to Active', () => {
  assert.equal(offeringTransition('Draft', 'activate').to, 'Active')
  assert.equal(offeringTransition('Paused', 'activate').to, 'Active')
})

test('pause is only allowed from Active and names the valid state in its 409', () => {
  assert.equal(offeringTransition('Active', 'pause').to, 'Paused')
  assert.throws(
    () => offeringTransition('Draft', 'pause'),
    (e: unknown) =>
      e instanceof AppError && e.status === 409 && e.body === 'Valid states for operation: Active.',
  )
})

test('archive is allowed from every state but Archived', () => {
  assert.deepEqual(OFFERING_TRANSITIONS.archive.from, ['Draft', 'Active', 'Paused'])
  assert.throws(
    () => offeringTransition('Archived', 'archive'),
    (e: unknown) => e instanceof AppError && e.body === 'Valid states for operation: Draft, Active, Paused.',
  )
})

test('unpause only from Paused', () => {
  assert.equal(offeringTransition('Paused', 'unpause').to, 'Active')
  assert.throws(() => offeringTransition('Active', 'unpause'), AppError)
})

test('a resource is set OK from a state in progress or Erred, and erred from any state', () => {
  for (const s of ['Creating', 'Updating', 'Terminating', 'Erred'])
    assert.equal(resourceTransition(s, 'set_state_ok').to, 'OK')
  assert.throws(
    () => resourceTransition('Terminated', 'set_as_ok'),
    (e: unknown) =>
      e instanceof AppError &&
      e.status === 409 &&
      e.body === 'Valid states for operation: Erred, Creating, Updating, Terminating.',
  )
  for (const s of ['OK', 'Terminated', 'Creating'])
    assert.equal(resourceTransition(s, 'set_as_erred').to, 'Erred')
})
