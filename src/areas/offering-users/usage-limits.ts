// Per-user limits of a resource's components: how much of a component (by its type) one account
// of the resource's offering may use. Seen by the resource's consumer and provider sides; set by
// holders of RESOURCE.CONSUMPTION_LIMITATION on the resource's project or organization (project
// managers, organization owners), or on the provider's organization (its owners), and staff.
//
// A limit is kept by its component's type (unique within an offering); records show the
// component's uuid, and a write may name the component by its uuid or its type.
import type { AppContext } from '../../context.js'
import { fieldError, forbidden, nonFieldError } from '../../http/errors.js'
import { invalidHyperlink, linkedUuid, ownLink, recordRenderer } from '../../http/links.js'
import { can, resourceSidesVisibility, type Actor } from '../../http/permissions.js'
import { normalizeUuid } from '../../http/uuid.js'
import { eachRow, visibleRecords } from '../../http/visible-records.js'
import { componentsOf } from '../catalog/service.js'
import { amountOf, twoPlaces } from '../usage/service.js'
import { usageLimitsRepository, type UsageLimitRow } from './repository-limits.js'
import { PATHS, type UsageLimit, type UsageLimitCreate, type UsageLimitPatch } from './schema.js'

const COMPONENT_TYPE = /^[A-Za-z0-9_.-]{1,50}$/

/** Staff and support see every limit; others those of the resources they see from either side. */
export const visibility = resourceSidesVisibility

const toRecord = recordRenderer<UsageLimitRow, UsageLimit>({
  ...ownLink(PATHS.usageLimits),
  resource: { link: PATHS.resources, from: 'resource_uuid' },
  component: (r) => r.component_uuid,
  component_type: 'copy',
  user: (r) => r.user_username ?? '',
  limit: (r) => twoPlaces(r.usage_limit),
})

const limits = visibleRecords({
  rows: usageLimitsRepository,
  visibility,
  model: 'ComponentUserUsageLimit',
  render: eachRow(toRecord),
})
export const listUsageLimits = limits.list
export const getUsageLimit = limits.get

/** A limit's resource: its project and organization (the consumer side), its offering's. */
interface ResourceRef {
  id: number
  project_id: number
  offering_id: number
  customer_id: number
  offering_customer_id: number
}

/** The resource of a limit's row (which carries its sides). */
const resourceOf = (row: UsageLimitRow): ResourceRef => ({
  id: row.resource_id,
  project_id: row.project_id,
  offering_id: row.offering_id,
  customer_id: row.customer_id,
  offering_customer_id: row.offering_customer_id,
})

function sees(actor: Actor, r: ResourceRef): boolean {
  const scope = visibility(actor)
  return (
    scope.all ||
    scope.projectIds.includes(r.project_id) ||
    scope.customerIds.includes(r.customer_id) ||
    scope.customerIds.includes(r.offering_customer_id) ||
    scope.offeringIds.includes(r.offering_id)
  )
}

function mayLimit(actor: Actor, r: ResourceRef): boolean {
  return (
    can(actor, 'RESOURCE.CONSUMPTION_LIMITATION', { customerId: r.customer_id, projectId: r.project_id }) ||
    can(actor, 'RESOURCE.CONSUMPTION_LIMITATION', { customerId: r.offering_customer_id })
  )
}

/** The resource a body names, among those the caller sees (400 otherwise). */
async function linkedResource(ctx: AppContext, actor: Actor, value: unknown): Promise<ResourceRef> {
  const uuid = linkedUuid('resource', value, PATHS.resources)
  const r = await usageLimitsRepository(ctx.db).resourceByUuid(uuid)
  if (!r || !sees(actor, r)) throw invalidHyperlink('resource')
  return r
}

/** The component type a body names: one of the resource's offering's components, by uuid or type. */
async function componentType(ctx: AppContext, resource: ResourceRef, value: string): Promise<string> {
  const components = (await componentsOf(ctx, [resource.offering_id])).get(resource.offering_id) ?? []
  const uuid = normalizeUuid(value)
  if (uuid) {
    const c = components.find((x) => x.uuid === uuid)
    if (!c) throw fieldError('component', `Object with uuid=${uuid} does not exist.`)
    return c.type
  }
  if (!COMPONENT_TYPE.test(value)) throw fieldError('component', 'Enter a component uuid or type.')
  if (!components.some((c) => c.type === value))
    throw fieldError('component', `The resource's offering has no component of type "${value}".`)
  return value
}

/** The account a body names: an offering user of the resource's offering. */
async function linkedAccount(ctx: AppContext, resource: ResourceRef, value: unknown): Promise<number> {
  const uuid = linkedUuid('user', value, PATHS.offeringUsers)
  const u = await usageLimitsRepository(ctx.db).offeringUserByUuid(uuid)
  if (!u) throw invalidHyperlink('user')
  if (u.offering_id !== resource.offering_id)
    throw fieldError('user', "The offering user is not an account of the resource's offering.")
  return u.id
}

const limitValue = (v: string | number): string => amountOf(v, (m) => fieldError('limit', m))

const UNIQUE = 'The fields resource, component, user must make a unique set.'

export async function createUsageLimit(
  ctx: AppContext,
  actor: Actor,
  body: UsageLimitCreate,
  base: string,
): Promise<UsageLimit> {
  const resource = await linkedResource(ctx, actor, body.resource)
  if (!mayLimit(actor, resource)) throw forbidden()
  const type = await componentType(ctx, resource, body.component)
  const accountId = await linkedAccount(ctx, resource, body.user)
  const limit = body.limit === undefined ? '0.00' : limitValue(body.limit)
  const repo = usageLimitsRepository(ctx.db)
  const now = ctx.clock().toISOString()
  // One limit per resource, component and account: a second (or a racing one) is refused.
  const id = await repo.insertIfAbsent({
    uuid: ctx.newUuid(),
    resource_id: resource.id,
    component_type: type,
    offering_user_id: accountId,
    usage_limit: limit,
    created: now,
    modified: now,
  })
  if (id === undefined) throw nonFieldError(UNIQUE)
  return limits.record(ctx, id, base)
}

/** PUT and PATCH: the limit, and (given again) its resource, component or account. */
export async function updateUsageLimit(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: UsageLimitPatch,
  base: string,
): Promise<UsageLimit> {
  const row = await limits.find(ctx, actor, uuid)
  const current = resourceOf(row)
  if (!mayLimit(actor, current)) throw forbidden()
  const resource = body.resource === undefined ? current : await linkedResource(ctx, actor, body.resource)
  if (resource.id !== current.id && !mayLimit(actor, resource)) throw forbidden()
  const set: Record<string, unknown> = { modified: ctx.clock().toISOString() }
  const type =
    body.component === undefined ? row.component_type : await componentType(ctx, resource, body.component)
  const accountId =
    body.user === undefined ? row.offering_user_id : await linkedAccount(ctx, resource, body.user)
  if (body.limit !== undefined) set.usage_limit = limitValue(body.limit)
  const repo = usageLimitsRepository(ctx.db)
  if (await repo.exists(resource.id, type, accountId, row.id)) throw nonFieldError(UNIQUE)
  await repo.update(row.id, {
    ...set,
    resource_id: resource.id,
    component_type: type,
    offering_user_id: accountId,
  })
  return limits.record(ctx, row.id, base)
}

export async function deleteUsageLimit(ctx: AppContext, actor: Actor, uuid: string): Promise<void> {
  const row = await limits.find(ctx, actor, uuid)
  if (!mayLimit(actor, resourceOf(row))) throw forbidden()
  await usageLimitsRepository(ctx.db).delete(row.id)
}
