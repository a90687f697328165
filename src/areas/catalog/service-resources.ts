// The read side of marketplace resources: list and record, with the hyperlink of the backend
// object each resource stands for (its `scope`), as registered by the areas that own them.
import type { AppContext } from '../../context.js'
import type { Listing } from '../../db/listing.js'
import { parseJson } from '../../db/values.js'
import { notFound } from '../../http/errors.js'
import { urlOf } from '../../http/links.js'
import type { Actor } from '../../http/permissions.js'
import type { Pager } from '../../http/resource.js'
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
    return {
      url: urlOf(base, PATHS.resources, r.uuid)!,
      uuid: r.uuid,
      name: r.name,
      offering: urlOf(base, PATHS.offerings, r.offering_uuid)!,
      offering_uuid: r.offering_uuid,
      offering_name: r.offering_name,
      offering_type: r.offering_type,
      plan: urlOf(base, PATHS.plans, r.plan_uuid),
      plan_uuid: r.plan_uuid ?? null,
      plan_name: r.plan_name ?? null,
      project: urlOf(base, PATHS.projects, r.project_uuid)!,
      project_uuid: r.project_uuid,
      project_name: r.project_name,
      customer: urlOf(base, PATHS.customers, r.customer_uuid)!,
      customer_uuid: r.customer_uuid,
      customer_name: r.customer_name,
      provider_uuid: r.provider_uuid,
      provider_name: r.provider_name,
      category_uuid: r.category_uuid ?? null,
      category_title: r.category_title ?? null,
      state: r.state,
      attributes: parseJson<unknown>(r.attributes, {}),
      limits: parseJson<Record<string, unknown>>(r.limits, {}),
      backend_id: r.backend_id,
      resource_type: r.resource_type,
      end_date: r.end_date,
      created: r.created,
      modified: r.modified,
      scope: kind && scopeUuid ? urlOf(base, kind.path, scopeUuid) : null,
      resource_uuid: scopeUuid,
    }
  })
}

export function listResources(
  ctx: AppContext,
  vis: CatalogVisibility,
  listing: Listing,
  base: string,
  page: Pager<Resource>,
) {
  const repo = resourcesRepository(ctx.db)
  return page(
    () => repo.count(vis, listing),
    async (l, o) => toResources(ctx, base, await repo.list(vis, listing, l, o)),
  )
}

export async function getResource(ctx: AppContext, actor: Actor, uuid: string, base: string) {
  const row = await findVisible(resourcesRepository(ctx.db), actor, uuid, 'Resource')
  return (await toResources(ctx, base, [row]))[0]!
}

/** The marketplace resource record (as GET /api/marketplace-resources/{uuid}/ answers). */
export async function resourceRecord(ctx: AppContext, base: string, resourceId: number): Promise<Resource> {
  const row = await resourcesRepository(ctx.db).findById(resourceId)
  if (!row) throw notFound('No Resource matches the given query.')
  return (await toResources(ctx, base, [row]))[0]!
}
