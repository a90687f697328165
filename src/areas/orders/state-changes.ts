// What every state change shares: the facts the state machine decides on (the approval context),
// the timestamps of changed texts, and the side effects of reaching a state (resource state,
// processing, delayed starts, callbacks), in the transaction that changed it.
import type { AppContext } from '../../context.js'
import { parseJson, toJson } from '../../db/values.js'
import { scheduleCostPolicyEvaluation } from '../cost-policies/service.js'
import type { CallbackPayload } from './callbacks.js'
import { ordersRepository, resourcesWriteRepository, type OrderRow } from './repository.js'
import { moveResource, type ResourceState } from '../catalog/service.js'
import {
  ORDER_STATES,
  ORDER_TYPES,
  resourceStateAfter,
  type ApprovalContext,
  type OrderState,
  type OrderType,
} from './state-machine.js'
import { rulesOf, today, type Trx } from './order-rules.js'
import {
  ensureOfferingUsersForResource,
  offeringGivesAccounts,
  offeringGivesAccountsSql,
} from '../offering-users/provisioning.js'
import { OFFERING_TYPES, OFFERING_TYPE_RULES, type OfferingTypeRules } from '../catalog/offering-types.js'
import { orderEvent, type OrderEventFacts } from './events.js'
import { emitEvent, outboxRow, type OutboxRow } from '../events/service.js'

/** The states of a Create order in which its resource's offering gives the project's members accounts. */
const ACCOUNT_GIVING_STATES: ReadonlySet<OrderState> = new Set(['pending-provider', 'executing', 'done'])

export const JOBS = {
  process: 'order.process',
  callback: 'order.callback',
  startDate: 'order.start-date',
  projectStart: 'order.project-start',
} as const

/** Callback deliveries run in this lane of the job queue, never in the one that processes orders. */
export const CALLBACK_LANE = 'order.callbacks'
/** The facts the state machine decides on, from the project's start and the order's. */
export function approvalContext(
  ctx: AppContext,
  projectStart: string | null,
  offeringType: string,
  startDate: string | null,
): ApprovalContext {
  const rules = rulesOf(offeringType)
  return {
    projectNotStarted: !!projectStart && projectStart > today(ctx),
    providerMustReview: rules?.providerApprovalRequired ?? false,
    startDateInFuture: ctx.config.orderStartDateEnabled && !!startDate && startDate > today(ctx),
  }
}

/** The offering types whose rules have this true (for the statements that decide in SQL). */
function typesWhere(holds: (rules: OfferingTypeRules) => boolean): string[] {
  return OFFERING_TYPES.filter((t) => holds(OFFERING_TYPE_RULES[t]))
}
const PROVIDER_REVIEWED_TYPES = typesWhere((r) => r.providerApprovalRequired)
const SERVER_PROCESSED_TYPES = typesWhere((r) => r.processedBy === 'server')

/**
 * `approvalContext` as SQL, for a statement that decides a transition itself: the three facts
 * on the row `o` (a transition row: `project_start_date`, `offering_type`, `start_date`), each a
 * boolean expression; `param` gives a value its placeholder.
 */
export function approvalContextSql(
  ctx: AppContext,
  o: string,
  param: (value: unknown) => string,
): Record<keyof ApprovalContext, string> {
  const day = param(today(ctx))
  // The dates are 'YYYY-MM-DD' texts, compared as JavaScript compares them (code points).
  return {
    projectNotStarted: `coalesce(${o}.project_start_date, '') collate "C" > ${day}`,
    providerMustReview: `${o}.offering_type = any(${param(PROVIDER_REVIEWED_TYPES)}::text[])`,
    startDateInFuture: ctx.config.orderStartDateEnabled
      ? `coalesce(${o}.start_date, '') collate "C" > ${day}`
      : 'false',
  }
}

/** What the side effects of a state change read of the order (its row, its resource's uuid, its project's start). */
export type StateChangeFacts = Pick<
  OrderRow,
  | 'id'
  | 'uuid'
  | 'type'
  | 'offering_id'
  | 'offering_type'
  | 'project_id'
  | 'resource_id'
  | 'plan_id'
  | 'limits'
  | 'start_date'
  | 'callback_url'
  | 'modified'
> & {
  resource_uuid: string | null
  project_start_date: string | null
  offering_uuid: string
  offering_plugin_options: unknown
  project_uuid: string
  customer_uuid: string
}

/** The change that reached a state: the state before (null for a new order) and the action that moved it. */
export interface StateChange {
  from: OrderState | null
  action: string
  /** The event telling it was written with the change (see `stateChangeEvent`). */
  told?: boolean
}

/** The event telling a state change, for a caller that writes it with the change itself. */
export function stateChangeEvent(
  ctx: AppContext,
  o: Omit<OrderEventFacts, 'state'>,
  state: OrderState,
  change: StateChange,
): OutboxRow {
  const data = { state_before: change.from, state_after: state, action: change.action }
  return outboxRow(ctx, orderEvent({ ...o, state }, change.from === null ? 'created' : 'state_changed', data))
}

/** Which side effects reaching a state has, past the order's own row (see `afterStateChange`). */
interface Effects {
  /** The event telling the change, when the change did not write it. */
  event: boolean
  /** The state the order moves its resource to (before a broken create is told apart). */
  resource: ResourceState | null
  /** The project's members get accounts on the offering. */
  accounts: boolean
  /** The server processes the order. */
  process: boolean
  /** A job waits for the order's start date. */
  startDate: boolean
  /** A job waits for the project's start. */
  projectStart: boolean
  /** The order's callback is called. */
  callback: boolean
}

function effectsOf(o: StateChangeFacts, state: OrderState, change: StateChange): Effects {
  const type = o.type as OrderType
  return {
    event: !change.told,
    resource: o.resource_id === null ? null : (resourceStateAfter(type, state) as ResourceState | null),
    accounts:
      type === 'Create' &&
      ACCOUNT_GIVING_STATES.has(state) &&
      offeringGivesAccounts({ type: o.offering_type, plugin_options: o.offering_plugin_options }),
    process: state === 'executing' && rulesOf(o.offering_type)?.processedBy === 'server',
    startDate: state === 'pending-start-date' && !!o.start_date,
    projectStart: state === 'pending-project' && !!o.project_start_date,
    callback: !!o.callback_url,
  }
}

/** `<order type>/<state>` for each state an order of that type reaches without moving its resource. */
const RESOURCE_UNMOVED = ORDER_TYPES.flatMap((type) =>
  ORDER_STATES.filter((state) => resourceStateAfter(type, state) === null).map((state) => `${type}/${state}`),
)
const ACCOUNT_GIVING_LIST = [...ACCOUNT_GIVING_STATES]

/**
 * `effectsOf` as SQL, for a statement that decides a transition itself: a condition that holds
 * only when reaching the state `target` (an expression) has no side effect on the transition row
 * `o` past the event the statement writes. Each line is the negation of one effect above.
 */
export function noSideEffectsSql(o: string, target: string, param: (value: unknown) => string): string {
  return [
    `(${o}.resource_id is null or (${o}.type || '/' || ${target}) = any(${param(RESOURCE_UNMOVED)}::text[]))`,
    `not (${o}.type = 'Create' and ${target} = any(${param(ACCOUNT_GIVING_LIST)}::text[]) and ${offeringGivesAccountsSql(`${o}.offering_type`, `${o}.offering_plugin_options`, param)})`,
    `not (${target} = 'executing' and ${o}.offering_type = any(${param(SERVER_PROCESSED_TYPES)}::text[]))`,
    `not (${target} = 'pending-start-date' and coalesce(${o}.start_date, '') <> '')`,
    `not (${target} = 'pending-project' and coalesce(${o}.project_start_date, '') <> '')`,
    `coalesce(${o}.callback_url, '') = ''`,
  ].join(' and ')
}

/**
 * Whether reaching `state` writes anything past the order's row and the event the change wrote
 * with it: when it does not, that one write is the whole change, and needs no transaction.
 */
export function hasSideEffects(o: StateChangeFacts, state: OrderState, change: StateChange): boolean {
  return Object.values(effectsOf(o, state, change)).some(Boolean)
}

/** A delayed start waits for the first moment (UTC) of its day. */
const startOf = (day: string | null) => ({ runAt: new Date(`${day}T00:00:00.000Z`) })

/**
 * Side effects of reaching `state`, in order: the event (unless the change wrote it), resource
 * state, accounts, processing, delayed start, callback. Given the order's id, its row is read back;
 * a caller that has the row (a new order, a transition) gives its facts instead.
 */
export async function afterStateChange(
  ctx: AppContext,
  trx: Trx,
  order: number | StateChangeFacts,
  state: OrderState,
  change: StateChange,
): Promise<void> {
  const o = typeof order === 'number' ? await ordersRepository(trx).transitionRow(order) : order
  const orderId = o.id
  const effects = effectsOf(o, state, change)
  if (effects.event)
    await emitEvent(
      ctx,
      trx,
      orderEvent({ ...o, state }, change.from === null ? 'created' : 'state_changed', {
        state_before: change.from,
        state_after: state,
        action: change.action,
      }),
    )
  const type = o.type as OrderType
  let resourceState = effects.resource
  if (o.resource_id !== null && resourceState === 'Erred' && type === 'Create') {
    // A resource still being created that never reached its backend is gone, not broken.
    const r = await resourcesWriteRepository(trx).findById(o.resource_id)
    if (r && r.state === 'Creating' && !r.backend_id) resourceState = 'Terminated'
  }
  if (o.resource_id !== null && resourceState) {
    const values: Record<string, unknown> = {}
    if (state === 'done' && type === 'Update') {
      values.plan_id = o.plan_id
      values.limits = toJson(parseJson(o.limits, {}))
    }
    // The order decided the resource's state: it applies whatever state the resource is in.
    const now = ctx.clock().toISOString()
    await moveResource(ctx, trx, o.resource_id, resourceState, { from: null, values, now })
    await scheduleCostPolicyEvaluation(ctx, trx, o.offering_id)
  }
  // A new resource the provider takes on gives the project's members accounts on its offering.
  if (effects.accounts)
    await ensureOfferingUsersForResource(ctx, trx, o.project_id, {
      id: o.offering_id,
      type: o.offering_type,
      plugin_options: o.offering_plugin_options,
    })
  if (effects.process) await ctx.jobs.enqueue(trx, JOBS.process, { orderId })
  if (effects.startDate) await ctx.jobs.enqueue(trx, JOBS.startDate, { orderId }, startOf(o.start_date))
  if (effects.projectStart)
    await ctx.jobs.enqueue(trx, JOBS.projectStart, { orderId }, startOf(o.project_start_date))
  if (effects.callback) {
    const payload: CallbackPayload = {
      url: o.callback_url!,
      body: {
        uuid: o.uuid,
        state,
        type: o.type,
        resource_uuid: o.resource_uuid ?? null,
        modified: o.modified,
      },
      deadline: new Date(ctx.clock().getTime() + ctx.config.callbackBudgetMs).toISOString(),
    }
    await ctx.jobs.enqueue(trx, JOBS.callback, payload, { maxAttempts: 5 })
  }
}

/** The texts whose changes are timestamped, and the column of each timestamp. */
export const STAMPED_TEXTS = [
  ['output', 'output_updated_at'],
  ['error_message', 'error_updated_at'],
] as const

/** Sets `<text>_updated_at` for each timestamped text these values change. */
export function stampTextChanges(
  o: { output: string; error_message: string },
  values: Record<string, unknown>,
  now: string,
): void {
  for (const [text, stamp] of STAMPED_TEXTS) {
    if (values[text] !== undefined && values[text] !== o[text]) values[stamp] = now
  }
}
