// The read side of marketplace resources: list and record, with the hyperlink of the backend
// object each resource stands for (its `scope`), as registered by the areas that own them.
import type { AppContext } from '../../context.js'
import type { Listing } from '../../db/listing.js'
import { parseJson } from '../../db/values.js'
import { foundById } from '../../http/uuid.js'
import { ownLink, recordRenderer, relatedLink, urlOf } from '../../http/links.js'
import type { Actor } from '../../http/permissions.js'
import type { Pager } from '../../http/resource.js'
import { pageOfRows } from '../../http/resource-calls.js'
import { uuidsOf, type CatalogVisibility } from './repository.js'
import { resourcesRepository } from './repository-resources.js'
import { PATHS, type Resource } from './schema.js'
import { findVisible } from './service-links.js'

/**
 * How a resource's `scope_type` maps to a hyperlink: the API path and the table holding the
 * backend object (a table with `id` and `uuid`). Areas that link backend objects to resources
 * register their kinds once at plugin registration; unregistered kinds render `scope: null`.
 */
const RESOURCE_SCOPES = new Map<string, { path: string; table: string }>()

export function registerResourceScope(scopeType: string, target: { path: string; table: string }): void {
  RESOURCE_SCOPES.set(scopeType, target)
}

type ResourceRow = NonNullable<Awaited<ReturnType<ReturnType<typeof resourcesRepository>['findById']>>>

/** A resource row with the API path and uuid of the backend object it stands for, if known. */
type ResourceWithScope = ResourceRow & { scope_path: string | null; resource_uuid: string | null }

const toResource = recordRenderer<ResourceWithScope, Resource>({
  ...ownLink(PATHS.resources),
  name: 'copy',
  ...relatedLink('offering', PATHS.offerings, 'uuid', 'name', 'type'),
  ...relatedLink('plan', PATHS.plans, 'uuid', 'name'),
  ...relatedLink('project', PATHS.projects, 'uuid', 'name'),
  ...relatedLink('customer', PATHS.customers, 'uuid', 'name'),
  provider_uuid: 'copy',
  provider_name: 'copy',
  category_uuid: 'copy',
  category_title: 'copy',
  state: 'copy',
  attributes: (r) => parseJson<unknown>(r.attributes, {}),
  limits: (r) => parseJson<Record<string, unknown>>(r.limits, {}),
  backend_id: 'copy',
  resource_type: 'copy',
  end_date: 'copy',
  created: 'copy',
  modified: 'copy',
  scope: (r, base) => (r.scope_path && r.resource_uuid ? urlOf(base, r.scope_path, r.resource_uuid) : null),
  resource_uuid: 'copy',
})

async function toResources(ctx: AppContext, base: string, rows: ResourceRow[]): Promise<Resource[]> {
  // Backend objects' uuids, one query per scope kind on the page.
  const byKind = new Map<string, number[]>()
  for (const r of rows) {
    if (r.scope_type && r.scope_id != null && RESOURCE_SCOPES.has(r.scope_type)) {
      byKind.set(r.scope_type, [...(byKind.get(r.scope_type) ?? []), r.scope_id])
    }
  }
  const scopeUuids = new Map<string, Map<number, string>>()
  for (const [kind, ids] of byKind) {
    scopeUuids.set(kind, await uuidsOf(ctx.db, RESOURCE_SCOPES.get(kind)!.table, ids))
  }
  return rows.map((r) => {
    const kind = r.scope_type ? RESOURCE_SCOPES.get(r.scope_type) : undefined
    const scopeUuid =
      kind && r.scope_id != null ? (scopeUuids.get(r.scope_type!)?.get(r.scope_id) ?? null) : null
    return toResource(base, { ...r, scope_path: kind?.path ?? null, resource_uuid: scopeUuid })
  })
}

export function listResources(
  ctx: AppContext,
  vis: CatalogVisibility,
  listing: Listing,
  base: string,
  page: Pager<Resource>,
) {
  return pageOfRows(page, resourcesRepository(ctx.db), vis, listing, (rows) => toResources(ctx, base, rows))
}

export async function getResource(ctx: AppContext, actor: Actor, uuid: string, base: string) {
  const row = await findVisible(resourcesRepository(ctx.db), actor, uuid, 'Resource')
  return (await toResources(ctx, base, [row]))[0]!
}

/** The marketplace resource record (as GET /api/marketplace-resources/{uuid}/ answers). */
export async function resourceRecord(ctx: AppContext, base: string, resourceId: number): Promise<Resource> {
  const row = await foundById(resourceId, (id) => resourcesRepository(ctx.db).findById(id), 'Resource')
  return (await toResources(ctx, base, [row]))[0]!
}
