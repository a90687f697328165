// The catalog rows a request names: by the uuid of its path (404 when not found) or by a
// hyperlink in its body (400 on the field), for the catalog's own writes and for other areas.
import type { AppContext } from '../../context.js'
import { toBool } from '../../db/values.js'
import { fieldError } from '../../http/errors.js'
import { invalidHyperlink, linkedRow, linkedUuid } from '../../http/links.js'
import type { Actor } from '../../http/permissions.js'
import { foundByUuid } from '../../http/uuid.js'
import { catalogVisibility } from './access.js'
import { OFFERING_TYPE_RULES, isOfferingType } from './offering-types.js'
import { categoriesRepository, type CatalogVisibility } from './repository.js'
import {
  OFFERING_LINK_COLUMNS,
  PLAN_LINK_COLUMNS,
  offeringsRepository,
  plansRepository,
} from './repository-offerings.js'
import { PATHS } from './schema.js'
import type { PartRow, ReadPartOf } from '../../db/read-parts.js'

export type OfferingRow = NonNullable<Awaited<ReturnType<ReturnType<typeof offeringsRepository>['findById']>>>
export type PlanRow = NonNullable<Awaited<ReturnType<ReturnType<typeof plansRepository>['findByUuid']>>>

/** A catalog row the actor may see, by the uuid of the path; 404 naming `model` otherwise. */
export function findVisible<R>(
  rows: { findVisibleByUuid(vis: CatalogVisibility, uuid: string): Promise<R | undefined> },
  actor: Actor,
  uuid: string,
  model: string,
): Promise<R> {
  const vis = catalogVisibility(actor)
  return foundByUuid(uuid, (id) => rows.findVisibleByUuid(vis, id), model)
}

/**
 * The offering a request's hyperlink names, if the actor may see it.
 * 400 on `field` when the value is not an offering URL, unknown, or not visible.
 */
export async function resolveOfferingLink(
  ctx: AppContext,
  actor: Actor,
  field: string,
  value: unknown,
): Promise<OfferingRow> {
  return linkedRow(field, value, PATHS.offerings, (uuid) =>
    offeringsRepository(ctx.db).findVisibleByUuid(catalogVisibility(actor), uuid),
  )
}

/**
 * The plan a request's hyperlink names (no visibility check: callers check that it belongs to
 * the offering they resolved). 400 on `field` when not a plan URL or unknown.
 */
export function resolvePlanLink(ctx: AppContext, field: string, value: unknown): Promise<PlanRow> {
  return linkedRow(field, value, PATHS.plans, (uuid) => plansRepository(ctx.db).findByUuid(uuid))
}

/** What `offeringLinkPart` and `planLinkPart` answer of an offering and a plan. */
export type OfferingLinkRow = PartRow<OfferingRow, typeof OFFERING_LINK_COLUMNS>
export type PlanLinkRow = PartRow<PlanRow, typeof PLAN_LINK_COLUMNS>

/**
 * `resolveOfferingLink`'s and `resolvePlanLink`'s reads, as parts `offering` and `plan` of a read
 * made of several (a new order's); a null uuid finds nothing.
 */
export function offeringLinkPart(
  ctx: AppContext,
  actor: Actor,
  uuid: string | null,
): ReadPartOf<OfferingLinkRow> {
  return (from) => offeringsRepository(ctx.db).visiblePart(catalogVisibility(actor), uuid, from)
}

export function planLinkPart(ctx: AppContext, uuid: string | null): ReadPartOf<PlanLinkRow> {
  return (from) => plansRepository(ctx.db).part(uuid, from)
}

/** An offering's `category`: the category's id, or null. */
export async function resolveCategoryLink(ctx: AppContext, value: string | null): Promise<number | null> {
  if (value === null) return null
  const row = await linkedRow('category', value, PATHS.categories, (uuid) =>
    categoriesRepository(ctx.db).findByUuid(uuid),
  )
  return row.id
}

/**
 * The service settings an offering's `scope` names. Cloud types (with a scope kind) need one of
 * that kind; the settings must be shared or belong to the provider (staff may use any).
 */
export async function resolveScope(
  ctx: AppContext,
  actor: Actor,
  type: string,
  customerId: number,
  value: string | null | undefined,
): Promise<number | null> {
  const kind = isOfferingType(type) ? OFFERING_TYPE_RULES[type].scopeKind : null
  if (value === null || value === undefined) {
    if (kind)
      throw fieldError('scope', `Service settings of kind ${kind} are required for ${type} offerings.`)
    return null
  }
  const uuid = linkedUuid('scope', value, PATHS.serviceSettings)
  const row = await offeringsRepository(ctx.db).findServiceSettingsByUuid(uuid)
  if (!row || (!actor.isStaff && !toBool(row.shared) && row.customer_id !== customerId)) {
    throw invalidHyperlink('scope')
  }
  if (kind && row.type !== kind) {
    throw fieldError('scope', `Service settings of kind ${kind} are required for ${type} offerings.`)
  }
  return row.id
}
