// cloudA use cases: locations (staff-managed, visible with their service settings), resource
// groups (managed by those who manage the project) and public IPs (the common cloud resource
// lifecycle: create, PUT/PATCH, delete and pull run as jobs against the driver).
import type { AppContext } from '../../context.js'
import { conflict, FieldErrorSet, fieldError, forbidden, notFound } from '../../http/errors.js'
import { invalidHyperlink, urlOf, uuidFromLink } from '../../http/links.js'
import { requireStaff, type Actor } from '../../http/permissions.js'
import type { OrderTerm } from '../../http/query.js'
import { normalizeUuid } from '../../http/uuid.js'
import { registerResourceScope } from '../catalog/service.js'
import {
  canManage,
  cloudResourcesQuery,
  insertResource,
  registerCloudResourceType,
  resolveManagedProject,
  resolveSettingsLink,
  resourceVisibility,
  scheduleUpdate,
  settingsVisibility,
  toCommonRecord,
  type CommonFilters,
  type ResourceOps,
} from '../cloud/common.js'
import { driverFor, type DriverCall } from '../cloud/driver.js'
import type { CloudADriver, PublicIpSpec } from './driver.js'
import {
  locationsRepository,
  publicIpsRepository,
  resourceGroupsRepository,
  withPublicIpColumns,
  type LocationFilters,
  type LocationRow,
  type PublicIpFilters,
  type PublicIpRow,
  type ResourceGroupFilters,
  type ResourceGroupRow,
} from './repository.js'
import {
  PATHS,
  PUBLIC_IP_NAME_RE,
  PUBLIC_IP_TYPE,
  type Location,
  type LocationWrite,
  type PublicIp,
  type PublicIpWrite,
  type ResourceGroup,
  type ResourceGroupWrite,
} from './schema.js'
import './driver.js'

type Page<T> = (
  count: () => Promise<number>,
  fetch: (limit: number, offset: number) => Promise<T[]>,
) => Promise<T[]>

// ---- the public IP resource type: backend steps through the cloudA driver ----

function publicIpOps(call: DriverCall): ResourceOps {
  const driver = driverFor<CloudADriver>('cloudA', call)
  const spec = async (id: number): Promise<PublicIpSpec> => {
    const s = await publicIpsRepository(call.ctx.db).backendSpec(id)
    if (!s) throw new Error('The public IP has no location or resource group.')
    return {
      name: s.name,
      description: s.description,
      location: s.location_backend_id || s.location_name,
      resource_group: s.resource_group_name,
    }
  }
  const pull = driver.pullPublicIp?.bind(driver)
  return {
    async create(r) {
      const ip = await driver.createPublicIp(await spec(r.id))
      return { backend_id: ip.backend_id, extra: { ip_address: ip.ip_address } }
    },
    async update(r) {
      const ip = await driver.updatePublicIp(r.backend_id, await spec(r.id))
      return { extra: { ip_address: ip.ip_address } }
    },
    async delete(r) {
      if (r.backend_id) await driver.deletePublicIp(r.backend_id)
    },
    ...(pull
      ? {
          async pull(r) {
            const ip = await pull(r.backend_id)
            return ip && { name: ip.name, extra: { ip_address: ip.ip_address } }
          },
        }
      : {}),
  }
}

registerCloudResourceType({
  type: PUBLIC_IP_TYPE,
  kind: 'cloudA',
  path: PATHS.publicIps,
  modelName: 'PublicIP',
  ops: publicIpOps,
  async saveExtra(db, resourceId, extra) {
    if (typeof extra.ip_address === 'string') {
      await publicIpsRepository(db).update(resourceId, { ip_address: extra.ip_address })
    }
  },
})

/** Lets marketplace resources whose scope is a public IP link to it. */
export function registerScopes(): void {
  registerResourceScope(PUBLIC_IP_TYPE, { path: PATHS.publicIps, table: 'cloud_resources' })
}

// ---- visibility ----

/** Runs field checks independently and reports every failing field at once, as DRF does. */
async function collect<T extends Record<string, () => Promise<unknown>>>(
  checks: T,
): Promise<{ [K in keyof T]: Awaited<ReturnType<T[K]>> }> {
  const errors = new FieldErrorSet()
  const out: Record<string, unknown> = {}
  for (const [k, check] of Object.entries(checks)) out[k] = await errors.check([], check)
  errors.throwIfAny()
  return out as { [K in keyof T]: Awaited<ReturnType<T[K]>> }
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

export async function listLocations(
  ctx: AppContext,
  actor: Actor,
  f: LocationFilters,
  order: OrderTerm[],
  base: string,
  page: Page<Location>,
) {
  const repo = locationsRepository(ctx.db)
  const vis = settingsVisibility(actor)
  return page(
    () => repo.count(vis, f),
    async (l, o) => (await repo.list(vis, f, order, l, o)).map((r) => toLocation(base, r)),
  )
}

async function findLocation(ctx: AppContext, actor: Actor, uuid: string): Promise<LocationRow> {
  const u = normalizeUuid(uuid)
  const row = u
    ? await locationsRepository(ctx.db).findVisibleByUuid(settingsVisibility(actor), u)
    : undefined
  if (!row) throw notFound('No Location matches the given query.')
  return row
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
async function resolveLocationLink(
  ctx: AppContext,
  actor: Actor,
  field: string,
  value: unknown,
  settingsId: number | null,
): Promise<LocationRow> {
  if (typeof value !== 'string') throw fieldError(field, 'Incorrect type. Expected URL string.')
  const uuid = uuidFromLink(value, PATHS.locations)
  if (!uuid) throw fieldError(field, 'Invalid hyperlink - Incorrect URL match.')
  const row = await locationsRepository(ctx.db).findVisibleByUuid(settingsVisibility(actor), uuid)
  if (!row) throw invalidHyperlink(field)
  if (settingsId !== null && row.service_settings_id !== settingsId) {
    throw fieldError(field, 'The location must belong to the given service settings.')
  }
  return row
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

export async function listResourceGroups(
  ctx: AppContext,
  actor: Actor,
  f: ResourceGroupFilters,
  order: OrderTerm[],
  base: string,
  page: Page<ResourceGroup>,
) {
  const repo = resourceGroupsRepository(ctx.db)
  const vis = resourceVisibility(actor)
  return page(
    () => repo.count(vis, f),
    async (l, o) => (await repo.list(vis, f, order, l, o)).map((r) => toResourceGroup(base, r)),
  )
}

async function findResourceGroup(ctx: AppContext, actor: Actor, uuid: string): Promise<ResourceGroupRow> {
  const u = normalizeUuid(uuid)
  const row = u
    ? await resourceGroupsRepository(ctx.db).findVisibleByUuid(resourceVisibility(actor), u)
    : undefined
  if (!row) throw notFound('No ResourceGroup matches the given query.')
  return row
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
async function resolveResourceGroupLink(
  ctx: AppContext,
  actor: Actor,
  field: string,
  value: unknown,
  settingsId: number | null,
): Promise<ResourceGroupRow> {
  if (typeof value !== 'string') throw fieldError(field, 'Incorrect type. Expected URL string.')
  const uuid = uuidFromLink(value, PATHS.resourceGroups)
  if (!uuid) throw fieldError(field, 'Invalid hyperlink - Incorrect URL match.')
  const row = await resourceGroupsRepository(ctx.db).findVisibleByUuid(resourceVisibility(actor), uuid)
  if (!row) throw invalidHyperlink(field)
  if (settingsId !== null && row.service_settings_id !== settingsId) {
    throw fieldError(field, 'The resource group must belong to the given service settings.')
  }
  return row
}

// ---- public IPs ----

export function toPublicIp(base: string, r: PublicIpRow): PublicIp {
  return Object.assign(toCommonRecord(base, PATHS.publicIps, r), {
    location: urlOf(base, PATHS.locations, r.location_uuid)!,
    resource_group: urlOf(base, PATHS.resourceGroups, r.resource_group_uuid)!,
  })
}

function validateName(name: string): void {
  if (!PUBLIC_IP_NAME_RE.test(name)) {
    throw fieldError('name', 'The name can contain only letters, numbers, underscore, period and hyphens.')
  }
}

export async function listPublicIps(
  ctx: AppContext,
  actor: Actor,
  common: CommonFilters,
  own: PublicIpFilters,
  order: OrderTerm[],
  base: string,
  page: Page<PublicIp>,
) {
  const repo = publicIpsRepository(ctx.db)
  const q = () => withPublicIpColumns(cloudResourcesQuery(ctx.db, PUBLIC_IP_TYPE, actor, common), own)
  return page(
    () => repo.count(q()),
    async (l, o) => (await repo.list(q(), order, l, o)).map((r) => toPublicIp(base, r)),
  )
}

async function publicIpById(ctx: AppContext, id: number): Promise<PublicIpRow> {
  const row = await publicIpsRepository(ctx.db).findOne(
    withPublicIpColumns(cloudResourcesQuery(ctx.db, PUBLIC_IP_TYPE, systemActor, {})).where(
      'cloud_resources.id',
      '=',
      id,
    ),
  )
  if (!row) throw notFound('No PublicIP matches the given query.')
  return row
}

/** Reads after a write need no visibility check: a staff-like reader. */
const systemActor: Actor = {
  id: 0,
  uuid: '',
  username: '',
  fullName: '',
  email: '',
  civilNumber: null,
  isStaff: true,
  isSupport: false,
  affiliations: [],
  identitySource: '',
  image: null,
  grants: [],
}

export async function getPublicIp(ctx: AppContext, actor: Actor, uuid: string, base: string) {
  const u = normalizeUuid(uuid)
  const row = u
    ? await publicIpsRepository(ctx.db).findOne(
        withPublicIpColumns(cloudResourcesQuery(ctx.db, PUBLIC_IP_TYPE, actor, { uuid: u })),
      )
    : undefined
  if (!row) throw notFound('No PublicIP matches the given query.')
  return toPublicIp(base, row)
}

/**
 * POST: 201 at once in CREATION_SCHEDULED; a job asks the driver for the IP. Every hyperlink is
 * checked (kind, existence, visibility); location and resource group must be in the service
 * settings; the project must be one the caller manages resources in.
 */
export async function createPublicIp(
  ctx: AppContext,
  actor: Actor,
  body: PublicIpWrite,
  base: string,
  errors = new FieldErrorSet(),
) {
  // One 400 names every bad field; location and resource group are checked against valid settings.
  errors.checkSync('name', () => validateName(body.name!))
  const settings = await errors.check('service_settings', () =>
    resolveSettingsLink(ctx, actor, 'service_settings', body.service_settings, 'cloudA'),
  )
  const project = await errors.check('project', () =>
    resolveManagedProject(ctx, actor, 'project', body.project),
  )
  const location =
    settings &&
    (await errors.check('location', () =>
      resolveLocationLink(ctx, actor, 'location', body.location, settings.id),
    ))
  const group =
    settings &&
    (await errors.check('resource_group', () =>
      resolveResourceGroupLink(ctx, actor, 'resource_group', body.resource_group, settings.id),
    ))
  errors.throwIfAny()
  if (!settings || !project || !location || !group)
    throw new Error('unreachable: links resolved without errors')
  const id = await ctx.db.transaction().execute(async (trx) => {
    const id = await insertResource(ctx, trx, {
      type: PUBLIC_IP_TYPE,
      name: body.name!,
      description: body.description ?? '',
      settingsId: settings.id,
      projectId: project.id,
    })
    await publicIpsRepository(trx).insert({
      resource_id: id,
      location_id: location.id,
      resource_group_id: group.id,
    })
    return id
  })
  return toPublicIp(base, await publicIpById(ctx, id))
}

/**
 * PUT (the six fields) and PATCH (description, location, resource_group): only from OK (409);
 * the record moves to UPDATE_SCHEDULED and a job pushes the change. Service settings and project
 * cannot change after creation; PUT's values for them are ignored, as the reference does.
 */
export async function updatePublicIp(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: PublicIpWrite,
  base: string,
) {
  const id = await scheduleUpdate(
    ctx,
    actor,
    PUBLIC_IP_TYPE,
    uuid,
    async (row) => {
      if (body.name !== undefined) validateName(body.name)
      return collect({
        location: async () =>
          body.location === undefined
            ? undefined
            : resolveLocationLink(ctx, actor, 'location', body.location, row.service_settings_id),
        group: async () =>
          body.resource_group === undefined
            ? undefined
            : resolveResourceGroupLink(
                ctx,
                actor,
                'resource_group',
                body.resource_group,
                row.service_settings_id,
              ),
      })
    },
    async (trx, _row, p) => {
      const own: Record<string, unknown> = {}
      if (p.location) own.location_id = p.location.id
      if (p.group) own.resource_group_id = p.group.id
      await publicIpsRepository(trx).update(_row.id, own)
      const common: Record<string, unknown> = {}
      if (body.name !== undefined) common.name = body.name
      if (body.description !== undefined) common.description = body.description
      return common
    },
  )
  return toPublicIp(base, await publicIpById(ctx, id))
}
