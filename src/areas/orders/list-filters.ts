// The order list's filters, from the values the route's declaration parsed to the repository's
// filters: the approval filters (scoped to what the caller may approve), the offering by URL or
// uuid (given both, they must agree), the resource by URL, the text query, and the time bounds
// (`created` and `created_after` are one bound each, as are `modified` and `modified_after`).
import { scopesWith, type Actor } from '../../http/permissions.js'
import { normalizeUuid } from '../../http/uuid.js'
import type { OrderFilters } from './repository.js'

/** The list's parameters by the kind of their parsed value. */
type FlagFilter = 'can_approve_as_consumer' | 'can_approve_as_provider' | 'was_auto_approved'
type ListFilter = 'offering_slug' | 'offering_type' | 'state' | 'type'
type TextFilter =
  | 'category_uuid'
  | 'created'
  | 'created_after'
  | 'created_before'
  | 'modified_after'
  | 'modified_before'
  | 'slug'
  | 'customer_uuid'
  | 'modified'
  | 'parent_offering_uuid'
  | 'project_uuid'
  | 'provider_uuid'
  | 'resource_uuid'
  | 'resource_name'
  | 'service_manager_uuid'
  | 'offering_uuid'
  /** The offering's uuid, from its URL or given as a uuid. */
  | 'offering'
  /** The resource's uuid, from its URL. */
  | 'resource'
  | 'query'

/** The list's filter values by parameter, as parsed (null: the value can match nothing). */
export type OrderFilterValues = Partial<
  Record<FlagFilter, boolean | null> & Record<ListFilter, string[] | null> & Record<TextFilter, string | null>
>

/**
 * A `can_approve_as_*` value that needs no scopes: false, the orders waiting for that approval;
 * true from staff, every one of them. Null: the orders waiting that the caller may approve.
 */
function unscopedApproval(actor: Actor, value: boolean): 'all' | 'state-only' | null {
  if (!value) return 'state-only'
  return actor.isStaff ? 'all' : null
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
    f.canApproveAsConsumer = unscopedApproval(actor, consumer) ?? {
      projectIds: approve.project,
      customerIds: approve.customer,
    }
  }
  if (provider !== undefined) {
    f.canApproveAsProvider = unscopedApproval(actor, provider) ?? {
      customerIds: approve.customer,
      offeringIds: approve.offering,
    }
  }
  return f
}

/** The repository's filters for these values. */
export function orderFilters(actor: Actor, v: OrderFilterValues): OrderFilters {
  const f: OrderFilters = {
    ...approvalFilters(actor, v.can_approve_as_consumer ?? undefined, v.can_approve_as_provider ?? undefined),
    category_uuid: v.category_uuid ?? undefined,
    created_after: [v.created, v.created_after].filter((x): x is string => !!x),
    created_before: v.created_before ?? undefined,
    customer_uuid: v.customer_uuid ?? undefined,
    modified_after: [v.modified, v.modified_after].filter((x): x is string => !!x),
    modified_before: v.modified_before ?? undefined,
    offering_slugs: v.offering_slug ?? [],
    offering_types: v.offering_type ?? [],
    parent_offering_uuid: v.parent_offering_uuid ?? undefined,
    project_uuid: v.project_uuid ?? undefined,
    provider_uuid: v.provider_uuid ?? undefined,
    resource_uuid: v.resource_uuid ?? undefined,
    resource_name: v.resource_name ?? undefined,
    service_manager_uuid: v.service_manager_uuid ?? undefined,
    slug: v.slug ?? undefined,
    states: v.state ?? [],
    types: v.type ?? [],
    was_auto_approved: v.was_auto_approved ?? undefined,
  }
  if (v.offering === null) f.none = true
  f.offering_uuids = [v.offering_uuid, v.offering].filter((x): x is string => !!x)
  if (f.offering_uuids.length === 2 && f.offering_uuids[0] !== f.offering_uuids[1]) f.none = true
  if (v.resource === null) f.none = true
  else if (v.resource) f.resource_uuid = v.resource
  if (v.query) f.query = { text: v.query, uuid: normalizeUuid(v.query.trim()) }
  return f
}
