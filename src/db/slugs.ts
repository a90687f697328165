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

/**
 * The upsert that takes the next number of `base` (a value or a slot), returning it as `n`: on
 * its own in `nextSlug`, or as the CTE of a statement that inserts the row it names.
 */
export function slugNumber(db: Db, scope: SlugScope, base: string) {
  return db
    .insertInto('slug_counters')
    .values({ scope, base, n: 1 })
    .onConflict((oc) => oc.columns(['scope', 'base']).doUpdateSet({ n: sql`slug_counters.n + 1` }))
    .returning('n')
}

/** The slug a new row named `name` gets; `fallback` stands in for a name with nothing to slugify. */
export async function nextSlug(db: Db, scope: SlugScope, name: string, fallback: string): Promise<string> {
  const base = slugify(name, fallback)
  const row = await slugNumber(db, scope, base).executeTakeFirstOrThrow()
  return `${base}-${row.n}`
}
