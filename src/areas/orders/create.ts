// Placing an order: the Create order's field rules (every bad field named in one 400), the rules
// across fields, and the consumer-review skip rules every new order (also Update and Terminate)
// is placed by.
import type { AppContext } from '../../context.js'
import { parseJson, toBool, toJson } from '../../db/values.js'
import { FieldErrorSet, fieldError, forbidden, nonFieldError } from '../../http/errors.js'
import { can, type Actor } from '../../http/permissions.js'
import { slugify } from '../../http/slug.js'
import { projectLinkPart } from '../directory/service.js'
import {
  checkLimits,
  insertResource,
  newResourceRow,
  planHasRoom,
  offeringLinkPart,
  planLinkPart,
} from '../catalog/service.js'
import { PATHS } from '../catalog/schema.js'
import { linkedFound, linkedUuid } from '../../http/links.js'
import { assertNewResourceAllowedBy, scheduleCostPolicyEvaluation } from '../cost-policies/service.js'
import { callbackUrlProblem } from './callbacks.js'
import { ordersRepository } from './repository.js'
import { jsonRender, toOrderJson } from './records.js'
import type { OrderJsonRow } from './record-json.js'
import { initialState, type OrderType } from './state-machine.js'
import type { OrderCreate } from './schema.js'
import { planCost, today } from './order-rules.js'
import { afterStateChange, approvalContext, hasSideEffects, stateChangeEvent } from './state-changes.js'

/** The offering an order is for, as far as the consumer-review skip rules read it. */
interface ReviewedOffering {
  customerId: number
  shared: number | boolean
  pluginOptions: unknown
}

/**
 * The provider's own projects: a shared offering ordered for a project of the organization that
 * provides it skips consumer review when its plugin option
 * `auto_approve_in_service_provider_projects` is true.
 */
function autoApprovedInServiceProviderProject(
  offering: ReviewedOffering,
  projectCustomerId: number,
): boolean {
  if (!toBool(offering.shared) || offering.customerId !== projectCustomerId) return false
  const options = parseJson<Record<string, unknown>>(offering.pluginOptions, {})
  return options?.auto_approve_in_service_provider_projects === true
}

/**
 * The reference's "consumer review is skipped" rules: the creator may approve for the project
 * (staff, ORDER.APPROVE), the provider's own project with auto-approval, or the provider's owner
 * terminating.
 */
export function consumerApprovalImplied(
  actor: Actor,
  o: { customerId: number; projectId: number },
  type: OrderType,
  offering: ReviewedOffering,
) {
  const providerCustomerId = offering.customerId
  if (actor.isStaff) return true
  if (autoApprovedInServiceProviderProject(offering, o.customerId)) return true
  if (can(actor, 'ORDER.APPROVE', { customerId: o.customerId, projectId: o.projectId })) return true
  return (
    type === 'Terminate' &&
    actor.grants.some(
      (g) => g.scopeType === 'customer' && g.scopeId === providerCustomerId && g.role === 'CUSTOMER.OWNER',
    )
  )
}

export function checkCustomerAndProject(
  ctx: AppContext,
  customer: { blocked: number; archived: number },
  project: { name: string; end_date: string | null },
) {
  if (toBool(customer.blocked)) throw nonFieldError('Blocked organization is not available.')
  if (toBool(customer.archived)) throw nonFieldError('Archived organization is not available.')
  if (project.end_date && project.end_date < today(ctx))
    throw nonFieldError(`Project '${project.name}' is expired.`)
}

/**
 * `checkCustomerAndProject` as SQL, on a transition row `o` (its `customer_blocked`,
 * `customer_archived` and `project_end_date`): true when it passes.
 */
export function customerAndProjectSql(ctx: AppContext, o: string, param: (value: unknown) => string): string {
  return [
    `not coalesce(${o}.customer_blocked, false)`,
    `not coalesce(${o}.customer_archived, false)`,
    `coalesce(${o}.project_end_date, '') collate "C" >= ${param(today(ctx))} or coalesce(${o}.project_end_date, '') = ''`,
  ]
    .map((c) => `(${c})`)
    .join(' and ')
}

/** An order's slug: from the resource's name, else the offering's; never empty (the reference's
 * clients require `^[-a-zA-Z0-9_]+$`). */
export function orderSlug(resourceName: string, offeringName: string): string {
  return slugify(resourceName, '') || slugify(offeringName, 'order')
}

/**
 * The columns every new order starts with: placed by `actor` now, consumer review done by the
 * placer when the skip rules imply it, no provider review, attachment or completion yet.
 */
export function newOrderColumns(actor: Actor, implied: boolean, now: string) {
  return {
    attachment: null,
    termination_comment: null,
    consumer_reviewed_by_id: implied ? actor.id : null,
    consumer_reviewed_at: implied ? now : null,
    auto_approved: implied ? 1 : 0,
    provider_reviewed_by_id: null,
    provider_reviewed_at: null,
    created_by_id: actor.id,
    completed_at: null,
    created: now,
    modified: now,
  }
}

/**
 * Places a Create order (and its resource, in state Creating); answers both ids and, given the
 * base of its links, the order's record when the database rendered it with the insert
 * (PostgreSQL).
 */
export async function createOrder(
  ctx: AppContext,
  actor: Actor,
  body: OrderCreate,
  errors = new FieldErrorSet(),
  base?: string,
): Promise<{ orderId: number; resourceId: number; record?: string }> {
  // Every field's rules run (those of a field the schema refused are skipped), then one 400
  // names every bad field; the cross-field rules run only on valid fields.
  const type = (body.type ?? 'Create') as OrderType
  if (!errors.has('type') && type !== 'Create') {
    errors.add('type', 'Update and Terminate orders are created through the resource actions.')
  }
  // The links are read together: the project, the offering and the plan, with the project's
  // organization and what the checks below ask of it (one statement).
  const projectUuid = errors.checkSync('project', () => linkedUuid('project', body.project, PATHS.projects))
  const offeringUuid = errors.checkSync('offering', () =>
    linkedUuid('offering', body.offering, PATHS.offerings),
  )
  const planUuid = body.plan
    ? errors.checkSync('plan', () => linkedUuid('plan', body.plan, PATHS.plans))
    : undefined
  const read = await ordersRepository(ctx.db).orderingRead(
    projectLinkPart(ctx, actor, projectUuid ?? null),
    offeringLinkPart(ctx, actor, offeringUuid ?? null),
    planLinkPart(ctx, planUuid ?? null),
  )
  const project = projectUuid
    ? errors.checkSync('project', () => linkedFound('project', read.project))
    : undefined
  // Seeing a project is not enough to order for it: support roles and the provider-side manager
  // see the organization's projects and may not place orders for them.
  if (project && !can(actor, 'ORDER.CREATE', { customerId: project.customer_id, projectId: project.id })) {
    throw forbidden()
  }
  const offering = offeringUuid
    ? errors.checkSync('offering', () => {
        const o = linkedFound('offering', read.offering)
        if (o.state !== 'Active') throw fieldError('offering', 'Offering is not available.')
        return o
      })
    : undefined
  const planLink = planUuid ? errors.checkSync('plan', () => linkedFound('plan', read.plan)) : null
  if (body.slug !== undefined && !actor.isStaff && !errors.has('slug')) {
    errors.add('slug', 'Only staff can set the slug.')
  }
  if (body.callback_url && !errors.has('callback_url')) {
    const problem = callbackUrlProblem(ctx.config, body.callback_url)
    if (problem) errors.add('callback_url', problem)
  }
  errors.throwIfAny()
  if (!project || !offering) throw new Error('unreachable: links resolved without errors')
  // Rules across fields, on valid fields only.
  let plan: {
    id: number
    offering_id: number
    archived: number
    max_amount: number | null
    unit_price: unknown
    fixed_price: unknown
  } | null = planLink ?? null
  if (plan) {
    if (plan.offering_id !== offering.id || toBool(plan.archived)) {
      throw fieldError('plan', 'This plan is not available for selected offering.')
    }
    if (!(await planHasRoom(ctx, plan))) {
      throw fieldError('plan', 'Plan is not available because limit has been reached.')
    }
  } else {
    // No plan named: the offering's only available plan, else none (and no cost estimate).
    const plans = await ordersRepository(ctx.db).availablePlans(offering.id, 2)
    if (plans.length === 1) plan = plans[0]!
  }
  // The limits name the offering's limit-based components, within their bounds.
  await checkLimits(ctx, offering.id, body.limits ?? {})
  const customer = read.customer!
  checkCustomerAndProject(ctx, customer, project)
  if (!toBool(offering.shared) && offering.customer_id !== project.customer_id) {
    throw nonFieldError(`Offering "${offering.name}" is not allowed in organization "${customer.name}".`)
  }
  if (offering.terms_of_service && toBool(offering.shared) && body.accepting_terms_of_service !== true) {
    throw nonFieldError(`Terms of service for offering '${offering.name}' have not been accepted.`)
  }
  // A shared offering restricted to organization groups is open only to customers in one of
  // them; an offering without groups (or a private one, checked above) is open to all.
  if (toBool(offering.shared) && customer.left_out) {
    throw nonFieldError('This offering is not available for ordering.')
  }
  const attributes =
    body.attributes && typeof body.attributes === 'object' ? (body.attributes as Record<string, unknown>) : {}
  const now = ctx.clock().toISOString()
  const uuid = ctx.newUuid()
  const resourceUuid = ctx.newUuid()
  const attributesJson = toJson(attributes)
  const limits = toJson(body.limits ?? {})
  const resourceName = typeof attributes.name === 'string' ? attributes.name.slice(0, 150) : ''
  // The policy step: a fired blocking cost policy refuses new resources (read with the
  // organization).
  const hasPolicies = assertNewResourceAllowedBy(customer)
  const implied = consumerApprovalImplied(
    actor,
    { customerId: project.customer_id, projectId: project.id },
    type,
    { customerId: offering.customer_id, shared: offering.shared, pluginOptions: offering.plugin_options },
  )
  const ac = approvalContext(ctx, project.start_date, offering.type, body.start_date ?? null)
  const state = initialState(implied, ac)
  const facts = {
    uuid,
    type,
    offering_id: offering.id,
    offering_type: offering.type,
    offering_plugin_options: offering.plugin_options,
    project_id: project.id,
    resource_uuid: resourceUuid,
    project_start_date: project.start_date,
    plan_id: plan?.id ?? null,
    limits,
    start_date: body.start_date ?? null,
    callback_url: body.callback_url ?? null,
    modified: now,
    offering_uuid: offering.uuid,
    project_uuid: project.uuid,
    customer_uuid: customer.uuid,
  }
  const change = { from: null, action: 'create', told: true }
  // The event telling the new order is written with it (no read of the order for it).
  const event = stateChangeEvent(ctx, facts, state, change)
  const resource = {
    uuid: resourceUuid,
    name: resourceName,
    offering_id: offering.id,
    plan_id: plan?.id ?? null,
    project_id: project.id,
    customer_id: project.customer_id,
    state: 'Creating',
    attributes: attributesJson,
    limits,
    resource_type: offering.type,
    scope_type: null,
    scope_id: null,
    end_date: typeof attributes.end_date === 'string' ? attributes.end_date.slice(0, 10) : null,
    created: now,
    modified: now,
  }
  const order = {
    uuid,
    slug: body.slug ?? orderSlug(resourceName, offering.name),
    type,
    state,
    offering_id: offering.id,
    provider_customer_id: offering.customer_id,
    plan_id: plan?.id ?? null,
    old_plan_id: null,
    project_id: project.id,
    customer_id: project.customer_id,
    // The resource's, once it is written (the one-statement insert takes it from its own).
    resource_id: null as number | null,
    attributes: attributesJson,
    limits,
    cost: plan ? planCost(plan.unit_price, plan.fixed_price) : null,
    callback_url: body.callback_url ?? null,
    request_comment: body.request_comment ?? null,
    start_date: body.start_date ?? null,
    ...newOrderColumns(actor, implied, now),
  }
  const render = jsonRender(base ?? '', actor)
  const answer = (r: { id: number; resourceId: number; record?: OrderJsonRow }) => ({
    orderId: r.id,
    resourceId: r.resourceId,
    record: base !== undefined && r.record ? toOrderJson(r.record) : undefined,
  })
  const orders = ordersRepository(ctx.db)
  // On a database that can write them as one statement (PostgreSQL), a new order with nothing else
  // to write. (The ids are not known yet; for the side effects only whether there is a resource
  // counts.)
  const alone =
    orders.createIsOneStatement &&
    !hasPolicies &&
    !hasSideEffects({ ...facts, id: 0, resource_id: 0 }, state, change)
  let created: { orderId: number; resourceId: number; record?: string }
  if (alone) {
    // Nothing else to write: the resource, the order, its event and its record are one
    // statement, with no transaction around it.
    const { row, slugBase } = newResourceRow(resource, offering.name)
    let inserted
    do inserted = await orders.insertToldWithResource(row, slugBase, order, event, render)
    while (!inserted)
    created = answer(inserted)
  } else {
    created = await ctx.db.transaction().execute(async (trx) => {
      const { id: resourceId } = await insertResource(trx, resource, offering.name)
      // The new resource counts in the offering's estimated cost from now on.
      await scheduleCostPolicyEvaluation(ctx, trx, offering.id, hasPolicies)
      order.resource_id = resourceId
      const inserted = await ordersRepository(trx).insertTold(order, event, render)
      await afterStateChange(ctx, trx, { ...facts, id: inserted.id, resource_id: resourceId }, state, change)
      return answer({ ...inserted, resourceId })
    })
  }
  ctx.jobs.wake()
  return created
}
