// Offering states and the one transition table of the offering actions. Pure: no DB, no clock.
import { invalidState } from '../../http/errors.js'
import { OFFERING_STATES, type OfferingState } from './schema.js'

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
