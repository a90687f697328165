// A test app's PostgreSQL schema made from the template `npm test` dumped once (scripts/run-tests.mjs
// says why), instead of by running every migration into it.
import { readFileSync } from 'node:fs'
import pg from 'pg'

/** The name standing for the schema in the template. */
const PLACEHOLDER = '__test_schema__'

let template: string | undefined

/**
 * Creates `schema` on `url`'s database as the migrations leave it (tables, indexes, triggers,
 * functions, the rows the migrations insert, the migrations' own bookkeeping), when `npm test`
 * made a template (TEST_PG_TEMPLATE); answers whether it did. Without one, the app's build
 * migrates the schema, as for a test file run on its own.
 */
export async function schemaFromTemplate(url: string, schema: string): Promise<boolean> {
  const file = process.env.TEST_PG_TEMPLATE
  if (!file) return false
  template ??= readFileSync(file, 'utf8')
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(template.replaceAll(PLACEHOLDER, schema))
  } finally {
    await client.end()
  }
  return true
}
