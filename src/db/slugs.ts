// Generated slugs unique in their table, as the reference names records: the slugified name with
// a numeric suffix, `<name>-1`, `<name>-2`, ... The last suffix given per table and name is kept
// in `slug_counters`, so the next one is one upsert (racing writers get different numbers: the
// upsert locks the counter's row until their transaction ends).
import { sql, type Kysely, type Transaction } from 'kysely'
import type { DB } from './tables.js'
import { slugify } from '../http/slug.js'

type Db = Kysely<DB> | Transaction<DB>

/** The tables whose slugs are generated here. */
export type SlugScope = 'resources'

/** The slug a new row named `name` gets; `fallback` stands in for a name with nothing to slugify. */
export async function nextSlug(db: Db, scope: SlugScope, name: string, fallback: string): Promise<string> {
  const base = slugify(name, fallback)
  const row = await db
    .insertInto('slug_counters')
    .values({ scope, base, n: 1 })
    .onConflict((oc) => oc.columns(['scope', 'base']).doUpdateSet({ n: sql`slug_counters.n + 1` }))
    .returning('n')
    .executeTakeFirstOrThrow()
  return `${base}-${row.n}`
}
