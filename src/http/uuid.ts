import { randomFillSync } from 'node:crypto'
import { notFound } from './errors.js'

const HYPHENATED = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const HEX32 = /^[0-9a-f]{32}$/i

/** 32 hex digits in the hyphenated 8-4-4-4-12 form. */
function hyphenated(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/** Canonical hyphenated lowercase form of a uuid given hyphenated or as 32 hex digits; null if malformed. */
export function normalizeUuid(v: unknown): string | null {
  if (typeof v !== 'string') return null
  // Most uuids arrive hyphenated and in lower case, as this server writes them: one test, and
  // toLowerCase gives back the same string.
  if (v.length === 36 && HYPHENATED.test(v)) return v.toLowerCase()
  if (v.length === 32 && HEX32.test(v)) return hyphenated(v.toLowerCase())
  return null
}

// Random bytes drawn 8 KiB at a time: a draw per uuid costs more than the rest of making it.
const pool = Buffer.alloc(8192)
let poolOffset = pool.length
const bytes = Buffer.alloc(16)

/**
 * A new version 7 uuid (RFC 9562): 48 bits of Unix time in milliseconds, then 74 random bits.
 * Uuids made one after another sort together, so a new row's uuid goes at the end of its unique
 * index instead of onto a random page of it; with random (version 4) uuids, each new order and
 * resource dirtied two random index pages, which every commit then wrote to the log.
 */
export function uuid7(now = Date.now()): string {
  if (poolOffset + 10 > pool.length) {
    randomFillSync(pool)
    poolOffset = 0
  }
  pool.copy(bytes, 6, poolOffset, (poolOffset += 10))
  bytes.writeUIntBE(now, 0, 6)
  bytes[6] = 0x70 | (bytes[6]! & 0x0f)
  bytes[8] = 0x80 | (bytes[8]! & 0x3f)
  return hyphenated(bytes.toString('hex'))
}

/**
 * The row a path's `{uuid}` names, as `find` gives it (the caller's visible rows); a malformed
 * uuid or no row → 404 with the reference's wording (`No <Model> matches the given query.`).
 */
export async function foundByUuid<R>(
  uuid: string,
  find: (uuid: string) => Promise<R | undefined>,
  model: string,
): Promise<R> {
  const u = normalizeUuid(uuid)
  const row = u ? await find(u) : undefined
  if (!row) throw modelNotFound(model)
  return row
}

/** The row of the id `find` reads (a record answered by its id); the same 404 as `foundByUuid` otherwise. */
export async function foundById<R>(
  id: number,
  find: (id: number) => Promise<R | undefined>,
  model: string,
): Promise<R> {
  const row = await find(id)
  if (!row) throw modelNotFound(model)
  return row
}

/** The reference's 404 of a model's row: `No <Model> matches the given query.` */
function modelNotFound(model: string): Error {
  return notFound(`No ${model} matches the given query.`)
}
