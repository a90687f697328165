const HEX32 = /^[0-9a-f]{32}$/

/** Canonical hyphenated lowercase form of a uuid given hyphenated or as 32 hex digits; null if malformed. */
export function normalizeUuid(v: unknown): string | null {
  if (typeof v !== 'string' || v.length > 36) return null
  const hex = v.toLowerCase().replace(/-/g, '')
  if (!HEX32.test(hex)) return null
  if (
    v.includes('-') &&
    !/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(v)
  ) {
    return null
  }
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
