// The order's transitions: each action of the state machine as one conditional UPDATE, checked
// 404 → 403 → 400 → 409 → 405, with its side effects in the same transaction; and the
// deletions and the backend id.
import type { AppContext } from '../../context.js'
import { toBool } from '../../db/values.js'
import { AppError, forbidden, invalidState, nonFieldError, notFound } from '../../http/errors.js'
import { normalizeUuid } from '../../http/uuid.js'
import { can, canSql, type Actor, type Permission, type ScopeType } from '../../http/permissions.js'
import { scheduleCostPolicyEvaluation } from '../cost-policies/service.js'
import { changeResource, moveResource } from '../catalog/service.js'
import { tellOrderChange } from './events.js'
import type { OfferingTypeRules } from '../catalog/offering-types.js'
import {
  DECIDED_FACT,
  ordersRepository,
  type DecidedTransition,
  type OrderRow,
  type TransitionRow,
} from './repository.js'
import {
  allowedFrom,
  contextTargets,
  nextState,
  TERMINAL_STATES,
  type OrderAction,
  type OrderState,
} from './state-machine.js'
import {
  CONSUMER_SCOPES,
  consumerScopes,
  findVisible,
  ORDER_NOT_FOUND,
  orderVisibility,
  PROVIDER_SCOPES,
  providerScopes,
  rulesOf,
  scopesOn,
  type ScopeColumns,
} from './order-rules.js'
import {
  afterStateChange,
  approvalContext,
  approvalContextSql,
  hasSideEffects,
  noSideEffectsSql,
  STAMPED_TEXTS,
  stampTextChanges,
  stateChangeEvent,
} from './state-changes.js'
import { checkCustomerAndProject, customerAndProjectSql } from './create.js'
import { removeAttachmentFile } from './attachments.js'

/** A permission held on one of the order's scopes (one side's: `CONSUMER_SCOPES`, `PROVIDER_SCOPES`). */
interface ScopedPermission {
  permission: Permission
  scopes: ScopeColumns
}

interface TransitionOptions {
  /** 403 unless this holds (after the order is found). */
  permitted: ((o: TransitionRow) => boolean) | ScopedPermission
  /** 405 unless the offering type supports the action (checked after the state). */
  typeAllows?: (rules: OfferingTypeRules | null) => boolean
  /** Business checks (400) that come before the state check (after the permission). */
  precheck?: (o: TransitionRow) => void
  /**
   * `precheck` as SQL on the row `o` (true: it passes): the transition may then be decided and
   * written by one statement (PostgreSQL, `decided`). Given with a scoped permission only.
   */
  precheckSql?: (o: string, param: (value: unknown) => string) => string
  /** Extra columns written with the state. */
  values?: (now: string) => Record<string, unknown>
}

function isPermitted(actor: Actor, permitted: TransitionOptions['permitted'], o: TransitionRow): boolean {
  return typeof permitted === 'function'
    ? permitted(o)
    : can(actor, permitted.permission, scopesOn(permitted.scopes, o))
}

/** The columns of a side's scopes on the decided statement's row `o`. */
function onRow(scopes: ScopeColumns): Partial<Record<ScopeType, string>> {
  return Object.fromEntries(Object.entries(scopes).map(([scope, column]) => [scope, `"o".${column}`]))
}

/** The facts of the order a decided transition's event takes from the row (see `DECIDED_FACT`). */
const DECIDED_EVENT_FACTS = {
  type: DECIDED_FACT('type'),
  offering_uuid: DECIDED_FACT('offering_uuid'),
  project_uuid: DECIDED_FACT('project_uuid'),
  customer_uuid: DECIDED_FACT('customer_uuid'),
  resource_uuid: DECIDED_FACT('resource_uuid'),
}

/**
 * The action as one statement that reads, decides and writes it (PostgreSQL), when everything it
 * decides on can be asked in SQL: a scoped permission and a precheck given as SQL, one state to
 * move from, no offering-type rule, and no target that completes the order. Null otherwise.
 */
function decided(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  action: OrderAction,
  opts: TransitionOptions,
  now: string,
): DecidedTransition | null {
  const permitted = opts.permitted
  if (typeof permitted === 'function' || (opts.precheck && !opts.precheckSql) || opts.typeAllows) return null
  const moves = contextTargets(action)
  if (!moves) return null
  const values = opts.values?.(now) ?? {}
  if (STAMPED_TEXTS.some(([text]) => text in values)) return null
  const { from, targets } = moves
  const change = { from, action, told: true }
  const event = stateChangeEvent(
    ctx,
    { uuid, ...DECIDED_EVENT_FACTS },
    DECIDED_FACT('target') as OrderState,
    change,
  )
  return {
    uuid,
    from,
    targets,
    values: { modified: now, ...values },
    event,
    sql: (param) => ({
      context: approvalContextSql(ctx, '"o"', param),
      conditions: [
        canSql(actor, permitted.permission, onRow(permitted.scopes), param),
        ...(opts.precheckSql ? [opts.precheckSql('"o"', param)] : []),
      ],
      quiet: (target) => noSideEffectsSql('"o"', target, param),
    }),
  }
}

function typeNotSupported(type: string): AppError {
  return new AppError('not_allowed', `The order's offering type ${type} does not support this action.`)
}

/**
 * Runs one action: 404 → 403 → (precheck) 400 → 409 → 405, then one conditional UPDATE and its
 * effects. The order is read and the action decided before any transaction: the update moves the
 * order only from the state read (a 409 when another request moved it first), which is all the
 * read guarded when it ran in the transaction too (it locked nothing). A change with no effect
 * past the order's row and its event is that one statement where the database writes both in one
 * (PostgreSQL): no `begin` and `commit` round trips. On PostgreSQL an action whose checks are all
 * given as SQL (`decided`: the approvals) is first tried as one statement that reads the order,
 * decides and, when the move has no side effect, writes it; when that statement did not move the
 * order, it is read and checked here as any other action's, and the checks say why, or the order
 * moves as above (a side effect to write, or another request moved it first).
 */
async function transition(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  action: OrderAction,
  opts: TransitionOptions,
): Promise<void> {
  const orders = ordersRepository(ctx.db)
  const id = normalizeUuid(uuid)
  if (!id) throw notFound(ORDER_NOT_FOUND)
  const vis = orderVisibility(actor)
  const oneStatement = orders.stateUpdateIsOneStatement
    ? decided(ctx, actor, id, action, opts, ctx.clock().toISOString())
    : null
  // Read, decided and written at once; when it did not move, the checks below say why, or it
  // moves as any other transition (side effects, a race).
  if (oneStatement && (await orders.moveDecided(oneStatement))) {
    ctx.jobs.wake()
    return
  }
  const o = await orders.findVisibleTransitionRowByUuid(vis, id)
  if (!o) throw notFound(ORDER_NOT_FOUND)
  if (!isPermitted(actor, opts.permitted, o)) throw forbidden()
  opts.precheck?.(o)
  const from = allowedFrom(action)
  const ac = approvalContext(ctx, o.project_start_date, o.offering_type, o.start_date)
  const to = nextState(o.state as OrderState, action, ac)
  if (!to) throw invalidState(from)
  if (opts.typeAllows && !opts.typeAllows(rulesOf(o.offering_type))) throw typeNotSupported(o.offering_type)
  const now = ctx.clock().toISOString()
  const values: Record<string, unknown> = { state: to, modified: now, ...(opts.values?.(now) ?? {}) }
  stampTextChanges(o, values, now)
  if (TERMINAL_STATES.includes(to)) values.completed_at = now
  const change = { from: o.state as OrderState, action, told: true }
  // The event telling the change is written with it (no read of the order for it).
  const event = stateChangeEvent(ctx, o, to, change)
  // The row read above, as written: no second read of it for the side effects.
  const written = { ...o, modified: now }
  if (orders.stateUpdateIsOneStatement && !hasSideEffects(written, to, change)) {
    if (!(await orders.updateStateIfCurrent(o.id, from, values, event))) throw invalidState(from)
  } else {
    await ctx.db.transaction().execute(async (trx) => {
      const moved = await ordersRepository(trx).updateStateIfCurrent(o.id, from, values, event)
      if (!moved) throw invalidState(from)
      await afterStateChange(ctx, trx, written, to, change)
    })
  }
  ctx.jobs.wake()
}

export function approveByConsumer(ctx: AppContext, actor: Actor, uuid: string) {
  return transition(ctx, actor, uuid, 'approve_by_consumer', {
    permitted: { permission: 'ORDER.APPROVE', scopes: CONSUMER_SCOPES },
    // The organization and project (read with the order) come before the order's state.
    precheck: (o) =>
      checkCustomerAndProject(
        ctx,
        { blocked: o.customer_blocked, archived: o.customer_archived },
        { name: o.project_name, end_date: o.project_end_date },
      ),
    precheckSql: (o, param) => customerAndProjectSql(ctx, o, param),
    values: (now) => ({ consumer_reviewed_by_id: actor.id, consumer_reviewed_at: now }),
  })
}

export function approveByProvider(ctx: AppContext, actor: Actor, uuid: string) {
  return transition(ctx, actor, uuid, 'approve_by_provider', {
    permitted: { permission: 'ORDER.APPROVE', scopes: PROVIDER_SCOPES },
    values: (now) => ({ provider_reviewed_by_id: actor.id, provider_reviewed_at: now }),
  })
}

export function rejectByConsumer(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: { error_message?: string; error_traceback?: string; consumer_rejection_comment?: string },
) {
  return transition(ctx, actor, uuid, 'reject_by_consumer', {
    permitted: (o) => o.created_by_id === actor.id || can(actor, 'ORDER.REJECT', consumerScopes(o)),
    values: (now) => ({
      consumer_reviewed_by_id: actor.id,
      consumer_reviewed_at: now,
      ...(body.error_message !== undefined ? { error_message: body.error_message } : {}),
      ...(body.error_traceback !== undefined ? { error_traceback: body.error_traceback } : {}),
      ...(body.consumer_rejection_comment !== undefined
        ? { consumer_rejection_comment: body.consumer_rejection_comment }
        : {}),
    }),
  })
}

export function rejectByProvider(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: { provider_rejection_comment?: string } = {},
) {
  return transition(ctx, actor, uuid, 'reject_by_provider', {
    permitted: (o) => can(actor, 'ORDER.REJECT', providerScopes(o)),
    values: (now) => ({
      provider_reviewed_by_id: actor.id,
      provider_reviewed_at: now,
      ...(body.provider_rejection_comment !== undefined
        ? { provider_rejection_comment: body.provider_rejection_comment }
        : {}),
    }),
  })
}

export function cancelOrder(ctx: AppContext, actor: Actor, uuid: string) {
  return transition(ctx, actor, uuid, 'cancel', {
    permitted: (o) => can(actor, 'ORDER.CANCEL', consumerScopes(o)),
    typeAllows: (r) => !!r?.cancel,
  })
}

/** Agents (provider side) drive these; support staff complete support requests. */
function agentPermitted(actor: Actor, o: OrderRow): boolean {
  if (can(actor, 'ORDER.APPROVE', providerScopes(o))) return true
  return actor.isSupport && rulesOf(o.offering_type)?.processedBy === 'support'
}

export function setStateExecuting(ctx: AppContext, actor: Actor, uuid: string) {
  return transition(ctx, actor, uuid, 'set_state_executing', {
    permitted: (o) => agentPermitted(actor, o),
    typeAllows: (r) => !!r?.setStateExecuting,
  })
}

export function setStateDone(ctx: AppContext, actor: Actor, uuid: string) {
  return transition(ctx, actor, uuid, 'set_state_done', {
    permitted: (o) => agentPermitted(actor, o),
    typeAllows: (r) => !!r?.setStateDone,
  })
}

export function setStateErred(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: { error_message?: string; error_traceback?: string },
) {
  return transition(ctx, actor, uuid, 'set_state_erred', {
    permitted: (o) => agentPermitted(actor, o),
    values: () => ({ error_message: body.error_message ?? '', error_traceback: body.error_traceback ?? '' }),
  })
}

export async function deleteOrder(ctx: AppContext, actor: Actor, uuid: string): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const o = await findVisible(ctx, actor, uuid, trx)
    if (!can(actor, 'ORDER.DESTROY', consumerScopes(o))) throw forbidden()
    const from = allowedFrom('delete')
    if (!from.includes(o.state as OrderState)) throw invalidState(from)
    const c = (await ordersRepository(trx).customerById(o.customer_id))!
    if (toBool(c.blocked)) throw nonFieldError('Blocked organization is not available.')
    if (toBool(c.archived)) throw nonFieldError('Archived organization is not available.')
    if (!(await ordersRepository(trx).deleteIfState(o.id, from))) throw invalidState(from)
    // A resource that only existed for this Create order goes with it.
    if (o.type === 'Create' && o.resource_id !== null) {
      await moveResource(ctx, trx, o.resource_id, 'Terminated', {
        from: null,
        now: ctx.clock().toISOString(),
      })
      await scheduleCostPolicyEvaluation(ctx, trx, o.offering_id)
    }
  })
  removeAttachmentFile(ctx, uuid)
}

/** Staff only: forget the order without touching the backend. */
export async function unlinkOrder(ctx: AppContext, actor: Actor, uuid: string): Promise<void> {
  const o = await findVisible(ctx, actor, uuid)
  await ordersRepository(ctx.db).delete(o.id)
  removeAttachmentFile(ctx, o.uuid)
}

export async function setBackendId(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  backendId: string,
): Promise<void> {
  const o = await findVisible(ctx, actor, uuid)
  if (!can(actor, 'ORDER.APPROVE', providerScopes(o))) throw forbidden()
  await ctx.db.transaction().execute(async (trx) => {
    const now = ctx.clock().toISOString()
    await ordersRepository(trx).update(o.id, { backend_id: backendId, modified: now })
    if (o.backend_id !== backendId)
      await tellOrderChange(ctx, trx, o.id, 'backend_id_changed', {
        backend_id_before: o.backend_id,
        backend_id_after: backendId,
      })
    if (o.resource_id !== null)
      await changeResource(ctx, trx, o.resource_id, { backend_id: backendId, modified: now })
  })
}
