// The offering types the marketplace knows and what each allows. One table: orders, resources and
// the offering-types endpoint all read it.

export const OFFERING_TYPES = [
  'Marketplace.Basic',
  'Marketplace.Slurm',
  'Support.OfferingTemplate',
  'CloudB.Tenant',
] as const
export type OfferingType = (typeof OFFERING_TYPES)[number]

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
}

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
  },
}

export function isOfferingType(v: unknown): v is OfferingType {
  return typeof v === 'string' && (OFFERING_TYPES as readonly string[]).includes(v)
}
