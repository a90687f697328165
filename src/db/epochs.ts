// Answers kept between requests, each with the epochs it was computed at. The epochs are rows of
// `record_epochs` that triggers raise on every write that could change the answer (migrations
// 2026-11-24T1200_match_epochs for SQLite, 2026-12-06T1000_pg_match_epochs for PostgreSQL), so
// writes by any process or by raw SQL count.
//
// The rule that keeps a stale answer from looking current: the epochs an answer is kept at are
// read before the answer is computed, or in the same snapshot. A write in between then leaves the
// kept answer newer than its epochs, and the next request, reading the raised epoch, computes it
// again; a write can make a kept answer be computed again, never make a stale one look current.
//
// SQLite (`open`, `get`): the epochs are read in a statement of their own, before the answer's;
// statements are calls into the same process there, and cost microseconds.
//
// PostgreSQL: a statement is a round trip, as much as the look-ups a kept answer saves, so the
// epochs are read by a statement the request sends anyway (`from`, `held`, `kept`, `keep`): one
// statement reads the epochs and, unless they are still those of the kept answer, computes the
// answer, both in the one snapshot a PostgreSQL statement sees. Across statements (READ COMMITTED)
// each statement sees a newer snapshot, so the epochs are never read in one statement and the
// answer they stand for computed in a later one.
import { sql, type Kysely, type RawBuilder, type SelectQueryBuilder, type Transaction } from 'kysely'
import type { DB } from './tables.js'
import { isPostgres } from './sql.js'
import { RecordCache } from './record-cache.js'
import { reusable, slot } from './compiled.js'

type Db = Kysely<DB> | Transaction<DB>

/** The named epochs as one row of scalar sub-selects `e0`, `e1`, … (an IN list costs SQLite a
 * temporary table to build and a sort). */
function epochsRow(db: Db, n: number, name: (i: number) => string) {
  return db.selectNoFrom((eb) =>
    Array.from({ length: n }, (_, i) =>
      eb.selectFrom('record_epochs').select('n').where('name', '=', name(i)).as(`e${i}`),
    ),
  )
}

const epochsNamed = reusable((db: Db, n: number) => epochsRow(db, n, (i) => slot<string>(i)))

/** A kept answer and the version of the epochs it was computed at. */
export interface Kept<T> {
  value: T
  version: string
}

/**
 * Answers by key, kept while the named epochs hold (at most `max` of them, see RecordCache).
 */
export class EpochCache<T> {
  readonly #names: readonly string[]
  readonly #max: number
  readonly #caches = new WeakMap<object, RecordCache<T>>()

  constructor(names: readonly string[], max: number) {
    this.#names = [...names].sort()
    this.#max = max
  }

  #cache(db: Db): RecordCache<T> {
    let cache = this.#caches.get(db)
    if (!cache) this.#caches.set(db, (cache = new RecordCache<T>(this.#max)))
    return cache
  }

  /** How many epochs: the slots `held` takes. */
  get size(): number {
    return this.#names.length
  }

  /** The version the epoch columns `e0`, `e1`, … of a row spell; null when one is not kept. */
  versionOf(row: Record<string, unknown> | undefined): string | null {
    const values = this.#names.map((_, i) => row?.[`e${i}`])
    return values.some((v) => v === null || v === undefined) ? null : values.join('.')
  }

  /**
   * A select from the epochs as a derived table `epochs` of one row, its columns `e0`, `e1`, …
   * (in the order of the names, sorted) selected: a statement adds its answer's columns, or joins
   * its rows.
   */
  from(db: Db): SelectQueryBuilder<any, 'epochs', any> {
    const names = this.#names
    return (db as Kysely<any>)
      .selectFrom(epochsRow(db, names.length, (i) => names[i]!).as('epochs'))
      .selectAll('epochs')
  }

  /**
   * True when the epochs of `from` are those of slots `first`, `first + 1`, …: the slots take
   * `heldParams` of what is kept (never true when nothing is).
   */
  held(first: number): RawBuilder<boolean> {
    return sql<boolean>`(${sql.join(
      this.#names.map((_, i) => sql`${sql.ref(`epochs.e${i}`)} = ${slot(first + i)}`),
      sql` and `,
    )})`
  }

  /** The values of `held`'s slots: the epochs of what is kept, or nulls. */
  heldParams(kept: Kept<T> | undefined): unknown[] {
    return kept ? kept.version.split('.') : this.#names.map(() => null)
  }

  /** What is kept for `key`, whatever its epochs (a statement tells whether they hold): no read. */
  kept(db: Db, key: string): Kept<T> | undefined {
    return this.#max > 0 ? this.#cache(db).peek(key) : undefined
  }

  /** Keeps `value` for `key` at the epochs' `version` (read no later than the value, see above). */
  keep(db: Db, key: string, version: string | null, value: T): void {
    // Without its epochs (a database whose triggers are missing) nothing can be kept safely.
    if (version !== null && this.#max > 0) this.#cache(db).set(key, version, value)
  }

  /**
   * SQLite: the value kept for `key` while its epochs hold (undefined when none, or on
   * PostgreSQL, where the epochs are read by the answer's statements instead), and `keep`, which
   * keeps a new value at the epochs read here.
   */
  async open(db: Db, key: string): Promise<{ kept: T | undefined; keep: (value: T) => void }> {
    if (isPostgres(db as Kysely<DB>) || this.#max <= 0) return { kept: undefined, keep: () => {} }
    const names = this.#names
    const row = (await epochsNamed(db, [names.length], names)).rows[0] as Record<string, unknown> | undefined
    const version = this.versionOf(row)
    if (version === null) return { kept: undefined, keep: () => {} }
    const cache = this.#cache(db)
    return { kept: cache.get(key, version), keep: (value) => cache.set(key, version, value) }
  }

  /** SQLite: the value kept for `key`, or `compute`'s, then kept. */
  async get(db: Db, key: string, compute: () => Promise<T>): Promise<T> {
    const { kept, keep } = await this.open(db, key)
    if (kept !== undefined) return kept
    const value = await compute()
    keep(value)
    return value
  }
}
