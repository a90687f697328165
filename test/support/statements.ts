// What a request costs in statements sent to the database (`Database.statements()`), for the
// tests that pin it.
import type { Database } from '../../src/db/database.js'

/** The statements `run` sends through `database`, and its answer. */
export async function counted<T>(
  database: Database,
  run: () => Promise<T>,
): Promise<{ statements: number; answer: T }> {
  const before = database.statements()
  const answer = await run()
  return { statements: database.statements() - before, answer }
}
