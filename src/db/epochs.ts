// Answers kept between requests, each with the epochs it was computed at. The epochs are rows of
// `record_epochs` that triggers raise on every write that could change the answer (migration
// 2026-11-24T1200_match_epochs), so writes by any process or by raw SQL count. The epochs are read
// before the answer is computed: a write in between leaves the kept answer newer than its epochs,
// and the next request, reading the raised epoch, computes it again.
//
// SQLite only: on PostgreSQL reading the epochs is a round trip to the server, as much as the
// look-ups they would save, and the triggers are not there.
import type { Kysely, Transaction } from 'kysely'
import type { DB } from './tables.js'
import { isPostgres } from './sql.js'
import { RecordCache } from './record-cache.js'
import { reusable, slot } from './compiled.js'

type Db = Kysely<DB> | Transaction<DB>

// The named epochs as one row of scalar sub-selects (an IN list costs SQLite a temporary table
// to build and a sort).
const epochsNamed = reusable((db: Db, n: number) =>
  db.selectNoFrom((eb) =>
    Array.from({ length: n }, (_, i) =>
      eb.selectFrom('record_epochs').select('n').where('name', '=', slot<string>(i)).as(`e${i}`),
    ),
  ),
)

/** The current value of these epochs, as one version string; null when one is not kept. */
async function epochsOf(db: Db, names: readonly string[]): Promise<string | null> {
  const row = (await epochsNamed(db, [names.length], names)).rows[0] as Record<string, unknown> | undefined
  const values = names.map((_, i) => row?.[`e${i}`])
  return values.some((v) => v === null || v === undefined) ? null : values.join('.')
}

/**
 * Answers by key, kept while the named epochs hold (at most `max` of them, see RecordCache).
 * On PostgreSQL nothing is kept.
 */
export class EpochCache<T> {
  readonly #names: readonly string[]
  readonly #max: number
  readonly #caches = new WeakMap<object, RecordCache<T>>()

  constructor(names: readonly string[], max: number) {
    this.#names = [...names].sort()
    this.#max = max
  }

  /**
   * The value kept for `key` while its epochs hold (undefined when none, or on PostgreSQL), and
   * `keep`, which keeps a new value at the epochs read here.
   */
  async open(db: Db, key: string): Promise<{ kept: T | undefined; keep: (value: T) => void }> {
    if (isPostgres(db as Kysely<DB>) || this.#max <= 0) return { kept: undefined, keep: () => {} }
    let cache = this.#caches.get(db)
    if (!cache) this.#caches.set(db, (cache = new RecordCache<T>(this.#max)))
    const version = await epochsOf(db, this.#names)
    // Without its epochs (a database whose triggers are missing) nothing can be kept safely.
    if (version === null) return { kept: undefined, keep: () => {} }
    return { kept: cache.get(key, version), keep: (value) => cache.set(key, version, value) }
  }

  /** The value kept for `key`, or `compute`'s, then kept. */
  async get(db: Db, key: string, compute: () => Promise<T>): Promise<T> {
    const { kept, keep } = await this.open(db, key)
    if (kept !== undefined) return kept
    const value = await compute()
    keep(value)
    return value
  }
}
