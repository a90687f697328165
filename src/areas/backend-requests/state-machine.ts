// The one transition table of backend resource requests (spec 3.2, reference §4).
import type { RequestState } from './schema.js'

export type Action = 'start_processing' | 'set_done' | 'set_erred'

export const TRANSITIONS: Record<Action, { from: readonly RequestState[]; to: RequestState }> = {
  start_processing: { from: ['Sent'], to: 'Processing' },
  set_done: { from: ['Processing'], to: 'Done' },
  // "any reporting failure": every state, Erred included (re-reporting replaces the message).
  set_erred: { from: ['Sent', 'Processing', 'Done', 'Erred'], to: 'Erred' },
}

export const STATUS_MESSAGES: Record<Action, string> = {
  start_processing: 'Backend resource request has been moved to processing.',
  set_done: 'Backend resource request has been marked as done.',
  set_erred: 'Backend resource request has been marked as erred.',
}
