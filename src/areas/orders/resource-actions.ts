// The marketplace resource actions that place an order: terminate (a Terminate order), switch_plan
// and update_limits (Update orders).
import type { AppContext } from '../../context.js'
import { parseJson, toBool, toJson } from '../../db/values.js'
import { fieldError, forbidden, invalidState, nonFieldError, notFound } from '../../http/errors.js'
import { can, type Actor } from '../../http/permissions.js'
import { normalizeUuid } from '../../http/uuid.js'
import { checkLimits, resolvePlanLink } from '../catalog/service.js'
import { isVisible, ordersRepository, resourcesWriteRepository } from './repository.js'
import { initialState } from './state-machine.js'
import { orderVisibility, planCost } from './order-rules.js'
import { afterStateChange, approvalContext } from './state-changes.js'
import { consumerApprovalImplied, newOrderColumns, orderSlug } from './create.js'

async function resourceOrder(
  ctx: AppContext,
  actor: Actor,
  resourceUuid: string,
  type: 'Update' | 'Terminate',
  extra: { planId?: number; limits?: Record<string, number>; attributes?: Record<string, unknown> },
): Promise<{ order_uuid: string }> {
  const id = normalizeUuid(resourceUuid)
  const resource = id ? await resourcesWriteRepository(ctx.db).findForOrder(id) : undefined
  if (!resource || !isVisible(orderVisibility(actor), resource))
    throw notFound('No Resource matches the given query.')
  if (!can(actor, 'ORDER.CREATE', { customerId: resource.customer_id, projectId: resource.project_id }))
    throw forbidden()
  if (!['OK', 'Erred'].includes(resource.state)) invalidResourceState()
  const orders = ordersRepository(ctx.db)
  if (await orders.hasOpenOrderForResource(resource.id))
    throw nonFieldError('Pending order for resource already exists.')
  if (extra.limits) await checkLimits(ctx, resource.offering_id, extra.limits, { resourceId: resource.id })
  const planId = extra.planId ?? resource.plan_id
  const plan = planId ? await orders.planById(planId) : undefined
  const now = ctx.clock().toISOString()
  const uuid = ctx.newUuid()
  await ctx.db.transaction().execute(async (trx) => {
    const implied = consumerApprovalImplied(
      actor,
      { customerId: resource.customer_id, projectId: resource.project_id },
      type,
      {
        customerId: resource.provider_customer_id,
        shared: resource.offering_shared,
        pluginOptions: resource.offering_plugin_options,
      },
    )
    // An Update or Terminate order never waits for its project's start.
    const state = initialState(implied, approvalContext(ctx, null, resource.offering_type, null))
    const orderId = await ordersRepository(trx).insert({
      uuid,
      slug: orderSlug(resource.name, resource.offering_name),
      type,
      state,
      offering_id: resource.offering_id,
      provider_customer_id: resource.provider_customer_id,
      plan_id: plan?.id ?? null,
      old_plan_id: extra.planId ? resource.plan_id : null,
      project_id: resource.project_id,
      customer_id: resource.customer_id,
      resource_id: resource.id,
      attributes: toJson(extra.attributes ?? {}),
      limits: toJson(extra.limits ?? parseJson(resource.limits, {})),
      cost: plan ? planCost(plan.unit_price, plan.fixed_price) : null,
      callback_url: null,
      request_comment: null,
      start_date: null,
      ...newOrderColumns(actor, implied, now),
    })
    await afterStateChange(ctx, trx, orderId, state, { from: null, action: 'create' })
  })
  ctx.jobs.wake()
  return { order_uuid: uuid }
}

function invalidResourceState(): never {
  throw invalidState(['OK', 'Erred'])
}

export function terminateResource(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  attributes?: Record<string, unknown>,
) {
  return resourceOrder(ctx, actor, uuid, 'Terminate', { attributes })
}

export async function switchPlan(ctx: AppContext, actor: Actor, uuid: string, planLink: string) {
  const plan = await resolvePlanLink(ctx, 'plan', planLink)
  const resource = await resourcesWriteRepository(ctx.db).findPlanByUuid(normalizeUuid(uuid) ?? '')
  if (resource && (plan.offering_id !== resource.offering_id || toBool(plan.archived))) {
    throw fieldError('plan', 'This plan is not available for selected offering.')
  }
  if (resource && plan.id === resource.plan_id)
    throw fieldError('plan', 'The resource already uses this plan.')
  return resourceOrder(ctx, actor, uuid, 'Update', { planId: plan.id })
}

export function updateLimits(ctx: AppContext, actor: Actor, uuid: string, limits: Record<string, number>) {
  return resourceOrder(ctx, actor, uuid, 'Update', { limits })
}
