// The rule a resource's limits follow, given its offering's components. Pure; `checkLimits` in
// service-components.ts reads the components and the other resources' limits and applies it.
import type { FieldErrors } from '../../http/errors.js'

/** What the rule reads of a component. */
export interface LimitComponent {
  type: string
  billing_type: string
  is_prepaid: boolean
  min_value: number | null
  max_value: number | null
  max_available_limit: number | null
}

/**
 * Whether a resource's limits may name the component: limit-based components, and one-time
 * components paid in advance (their limit is the amount bought). Mirrors the reference's
 * marketplace/utils.py get_components_map.
 */
export function takesLimits(c: Pick<LimitComponent, 'billing_type' | 'is_prepaid'>): boolean {
  return c.billing_type === 'limit' || (c.billing_type === 'one' && c.is_prepaid)
}

/**
 * The errors of `limits` (component type → amount) for an offering with `components`, or null.
 * `reported`: the limits a provider's backend reports it holds (the provider's `set_limits`): any
 * component of the offering may be named, whatever its billing type, and the amounts are facts of
 * the backend, so only their form is checked, not the bounds. Otherwise:
 * - a type that is not a component taking limits: `{"limits": ["Invalid types: gpu, ram"]}`
 *   (checked first, every such type named, as the reference does);
 * - then, per component, under its type: an amount that is not a whole number ≥ 0, one below
 *   `min_value` or above `max_value`, or one that with `allocated` (the limits the offering's
 *   other resources hold, by type) exceeds `max_available_limit`. A bound of 0 or null is no
 *   bound, as in the reference.
 */
export function limitErrors(
  components: readonly LimitComponent[],
  limits: Readonly<Record<string, unknown>>,
  allocated: ReadonlyMap<string, number> = new Map(),
  { reported = false }: { reported?: boolean } = {},
): FieldErrors | null {
  const named = reported ? components : components.filter(takesLimits)
  const byType = new Map(named.map((c) => [c.type, c]))
  const invalid = Object.keys(limits)
    .filter((k) => !byType.has(k))
    .sort()
  if (invalid.length) return { limits: [`Invalid types: ${invalid.join(', ')}`] }
  const errors: Record<string, string[]> = {}
  for (const [type, value] of Object.entries(limits)) {
    const c = byType.get(type)!
    const problem = reported ? formProblem(value) : amountProblem(c, value, allocated.get(type) ?? 0)
    if (problem) errors[type] = [problem]
  }
  return Object.keys(errors).length ? { limits: errors } : null
}

function formProblem(value: unknown): string | null {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) return 'A valid integer is required.'
  if (value < 0) return 'Ensure this value is greater than or equal to 0.'
  return null
}

function amountProblem(c: LimitComponent, value: unknown, allocated: number): string | null {
  const form = formProblem(value)
  if (form || typeof value !== 'number') return form
  if (c.max_value && value > c.max_value)
    return `The limit ${value} value cannot be more than ${c.max_value}.`
  if (c.min_value && value < c.min_value)
    return `The limit ${value} value cannot be less than ${c.min_value}.`
  if (c.max_available_limit && allocated + value > c.max_available_limit) {
    const left = Math.max(0, c.max_available_limit - allocated)
    return (
      `Requested ${c.type} cannot be provisioned due to offering safety limit. ` +
      `You can allocate up to ${left} of ${c.type}.`
    )
  }
  return null
}

/** The sum of each component type's amount over resources' limits (entries that are not numbers skipped). */
export function allocatedLimits(limitsOfResources: readonly Record<string, unknown>[]): Map<string, number> {
  const out = new Map<string, number>()
  for (const limits of limitsOfResources) {
    for (const [type, v] of Object.entries(limits ?? {})) {
      if (typeof v === 'number' && Number.isFinite(v)) out.set(type, (out.get(type) ?? 0) + v)
    }
  }
  return out
}
