// cloudA use cases for locations (staff-managed, visible with their service settings) and
// resource groups (managed by those who manage the project); public IPs are in public-ips.ts.
import type { AppContext } from '../../context.js'
import { conflict, FieldErrorSet, fieldError, forbidden } from '../../http/errors.js'
import { invalidHyperlink, urlOf, uuidFromLink } from '../../http/links.js'
import { requireStaff, type Actor } from '../../http/permissions.js'
import { pageOf, type Pager } from '../../http/resource.js'
import type { Listing } from '../../db/listing.js'
import { foundByUuid } from '../../http/uuid.js'
import {
  canManage,
  resolveManagedProject,
  resolveSettingsLink,
  resourceVisibility,
  settingsVisibility,
  type ResourceVisibility,
  type SettingsVisibility,
} from '../cloud/common.js'
import {
  locationsRepository,
  resourceGroupsRepository,
  type LocationRow,
  type ResourceGroupRow,
} from './repository.js'
import {
  PATHS,
  type Location,
  type LocationWrite,
  type ResourceGroup,
  type ResourceGroupWrite,
} from './schema.js'

/** Runs field checks independently and reports every failing field at once, as DRF does. */
export async function collect<T extends Record<string, () => Promise<unknown>>>(
  checks: T,
): Promise<{ [K in keyof T]: Awaited<ReturnType<T[K]>> }> {
  const errors = new FieldErrorSet()
  const out: Record<string, unknown> = {}
  for (const [k, check] of Object.entries(checks)) out[k] = await errors.check([], check)
  errors.throwIfAny()
  return out as { [K in keyof T]: Awaited<ReturnType<T[K]>> }
}

/**
 * The object a request's hyperlink names: of the path's kind, visible (`find`), and in the given
 * service settings (when not null); else 400 on `field`.
 */
async function resolveInSettings<R extends { service_settings_id: number }>(
  field: string,
  value: unknown,
  path: string,
  noun: string,
  settingsId: number | null,
  find: (uuid: string) => Promise<R | undefined>,
): Promise<R> {
  if (typeof value !== 'string') throw fieldError(field, 'Incorrect type. Expected URL string.')
  const uuid = uuidFromLink(value, path)
  if (!uuid) throw fieldError(field, 'Invalid hyperlink - Incorrect URL match.')
  const row = await find(uuid)
  if (!row) throw invalidHyperlink(field)
  if (settingsId !== null && row.service_settings_id !== settingsId) {
    throw fieldError(field, `The ${noun} must belong to the given service settings.`)
  }
  return row
}

// ---- locations ----
export function toLocation(base: string, r: LocationRow): Location {
  return {
    url: urlOf(base, PATHS.locations, r.uuid)!,
    uuid: r.uuid,
    name: r.name,
    service_settings: urlOf(base, 'service-settings', r.service_settings_uuid)!,
    service_settings_uuid: r.service_settings_uuid,
    service_settings_name: r.service_settings_name,
    backend_id: r.backend_id,
    created: r.created,
    modified: r.modified,
  }
}

export function listLocations(
  ctx: AppContext,
  vis: SettingsVisibility,
  listing: Listing,
  base: string,
  page: Pager<Location>,
) {
  return pageOf(page, locationsRepository(ctx.db), vis, listing, (r) => toLocation(base, r))
}

function findLocation(ctx: AppContext, actor: Actor, uuid: string): Promise<LocationRow> {
  const vis = settingsVisibility(actor)
  return foundByUuid(uuid, (u) => locationsRepository(ctx.db).findVisibleByUuid(vis, u), 'Location')
}

export async function getLocation(ctx: AppContext, actor: Actor, uuid: string, base: string) {
  return toLocation(base, await findLocation(ctx, actor, uuid))
}

export async function createLocation(ctx: AppContext, actor: Actor, body: LocationWrite, base: string) {
  requireStaff(actor)
  const settings = await resolveSettingsLink(ctx, actor, 'service_settings', body.service_settings, 'cloudA')
  const now = ctx.clock().toISOString()
  const repo = locationsRepository(ctx.db)
  const id = await repo.insert({
    uuid: ctx.newUuid(),
    name: body.name!,
    service_settings_id: settings.id,
    backend_id: body.backend_id ?? '',
    created: now,
    modified: now,
  })
  return toLocation(base, (await repo.findById(id))!)
}

/** PUT/PATCH: staff only; a location stays in its service settings. */
export async function updateLocation(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: LocationWrite,
  base: string,
) {
  requireStaff(actor)
  const current = await findLocation(ctx, actor, uuid)
  const changes: Record<string, unknown> = { modified: ctx.clock().toISOString() }
  if (body.name !== undefined) changes.name = body.name
  if (body.backend_id !== undefined) changes.backend_id = body.backend_id
  const repo = locationsRepository(ctx.db)
  await repo.update(current.id, changes)
  return toLocation(base, (await repo.findById(current.id))!)
}

export async function deleteLocation(ctx: AppContext, actor: Actor, uuid: string) {
  requireStaff(actor)
  const current = await findLocation(ctx, actor, uuid)
  const repo = locationsRepository(ctx.db)
  if ((await repo.usage(current.id)) > 0) {
    throw conflict('Cannot delete location with existing resource groups or public IPs')
  }
  await repo.delete(current.id)
}

/** A location hyperlink of a request: known, visible, and in the given service settings. */
export function resolveLocationLink(
  ctx: AppContext,
  actor: Actor,
  field: string,
  value: unknown,
  settingsId: number | null,
): Promise<LocationRow> {
  const repo = locationsRepository(ctx.db)
  return resolveInSettings(field, value, PATHS.locations, 'location', settingsId, (uuid) =>
    repo.findVisibleByUuid(settingsVisibility(actor), uuid),
  )
}

export const locationService = {
  get: getLocation,
  create: createLocation,
  update: updateLocation,
  destroy: deleteLocation,
}

// ---- resource groups ----

export function toResourceGroup(base: string, r: ResourceGroupRow): ResourceGroup {
  return {
    url: urlOf(base, PATHS.resourceGroups, r.uuid)!,
    uuid: r.uuid,
    name: r.name,
    location: urlOf(base, PATHS.locations, r.location_uuid)!,
    location_uuid: r.location_uuid,
    location_name: r.location_name,
    service_settings: urlOf(base, 'service-settings', r.service_settings_uuid)!,
    service_settings_uuid: r.service_settings_uuid,
    service_settings_name: r.service_settings_name,
    project: urlOf(base, 'projects', r.project_uuid)!,
    project_uuid: r.project_uuid,
    project_name: r.project_name,
    customer_uuid: r.customer_uuid,
    created: r.created,
    modified: r.modified,
  }
}

export function listResourceGroups(
  ctx: AppContext,
  vis: ResourceVisibility,
  listing: Listing,
  base: string,
  page: Pager<ResourceGroup>,
) {
  return pageOf(page, resourceGroupsRepository(ctx.db), vis, listing, (r) => toResourceGroup(base, r))
}

function findResourceGroup(ctx: AppContext, actor: Actor, uuid: string): Promise<ResourceGroupRow> {
  const vis = resourceVisibility(actor)
  return foundByUuid(uuid, (u) => resourceGroupsRepository(ctx.db).findVisibleByUuid(vis, u), 'ResourceGroup')
}

export async function getResourceGroup(ctx: AppContext, actor: Actor, uuid: string, base: string) {
  return toResourceGroup(base, await findResourceGroup(ctx, actor, uuid))
}

/** POST: whoever manages resources in the project; the location must be in the settings. */
export async function createResourceGroup(
  ctx: AppContext,
  actor: Actor,
  body: ResourceGroupWrite,
  base: string,
) {
  const { settings, project } = await collect({
    settings: () => resolveSettingsLink(ctx, actor, 'service_settings', body.service_settings, 'cloudA'),
    project: () => resolveManagedProject(ctx, actor, 'project', body.project),
  })
  const location = await resolveLocationLink(ctx, actor, 'location', body.location, settings.id)
  const now = ctx.clock().toISOString()
  const repo = resourceGroupsRepository(ctx.db)
  const id = await repo.insert({
    uuid: ctx.newUuid(),
    name: body.name!,
    location_id: location.id,
    service_settings_id: settings.id,
    project_id: project.id,
    created: now,
    modified: now,
  })
  return toResourceGroup(base, (await repo.findById(id))!)
}

async function findManageableGroup(ctx: AppContext, actor: Actor, uuid: string) {
  const row = await findResourceGroup(ctx, actor, uuid)
  if (!canManage(actor, row)) throw forbidden()
  return row
}

/** PUT/PATCH: the name only; location, settings and project are fixed at creation. */
export async function updateResourceGroup(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: ResourceGroupWrite,
  base: string,
) {
  const current = await findManageableGroup(ctx, actor, uuid)
  const repo = resourceGroupsRepository(ctx.db)
  const changes: Record<string, unknown> = { modified: ctx.clock().toISOString() }
  if (body.name !== undefined) changes.name = body.name
  await repo.update(current.id, changes)
  return toResourceGroup(base, (await repo.findById(current.id))!)
}

export async function deleteResourceGroup(ctx: AppContext, actor: Actor, uuid: string) {
  const current = await findManageableGroup(ctx, actor, uuid)
  const repo = resourceGroupsRepository(ctx.db)
  if ((await repo.publicIpCount(current.id)) > 0) {
    throw conflict('Cannot delete resource group with existing public IPs')
  }
  await repo.delete(current.id)
}

/** A resource group hyperlink of a request: known, visible, and in the given service settings. */
/** A resource group hyperlink of a request: known, visible, and in the given service settings. */
export function resolveResourceGroupLink(
  ctx: AppContext,
  actor: Actor,
  field: string,
  value: unknown,
  settingsId: number | null,
): Promise<ResourceGroupRow> {
  const repo = resourceGroupsRepository(ctx.db)
  return resolveInSettings(field, value, PATHS.resourceGroups, 'resource group', settingsId, (uuid) =>
    repo.findVisibleByUuid(resourceVisibility(actor), uuid),
  )
}

export const resourceGroupService = {
  get: getResourceGroup,
  create: createResourceGroup,
  update: updateResourceGroup,
  destroy: deleteResourceGroup,
}
