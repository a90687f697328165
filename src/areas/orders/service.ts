// Order use cases: creation with the reference's review rules, every transition of the state
// machine as one conditional UPDATE with its side effects in the same transaction (resource state,
// processing, callbacks, cost policy evaluation), attachments and the resource actions.
import { mkdirSync, createReadStream, existsSync, unlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Transaction } from 'kysely'
import type { AppContext } from '../../context.js'
import type { DB } from '../../db/tables.js'
import { RecordCache } from '../../db/record-cache.js'
import type { MetricCounter } from '../../http/plumbing.js'
import Big from 'big.js'
import { decimalNumber, decimalString, parseJson, toBool, toJson } from '../../db/values.js'
import {
  AppError,
  FieldErrorSet,
  fieldError,
  forbidden,
  invalidState,
  nonFieldError,
  notFound,
} from '../../http/errors.js'
import { uuidFromLink } from '../../http/links.js'
import {
  can,
  customerIds,
  offeringIds,
  projectIds,
  scopesWith,
  seesAll,
  type Actor,
} from '../../http/permissions.js'
import type { OrderTerm } from '../../http/query.js'
import { normalizeUuid } from '../../http/uuid.js'
import { slugify } from '../../http/slug.js'
import { findCustomerById, resolveProjectLink } from '../directory/service.js'
import { offeringRecord, resolveOfferingLink, resolvePlanLink } from '../catalog/service.js'
import { OFFERING_TYPE_RULES, isOfferingType, type OfferingTypeRules } from '../catalog/offering-types.js'
import { assertNewResourceAllowed, scheduleCostPolicyEvaluation } from '../cost-policies/service.js'
import { offeringProcessor } from './processors.js'
import { PermanentJobError } from '../../jobs/queue.js'
import { callbackHost, callbackUrlProblem, CallbackSender, type CallbackPayload } from './callbacks.js'
import {
  ordersRepository,
  resourcesWriteRepository,
  type JsonRender,
  type OrderRow,
  type OrderFilters,
  type OrderJsonRow,
  type OrderVersion,
  type OrderVisibility,
} from './repository.js'
import {
  allowedFrom,
  initialState,
  nextState,
  resourceStateAfter,
  TERMINAL_STATES,
  type ApprovalContext,
  type OrderAction,
  type OrderState,
  type OrderType,
} from './state-machine.js'
import { PATH, type OrderCreate } from './schema.js'

type Trx = Transaction<DB>

export const JOBS = {
  process: 'order.process',
  callback: 'order.callback',
  startDate: 'order.start-date',
  projectStart: 'order.project-start',
} as const

/** Callback deliveries run in this lane of the job queue, never in the one that processes orders. */
export const CALLBACK_LANE = 'order.callbacks'

// ---- visibility and records ----

const ORDER_NOT_FOUND = 'No Order matches the given query.'

export function orderVisibility(actor: Actor): OrderVisibility {
  if (seesAll(actor)) return { all: true }
  return {
    all: false,
    projectIds: projectIds(actor),
    customerIds: customerIds(actor),
    offeringIds: offeringIds(actor),
  }
}

function rulesOf(type: string): OfferingTypeRules | null {
  return isOfferingType(type) ? OFFERING_TYPE_RULES[type] : null
}

/** Unit price plus fixed price, added in decimal (0.1 + 0.2 is 0.3, not 0.30000000000000004). */
function planCost(unitPrice: unknown, fixedPrice: unknown): number | null {
  const u = decimalNumber(unitPrice)
  const f = decimalNumber(fixedPrice)
  if (u === null && f === null) return null
  return new Big(u ?? 0).plus(f ?? 0).toNumber()
}

/** Links start with `base`; error tracebacks are shown to staff and support only. */
function jsonRender(base: string, actor: Actor): JsonRender {
  return { base: JSON.stringify(base).slice(1, -1), traceback: seesAll(actor) }
}

/**
 * The JSON text of an order record: rendered by the database (`recordJson` in the repository),
 * completed here with the decimal fields.
 */
function toOrderJson(r: OrderJsonRow): string {
  const isUpdate = r.type === 'Update' && r.old_plan_id !== null
  const j = JSON.stringify
  const oldCost = isUpdate ? planCost(r.old_plan_unit_price, r.old_plan_fixed_price) : null
  const newCost = isUpdate ? decimalString(planCost(r.plan_unit_price, r.plan_fixed_price)) : null
  return (
    `${r.json},"old_cost_estimate":${j(oldCost)},"new_cost_estimate":${j(newCost)}` +
    `,"cost":${j(decimalString(r.cost))},"fixed_price":${j(decimalNumber(r.plan_fixed_price))}` +
    `,"activation_price":${j(decimalNumber(r.plan_activation_price))}}`
  )
}

const recordCaches = new WeakMap<AppContext, RecordCache>()

function recordCache(ctx: AppContext): RecordCache {
  let cache = recordCaches.get(ctx)
  if (!cache) recordCaches.set(ctx, (cache = new RecordCache(ctx.config.orderRecordCacheSize)))
  return cache
}

/** The record cache's counters, for /metrics. */
export function orderRecordCounters(ctx: AppContext): MetricCounter[] {
  return [
    {
      name: 'order_record_cache_hits_total',
      help: 'Order records answered from the in-process cache (ORDER_RECORD_CACHE_SIZE)',
      value: () => recordCache(ctx).hits,
    },
    {
      name: 'order_record_cache_misses_total',
      help: 'Order records rendered by the database: not kept, or changed since they were',
      value: () => recordCache(ctx).misses,
    },
  ]
}

/** The records of these orders as JSON text, from the app's record cache where unchanged. */
async function records(ctx: AppContext, rows: OrderVersion[], render: JsonRender): Promise<string[]> {
  const cache = recordCache(ctx)
  const prefix = `${render.traceback ? 't' : 'f'}${render.base}|`
  const out = rows.map((r) => cache.get(prefix + r.id, r.version))
  const missing = rows.filter((_, i) => out[i] === undefined)
  if (missing.length) {
    const rendered = await ordersRepository(ctx.db).render(
      missing.map((r) => r.id),
      render,
    )
    const byId = new Map(rendered.map((r) => [r.id, toOrderJson(r)]))
    rows.forEach((r, i) => {
      const text = out[i] === undefined ? byId.get(r.id) : undefined
      if (text === undefined) return
      cache.set(prefix + r.id, r.version, text)
      out[i] = text
    })
  }
  // An order deleted since its page was picked is left out.
  return out.filter((text): text is string => text !== undefined)
}

/** A page of order records as JSON text. */
export async function listOrders(
  ctx: AppContext,
  actor: Actor,
  f: OrderFilters,
  order: OrderTerm[],
  base: string,
  page: (count: () => Promise<number>, fetch: (l: number, o: number) => Promise<string[]>) => Promise<string>,
): Promise<string> {
  const repo = ordersRepository(ctx.db)
  const vis = orderVisibility(actor)
  const render = jsonRender(base, actor)
  if (f.query) f = { ...f, query: { ...f.query, matches: await repo.matchQuery(f.query.text, f.query.uuid) } }
  return page(
    () => repo.count(vis, f),
    async (l, o) => records(ctx, await repo.page(vis, f, order, l, o), render),
  )
}

/** One order record as JSON text, when the caller may see it. */
export async function getOrder(ctx: AppContext, actor: Actor, uuid: string, base: string): Promise<string> {
  const id = normalizeUuid(uuid)
  const row = id
    ? await ordersRepository(ctx.db).findVisibleVersionByUuid(orderVisibility(actor), id)
    : undefined
  const text = row ? (await records(ctx, [row], jsonRender(base, actor)))[0] : undefined
  if (text === undefined) throw notFound(ORDER_NOT_FOUND)
  return text
}

/** `can_approve_as_*` filters: a true value also restricts to orders the caller may approve. */
export function approvalFilters(
  actor: Actor,
  consumer: boolean | undefined,
  provider: boolean | undefined,
): OrderFilters {
  const f: OrderFilters = {}
  const approve = scopesWith(actor, 'ORDER.APPROVE')
  if (consumer !== undefined) {
    f.canApproveAsConsumer =
      consumer && !actor.isStaff
        ? { projectIds: approve.project, customerIds: approve.customer }
        : consumer
          ? 'all'
          : 'state-only'
  }
  if (provider !== undefined) {
    f.canApproveAsProvider =
      provider && !actor.isStaff
        ? { customerIds: approve.customer, offeringIds: approve.offering }
        : provider
          ? 'all'
          : 'state-only'
  }
  return f
}

async function findVisible(ctx: AppContext, actor: Actor, uuid: string, db = ctx.db): Promise<OrderRow> {
  const id = normalizeUuid(uuid)
  const row = id ? await ordersRepository(db).findVisibleByUuid(orderVisibility(actor), id) : undefined
  if (!row) throw notFound(ORDER_NOT_FOUND)
  return row
}

export async function getOrderOffering(ctx: AppContext, actor: Actor, uuid: string, base: string) {
  const row = await findVisible(ctx, actor, uuid)
  return offeringRecord(ctx, base, row.offering_id)
}

// ---- creation ----

function today(ctx: AppContext): string {
  return ctx.clock().toISOString().slice(0, 10)
}

async function approvalContext(
  ctx: AppContext,
  db: Trx,
  projectId: number,
  offeringType: string,
  startDate: string | null,
): Promise<ApprovalContext> {
  const projectStart = await ordersRepository(db).projectStartDate(projectId)
  const rules = rulesOf(offeringType)
  return {
    projectNotStarted: !!projectStart && projectStart > today(ctx),
    providerMustReview: rules?.providerApprovalRequired ?? false,
    startDateInFuture: ctx.config.orderStartDateEnabled && !!startDate && startDate > today(ctx),
  }
}

/**
 * A shared offering restricted to organization groups is open only to customers in one of them;
 * an offering without groups (or a private one, checked on its own) is open to all.
 */
async function offeringOpenToCustomer(
  ctx: AppContext,
  offering: { id: number; shared: number | boolean },
  customerId: number,
): Promise<boolean> {
  if (!toBool(offering.shared)) return true
  return ordersRepository(ctx.db).offeringOpenToCustomer(offering.id, customerId)
}

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
function consumerApprovalImplied(
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

function checkCustomerAndProject(
  ctx: AppContext,
  customer: { blocked: number; archived: number },
  project: { name: string; end_date: string | null },
) {
  if (toBool(customer.blocked)) throw nonFieldError('Blocked organization is not available.')
  if (toBool(customer.archived)) throw nonFieldError('Archived organization is not available.')
  if (project.end_date && project.end_date < today(ctx))
    throw nonFieldError(`Project '${project.name}' is expired.`)
}

/** The policy step of creation: a fired blocking cost policy refuses new resources. */
async function checkNewResourceAllowed(ctx: AppContext, trx: Trx, offeringId: number, customerId: number) {
  await assertNewResourceAllowed(ctx, trx, { offeringId, customerId })
}

/** An order's slug: from the resource's name, else the offering's; never empty (the reference's
 * clients require `^[-a-zA-Z0-9_]+$`). */
function orderSlug(resourceName: string, offeringName: string): string {
  return slugify(resourceName, '') || slugify(offeringName, 'order')
}

/** Places a Create order (and its resource, in state Creating); answers both ids. */
export async function createOrder(
  ctx: AppContext,
  actor: Actor,
  body: OrderCreate,
  errors = new FieldErrorSet(),
): Promise<{ orderId: number; resourceId: number }> {
  // Every field's rules run (those of a field the schema refused are skipped), then one 400
  // names every bad field; the cross-field rules run only on valid fields.
  const type = (body.type ?? 'Create') as OrderType
  if (!errors.has('type') && type !== 'Create') {
    errors.add('type', 'Update and Terminate orders are created through the resource actions.')
  }
  const project = await errors.check('project', () => resolveProjectLink(ctx, actor, 'project', body.project))
  const offering = await errors.check('offering', async () => {
    const o = await resolveOfferingLink(ctx, actor, 'offering', body.offering)
    if (o.state !== 'Active') throw fieldError('offering', 'Offering is not available.')
    return o
  })
  const planLink = body.plan
    ? await errors.check('plan', () => resolvePlanLink(ctx, 'plan', body.plan))
    : null
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
    unit_price: unknown
    fixed_price: unknown
  } | null = planLink ?? null
  if (plan) {
    if (plan.offering_id !== offering.id || toBool(plan.archived)) {
      throw fieldError('plan', 'This plan is not available for selected offering.')
    }
  } else {
    // No plan named: the offering's only available plan, else none (and no cost estimate).
    const plans = await ctx.db
      .selectFrom('plans')
      .selectAll()
      .where('offering_id', '=', offering.id)
      .where('archived', '=', 0)
      .limit(2)
      .execute()
    if (plans.length === 1) plan = plans[0]!
  }
  const customer = (await findCustomerById(ctx, project.customer_id))!
  checkCustomerAndProject(ctx, customer, project)
  if (!toBool(offering.shared) && offering.customer_id !== project.customer_id) {
    throw nonFieldError(`Offering "${offering.name}" is not allowed in organization "${customer.name}".`)
  }
  if (offering.terms_of_service && toBool(offering.shared) && body.accepting_terms_of_service !== true) {
    throw nonFieldError(`Terms of service for offering '${offering.name}' have not been accepted.`)
  }
  if (!(await offeringOpenToCustomer(ctx, offering, project.customer_id))) {
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
  const created = await ctx.db.transaction().execute(async (trx) => {
    await checkNewResourceAllowed(ctx, trx, offering.id, project.customer_id)
    const resourceId = await resourcesWriteRepository(trx).insert({
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
    })
    // The new resource counts in the offering's estimated cost from now on.
    await scheduleCostPolicyEvaluation(ctx, trx, offering.id)
    const implied = consumerApprovalImplied(
      actor,
      { customerId: project.customer_id, projectId: project.id },
      type,
      { customerId: offering.customer_id, shared: offering.shared, pluginOptions: offering.plugin_options },
    )
    const ac = await approvalContext(ctx, trx, project.id, offering.type, body.start_date ?? null)
    const state = initialState(implied, ac)
    const orderId = await ordersRepository(trx).insert({
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
      resource_id: resourceId,
      attributes: attributesJson,
      limits,
      cost: plan ? planCost(plan.unit_price, plan.fixed_price) : null,
      callback_url: body.callback_url ?? null,
      request_comment: body.request_comment ?? null,
      start_date: body.start_date ?? null,
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
    })
    await afterStateChange(
      ctx,
      trx,
      {
        id: orderId,
        uuid,
        type,
        offering_id: offering.id,
        offering_type: offering.type,
        project_id: project.id,
        resource_id: resourceId,
        resource_uuid: resourceUuid,
        plan_id: plan?.id ?? null,
        limits,
        start_date: body.start_date ?? null,
        callback_url: body.callback_url ?? null,
        modified: now,
      },
      state,
    )
    return { orderId, resourceId }
  })
  ctx.jobs.wake()
  return created
}

/** The record of an order just written by this caller, as JSON text. */
export async function orderRecord(ctx: AppContext, actor: Actor, id: number, base: string): Promise<string> {
  return toOrderJson((await ordersRepository(ctx.db).findJsonById(id, jsonRender(base, actor)))!)
}

// ---- transitions ----

/** What the side effects of a state change read of the order (its row and its resource's uuid). */
type StateChangeFacts = Pick<
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
> & { resource_uuid: string | null }

/**
 * Side effects of reaching `state`, in order: resource state, processing, delayed start, callback.
 * Given the order's id, its row is read back; a caller that has just written the whole row (a new
 * order) gives its facts instead.
 */
async function afterStateChange(
  ctx: AppContext,
  trx: Trx,
  order: number | StateChangeFacts,
  state: OrderState,
): Promise<void> {
  const o = typeof order === 'number' ? await ordersRepository(trx).transitionRow(order) : order
  const orderId = o.id
  const type = o.type as OrderType
  const now = ctx.clock().toISOString()
  let resourceState = resourceStateAfter(type, state)
  if (o.resource_id !== null && resourceState === 'Erred' && type === 'Create') {
    // A resource still being created that never reached its backend is gone, not broken.
    const r = await resourcesWriteRepository(trx).findById(o.resource_id)
    if (r && r.state === 'Creating' && !r.backend_id) resourceState = 'Terminated'
  }
  if (o.resource_id !== null && resourceState) {
    const values: Record<string, unknown> = { state: resourceState, modified: now }
    if (state === 'done' && type === 'Update') {
      values.plan_id = o.plan_id
      values.limits = toJson(parseJson(o.limits, {}))
    }
    await resourcesWriteRepository(trx).update(o.resource_id, values)
    await scheduleCostPolicyEvaluation(ctx, trx, o.offering_id)
  }
  const rules = rulesOf(o.offering_type)
  if (state === 'executing' && rules?.processedBy === 'server') {
    await ctx.jobs.enqueue(trx, JOBS.process, { orderId })
  }
  if (state === 'pending-start-date' && o.start_date) {
    await ctx.jobs.enqueue(
      trx,
      JOBS.startDate,
      { orderId },
      { runAt: new Date(`${o.start_date}T00:00:00.000Z`) },
    )
  }
  if (state === 'pending-project') {
    const start = await ordersRepository(trx).projectStartDate(o.project_id)
    if (start) {
      await ctx.jobs.enqueue(
        trx,
        JOBS.projectStart,
        { orderId },
        { runAt: new Date(`${start}T00:00:00.000Z`) },
      )
    }
  }
  if (o.callback_url) {
    const payload: CallbackPayload = {
      url: o.callback_url,
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

interface TransitionOptions {
  /** 403 unless this holds (after the order is found). */
  permitted: (o: OrderRow) => boolean
  /** 405 unless the offering type supports the action (checked after the state). */
  typeAllows?: (rules: OfferingTypeRules | null) => boolean
  /** Business checks (400) that come before the state check (after the permission). */
  precheck?: (o: OrderRow, trx: Trx) => Promise<void> | void
  /** Extra columns written with the state. */
  values?: (o: OrderRow, now: string) => Record<string, unknown>
  /** Business checks (400) after state and type. */
  validate?: (o: OrderRow, trx: Trx) => Promise<void> | void
}

/** The texts whose changes are timestamped, and the column of each timestamp. */
const STAMPED_TEXTS = [
  ['output', 'output_updated_at'],
  ['error_message', 'error_updated_at'],
] as const

/** Sets `<text>_updated_at` for each timestamped text these values change. */
function stampTextChanges(
  o: { output: string; error_message: string },
  values: Record<string, unknown>,
  now: string,
): void {
  for (const [text, stamp] of STAMPED_TEXTS) {
    if (values[text] !== undefined && values[text] !== o[text]) values[stamp] = now
  }
}

function typeNotSupported(type: string): AppError {
  return new AppError('not_allowed', `The order's offering type ${type} does not support this action.`)
}

/** Runs one action: 404 → 403 → (precheck) 400 → 409 → 405 → 400, then one conditional UPDATE and its effects. */
async function transition(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  action: OrderAction,
  opts: TransitionOptions,
): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const o = await findVisible(ctx, actor, uuid, trx)
    if (!opts.permitted(o)) throw forbidden()
    await opts.precheck?.(o, trx)
    const from = allowedFrom(action)
    const ac = await approvalContext(ctx, trx, o.project_id, o.offering_type, o.start_date)
    const to = nextState(o.state as OrderState, action, ac)
    if (!to) throw invalidState(from)
    if (opts.typeAllows && !opts.typeAllows(rulesOf(o.offering_type))) throw typeNotSupported(o.offering_type)
    await opts.validate?.(o, trx)
    const now = ctx.clock().toISOString()
    const values: Record<string, unknown> = { state: to, modified: now, ...(opts.values?.(o, now) ?? {}) }
    stampTextChanges(o, values, now)
    if (TERMINAL_STATES.includes(to)) values.completed_at = now
    const moved = await ordersRepository(trx).updateStateIfCurrent(o.id, from, values)
    if (!moved) throw invalidState(from)
    await afterStateChange(ctx, trx, o.id, to)
  })
  ctx.jobs.wake()
}

const consumerScopes = (o: OrderRow) => ({ customerId: o.customer_id, projectId: o.project_id })
const providerScopes = (o: OrderRow) => ({
  customerId: o.provider_customer_id,
  offeringId: o.offering_id,
})

export function approveByConsumer(ctx: AppContext, actor: Actor, uuid: string) {
  return transition(ctx, actor, uuid, 'approve_by_consumer', {
    permitted: (o) => can(actor, 'ORDER.APPROVE', consumerScopes(o)),
    // The organization and project come before the order's state.
    precheck: async (o, trx) => {
      const both = await ordersRepository(trx).customerAndProject(o.customer_id, o.project_id)
      checkCustomerAndProject(ctx, both, both)
    },
    values: (_o, now) => ({ consumer_reviewed_by_id: actor.id, consumer_reviewed_at: now }),
  })
}

export function approveByProvider(ctx: AppContext, actor: Actor, uuid: string) {
  return transition(ctx, actor, uuid, 'approve_by_provider', {
    permitted: (o) => can(actor, 'ORDER.APPROVE', providerScopes(o)),
    values: (_o, now) => ({ provider_reviewed_by_id: actor.id, provider_reviewed_at: now }),
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
    values: (_o, now) => ({
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
    values: (_o, now) => ({
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
    const c = (await trx
      .selectFrom('customers')
      .selectAll()
      .where('id', '=', o.customer_id)
      .executeTakeFirst())!
    if (toBool(c.blocked)) throw nonFieldError('Blocked organization is not available.')
    if (toBool(c.archived)) throw nonFieldError('Archived organization is not available.')
    const r = await trx
      .deleteFrom('orders')
      .where('id', '=', o.id)
      .where('state', 'in', [...from])
      .executeTakeFirst()
    if (Number(r.numDeletedRows) !== 1) throw invalidState(from)
    // A resource that only existed for this Create order goes with it.
    if (o.type === 'Create' && o.resource_id !== null) {
      await resourcesWriteRepository(trx).update(o.resource_id, {
        state: 'Terminated',
        modified: ctx.clock().toISOString(),
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
    if (o.resource_id !== null)
      await resourcesWriteRepository(trx).update(o.resource_id, { backend_id: backendId, modified: now })
  })
}

// ---- attachments ----

function attachmentPath(ctx: AppContext, uuid: string): string {
  return join(ctx.config.uploadDir, 'orders', `${uuid}.pdf`)
}

function removeAttachmentFile(ctx: AppContext, uuid: string) {
  const p = attachmentPath(ctx, uuid)
  if (existsSync(p)) unlinkSync(p)
}

function attachmentAllowed(actor: Actor, o: OrderRow): boolean {
  return (
    o.created_by_id === actor.id ||
    can(actor, 'ORDER.CANCEL', consumerScopes(o)) ||
    can(actor, 'ORDER.APPROVE', consumerScopes(o))
  )
}

const PENDING: readonly OrderState[] = [
  'pending-consumer',
  'pending-provider',
  'pending-project',
  'pending-start-date',
]

export async function updateAttachment(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  file: { mimetype: string; data: Buffer } | null,
  base: string,
): Promise<{ attachment: string }> {
  const o = await findVisible(ctx, actor, uuid)
  if (!attachmentAllowed(actor, o)) throw forbidden()
  if (!PENDING.includes(o.state as OrderState)) throw invalidState(PENDING)
  if (!file) throw fieldError('attachment', 'No file was submitted.')
  if (file.mimetype !== 'application/pdf' || file.data.subarray(0, 5).toString('latin1') !== '%PDF-') {
    throw fieldError('attachment', 'Only PDF files are accepted.')
  }
  const path = attachmentPath(ctx, o.uuid)
  mkdirSync(join(ctx.config.uploadDir, 'orders'), { recursive: true })
  writeFileSync(path, file.data)
  await ordersRepository(ctx.db).update(o.id, {
    attachment: `orders/${o.uuid}.pdf`,
    modified: ctx.clock().toISOString(),
  })
  return { attachment: `${base}/api/${PATH}/${o.uuid}/attachment/` }
}

export async function deleteAttachment(ctx: AppContext, actor: Actor, uuid: string): Promise<void> {
  const o = await findVisible(ctx, actor, uuid)
  if (!attachmentAllowed(actor, o)) throw forbidden()
  if (!PENDING.includes(o.state as OrderState)) throw invalidState(PENDING)
  await ordersRepository(ctx.db).update(o.id, { attachment: null, modified: ctx.clock().toISOString() })
  removeAttachmentFile(ctx, o.uuid)
}

export async function openAttachment(ctx: AppContext, actor: Actor, uuid: string) {
  const o = await findVisible(ctx, actor, uuid)
  const path = attachmentPath(ctx, o.uuid)
  if (!o.attachment || !existsSync(path)) throw notFound('The order has no attachment.')
  return createReadStream(path)
}

// ---- resource actions (Update and Terminate orders) ----

async function resourceOrder(
  ctx: AppContext,
  actor: Actor,
  resourceUuid: string,
  type: 'Update' | 'Terminate',
  extra: { planId?: number; limits?: Record<string, number>; attributes?: Record<string, unknown> },
): Promise<{ order_uuid: string }> {
  const id = normalizeUuid(resourceUuid)
  const resource = id
    ? await ctx.db
        .selectFrom('resources')
        .innerJoin('offerings', 'offerings.id', 'resources.offering_id')
        .select([
          'resources.id',
          'resources.state',
          'resources.plan_id',
          'resources.limits',
          'resources.project_id',
          'resources.customer_id',
          'resources.offering_id',
          'resources.attributes',
          'resources.name',
          'offerings.name as offering_name',
          'offerings.customer_id as provider_customer_id',
          'offerings.type as offering_type',
          'offerings.state as offering_state',
          'offerings.shared as offering_shared',
          'offerings.plugin_options as offering_plugin_options',
        ])
        .where('resources.uuid', '=', id)
        .executeTakeFirst()
    : undefined
  const vis = orderVisibility(actor)
  const visible =
    resource &&
    (vis.all ||
      vis.projectIds.includes(resource.project_id) ||
      vis.customerIds.includes(resource.customer_id) ||
      vis.customerIds.includes(resource.provider_customer_id) ||
      vis.offeringIds.includes(resource.offering_id))
  if (!resource || !visible) throw notFound('No Resource matches the given query.')
  if (!can(actor, 'ORDER.CREATE', { customerId: resource.customer_id, projectId: resource.project_id }))
    throw forbidden()
  if (!['OK', 'Erred'].includes(resource.state)) invalidResourceState()
  const orders = ordersRepository(ctx.db)
  if (await orders.hasOpenOrderForResource(resource.id))
    throw nonFieldError('Pending order for resource already exists.')
  const plan = extra.planId
    ? await ctx.db.selectFrom('plans').selectAll().where('id', '=', extra.planId).executeTakeFirst()
    : resource.plan_id
      ? await ctx.db.selectFrom('plans').selectAll().where('id', '=', resource.plan_id).executeTakeFirst()
      : undefined
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
    const ac = await approvalContext(ctx, trx, resource.project_id, resource.offering_type, null)
    const state = initialState(implied, { ...ac, projectNotStarted: false })
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
    })
    await afterStateChange(ctx, trx, orderId, state)
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
  const planUuid = uuidFromLink(planLink, 'marketplace-plans')
  const plan = await resolvePlanLink(ctx, 'plan', planLink)
  const resource = await ctx.db
    .selectFrom('resources')
    .select(['offering_id', 'plan_id'])
    .where('uuid', '=', normalizeUuid(uuid) ?? '')
    .executeTakeFirst()
  if (resource && (plan.offering_id !== resource.offering_id || toBool(plan.archived))) {
    throw fieldError('plan', 'This plan is not available for selected offering.')
  }
  if (resource && plan.id === resource.plan_id)
    throw fieldError('plan', 'The resource already uses this plan.')
  void planUuid
  return resourceOrder(ctx, actor, uuid, 'Update', { planId: plan.id })
}

export function updateLimits(ctx: AppContext, actor: Actor, uuid: string, limits: Record<string, number>) {
  return resourceOrder(ctx, actor, uuid, 'Update', { limits })
}

// ---- jobs ----

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
    if (ok) await afterStateChange(ctx, trx, orderId, outcome)
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
    const offering = (await ctx.db
      .selectFrom('offerings')
      .selectAll()
      .where('id', '=', o.offering_id)
      .executeTakeFirst())!
    const resource = o.resource_id
      ? await ctx.db.selectFrom('resources').selectAll().where('id', '=', o.resource_id).executeTakeFirst()
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
    const o = await trx
      .selectFrom('orders')
      .innerJoin('offerings', 'offerings.id', 'orders.offering_id')
      .select([
        'orders.id',
        'orders.state',
        'orders.project_id',
        'orders.start_date',
        'offerings.type as offering_type',
      ])
      .where('orders.id', '=', orderId)
      .executeTakeFirst()
    if (!o) return
    const ac = await approvalContext(ctx, trx, o.project_id, o.offering_type, o.start_date)
    const to = nextState(o.state as OrderState, action, ac)
    if (!to || to === o.state) return
    const now = ctx.clock().toISOString()
    if (
      await ordersRepository(trx).updateStateIfCurrent(o.id, allowedFrom(action), {
        state: to,
        modified: now,
      })
    ) {
      await afterStateChange(ctx, trx, o.id, to)
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
