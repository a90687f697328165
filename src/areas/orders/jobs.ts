// The orders' jobs: processing an executing order, delayed moves (start date, project start) and
// callback deliveries.
import type { AppContext } from '../../context.js'
import { parseJson } from '../../db/values.js'
import { PermanentJobError } from '../../jobs/queue.js'
import { callbackHost, CallbackSender, type CallbackPayload } from './callbacks.js'
import { offeringProcessor } from './processors.js'
import { ordersRepository, resourcesWriteRepository } from './repository.js'
import { allowedFrom, nextState, type OrderAction, type OrderState, type OrderType } from './state-machine.js'
import { afterStateChange, approvalContext, CALLBACK_LANE, JOBS, stampTextChanges } from './state-changes.js'

/** For processors that answered `pending`: finish the executing order now. */
export async function completeOrder(
  ctx: AppContext,
  orderId: number,
  outcome: 'done' | 'erred',
  message = '',
  traceback = '',
): Promise<boolean> {
  const action: OrderAction = outcome === 'done' ? 'processing_done' : 'processing_erred'
  const moved = await ctx.db.transaction().execute(async (trx) => {
    const now = ctx.clock().toISOString()
    const values: Record<string, unknown> = { state: outcome, modified: now, completed_at: now }
    if (outcome === 'erred') {
      Object.assign(values, { error_message: message, error_traceback: traceback })
      const before = await ordersRepository(trx).transitionRow(orderId)
      if (before) stampTextChanges(before, values, now)
    }
    const ok = await ordersRepository(trx).updateStateIfCurrent(orderId, allowedFrom(action), values)
    if (ok) await afterStateChange(ctx, trx, orderId, outcome, { from: 'executing', action })
    return ok
  })
  ctx.jobs.wake()
  return moved
}

async function processOrder(ctx: AppContext, orderId: number): Promise<void> {
  const o = await ordersRepository(ctx.db).findById(orderId)
  if (!o || o.state !== 'executing') return
  const processor = offeringProcessor(o.offering_type)
  if (!processor) {
    await completeOrder(ctx, orderId, 'done')
    return
  }
  try {
    const offering = (await ordersRepository(ctx.db).offeringById(o.offering_id))!
    const resource = o.resource_id
      ? await resourcesWriteRepository(ctx.db).findById(o.resource_id)
      : undefined
    if (!resource) throw new Error('the order has no resource')
    const result = await ctx.db.transaction().execute((trx) =>
      processor.process(ctx, trx, {
        orderId: o.id,
        orderUuid: o.uuid,
        type: o.type as OrderType,
        offering: {
          id: offering.id,
          uuid: offering.uuid,
          type: offering.type,
          customerId: offering.customer_id,
          serviceSettingsId: offering.service_settings_id,
          pluginOptions: parseJson(offering.plugin_options, {}),
        },
        resource: {
          id: resource.id,
          uuid: resource.uuid,
          name: resource.name,
          projectId: resource.project_id,
          customerId: resource.customer_id,
          planId: resource.plan_id,
          scopeType: resource.scope_type,
          scopeId: resource.scope_id,
          backendId: resource.backend_id,
        },
        attributes: parseJson(o.attributes, {}),
        limits: parseJson(o.limits, {}),
        createdById: o.created_by_id,
      }),
    )
    if (result.state === 'done') await completeOrder(ctx, orderId, 'done')
  } catch (e) {
    const err = e instanceof Error ? e : new Error(String(e))
    await completeOrder(ctx, orderId, 'erred', err.message, err.stack ?? '')
  }
}

async function moveWhenDue(ctx: AppContext, orderId: number, action: OrderAction): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const o = await ordersRepository(trx).dueRow(orderId)
    if (!o) return
    const ac = approvalContext(ctx, o.project_start_date, o.offering_type, o.start_date)
    const to = nextState(o.state as OrderState, action, ac)
    if (!to || to === o.state) return
    const now = ctx.clock().toISOString()
    if (
      await ordersRepository(trx).updateStateIfCurrent(o.id, allowedFrom(action), {
        state: to,
        modified: now,
      })
    ) {
      await afterStateChange(ctx, trx, o.id, to, { from: o.state as OrderState, action })
    }
  })
}

/**
 * One callback delivery attempt, within what is left of the delivery's time budget: once that is
 * spent the delivery fails for good, whatever attempts it has left.
 */
async function deliverCallback(
  ctx: AppContext,
  sender: CallbackSender,
  p: CallbackPayload,
  signal: AbortSignal,
): Promise<void> {
  const left = p.deadline ? Date.parse(p.deadline) - ctx.clock().getTime() : Infinity
  if (!(left > 0)) throw new PermanentJobError(`callback delivery gave up: its time budget is spent`)
  await sender.deliver(p, Math.min(ctx.config.callbackTimeoutMs, left), signal)
}

/** Defines the orders' jobs; returns what must be released when the app closes. */
export function defineOrderJobs(ctx: AppContext): { close: () => Promise<void> } {
  ctx.jobs.define<{ orderId: number }>(JOBS.process, {
    maxAttempts: 3,
    run: async (p) => processOrder(ctx, p.orderId),
  })
  const sender = new CallbackSender(ctx.config, ctx.lookupHost)
  ctx.jobs.defineLane(CALLBACK_LANE, {
    concurrency: ctx.config.callbackConcurrency,
    groupOf: callbackHost,
    perGroup: ctx.config.callbackHostConcurrency,
  })
  ctx.jobs.define<CallbackPayload>(JOBS.callback, {
    lane: CALLBACK_LANE,
    maxAttempts: 5,
    backoffMs: 2000,
    // A backstop: the delivery's own deadline ends it first.
    timeoutMs: ctx.config.callbackTimeoutMs + 1000,
    run: async (p, job) => deliverCallback(ctx, sender, p, job.signal),
  })
  ctx.jobs.define<{ orderId: number }>(JOBS.startDate, {
    run: async (p) => moveWhenDue(ctx, p.orderId, 'start_date_reached'),
  })
  ctx.jobs.define<{ orderId: number }>(JOBS.projectStart, {
    run: async (p) => moveWhenDue(ctx, p.orderId, 'project_started'),
  })
  return { close: () => sender.close() }
}
