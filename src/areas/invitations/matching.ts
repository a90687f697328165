// Pure rules of invitations: e-mail pattern safety, user matching, project name templates.

export const MAX_PATTERN_LENGTH = 200
export const TEMPLATE_VARIABLES = ['username', 'email', 'full_name'] as const

/** A group holding a quantifier that is itself quantified: (a+)+, (a*)*, (x+){2,} … */
const NESTED_QUANTIFIER = /\((?:[^()\\]|\\.)*[+*}](?:[^()\\]|\\.)*\)\s*[+*{]/

/** Messages for unusable patterns (empty when all are fine). */
export function patternErrors(patterns: string[]): string[] {
  const out: string[] = []
  for (const p of patterns) {
    if (p.length > MAX_PATTERN_LENGTH) {
      out.push(`Pattern is too long (more than ${MAX_PATTERN_LENGTH} characters): ${p.slice(0, 50)}…`)
      continue
    }
    if (NESTED_QUANTIFIER.test(p)) {
      out.push(`Pattern has nested quantifiers and is not allowed: ${p}`)
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

/** Python `re.match`: the pattern must match at the start of the e-mail. Bad patterns never match. */
export function emailMatches(pattern: string, email: string): boolean {
  if (patternErrors([pattern]).length) return false
  return new RegExp(`^(?:${pattern})`).test(email)
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
