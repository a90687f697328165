// The offering types the marketplace knows and what each allows. One table: orders, resources and
// the offering-types endpoint all read it.

export const OFFERING_TYPES = [
  'Marketplace.Basic',
  'Marketplace.Slurm',
  'Support.OfferingTemplate',
  'CloudB.Tenant',
] as const
export type OfferingType = (typeof OFFERING_TYPES)[number]

/**
 * A component every offering of a type has from its creation (`is_builtin`): it cannot be created
 * again nor removed, and its type, name and unit are fixed. `factor` divides a limit before its
 * price applies (RAM is priced per GB, limited in MB).
 */
export interface BuiltinComponent {
  type: string
  name: string
  measured_unit: string
  billing_type: 'limit'
  limit_period: 'month'
  factor: number | null
}

export interface OfferingTypeRules {
  label: string
  description: string
  /** Provider approval is always required (never skipped). */
  providerApprovalRequired: boolean
  /** An approved order is processed by the server (a job), not by an external agent. */
  processedBy: 'server' | 'agent' | 'support'
  /** Order actions this type supports beyond approve/reject (others answer 405). */
  cancel: boolean
  setStateExecuting: boolean
  setStateDone: boolean
  /** The service settings kind a cloud offering's scope must be, if any. */
  scopeKind: 'cloudA' | 'cloudB' | null
  /** Components its offerings are created with. */
  components: readonly BuiltinComponent[]
}

const limitComponent = (type: string, name: string, measured_unit: string, factor: number | null) =>
  ({ type, name, measured_unit, billing_type: 'limit', limit_period: 'month', factor }) as const

export const OFFERING_TYPE_RULES: Record<OfferingType, OfferingTypeRules> = {
  'Marketplace.Basic': {
    label: 'Basic',
    description: 'Provider approval always required; the approved order completes at once.',
    providerApprovalRequired: true,
    processedBy: 'server',
    cancel: true,
    setStateExecuting: false,
    setStateDone: true,
    scopeKind: null,
    components: [],
  },
  'Marketplace.Slurm': {
    label: 'Site agent (SLURM)',
    description:
      'Provider approval always required; then driven by an external site agent through set_state_*.',
    providerApprovalRequired: true,
    processedBy: 'agent',
    cancel: false,
    setStateExecuting: true,
    setStateDone: true,
    scopeKind: null,
    components: [],
  },
  'Support.OfferingTemplate': {
    label: 'Support request',
    description: 'Cancel allowed; completed by support staff with set_state_done.',
    providerApprovalRequired: false,
    processedBy: 'support',
    cancel: true,
    setStateExecuting: false,
    setStateDone: true,
    scopeKind: null,
    components: [],
  },
  'CloudB.Tenant': {
    label: 'cloudB tenant',
    description:
      'Processed by the server through the cloudB backend: Create makes a tenant, Update changes its limits, Terminate deletes it.',
    providerApprovalRequired: false,
    processedBy: 'server',
    cancel: false,
    setStateExecuting: false,
    setStateDone: false,
    scopeKind: 'cloudB',
    // A tenant's quotas: cores, RAM and storage (both limited in MB, priced per GB).
    components: [
      limitComponent('cores', 'Cores', 'cores', null),
      limitComponent('ram', 'RAM', 'GB', 1024),
      limitComponent('storage', 'Storage', 'GB', 1024),
    ],
  },
}

export function isOfferingType(v: unknown): v is OfferingType {
  return typeof v === 'string' && (OFFERING_TYPES as readonly string[]).includes(v)
}

/** The built-in components of an offering type (none for an unknown type). */
export function builtinComponents(type: string): readonly BuiltinComponent[] {
  return isOfferingType(type) ? OFFERING_TYPE_RULES[type].components : []
}
