// The order state machine: every state, and one transition table (from-states, action, target).
// Pure: no database, no clock. The service writes each transition as one conditional UPDATE.

export const ORDER_STATES = [
  'pending-consumer',
  'pending-provider',
  'pending-project',
  'pending-start-date',
  'executing',
  'done',
  'erred',
  'canceled',
  'rejected',
] as const
export type OrderState = (typeof ORDER_STATES)[number]

export const ORDER_TYPES = ['Create', 'Update', 'Terminate'] as const
export type OrderType = (typeof ORDER_TYPES)[number]

export const TERMINAL_STATES: readonly OrderState[] = ['done', 'erred', 'canceled', 'rejected']
export const PENDING_STATES: readonly OrderState[] = [
  'pending-consumer',
  'pending-provider',
  'pending-project',
  'pending-start-date',
]

/** What decides where an approval leads. */
export interface ApprovalContext {
  /** The project has a start date in the future. */
  projectNotStarted: boolean
  /** Provider approval is required for this order. */
  providerMustReview: boolean
  /** The order's own start date is in the future (delayed provisioning). */
  startDateInFuture: boolean
}

/** After the consumer side is settled: project wait, provider review, delayed start or execution. */
function afterConsumer(c: ApprovalContext): OrderState {
  if (c.projectNotStarted) return 'pending-project'
  if (c.providerMustReview) return 'pending-provider'
  return c.startDateInFuture ? 'pending-start-date' : 'executing'
}

function afterProvider(c: ApprovalContext): OrderState {
  return c.startDateInFuture ? 'pending-start-date' : 'executing'
}

export interface Transition {
  from: readonly OrderState[]
  to: (c: ApprovalContext) => OrderState
}

export const ORDER_TRANSITIONS = {
  approve_by_consumer: { from: ['pending-consumer'], to: afterConsumer },
  approve_by_provider: { from: ['pending-provider'], to: afterProvider },
  reject_by_consumer: { from: ['pending-consumer'], to: () => 'rejected' },
  reject_by_provider: { from: ['pending-provider'], to: () => 'rejected' },
  cancel: { from: ['pending-consumer', 'pending-provider', 'executing'], to: () => 'canceled' },
  set_state_executing: {
    from: ['pending-consumer', 'pending-provider', 'pending-project', 'pending-start-date', 'erred'],
    to: () => 'executing',
  },
  set_state_done: { from: ['executing'], to: () => 'done' },
  set_state_erred: { from: [...PENDING_STATES, 'executing'], to: () => 'erred' },
  /** The project's start date has come: continue as if the consumer had just approved. */
  project_started: {
    from: ['pending-project'],
    to: (c) => afterConsumer({ ...c, projectNotStarted: false }),
  },
  /** The order's start date has come. */
  start_date_reached: { from: ['pending-start-date'], to: () => 'executing' },
  /** The server finished processing (server-processed offering types). */
  processing_done: { from: ['executing'], to: () => 'done' },
  processing_erred: { from: ['executing'], to: () => 'erred' },
  delete: { from: ['pending-consumer', 'pending-provider'], to: () => 'canceled' },
} satisfies Record<string, Transition>

export type OrderAction = keyof typeof ORDER_TRANSITIONS

export function allowedFrom(action: OrderAction): readonly OrderState[] {
  return ORDER_TRANSITIONS[action].from
}

/** The target state, or null when the action is not allowed from `state`. */
export function nextState(state: OrderState, action: OrderAction, c: ApprovalContext): OrderState | null {
  const t: Transition = ORDER_TRANSITIONS[action]
  return t.from.includes(state) ? t.to(c) : null
}

/** The three facts of an approval context, in the order of `contextIndex`'s bits (4, 2, 1). */
const CONTEXTS: readonly ApprovalContext[] = [false, true].flatMap((projectNotStarted) =>
  [false, true].flatMap((providerMustReview) =>
    [false, true].map((startDateInFuture) => ({ projectNotStarted, providerMustReview, startDateInFuture })),
  ),
)

/** Where an approval context is in `contextTargets`: projectNotStarted 4, providerMustReview 2, startDateInFuture 1. */
export const CONTEXT_BITS = { projectNotStarted: 4, providerMustReview: 2, startDateInFuture: 1 } as const

const targetsOf = new Map<OrderAction, { from: OrderState; targets: OrderState[] } | null>()

/**
 * For an action that moves from one state only, that state and its target in each of the eight
 * approval contexts (at the sum of `CONTEXT_BITS` of the facts that hold), for a statement that
 * decides the target itself; null for an action from several states or that may complete the
 * order. Worked out once per action.
 */
export function contextTargets(action: OrderAction): { from: OrderState; targets: OrderState[] } | null {
  let known = targetsOf.get(action)
  if (known === undefined) {
    const [from, ...others] = allowedFrom(action)
    const targets = from && !others.length ? CONTEXTS.map((c) => nextState(from, action, c)) : []
    known =
      from && targets.length && targets.every((t) => t !== null && !TERMINAL_STATES.includes(t))
        ? { from, targets: targets as OrderState[] }
        : null
    targetsOf.set(action, known)
  }
  return known
}

/** The initial state of a new order, given whether the consumer review is implied. */
export function initialState(consumerApprovalImplied: boolean, c: ApprovalContext): OrderState {
  return consumerApprovalImplied ? afterConsumer(c) : 'pending-consumer'
}

/** Marketplace resource state after an order reaches `state` (null: unchanged). */
export function resourceStateAfter(type: OrderType, state: OrderState): string | null {
  switch (state) {
    case 'executing':
      return type === 'Terminate' ? 'Terminating' : type === 'Update' ? 'Updating' : null
    case 'done':
      return type === 'Terminate' ? 'Terminated' : 'OK'
    case 'erred':
      return type === 'Terminate' ? 'OK' : 'Erred'
    case 'rejected':
      return type === 'Create' ? 'Terminated' : 'OK'
    // A canceled Create order leaves no live resource behind (nor one a cost policy counts);
    // canceling an Update or Terminate order changes only the order.
    case 'canceled':
      return type === 'Create' ? 'Terminated' : null
    case 'pending-consumer':
    case 'pending-provider':
    case 'pending-project':
    case 'pending-start-date':
      return null
  }
}
