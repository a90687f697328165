// Marketplace resources: their record (the consumer's view at /api/marketplace-resources/ and the
// provider's at /api/marketplace-provider-resources/ show the same one), the rows behind each
// view, how a new resource is stored, and the one path every state change of a resource takes.
// What other areas supply to the record is reached through the functions under "Seams".
import type { AppContext } from '../../context.js'
import type { Listing } from '../../db/listing.js'
import { parseJson, toBool } from '../../db/values.js'
import { invalidState } from '../../http/errors.js'
import { ownLink, recordRenderer, relatedLink, urlOf } from '../../http/links.js'
import { can, providerVisibility, type Actor } from '../../http/permissions.js'
import type { Pager } from '../../http/resource.js'
import { pageOfRows } from '../../http/resource-calls.js'
import { slugify } from '../../http/slug.js'
import { foundById, foundByUuid, normalizeUuid } from '../../http/uuid.js'
import type { ProviderVisibility } from '../../db/relations.js'
import type { Insertable } from 'kysely'
import type { DB } from '../../db/tables.js'
import { catalogVisibility } from './access.js'
import { uuidsOf, type CatalogVisibility, type Db } from './repository.js'
import {
  providerResourcesRepository,
  resourceDetailsRepository,
  resourcesRepository,
  resourcesWriteRepository,
  type ResourceEventRow,
  type ResourceRow,
} from './repository-resources.js'
import { PATHS, type Resource } from './schema.js'
import { componentsOf } from './service-components.js'
import { offeringUsersFor } from '../offering-users/provisioning.js'
import { emitEvent, inTransaction } from '../events/service.js'
import type { ResourceState } from './state-machine.js'

// ---- Seams: what other parts of the marketplace supply to the resource record ----

/** An offering component as the resource record shows it, with its billing type. */
export interface ResourceOfferingComponent {
  /** The component's record (`offering_components` items). */
  record: Record<string, unknown>
  /** `usage` makes the resource usage-based, `limit` limit-based. */
  billing_type: string
}

/**
 * The components of each offering (by id), for `offering_components`, `is_usage_based` and
 * `is_limit_based`.
 */
export async function offeringComponentsOf(
  ctx: AppContext,
  offeringIds: readonly number[],
): Promise<Map<number, ResourceOfferingComponent[]>> {
  const out = new Map<number, ResourceOfferingComponent[]>()
  for (const [offeringId, components] of await componentsOf(ctx, offeringIds)) {
    out.set(
      offeringId,
      components.map((c) => ({
        record: c,
        billing_type: c.billing_type,
      })),
    )
  }
  return out
}

/** A user's account on an offering's backend: its username there and the account's state. */
export interface OfferingUserAccount {
  username: string | null
  state: string | null
}

/**
 * The offering users of these users on an offering (by user id), for a resource's `username`
 * and its team's `offering_user_username` and `offering_user_state`; a user without an account
 * on the offering is absent.
 */
export async function offeringUsersOf(
  ctx: AppContext,
  offeringId: number,
  userIds: readonly number[],
): Promise<Map<number, OfferingUserAccount>> {
  return offeringUsersFor(ctx.db, offeringId, userIds)
}

/** Renders an order record (JSON text) for `order_in_progress` and `creation_order`. */
export type OrderRecordRenderer = (
  ctx: AppContext,
  actor: Actor,
  orderId: number,
  base: string,
) => Promise<string>
let orderRecordRenderer: OrderRecordRenderer | null = null

/** The orders area registers how an order record is rendered (the catalog cannot import it). */
export function registerResourceOrderRecord(render: OrderRecordRenderer): void {
  orderRecordRenderer = render
}

// ---- the record ----

/** How a resource's `scope_type` maps to a hyperlink: the API path and the table of the object. */
const RESOURCE_SCOPES = new Map<string, { path: string; table: string }>()

/**
 * Areas that link backend objects to resources register their kinds once at plugin registration;
 * unregistered kinds render `scope: null`.
 */
export function registerResourceScope(scopeType: string, target: { path: string; table: string }): void {
  RESOURCE_SCOPES.set(scopeType, target)
}

/** What a record shows besides its row, read for the page at once. */
interface Extras {
  scopePath: string | null
  scopeUuid: string | null
  endpoints: { uuid: string; name: string; url: string }[]
  components: ResourceOfferingComponent[]
  openOrder: boolean
  /** The caller's own offering user of the resource's offering. */
  username: string | null
  canTerminate: boolean
}

type Rendered = ResourceRow & Extras

/** Strings in which a resource accepts the order-placing actions of /api/marketplace-resources/. */
const ACTIVE_STATES = ['OK', 'Erred']
const RESOURCE_ACTIONS = ['terminate', 'switch_plan', 'update_limits']

const toResource = recordRenderer<Rendered, Resource>({
  ...ownLink(PATHS.resources),
  name: 'copy',
  slug: 'copy',
  description: 'copy',
  ...relatedLink(
    'offering',
    PATHS.offerings,
    'uuid',
    'name',
    'type',
    'description',
    'slug',
    'image',
    'thumbnail',
  ),
  offering_shared: (r) => toBool(r.offering_shared),
  offering_billable: (r) => toBool(r.offering_billable),
  offering_plugin_options: (r) => parseJson<Record<string, unknown>>(r.offering_plugin_options, {}),
  offering_backend_id: 'copy',
  offering_state: 'copy',
  offering_components: (r) => r.components.map((c) => c.record),
  parent_offering_uuid: (r) => r.parent_offering_uuid ?? undefined,
  parent_offering_name: (r) => (r.parent_offering_uuid ? r.parent_offering_name : undefined),
  parent_offering_slug: (r) => (r.parent_offering_uuid ? r.parent_offering_slug : undefined),
  ...relatedLink('plan', PATHS.plans, 'uuid', 'name', 'unit', 'description'),
  ...relatedLink('project', PATHS.projects, 'uuid', 'name', 'slug', 'description', 'end_date'),
  project_end_date_requested_by: () => null,
  project_effective_end_date: (r) => r.project_end_date,
  project_is_in_grace_period: () => false,
  ...relatedLink('customer', PATHS.customers, 'uuid', 'name', 'slug'),
  provider_uuid: 'copy',
  provider_name: 'copy',
  provider_slug: 'copy',
  provider_description: (r) => r.provider_description ?? '',
  category_uuid: (r) => r.category_uuid ?? undefined,
  category_title: (r) => (r.category_uuid ? r.category_title : undefined),
  category_icon: (r) => (r.category_uuid ? r.category_icon : undefined),
  service_settings_uuid: (r) => r.service_settings_uuid ?? undefined,
  state: 'copy',
  attributes: (r) => parseJson<unknown>(r.attributes, {}),
  limits: (r) => parseJson<Record<string, unknown>>(r.limits, {}),
  backend_id: 'copy',
  effective_id: 'copy',
  backend_metadata: (r) => parseJson<Record<string, unknown>>(r.backend_metadata, {}),
  resource_type: 'copy',
  scope: (r, base) => (r.scopePath && r.scopeUuid ? urlOf(base, r.scopePath, r.scopeUuid) : null),
  resource_uuid: (r) => r.scopeUuid,
  parent_uuid: () => undefined,
  parent_name: () => undefined,
  end_date: 'copy',
  end_date_requested_by: { link: PATHS.users, from: 'end_date_requested_by_uuid' },
  end_date_updated_at: 'copy',
  resource_effective_end_date: (r) => earliest(r.end_date, r.project_end_date),
  renewal_date: () => null,
  paused: 'flag',
  downscaled: 'flag',
  restrict_member_access: 'flag',
  usage_limit_restriction: 'copy',
  is_usage_based: (r) => r.components.some((c) => c.billing_type === 'usage'),
  is_limit_based: (r) => r.components.some((c) => c.billing_type === 'limit'),
  current_usages: (r) => parseJson<Record<string, unknown>>(r.current_usages, {}),
  limit_usage: () => ({}),
  report: (r) => parseJson<Record<string, unknown>[] | null>(r.report, null) ?? [],
  endpoints: (r) => r.endpoints,
  error_message: 'copy',
  error_traceback: 'copy',
  options: (r) => parseJson<Record<string, unknown> | null>(r.options, null),
  available_actions: (r) => (ACTIVE_STATES.includes(r.state) && !r.openOrder ? RESOURCE_ACTIONS : []),
  can_terminate: (r) => r.canTerminate,
  username: (r) => r.username,
  user_requires_reconsent: () => false,
  has_api_keys: () => false,
  last_sync: (r) => r.last_sync ?? r.modified,
  order_in_progress: () => undefined,
  creation_order: () => undefined,
  created: 'copy',
  modified: 'copy',
})

function earliest(a: string | null, b: string | null): string | null {
  if (!a) return b
  if (!b) return a
  return a < b ? a : b
}

/** The record without the fields a resource has no value for (they are left out, not null). */
function withoutAbsent(record: Resource): Resource {
  for (const key of Object.keys(record) as (keyof Resource)[])
    if (record[key] === undefined) delete record[key]
  return record
}

/** The records of a page of rows, as `viewer` sees them (null: no caller, as a write answers). */
async function toResources(
  ctx: AppContext,
  base: string,
  rows: ResourceRow[],
  viewer: Actor | null,
): Promise<Resource[]> {
  if (!rows.length) return []
  const ids = rows.map((r) => r.id)
  const details = resourceDetailsRepository(ctx.db)
  // Backend objects' uuids, one query per scope kind on the page.
  const byKind = new Map<string, number[]>()
  for (const r of rows) {
    if (r.scope_type && r.scope_id != null && RESOURCE_SCOPES.has(r.scope_type)) {
      byKind.set(r.scope_type, [...(byKind.get(r.scope_type) ?? []), r.scope_id])
    }
  }
  const scopeUuids = new Map<string, Map<number, string>>()
  for (const [kind, kindIds] of byKind) {
    scopeUuids.set(kind, await uuidsOf(ctx.db, RESOURCE_SCOPES.get(kind)!.table, kindIds))
  }
  const endpoints = await details.endpointsOf(ids)
  const openOrders = await details.openOrdersOf(ids)
  const components = await offeringComponentsOf(ctx, [...new Set(rows.map((r) => r.offering_id))])
  const usernames = new Map<number, string | null>()
  if (viewer) {
    for (const offeringId of new Set(rows.map((r) => r.offering_id))) {
      const own = (await offeringUsersOf(ctx, offeringId, [viewer.id])).get(viewer.id)
      usernames.set(offeringId, own?.username ?? null)
    }
  }
  return rows.map((r) => {
    const kind = r.scope_type ? RESOURCE_SCOPES.get(r.scope_type) : undefined
    const scopeUuid =
      kind && r.scope_id != null ? (scopeUuids.get(r.scope_type!)?.get(r.scope_id) ?? null) : null
    const openOrder = openOrders.has(r.id)
    return withoutAbsent(
      toResource(base, {
        ...r,
        scopePath: kind?.path ?? null,
        scopeUuid,
        endpoints: endpoints.get(r.id) ?? [],
        components: components.get(r.offering_id) ?? [],
        openOrder,
        username: usernames.get(r.offering_id) ?? null,
        canTerminate: !!viewer && canTerminate(viewer, r, openOrder),
      }),
    )
  })
}

/**
 * What `terminate` on /api/marketplace-resources/ would accept from the viewer: the right to
 * order for the resource's project, a resource in OK or Erred, no order in progress, and its
 * organization neither blocked nor archived.
 */
function canTerminate(viewer: Actor, r: ResourceRow, openOrder: boolean): boolean {
  return (
    can(viewer, 'ORDER.CREATE', { customerId: r.customer_id, projectId: r.project_id }) &&
    ACTIVE_STATES.includes(r.state) &&
    !openOrder &&
    !toBool(r.customer_blocked) &&
    !toBool(r.customer_archived)
  )
}

/** A retrieved record also shows its order in progress and the order that created it. */
async function withOrders(ctx: AppContext, actor: Actor, base: string, record: Resource, id: number) {
  const details = resourceDetailsRepository(ctx.db)
  const render = async (orderId: number | undefined) =>
    orderId !== undefined && orderRecordRenderer
      ? (JSON.parse(await orderRecordRenderer(ctx, actor, orderId, base)) as Record<string, unknown>)
      : null
  record.order_in_progress = await render((await details.openOrdersOf([id])).get(id))
  record.creation_order = await render(await details.creationOrderOf(id))
  return record
}

// ---- the consumer's and provider's view: /api/marketplace-resources/ ----

export function listResources(
  ctx: AppContext,
  actor: Actor,
  vis: CatalogVisibility,
  listing: Listing,
  base: string,
  page: Pager<Resource>,
) {
  return pageOfRows(page, resourcesRepository(ctx.db), vis, listing, (rows) =>
    toResources(ctx, base, rows, actor),
  )
}

export async function getResource(ctx: AppContext, actor: Actor, uuid: string, base: string) {
  const vis = catalogVisibility(actor)
  const row = await foundByUuid(
    uuid,
    (id) => resourcesRepository(ctx.db).findVisibleByUuid(vis, id),
    'Resource',
  )
  return withOrders(ctx, actor, base, (await toResources(ctx, base, [row], actor))[0]!, row.id)
}

/**
 * The resource of this uuid when the actor sees it, as a consumer (`/api/marketplace-resources/`)
 * or as its provider (`/api/marketplace-provider-resources/`); else 404.
 */
export async function findVisibleResource(ctx: AppContext, actor: Actor, uuid: string): Promise<void> {
  const id = normalizeUuid(uuid)
  if (id && (await resourcesRepository(ctx.db).findVisibleByUuid(catalogVisibility(actor), id))) return
  await findProviderResource(ctx, actor, uuid)
}

/** The marketplace resource record (as GET /api/marketplace-resources/{uuid}/ lists it). */
export async function resourceRecord(ctx: AppContext, base: string, resourceId: number): Promise<Resource> {
  const row = await foundById(resourceId, (id) => resourcesRepository(ctx.db).findById(id), 'Resource')
  return (await toResources(ctx, base, [row], null))[0]!
}

// ---- the provider's view: /api/marketplace-provider-resources/ ----

export function listProviderResources(
  ctx: AppContext,
  actor: Actor,
  vis: ProviderVisibility,
  listing: Listing,
  base: string,
  page: Pager<Resource>,
) {
  return pageOfRows(page, providerResourcesRepository(ctx.db), vis, listing, (rows) =>
    toResources(ctx, base, rows, actor),
  )
}

/** The resource of the path's uuid as the provider side sees it; 404 otherwise. */
export function findProviderResource(ctx: AppContext, actor: Actor, uuid: string): Promise<ResourceRow> {
  const vis = providerVisibility(actor)
  return foundByUuid(uuid, (id) => providerResourcesRepository(ctx.db).findVisibleByUuid(vis, id), 'Resource')
}

export async function getProviderResource(ctx: AppContext, actor: Actor, uuid: string, base: string) {
  const row = await findProviderResource(ctx, actor, uuid)
  return withOrders(ctx, actor, base, (await toResources(ctx, base, [row], actor))[0]!, row.id)
}

// ---- writes every area goes through ----

/**
 * Stores a new resource (an order's): its slug is the next of its name (`<name>-<n>`, unique;
 * of `fallbackName`, e.g. its offering's, when the name has nothing to slugify), and it was last
 * synced when it was created.
 */
export function insertResource(
  db: Db,
  values: Omit<Insertable<DB['resources']>, 'slug' | 'last_sync'>,
  fallbackName = '',
): Promise<{ id: number; slug: string }> {
  const { row, slugBase } = newResourceRow(values, fallbackName)
  return resourcesWriteRepository(db).insert(row, slugBase)
}

/**
 * What `insertResource` stores but the slug, and the base the slug numbers (`<base>-<n>`): for a
 * statement that writes the resource together with the order it is for (`createOrder` on
 * PostgreSQL).
 */
export function newResourceRow(
  values: Omit<Insertable<DB['resources']>, 'slug' | 'last_sync'>,
  fallbackName = '',
): { row: Omit<Insertable<DB['resources']>, 'slug'>; slugBase: string } {
  return {
    row: { ...values, last_sync: values.created },
    slugBase: slugify(String(values.name ?? ''), slugify(fallbackName, 'resource')),
  }
}

// ---- events: what changed, told in the transaction of the change ----

/** The columns whose changes are told, each with its event's type and the name of its value. */
const TOLD_CHANGES = [
  ['state', 'marketplace.resource.state_changed', 'state'],
  ['limits', 'marketplace.resource.limits_changed', 'limits'],
  ['backend_id', 'marketplace.resource.backend_id_changed', 'backend_id'],
  ['end_date', 'marketplace.resource.end_date_changed', 'end_date'],
  ['project_uuid', 'marketplace.resource.project_changed', 'project_uuid'],
  ['plan_uuid', 'marketplace.resource.plan_changed', 'plan_uuid'],
] as const

/** The resources' columns whose writes may change a told value. */
const TOLD_COLUMNS = new Set(['state', 'limits', 'backend_id', 'end_date', 'project_id', 'plan_id'])

/** Tells each told value the change gave the resource a new value, as one event each. */
async function tellResourceChanges(
  ctx: AppContext,
  db: Db,
  told: { before: ResourceEventRow; after: ResourceEventRow },
): Promise<void> {
  const { before, after } = told
  for (const [column, type, name] of TOLD_CHANGES) {
    const was = column === 'limits' ? parseJson(before.limits, {}) : before[column]
    const is = column === 'limits' ? parseJson(after.limits, {}) : after[column]
    if (JSON.stringify(was) === JSON.stringify(is)) continue
    await emitEvent(ctx, db, {
      type,
      objectType: 'resource',
      objectUuid: after.uuid,
      path: `/api/${PATHS.resources}/${after.uuid}/`,
      offeringUuid: after.offering_uuid,
      projectUuid: after.project_uuid,
      customerUuid: after.customer_uuid,
      data: { [`${name}_before`]: was ?? null, [`${name}_after`]: is ?? null, state: after.state },
    })
  }
}

/**
 * Sets columns of the resource `id` (not its state: `moveResource` does that) and tells what
 * changed, in `db` (the caller's transaction, or one of its own).
 */
export async function changeResource(ctx: AppContext, db: Db, id: number, values: Record<string, unknown>) {
  if (!Object.keys(values).some((c) => TOLD_COLUMNS.has(c))) {
    await resourcesWriteRepository(db).update(id, values)
    return
  }
  await inTransaction(ctx, db, async (trx) => {
    const told = await resourcesWriteRepository(trx).writeTold(id, null, values)
    if (told) await tellResourceChanges(ctx, trx, told)
  })
}

/**
 * The one path of a resource's state changes: moves the resource `id` to `to` with `values` (and
 * `modified`), if its state is one of `from` (null: any), and tells what changed. False when its
 * state was not; the caller answers 409.
 */
export async function moveResource(
  ctx: AppContext,
  db: Db,
  id: number,
  to: ResourceState,
  opts: { from: readonly string[] | null; values?: Record<string, unknown>; now: string },
): Promise<boolean> {
  return inTransaction(ctx, db, async (trx) => {
    const told = await resourcesWriteRepository(trx).writeTold(id, opts.from, {
      ...opts.values,
      modified: opts.now,
      state: to,
    })
    if (told) await tellResourceChanges(ctx, trx, told)
    return !!told
  })
}

/** `moveResource`, answering 409 (naming the states it is allowed from) when it was not moved. */
export async function moveResourceOr409(
  ctx: AppContext,
  db: Db,
  id: number,
  to: ResourceState,
  opts: { from: readonly string[] | null; values?: Record<string, unknown>; now: string },
): Promise<void> {
  if (!(await moveResource(ctx, db, id, to, opts))) throw invalidState(opts.from ?? [])
}
