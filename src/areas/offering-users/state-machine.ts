// The one transition table of offering users (an account's life on the provider's backend), and
// the rule that a username becoming known finishes a pending creation.
import type { OfferingUserState } from './schema.js'

export type OfferingUserAction =
  | 'begin_creating'
  | 'set_ok'
  | 'set_pending_additional_validation'
  | 'set_pending_account_linking'
  | 'set_validation_complete'
  | 'request_deletion'
  | 'set_deleting'
  | 'set_deleted'
  | 'set_error_creating'
  | 'set_error_deleting'

/** Creation not finished yet: a username arriving in one of these states makes the account OK. */
export const CREATION_STATES: readonly OfferingUserState[] = [
  'Requested',
  'Creating',
  'Pending account linking',
  'Pending additional validation',
  'Error creating',
]

/** On the way out: a user regaining access brings such an account back. */
export const DELETION_STATES: readonly OfferingUserState[] = [
  'Requested deletion',
  'Deleting',
  'Error deleting',
]

export const TRANSITIONS: Record<
  OfferingUserAction,
  { from: readonly OfferingUserState[]; to: OfferingUserState }
> = {
  begin_creating: { from: ['Requested', 'Error creating'], to: 'Creating' },
  set_ok: { from: [...CREATION_STATES, ...DELETION_STATES], to: 'OK' },
  set_pending_additional_validation: {
    from: ['Creating', 'Error creating', 'Pending account linking'],
    to: 'Pending additional validation',
  },
  set_pending_account_linking: {
    from: ['Creating', 'Error creating', 'Pending additional validation'],
    to: 'Pending account linking',
  },
  set_validation_complete: {
    from: ['Pending additional validation', 'Pending account linking'],
    to: 'OK',
  },
  request_deletion: {
    from: ['OK', 'Creating', 'Pending account linking', 'Pending additional validation', 'Error creating'],
    to: 'Requested deletion',
  },
  set_deleting: { from: ['Requested deletion', 'Error deleting'], to: 'Deleting' },
  set_deleted: { from: ['Requested', 'Deleting'], to: 'Deleted' },
  set_error_creating: {
    from: ['Requested', 'Creating', 'Pending account linking', 'Pending additional validation'],
    to: 'Error creating',
  },
  set_error_deleting: { from: ['Requested deletion', 'Deleting'], to: 'Error deleting' },
}

/** The state after the username is set to `username` (a non-empty new one finishes a creation). */
export function stateAfterUsername(
  state: OfferingUserState,
  previous: string | null,
  username: string | null,
): OfferingUserState {
  if (username && username !== previous && CREATION_STATES.includes(state)) return 'OK'
  return state
}
