// Pure rules of invitations: e-mail pattern safety, user matching, project name templates.
import { RE2JS } from 're2js'
import { keptOrMade } from '../../kept.js'

export const MAX_PATTERN_LENGTH = 200
/** Most patterns one invitation may hold. */
export const MAX_PATTERNS = 20
/**
 * Largest size a pattern may expand to: every atom counts once, a counted repetition `{n,m}`
 * multiplies what it repeats by m (nested ones multiply), `*`, `+` and `?` by 2. It bounds the
 * compiled program, and so the time to compile and to match one address.
 */
export const MAX_PATTERN_SIZE = 500
export const TEMPLATE_VARIABLES = ['username', 'email', 'full_name'] as const

/** The longest e-mail address matched; a longer one never matches. */
export const MAX_EMAIL_LENGTH = 320

/**
 * The expanded size of a pattern (see MAX_PATTERN_SIZE), read from its text without running it.
 * Escaped and bracketed characters count as one atom; the estimate may only overcount.
 */
export function patternSize(pattern: string): number {
  const frames: number[] = [0] // size of each open group so far; [0] is the whole pattern
  let i = 0
  while (i < pattern.length) {
    const ch = pattern[i]!
    let atom = 1
    if (ch === '(') {
      frames.push(0)
      i++
      continue
    }
    if (ch === ')') {
      atom = frames.length > 1 ? frames.pop()! : 0
      i++
    } else if (ch === '|') {
      i++
      continue
    } else if (ch === '\\') {
      i += 2
    } else if (ch === '[') {
      // A character class: skip to its end (escapes included); `[]...]` starts with a literal `]`.
      i++
      if (pattern[i] === '^') i++
      if (pattern[i] === ']') i++
      while (i < pattern.length && pattern[i] !== ']') i += pattern[i] === '\\' ? 2 : 1
      i++
    } else {
      i++
    }
    const q = quantifierAt(pattern, i)
    if (q) {
      atom *= q.factor
      i += q.length
      if (pattern[i] === '?' || pattern[i] === '+') i++ // lazy or possessive modifier
    }
    frames[frames.length - 1]! += Math.max(atom, 1)
    if (frames[frames.length - 1]! > MAX_PATTERN_SIZE * 1000) return Infinity
  }
  return frames.reduce((a, b) => a + b, 0)
}

function quantifierAt(p: string, i: number): { length: number; factor: number } | null {
  const ch = p[i]
  if (ch === '*' || ch === '+' || ch === '?') return { length: 1, factor: 2 }
  if (ch !== '{') return null
  const m = /^\{(\d{1,6})(,(\d{0,6}))?\}/.exec(p.slice(i, i + 16))
  if (!m) return null
  const max = m[2] === undefined ? Number(m[1]) : m[3] === '' ? Number(m[1]) + 1 : Number(m[3])
  return { length: m[0].length, factor: Math.max(max, 1) + 1 }
}

const compiled = new Map<string, RE2JS | null>()
const COMPILED_KEPT = 1000

/**
 * The pattern compiled for the RE2 engine (linear in the address whatever the pattern: no
 * backtracking, no back-references, no look-around); null when it is unusable. Compiled patterns
 * are kept, so matching does not compile again.
 */
function compiledPattern(pattern: string): RE2JS | null {
  return keptOrMade(compiled, pattern, COMPILED_KEPT, () => {
    if (pattern.length > MAX_PATTERN_LENGTH || patternSize(pattern) > MAX_PATTERN_SIZE) return null
    try {
      return RE2JS.compile(pattern)
    } catch {
      return null
    }
  })
}

/** Messages for unusable patterns (empty when all are fine). */
export function patternErrors(patterns: string[]): string[] {
  if (patterns.length > MAX_PATTERNS) return [`Ensure this list has at most ${MAX_PATTERNS} patterns.`]
  const out: string[] = []
  for (const p of patterns) {
    if (p.length > MAX_PATTERN_LENGTH) {
      out.push(`Pattern is too long (more than ${MAX_PATTERN_LENGTH} characters): ${p.slice(0, 50)}…`)
    } else if (patternSize(p) > MAX_PATTERN_SIZE) {
      out.push(`Pattern repeats too much (expands to more than ${MAX_PATTERN_SIZE} characters): ${p}`)
    } else if (!compiledPattern(p)) {
      out.push(`Invalid regular expression: ${p}`)
    }
  }
  return out
}

/**
 * The pattern must match the whole address: `boss@cust-a\.example` does not accept
 * `boss@cust-a.example.evil.org`, and `a)|(.*` is no valid pattern. Unusable patterns and
 * over-long addresses never match.
 */
export function emailMatches(pattern: string, email: string): boolean {
  if (!email || email.length > MAX_EMAIL_LENGTH) return false
  const re = compiledPattern(pattern)
  return re !== null && re.matcher(email).matches()
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
