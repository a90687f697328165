// Offerings: listing, the record (with its plans and organization groups), create and update,
// the state actions and the offering's managers.
import type { AppContext } from '../../context.js'
import type { Listing } from '../../db/listing.js'
import { fromBool, isoNow, parseJson, toJson } from '../../db/values.js'
import { AppError, fieldError, forbidden, invalidState } from '../../http/errors.js'
import { ownLink, recordRenderer, relatedLink, urlOf, uuidFromLink } from '../../http/links.js'
import type { Actor } from '../../http/permissions.js'
import type { Pager } from '../../http/resource.js'
import { pageOfRows } from '../../http/resource-calls.js'
import { foundById, normalizeUuid } from '../../http/uuid.js'
import { slugify } from '../../http/slug.js'
import {
  addUser,
  deleteUserGrant,
  listGrants,
  resolveCustomerLink,
  resolveOrganizationGroups,
  resolveProjectLink,
  type GrantScope,
} from '../directory/service.js'
import type { GrantRecord } from '../directory/schema.js'
import {
  canCreateOffering,
  canDeleteOffering,
  canListOfferingUsers,
  canManageOfferingUsers,
  canUpdateOffering,
} from './access.js'
import { isOfferingType } from './offering-types.js'
import { serviceProvidersRepository, type CatalogVisibility } from './repository.js'
import { offeringsRepository, plansRepository } from './repository-offerings.js'
import { PATHS, type Offering, type OfferingComponent, type OfferingWrite, type Plan } from './schema.js'
import {
  findVisible,
  resolveCategoryLink,
  resolveOfferingLink,
  resolveScope,
  type OfferingRow,
} from './service-links.js'
import {
  checkInlineComponents,
  componentsOf,
  insertBuiltinComponents,
  insertInlineComponents,
} from './service-components.js'
import { inlinePlanValues, insertInlinePlans, toPlans } from './service-plans.js'
import { DELETABLE_OFFERING_STATES, offeringTransition, type OfferingAction } from './state-machine.js'

/** An offering row with its organization groups' uuids, its components and its plans' records. */
type OfferingWithParts = OfferingRow & {
  group_uuids: string[]
  components: OfferingComponent[]
  plans: Plan[]
}

const toOffering = recordRenderer<OfferingWithParts, Offering>({
  ...ownLink(PATHS.offerings),
  name: 'copy',
  description: 'copy',
  slug: 'copy',
  ...relatedLink('category', PATHS.categories, 'uuid', 'title'),
  ...relatedLink('customer', PATHS.customers, 'uuid', 'name'),
  type: 'copy',
  state: 'copy',
  shared: 'flag',
  billable: 'flag',
  plugin_options: (r) => parseJson<Record<string, unknown>>(r.plugin_options, {}),
  terms_of_service: 'copy',
  image: 'copy',
  thumbnail: 'copy',
  scope: { link: PATHS.serviceSettings },
  scope_uuid: 'copy',
  backend_id: 'copy',
  organization_groups: (r, base) => r.group_uuids.map((g) => urlOf(base, PATHS.organizationGroups, g)!),
  project: { link: PATHS.projects },
  parent: { link: PATHS.offerings },
  components: 'copy',
  plans: 'copy',
  created: 'copy',
  modified: 'copy',
})

async function toOfferings(ctx: AppContext, base: string, rows: OfferingRow[]): Promise<Offering[]> {
  const ids = rows.map((r) => r.id)
  const [groups, components, planRows] = await Promise.all([
    offeringsRepository(ctx.db).groupUuids(ids),
    componentsOf(ctx, ids),
    plansRepository(ctx.db).listByOfferings(ids),
  ])
  const planRecords = await toPlans(ctx, base, planRows)
  const plans = new Map<number, Plan[]>()
  planRows.forEach((p, i) => plans.set(p.offering_id, [...(plans.get(p.offering_id) ?? []), planRecords[i]!]))
  return rows.map((r) =>
    toOffering(base, {
      ...r,
      group_uuids: groups.get(r.id) ?? [],
      components: components.get(r.id) ?? [],
      plans: plans.get(r.id) ?? [],
    }),
  )
}

export function listOfferings(
  ctx: AppContext,
  vis: CatalogVisibility,
  listing: Listing,
  base: string,
  page: Pager<Offering>,
) {
  return pageOfRows(page, offeringsRepository(ctx.db), vis, listing, (rows) => toOfferings(ctx, base, rows))
}

/** The offering of a path's uuid among those the actor may see (404 otherwise); other areas' offering actions start here. */
export function findVisibleOffering(ctx: AppContext, actor: Actor, uuid: string): Promise<OfferingRow> {
  return findVisible(offeringsRepository(ctx.db), actor, uuid, 'Offering')
}

/** An offering the actor may see and edit (`OFFERING.UPDATE` or staff); 404, then 403. */
async function findWritableOffering(ctx: AppContext, actor: Actor, uuid: string): Promise<OfferingRow> {
  const row = await findVisibleOffering(ctx, actor, uuid)
  if (!canUpdateOffering(actor, row)) throw forbidden()
  return row
}

export async function getOffering(ctx: AppContext, actor: Actor, uuid: string, base: string) {
  return (await toOfferings(ctx, base, [await findVisibleOffering(ctx, actor, uuid)]))[0]!
}

function checkType(v: unknown): string {
  if (!isOfferingType(v)) throw fieldError('type', `"${String(v)}" is not a valid choice.`)
  return v
}

/** Column values shared by create and update, resolved and validated. */
async function offeringValues(
  ctx: AppContext,
  actor: Actor,
  body: OfferingWrite,
  current: { type: string; customerId: number; id: number | null; scopeGiven: boolean },
): Promise<{ values: Record<string, unknown>; groupIds: number[] | undefined }> {
  const values: Record<string, unknown> = {}
  for (const k of [
    'name',
    'description',
    'terms_of_service',
    'image',
    'thumbnail',
    'slug',
    'backend_id',
  ] as const) {
    if (body[k] !== undefined) values[k] = body[k]
  }
  if (body.shared !== undefined) values.shared = fromBool(body.shared)
  if (body.billable !== undefined) values.billable = fromBool(body.billable)
  if (body.plugin_options !== undefined) values.plugin_options = toJson(body.plugin_options)
  if (body.category !== undefined) values.category_id = await resolveCategoryLink(ctx, body.category)
  if (current.scopeGiven) {
    values.service_settings_id = await resolveScope(ctx, actor, current.type, current.customerId, body.scope)
  }
  if (body.project !== undefined) {
    values.project_id =
      body.project === null ? null : (await resolveProjectLink(ctx, actor, 'project', body.project)).id
  }
  if (body.parent !== undefined) {
    if (body.parent === null) values.parent_id = null
    else {
      const parent = await resolveOfferingLink(ctx, actor, 'parent', body.parent)
      if (parent.id === current.id) throw fieldError('parent', 'An offering cannot be its own parent.')
      values.parent_id = parent.id
    }
  }
  const groupIds =
    body.organization_groups === undefined
      ? undefined
      : await resolveOrganizationGroups(ctx, 'organization_groups', body.organization_groups)
  return { values, groupIds }
}

/**
 * Creates an offering in Draft, with the built-in components of its type. Staff or
 * `OFFERING.CREATE` on the provider customer, which must be a service provider. Components and
 * plans (with their prices) may be given inline.
 */
export async function createOffering(
  ctx: AppContext,
  actor: Actor,
  body: OfferingWrite & { name: string; customer: string; type: string },
  base: string,
): Promise<Offering> {
  const customer = await resolveCustomerLink(ctx, actor, 'customer', body.customer)
  if (!canCreateOffering(actor, customer.id)) throw forbidden()
  const type = checkType(body.type)
  if (!(await serviceProvidersRepository(ctx.db).findByCustomer(customer.id))) {
    throw fieldError('customer', 'Organization is not a service provider.')
  }
  const { values, groupIds } = await offeringValues(ctx, actor, body, {
    type,
    customerId: customer.id,
    id: null,
    scopeGiven: true,
  })
  const components = body.components ?? []
  checkInlineComponents(type, components)
  const plans = inlinePlanValues(body.plans ?? [])
  const t = isoNow(ctx.clock)
  const id = await ctx.db.transaction().execute(async (trx) => {
    const id = await offeringsRepository(trx).insert({
      uuid: ctx.newUuid(),
      description: '',
      terms_of_service: '',
      image: null,
      thumbnail: null,
      category_id: null,
      project_id: null,
      parent_id: null,
      plugin_options: toJson({}),
      ...values,
      slug: body.slug ?? slugify(body.name, 'offering'),
      name: body.name,
      customer_id: customer.id,
      type,
      state: 'Draft',
      created: t,
      modified: t,
    })
    if (groupIds) await offeringsRepository(trx).setGroups(id, groupIds)
    await insertBuiltinComponents(ctx, trx, id, type)
    await insertInlineComponents(ctx, trx, id, components)
    await insertInlinePlans(ctx, trx, id, plans)
    return id
  })
  return offeringRecord(ctx, base, id)
}

/** PUT/PATCH: `OFFERING.UPDATE` holders or staff. The type and the provider cannot change. */
export async function updateOffering(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: OfferingWrite,
  base: string,
): Promise<Offering> {
  const row = await findWritableOffering(ctx, actor, uuid)
  if (body.type !== undefined && body.type !== row.type) {
    throw fieldError('type', 'The type of an offering cannot be changed.')
  }
  if (body.customer !== undefined && uuidFromLink(body.customer, PATHS.customers) !== row.customer_uuid) {
    throw fieldError('customer', 'The provider of an offering cannot be changed.')
  }
  const { values, groupIds } = await offeringValues(ctx, actor, body, {
    type: row.type,
    customerId: row.customer_id,
    id: row.id,
    scopeGiven: body.scope !== undefined,
  })
  values.modified = isoNow(ctx.clock)
  await ctx.db.transaction().execute(async (trx) => {
    await offeringsRepository(trx).update(row.id, values)
    if (groupIds) await offeringsRepository(trx).setGroups(row.id, groupIds)
  })
  return offeringRecord(ctx, base, row.id)
}

/** Deletes a Draft offering without resources (staff or provider owner); otherwise 409. */
export async function deleteOffering(ctx: AppContext, actor: Actor, uuid: string): Promise<void> {
  const row = await findVisibleOffering(ctx, actor, uuid)
  if (!canDeleteOffering(actor, row)) throw forbidden()
  if (!(DELETABLE_OFFERING_STATES as readonly string[]).includes(row.state)) {
    throw invalidState(DELETABLE_OFFERING_STATES)
  }
  // Resources (and their history) would go with the offering: refuse instead.
  if ((await offeringsRepository(ctx.db).resourceCount(row.id)) > 0) {
    throw new AppError('conflict', 'Cannot delete offering with existing resources')
  }
  const deleted = await offeringsRepository(ctx.db).deleteIfState(row.id, DELETABLE_OFFERING_STATES)
  if (!deleted) throw invalidState(DELETABLE_OFFERING_STATES)
}

/**
 * activate / pause / unpause / archive: `OFFERING.UPDATE` holders or staff. The write is
 * conditional on the state read, so of two racing calls one wins and the other gets 409.
 */
export async function changeOfferingState(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  action: OfferingAction,
): Promise<{ status: string }> {
  const row = await findWritableOffering(ctx, actor, uuid)
  const t = offeringTransition(row.state, action)
  const won = await offeringsRepository(ctx.db).updateStateIfCurrent(row.id, t.from, t.to, isoNow(ctx.clock))
  if (!won) throw invalidState(t.from)
  return { status: t.status }
}

// ---- the offering's managers ----

async function offeringGrantScope(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  write: boolean,
): Promise<GrantScope> {
  const row = await findVisibleOffering(ctx, actor, uuid)
  if (write ? !canManageOfferingUsers(actor, row) : !canListOfferingUsers(actor, row)) throw forbidden()
  return { type: 'offering', id: row.id, uuid: row.uuid, name: row.name }
}

/** `add_user`: grants OFFERING.MANAGER on the offering. */
export async function addOfferingUser(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: { user: string; role: string; expiration_time?: string | null },
  base: string,
): Promise<GrantRecord> {
  return addUser(ctx, actor, await offeringGrantScope(ctx, actor, uuid, true), body, base)
}

export async function deleteOfferingUser(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: { user: string; role: string },
): Promise<void> {
  await deleteUserGrant(ctx, await offeringGrantScope(ctx, actor, uuid, true), body)
}

export async function listOfferingUsers(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  f: { role?: string; user_uuid?: string; user_username?: string },
  base: string,
  page: Pager<GrantRecord>,
) {
  return listGrants(ctx, await offeringGrantScope(ctx, actor, uuid, false), f, base, page)
}

// ---- for other areas ----

/** The offering row (with provider and category columns), or undefined. */
export async function findOfferingById(ctx: AppContext, id: number): Promise<OfferingRow | undefined> {
  return offeringsRepository(ctx.db).findById(id)
}

/** The offering row by uuid (hyphenated or 32 hex digits), or undefined. No visibility check. */
export async function findOfferingByUuid(ctx: AppContext, uuid: string): Promise<OfferingRow | undefined> {
  const id = normalizeUuid(uuid)
  return id ? offeringsRepository(ctx.db).findByUuid(id) : undefined
}

/** The public offering detail object (as GET /api/marketplace-provider-offerings/{uuid}/ answers). */
export async function offeringRecord(ctx: AppContext, base: string, offeringId: number): Promise<Offering> {
  const row = await foundById(offeringId, offeringsRepository(ctx.db).findById, 'Offering')
  return (await toOfferings(ctx, base, [row]))[0]!
}
