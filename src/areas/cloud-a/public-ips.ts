// cloudA public IPs: the common cloud resource lifecycle (create, PUT/PATCH, delete and pull run
// as jobs against the driver), with a location and a resource group in the same settings.
import type { AppContext } from '../../context.js'
import type { Listing } from '../../db/listing.js'
import { FieldErrorSet, fieldError } from '../../http/errors.js'
import { urlOf } from '../../http/links.js'
import type { Actor } from '../../http/permissions.js'
import { pageOf, type Pager } from '../../http/resource.js'
import { foundById, foundByUuid } from '../../http/uuid.js'
import { registerResourceScope } from '../catalog/service.js'
import {
  commonFiltersOf,
  insertResource,
  registerCloudResourceType,
  resolveManagedProject,
  resolveSettingsLink,
  resourceVisibility,
  scheduleUpdate,
  toCommonRecord,
  type CommonFilterValues,
  type ResourceOps,
} from '../cloud/common.js'
import { driverFor, type DriverCall } from '../cloud/driver.js'
import type { CloudADriver, PublicIpSpec } from './driver.js'
import { publicIpsRepository, type PublicIpRow } from './repository.js'
import { PATHS, PUBLIC_IP_NAME_RE, PUBLIC_IP_TYPE, type PublicIp, type PublicIpWrite } from './schema.js'
import { collect, resolveLocationLink, resolveResourceGroupLink } from './service.js'
import './driver.js'

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
  eventObject: 'public_ip',
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

/** The page of public IPs the caller sees, through the common filters and the IP's own. */
export function listPublicIps(
  ctx: AppContext,
  actor: Actor,
  common: CommonFilterValues,
  listing: Listing,
  base: string,
  page: Pager<PublicIp>,
) {
  const scope = { vis: resourceVisibility(actor), common: commonFiltersOf(common, actor) }
  return pageOf(page, publicIpsRepository(ctx.db), scope, listing, (r) => toPublicIp(base, r))
}

/** Reads after a write need no visibility check. */
function publicIpById(ctx: AppContext, id: number): Promise<PublicIpRow> {
  return foundById(id, (i) => publicIpsRepository(ctx.db).findById(i), 'PublicIP')
}

export async function getPublicIp(ctx: AppContext, actor: Actor, uuid: string, base: string) {
  const vis = resourceVisibility(actor)
  const find = (u: string) => publicIpsRepository(ctx.db).findVisibleByUuid(vis, u)
  return toPublicIp(base, await foundByUuid(uuid, find, 'PublicIP'))
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
