// Pure rules of invitations: e-mail pattern safety, user matching, project name templates.

export const MAX_PATTERN_LENGTH = 200
export const TEMPLATE_VARIABLES = ['username', 'email', 'full_name'] as const

/** Most unbounded repetitions (`*`, `+`, `{n,}`, `{n,m}` with m over 10) a pattern may hold. */
export const MAX_UNBOUNDED = 2
/** The longest e-mail address matched; a longer one never matches. */
export const MAX_EMAIL_LENGTH = 320

/**
 * Why a pattern could take super-linear time to run, or null. JavaScript regular expressions
 * backtrack and cannot be interrupted, so a pattern is refused when it repeats a group that
 * itself repeats or offers alternatives (`(a+)+`, `(a|a)*`), refers back to a group (`\1`), or
 * holds more than MAX_UNBOUNDED unbounded repetitions (`.*.*.*`: polynomial in the address).
 */
export function backtrackingRisk(pattern: string): string | null {
  const groups: { risky: boolean }[] = []
  let unbounded = 0
  let lastGroupRisky = false
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!
    let closedGroup = false
    if (ch === '\\') {
      const next = pattern[i + 1] ?? ''
      if (/[1-9k]/.test(next)) return 'refers back to a group'
      i++
    } else if (ch === '[') {
      // A character class: skip to its end (escapes included).
      for (i++; i < pattern.length && pattern[i] !== ']'; i++) if (pattern[i] === '\\') i++
    } else if (ch === '(') {
      groups.push({ risky: false })
    } else if (ch === ')') {
      lastGroupRisky = groups.pop()?.risky ?? false
      closedGroup = true
    } else if (ch === '|') {
      if (groups.length) groups[groups.length - 1]!.risky = true
    }
    const q = quantifierAt(pattern, i + 1)
    if (!q) continue
    if (closedGroup && lastGroupRisky && q.repeats) return 'repeats a group that repeats or alternates'
    if (q.unbounded) unbounded++
    // The enclosing group now holds a repetition: repeating it would nest them.
    if (q.repeats && groups.length) groups[groups.length - 1]!.risky = true
    i += q.length
    if (pattern[i + 1] === '?') i++ // lazy modifier
  }
  if (unbounded > MAX_UNBOUNDED) return `has more than ${MAX_UNBOUNDED} unbounded repetitions`
  return null
}

function quantifierAt(p: string, i: number): { length: number; repeats: boolean; unbounded: boolean } | null {
  const ch = p[i]
  if (ch === '*' || ch === '+') return { length: 1, repeats: true, unbounded: true }
  if (ch === '?') return { length: 1, repeats: false, unbounded: false }
  if (ch !== '{') return null
  const m = /^\{(\d+)(,(\d*))?\}/.exec(p.slice(i))
  if (!m) return null
  const max = m[2] === undefined ? Number(m[1]) : m[3] === '' ? Infinity : Number(m[3])
  return { length: m[0].length, repeats: max > 1, unbounded: max > 10 }
}

/** Messages for unusable patterns (empty when all are fine). */
export function patternErrors(patterns: string[]): string[] {
  const out: string[] = []
  for (const p of patterns) {
    if (p.length > MAX_PATTERN_LENGTH) {
      out.push(`Pattern is too long (more than ${MAX_PATTERN_LENGTH} characters): ${p.slice(0, 50)}…`)
      continue
    }
    const risk = backtrackingRisk(p)
    if (risk) {
      out.push(`Pattern ${risk} and is not allowed: ${p}`)
      continue
    }
    try {
      new RegExp(p)
    } catch {
      out.push(`Invalid regular expression: ${p}`)
    }
  }
  return out
}

/**
 * The pattern must match the whole address (`^(?:pattern)$`): `boss@cust-a\.example` does not
 * accept `boss@cust-a.example.evil.org`. Unusable patterns and over-long addresses never match.
 */
export function emailMatches(pattern: string, email: string): boolean {
  if (!email || email.length > MAX_EMAIL_LENGTH || patternErrors([pattern]).length) return false
  return new RegExp(`^(?:${pattern})$`).test(email)
}

export interface UserFacts {
  email: string
  affiliations: string[]
  identitySource: string
}

export interface Restrictions {
  emailPatterns: string[]
  affiliations: string[]
  identitySources: string[]
}

/** OR of the configured restrictions; none configured → everyone matches (reference §5.5). */
export function userMatches(r: Restrictions, u: UserFacts): boolean {
  const configured = r.emailPatterns.length + r.affiliations.length + r.identitySources.length
  if (!configured) return true
  if (r.emailPatterns.some((p) => emailMatches(p, u.email))) return true
  if (r.affiliations.some((a) => u.affiliations.includes(a))) return true
  if (r.identitySources.length && r.identitySources.includes(u.identitySource)) return true
  return false
}

/** Placeholders of a template that are not allowed (e.g. `{organization}`, `{0}`). */
export function badPlaceholders(template: string): string[] {
  const found = [...template.matchAll(/\{([^{}]*)\}/g)].map((m) => m[1]!)
  return found.filter((f) => !(TEMPLATE_VARIABLES as readonly string[]).includes(f))
}

/** The project name for a requester; an empty template gives `<username>_project`. */
export function renderProjectName(
  template: string,
  u: { username: string; email: string; fullName: string },
): string {
  if (!template.trim()) return `${u.username}_project`
  const values: Record<string, string> = {
    username: u.username,
    email: u.email,
    full_name: u.fullName || u.username,
  }
  return template.replace(/\{(username|email|full_name)\}/g, (_, k: string) => values[k]!)
}
