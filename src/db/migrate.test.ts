// When a migration run is tried again: only when the table check failed because another schema (or
// one of its tables) was dropped meanwhile, never when one of our own migrations failed.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { MigrationResultSet } from 'kysely'
import { droppedMeanwhile } from './migrate.js'

const pgError = (code: string, message: string) => Object.assign(new Error(message), { code })
const ownFailed = [{ migrationName: 'm1', direction: 'Up', status: 'Error' }] as const

test("another schema dropped during the table check is retried; our own schema's is not", () => {
  const gone = pgError('3F000', 'schema "t_other" does not exist')
  assert.equal(droppedMeanwhile({ error: gone }, 't_mine'), true)
  assert.equal(
    droppedMeanwhile({ error: pgError('3F000', 'schema "t_mine" does not exist') }, 't_mine'),
    false,
  )
})

test('a table or column of another schema vanishing during the check is retried', () => {
  const column = pgError('42703', 'column "uuid" of relation "cloud_a_locations" does not exist')
  const table = pgError('42P01', 'relation "cloud_a_locations" does not exist')
  assert.equal(droppedMeanwhile({ error: column }, 't_mine'), true)
  assert.equal(droppedMeanwhile({ error: table, results: [] }, 't_mine'), true)
})

test('a failed migration of ours, other errors, success and the default schema are not retried', () => {
  const column = pgError('42703', 'column "uuid" does not exist')
  const failed: MigrationResultSet = { error: column, results: [...ownFailed] }
  assert.equal(droppedMeanwhile(failed, 't_mine'), false)
  assert.equal(droppedMeanwhile({ error: column }, undefined), false)
  assert.equal(droppedMeanwhile({ error: pgError('23505', 'duplicate key') }, 't_mine'), false)
  assert.equal(droppedMeanwhile({ results: [] }, 't_mine'), false)
})
