// What a request costs in statements sent to the database (`Database.statements()`), for the
// tests that pin it.
import assert from 'node:assert/strict'
import type { Database } from '../../src/db/database.js'
import type { Change } from '../../src/db/change-feed.js'
import type { TestApp } from './app.js'
import { call } from './client.js'

/** The statements `run` sends through `database`, and its answer. */
export async function counted<T>(
  database: Database,
  run: () => Promise<T>,
): Promise<{ statements: number; answer: T }> {
  const before = database.statements()
  const answer = await run()
  return { statements: database.statements() - before, answer }
}

/** The order as a retrieve answers it to the token's user, and the statements the retrieve sent. */
export async function countedRetrieve(
  t: TestApp,
  token: string,
  uuid: string,
): Promise<{ statements: number; body: any }> {
  const { statements, answer: r } = await counted(t.database, () =>
    call(t.app, 'GET', `/api/marketplace-orders/${uuid}/`, { token }),
  )
  assert.equal(r.status, 200, r.text)
  return { statements, body: r.body }
}

/** Resolves when the database's change feed (PostgreSQL) tells a change `matches`. */
export function toldChange(database: Database, matches: (c: Change) => boolean): Promise<void> {
  return new Promise((resolve) => {
    const stop = database.changes!.subscribe((c) => {
      if (!matches(c)) return
      stop()
      resolve()
    })
  })
}
