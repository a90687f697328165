// Offering states and the one transition table of the offering actions, and the transitions of
// marketplace resources. Pure: no DB, no clock.
import { invalidState } from '../../http/errors.js'
import { OFFERING_STATES, RESOURCE_STATES, type OfferingState } from './schema.js'

export type OfferingAction = 'activate' | 'pause' | 'unpause' | 'archive'

export interface OfferingTransition {
  from: readonly OfferingState[]
  to: OfferingState
  /** The `status` text of the 200 answer. */
  status: string
}

export const OFFERING_TRANSITIONS: Record<OfferingAction, OfferingTransition> = {
  activate: { from: ['Draft', 'Paused'], to: 'Active', status: 'Offering has been activated.' },
  pause: { from: ['Active'], to: 'Paused', status: 'Offering has been paused.' },
  unpause: { from: ['Paused'], to: 'Active', status: 'Offering has been unpaused.' },
  archive: {
    from: OFFERING_STATES.filter((s) => s !== 'Archived'),
    to: 'Archived',
    status: 'Offering has been archived.',
  },
}

/** The transition of `action` from `state`, or a 409 naming the valid source states. */
export function offeringTransition(state: string, action: OfferingAction): OfferingTransition {
  const t = OFFERING_TRANSITIONS[action]
  if (!(t.from as readonly string[]).includes(state)) throw invalidState(t.from)
  return t
}

/** States in which an offering may be deleted. */
export const DELETABLE_OFFERING_STATES: readonly OfferingState[] = ['Draft']

// ---- marketplace resources ----

export type ResourceState = (typeof RESOURCE_STATES)[number]

/** The resource state changes its provider reports (orders move resources to any state). */
export type ResourceTransitionName = 'set_state_ok' | 'set_as_ok' | 'set_as_erred'

/**
 * As the reference's resource model allows them: to OK only from a state in progress or from
 * Erred; to Erred from any state.
 */
export const RESOURCE_TRANSITIONS: Record<
  ResourceTransitionName,
  { from: readonly ResourceState[] | null; to: ResourceState }
> = {
  set_state_ok: { from: ['Erred', 'Creating', 'Updating', 'Terminating'], to: 'OK' },
  set_as_ok: { from: ['Erred', 'Creating', 'Updating', 'Terminating'], to: 'OK' },
  set_as_erred: { from: null, to: 'Erred' },
}

/** The transition `name` from `state`, or a 409 naming the states it is allowed from. */
export function resourceTransition(state: string, name: ResourceTransitionName) {
  const t = RESOURCE_TRANSITIONS[name]
  if (t.from && !(t.from as readonly string[]).includes(state)) throw invalidState(t.from)
  return t
}
