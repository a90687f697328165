// Offering estimated cost policy use cases: CRUD with the reference's validation, the evaluation
// job that fires and resets policies, and the two functions other areas call:
// scheduleCostPolicyEvaluation (whenever something changes an offering's cost) and
// assertNewResourceAllowed (before a Create order is accepted).
import type { Kysely, Transaction } from 'kysely'
import type { AppContext } from '../../context.js'
import type { DB } from '../../db/tables.js'
import { fromBool, parseJson, toBool, toJson } from '../../db/values.js'
import { AppError, forbidden, nonFieldError } from '../../http/errors.js'
import { recordRenderer, resolveLink, urlOf } from '../../http/links.js'
import { canAsProvider, providerVisibility, type Actor, type OfferingRef } from '../../http/permissions.js'
import { visibleRecords } from '../../http/visible-records.js'
import { resolveOrganizationGroups } from '../directory/service.js'
import { PERIODS, type Period } from './estimate.js'
import { EVALUATE_JOB, estimatesOf, type Estimate } from './evaluation.js'
import { newResourcePolicies, offeringHasPolicies, policiesRepository, type PolicyRow } from './repository.js'

export { newResourcePolicyColumns } from './repository.js'
import {
  ACTION_NAMES,
  ACTIONS,
  OFFERINGS_PATH,
  PATH,
  PolicySchema,
  type Policy,
  type PolicyWrite,
} from './schema.js'

type Db = Kysely<DB> | Transaction<DB>
const BOTH =
  'Cannot set apply_to_all=True when organization_groups are specified. Choose one approach: either apply_to_all or specific organization_groups.'

/** Staff and support see all; otherwise the provider side: the offering's organization or offering roles. */
export const visibility = providerVisibility

/** Staff, owners of the provider organization and the offering's managers manage its policies. */
function mayManage(actor: Actor, offering: OfferingRef): boolean {
  return canAsProvider(actor, 'OFFERING.MANAGE_POLICIES', offering)
}

/** A policy's row with the uuids of its organization groups and its current estimate. */
type EstimatedPolicy = PolicyRow & { groups: string[]; estimate: Estimate }

const toPolicy = recordRenderer<EstimatedPolicy, Policy>({
  uuid: 'copy',
  url: { link: PATH, from: 'uuid' },
  scope: { link: OFFERINGS_PATH, from: 'offering_uuid' },
  scope_name: (r) => r.offering_name,
  scope_uuid: (r) => r.offering_uuid,
  actions: 'copy',
  created: 'copy',
  created_by_full_name: 'copy',
  created_by_username: 'copy',
  has_fired: 'flag',
  fired_datetime: 'copy',
  options: (r) => parseJson<Record<string, unknown>>(r.options, {}),
  limit_cost: (r) => Number(r.limit_cost),
  period: (r) => Number(r.period),
  period_name: (r) => PERIODS[Number(r.period) as Period] ?? String(Number(r.period)),
  organization_groups: (r, base) => r.groups.map((g) => urlOf(base, 'organization-groups', g)!),
  apply_to_all: 'flag',
  affected_resources_count: (r) => r.estimate.resources,
  current_cost: (r) => r.estimate.cost.toNumber(),
})

async function toPolicies(ctx: AppContext, base: string, rows: PolicyRow[]): Promise<Policy[]> {
  const groups = await policiesRepository(ctx.db).groupUuids(rows.map((r) => r.id))
  const now = ctx.clock()
  const estimates = await estimatesOf(ctx.db, rows, now)
  return rows.map((r, i) => toPolicy(base, { ...r, groups: groups.get(r.id) ?? [], estimate: estimates[i]! }))
}

/** The policies' list and record (with their estimates), and the visible policy a path names. */
const policies = visibleRecords({
  rows: policiesRepository,
  visibility,
  model: 'OfferingEstimatedCostPolicy',
  render: toPolicies,
})

// ---- validation ----

/** Actions: comma-separated names of available actions, stored normalized (no blanks). */
function parseActions(v: string): string | string[] {
  const names = v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  if (!names.length) return ['This field may not be blank.']
  if (names.some((n) => !(ACTION_NAMES as string[]).includes(n)))
    return [`${v} includes unavailable actions.`]
  return [...new Set(names)].join(',')
}

/** Options: an object (a JSON string holding one is parsed first, as the reference does). */
function parseOptions(v: unknown): Record<string, unknown> | string[] {
  let value = v
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value)
    } catch {
      return ['Options must be a dictionary.']
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return ['Options must be a dictionary.']
  return value as Record<string, unknown>
}

function parsePeriod(v: unknown): Period | string[] {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d$/.test(v) ? Number(v) : NaN
  if (Number.isInteger(n) && n in PERIODS) return n as Period
  return [`"${typeof v === 'string' ? v : JSON.stringify(v)}" is not a valid choice.`]
}

interface Resolved {
  offering?: { id: number; uuid: string; name: string; customer_id: number }
  actions?: string
  options?: Record<string, unknown>
  period?: Period
  groupIds?: number[]
  /** What the policy covers after this write: every customer, or the customers of its groups. */
  applyToAll: boolean
}

/**
 * Field checks in the reference's order (each failure collected under its field), then the
 * non-field rule on apply_to_all / organization_groups, where keys missing from the body fall
 * back to the stored values. Both is 400; neither (the spec's minimal request: scope, actions,
 * limit_cost) makes a policy for every customer, stored and shown as apply_to_all, so the
 * estimate and the block treat it as they treat apply_to_all.
 */
async function validate(
  ctx: AppContext,
  actor: Actor,
  body: PolicyWrite,
  stored: { apply_to_all: boolean; groupIds: number[] } | null,
): Promise<Resolved> {
  const errors: Record<string, unknown> = {}
  const out: Resolved = { applyToAll: false }
  const collect = async (field: string, fn: () => Promise<void>) => {
    try {
      await fn()
    } catch (e) {
      if (e instanceof AppError && e.kind === 'invalid' && e.body && typeof e.body === 'object') {
        Object.assign(errors, e.body)
      } else throw e
    }
  }
  if (body.scope !== undefined) {
    await collect('scope', async () => {
      const link = await resolveLink(ctx.db, 'scope', body.scope, OFFERINGS_PATH, 'offerings')
      const offering = await policiesRepository(ctx.db).findOffering(link.id)
      if (!offering || !mayManage(actor, offering)) {
        errors.scope = ['User is not allowed to configure policies.']
        return
      }
      out.offering = offering
    })
  }
  if (body.actions !== undefined) {
    const a = parseActions(body.actions)
    if (Array.isArray(a)) errors.actions = a
    else out.actions = a
  }
  if (body.options !== undefined) {
    const o = parseOptions(body.options)
    if (Array.isArray(o)) errors.options = o
    else out.options = o
  }
  if (body.period !== undefined) {
    const p = parsePeriod(body.period)
    if (Array.isArray(p)) errors.period = p
    else out.period = p
  }
  if (body.organization_groups !== undefined) {
    await collect('organization_groups', async () => {
      out.groupIds = await resolveOrganizationGroups(ctx, 'organization_groups', body.organization_groups!)
    })
  }
  if (Object.keys(errors).length) throw new AppError('invalid', errors)
  const applyToAll = body.apply_to_all ?? stored?.apply_to_all ?? false
  const groups = out.groupIds ?? stored?.groupIds ?? []
  if (applyToAll && groups.length) throw nonFieldError(BOTH)
  out.applyToAll = !groups.length
  return out
}

// ---- CRUD ----

/** A page of the policies the caller may see, with their estimates read in one query. */
export const listPolicies = policies.list

/** The visible policy a path names (404 otherwise). */
export const getPolicy = policies.get

/** POST: staff, the provider's owners or the offering's managers (else 400 on scope, as the reference). */
export async function createPolicy(
  ctx: AppContext,
  actor: Actor,
  body: PolicyWrite,
  base: string,
): Promise<Policy> {
  const v = await validate(ctx, actor, body, null)
  const id = await ctx.db.transaction().execute(async (trx) => {
    const repo = policiesRepository(trx)
    const now = ctx.clock().toISOString()
    const id = await repo.insert({
      uuid: ctx.newUuid(),
      offering_id: v.offering!.id,
      actions: v.actions!,
      options: toJson(v.options ?? {}),
      limit_cost: body.limit_cost!,
      period: v.period ?? 2,
      apply_to_all: fromBool(v.applyToAll),
      has_fired: 0,
      created_by_id: actor.id,
      created: now,
      modified: now,
    })
    await repo.setGroups(id, v.groupIds ?? [])
    await ctx.jobs.enqueue(trx, EVALUATE_JOB, { offeringId: v.offering!.id })
    return id
  })
  return policies.record(ctx, id, base)
}

/** PUT/PATCH: the manager rule (403), then the create checks with stored values as fallback. */
export async function updatePolicy(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: PolicyWrite,
  base: string,
): Promise<Policy> {
  const current = await policies.find(ctx, actor, uuid)
  if (!mayManage(actor, { id: current.offering_id, customer_id: current.offering_customer_id }))
    throw forbidden()
  const storedGroups = await policiesRepository(ctx.db).groupIds(current.id)
  const v = await validate(ctx, actor, body, {
    apply_to_all: toBool(current.apply_to_all),
    groupIds: storedGroups,
  })
  await ctx.db.transaction().execute(async (trx) => {
    const repo = policiesRepository(trx)
    const changes: Record<string, unknown> = { modified: ctx.clock().toISOString() }
    if (v.offering) changes.offering_id = v.offering.id
    if (v.actions !== undefined) changes.actions = v.actions
    if (v.options !== undefined) changes.options = toJson(v.options)
    if (body.limit_cost !== undefined) changes.limit_cost = body.limit_cost
    if (v.period !== undefined) changes.period = v.period
    changes.apply_to_all = fromBool(v.applyToAll)
    await repo.update(current.id, changes)
    if (v.groupIds) await repo.setGroups(current.id, v.groupIds)
    const offeringId = v.offering?.id ?? current.offering_id
    await ctx.jobs.enqueue(trx, EVALUATE_JOB, { offeringId })
  })
  return policies.record(ctx, current.id, base)
}

export async function deletePolicy(ctx: AppContext, actor: Actor, uuid: string): Promise<void> {
  const current = await policies.find(ctx, actor, uuid)
  if (!mayManage(actor, { id: current.offering_id, customer_id: current.offering_customer_id }))
    throw forbidden()
  await policiesRepository(ctx.db).delete(current.id)
}

/** GET actions/: the policy shape with the available actions and a description of each (made once). */
export const AVAILABLE_ACTIONS: Readonly<Record<string, unknown>> = Object.freeze({
  ...Object.fromEntries(Object.keys(PolicySchema.properties).map((k) => [k, null])),
  actions: ACTION_NAMES.join(','),
  options: { ...ACTIONS },
})

// ---- what other areas call ----

/**
 * Queues a re-evaluation of the offering's policies; call it inside the transaction of any change
 * to the offering's cost (a resource created, terminated or moved to another plan). No-op when the
 * offering has no policy (`hasPolicies`, when the caller has just read it, else read here).
 */
export async function scheduleCostPolicyEvaluation(
  ctx: AppContext,
  trx: Db,
  offeringId: number,
  hasPolicies?: boolean,
): Promise<void> {
  if (!(hasPolicies ?? (await offeringHasPolicies(trx, offeringId)))) return
  await ctx.jobs.enqueue(trx, EVALUATE_JOB, { offeringId })
}

/**
 * Refuses a new resource of the offering for the customer while a fired policy with
 * block_creation_of_new_resources applies to it (400 naming the policy), in a read of its own (a
 * new order reads the same columns with its organization and calls `assertNewResourceAllowedBy`).
 * Answers whether the offering has any policy (for `scheduleCostPolicyEvaluation` once the
 * resource is written: the same read).
 */
export async function assertNewResourceAllowed(
  _ctx: AppContext,
  db: Db,
  target: { offeringId: number; customerId: number },
): Promise<boolean> {
  return assertNewResourceAllowedBy(await newResourcePolicies(db, target.offeringId, target.customerId))
}

/**
 * `assertNewResourceAllowed` from the columns `newResourcePolicyColumns` added to another read
 * (a new order's organization): the same refusal, and whether the offering has any policy.
 */
export function assertNewResourceAllowedBy(read: {
  policy_any: unknown
  policy_uuid: string | null
  policy_limit_cost: unknown
}): boolean {
  if (read.policy_uuid !== null) throw blockedByPolicy(read.policy_uuid, read.policy_limit_cost)
  return toBool(read.policy_any)
}

function blockedByPolicy(uuid: string, limitCost: unknown) {
  return nonFieldError(
    `Creation of new resources for this offering is not available due to the policy ${uuid} (limit ${Number(limitCost)}).`,
  )
}
