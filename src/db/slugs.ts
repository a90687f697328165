// Generated slugs unique in their table, as the reference names records: the slugified name with
// a numeric suffix, `<name>-1`, `<name>-2`, ... The last suffix given per table and name is kept
// in `slug_counters`, so the next one is one upsert (racing writers get different numbers: the
// upsert locks the counter's row until their transaction ends).
import { sql, type Kysely, type Transaction } from 'kysely'
import type { DB } from './tables.js'

type Db = Kysely<DB> | Transaction<DB>

/** The tables whose slugs are generated here. */
export type SlugScope = 'resources'

/**
 * The upsert that takes the next number of `base` (a value or a slot) and answers the slug it
 * makes, `<base>-<n>`, as `slug`: run alone by `nextSlug`, or the CTE of a statement that inserts
 * the row it names.
 */
export function nextSlugQuery(db: Db, scope: SlugScope, base: string) {
  return db
    .insertInto('slug_counters')
    .values({ scope, base, n: 1 })
    .onConflict((oc) => oc.columns(['scope', 'base']).doUpdateSet({ n: sql`slug_counters.n + 1` }))
    .returning(sql<string>`slug_counters.base || '-' || slug_counters.n`.as('slug'))
}

/** The next slug of `base` (the new row's name slugified, or what stands in for it). */
export async function nextSlug(db: Db, scope: SlugScope, base: string): Promise<string> {
  return (await nextSlugQuery(db, scope, base).executeTakeFirstOrThrow()).slug
}
