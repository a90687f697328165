// Conversions between stored values and API values, the same for both dialects.

/** The only place timestamps are formatted: ISO-8601 UTC with milliseconds and Z (fixed width). */
export function isoNow(clock: () => Date): string {
  return clock().toISOString()
}

export function toBool(v: unknown): boolean {
  return v === 1 || v === true || v === '1' || v === 't'
}

export function fromBool(v: boolean | null | undefined): number {
  return v ? 1 : 0
}

/** JSON columns: text on SQLite, jsonb (already parsed) on PostgreSQL. */
export function parseJson<T = unknown>(v: unknown, fallback: T): T {
  if (v === null || v === undefined) return fallback
  if (typeof v === 'string') {
    try {
      return JSON.parse(v) as T
    } catch {
      return fallback
    }
  }
  return v as T
}

export function toJson(v: unknown): string {
  return JSON.stringify(v ?? null)
}

/** Decimal columns: numeric → string on PostgreSQL, number on SQLite. Rendered with fixed places. */
export function decimalString(v: unknown, places = 10): string | null {
  if (v === null || v === undefined || v === '') return null
  const n = typeof v === 'number' ? v : Number(v)
  if (!Number.isFinite(n)) return null
  return n.toFixed(places)
}

export function decimalNumber(v: unknown): number | null {
  if (v === null || v === undefined || v === '') return null
  const n = typeof v === 'number' ? v : Number(v)
  return Number.isFinite(n) ? n : null
}
