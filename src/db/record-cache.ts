// Rendered records kept between requests. Rendering a wide record (dozens of joined fields
// quoted into JSON) costs more than finding it; a record that has not changed since it was last
// rendered is answered from here. Each entry holds the version it was rendered at: the caller
// reads the current version with the row's id (kept by database triggers, so other processes'
// writes count too) and an entry of any other version is rendered again.

interface Entry<T> {
  version: string
  value: T
  /** Read since it was added or last passed over for eviction. */
  used: boolean
}

export class RecordCache<T = string> {
  readonly #entries = new Map<string, Entry<T>>()
  readonly #max: number

  /**
   * `max` entries at most; 0 keeps nothing. When full, the oldest entry not read since it was
   * last looked at goes (a "clock": reads only set a flag, so a hit changes nothing else, and the
   * map is reordered only when something is evicted).
   */
  constructor(max: number) {
    this.#max = max
  }

  /** Look-ups answered, and look-ups not answered (nothing kept, or of another version). */
  hits = 0
  misses = 0

  get(key: string, version: string): T | undefined {
    const e = this.#entries.get(key)
    if (!e) {
      this.misses++
      return undefined
    }
    if (e.version !== version) {
      this.#entries.delete(key)
      this.misses++
      return undefined
    }
    e.used = true
    this.hits++
    return e.value
  }

  /**
   * The entry kept for `key` whatever its version, for a caller that has the database tell
   * whether that version still holds (see EpochCache); not counted as a hit or a miss.
   */
  peek(key: string): { value: T; version: string } | undefined {
    const e = this.#entries.get(key)
    if (!e) return undefined
    e.used = true
    return { value: e.value, version: e.version }
  }

  set(key: string, version: string, value: T): void {
    if (this.#max <= 0) return
    const e = this.#entries.get(key)
    if (e) {
      e.version = version
      e.value = value
      return
    }
    while (this.#entries.size >= this.#max) {
      const [oldest, entry] = this.#entries.entries().next().value!
      this.#entries.delete(oldest)
      if (entry.used) {
        entry.used = false
        this.#entries.set(oldest, entry)
      }
    }
    this.#entries.set(key, { version, value, used: false })
  }

  get size(): number {
    return this.#entries.size
  }
}
