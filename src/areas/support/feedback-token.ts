// Signed feedback tokens: `<issue uuid hex>:<issued-at epoch seconds>:<signature>`, the layout of
// the reference's timestamp signer, where signature = base64url(HMAC-SHA256(secret, "<hex>:<ts>")).
// Pure functions (no clock, no database) so the format is unit-tested beside this file.
import { createHmac, timingSafeEqual } from 'node:crypto'

const TOKEN_RE = /^([0-9a-f]{32}):(\d{1,12}):([A-Za-z0-9_-]{43})$/

function signature(secret: string, value: string): string {
  return createHmac('sha256', secret).update(value).digest('base64url')
}

/** A token binding the issue (any uuid form) to the moment it was issued. */
export function signFeedbackToken(secret: string, issueUuid: string, issuedAt: Date): string {
  const hex = issueUuid.replace(/-/g, '').toLowerCase()
  const ts = Math.floor(issuedAt.getTime() / 1000)
  const value = `${hex}:${ts}`
  return `${value}:${signature(secret, value)}`
}

export type TokenCheck =
  { ok: true; issueUuid: string } | { ok: false; reason: 'malformed' | 'forged' | 'expired' }

/**
 * Verifies a token: well-formed, signed with `secret` (compared in constant time), and issued no
 * more than `maxAgeSeconds` before `now`. Returns the hyphenated issue uuid.
 */
export function verifyFeedbackToken(
  secret: string,
  token: string,
  now: Date,
  maxAgeSeconds: number,
): TokenCheck {
  const m = TOKEN_RE.exec(token)
  if (!m) return { ok: false, reason: 'malformed' }
  const [, hex, ts, sig] = m as unknown as [string, string, string, string]
  const expected = Buffer.from(signature(secret, `${hex}:${ts}`))
  const given = Buffer.from(sig)
  if (expected.length !== given.length || !timingSafeEqual(expected, given))
    return { ok: false, reason: 'forged' }
  const age = Math.floor(now.getTime() / 1000) - Number(ts)
  if (age > maxAgeSeconds) return { ok: false, reason: 'expired' }
  const issueUuid = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
  return { ok: true, issueUuid }
}
