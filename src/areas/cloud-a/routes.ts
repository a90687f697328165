// HTTP for /api/cloudA-locations/, /api/cloudA-resource-groups/ and /api/cloudA-public-ips/.
import type { Static, TObject, TSchema } from '@sinclair/typebox'
import type { AppContext } from '../../context.js'
import type { Listing } from '../../db/listing.js'
import { filter, type FilterSet } from '../../http/filters.js'
import type { Actor } from '../../http/permissions.js'
import {
  defineResource,
  recordOperations,
  resourceRoutes,
  type Pager,
  type RecordService,
} from '../../http/resource.js'
import {
  commonFilters,
  lifecycleActions,
  resourceVisibility,
  scheduledDestroy,
  settingsVisibility,
} from '../cloud/common.js'
import * as ips from './public-ips.js'
import * as svc from './service.js'
import * as s from './schema.js'

/**
 * A named record of a service settings (a location, a resource group): its list filters by name
 * (contains, exact), then by the given links, then by uuid, and orders by name (the default) or
 * creation; its service reads and writes it by the path's uuid.
 */
function namedRecord<R extends TObject, S, CB extends TSchema, PB extends TSchema>(spec: {
  path: string
  noun: string
  record: R
  visibility: (actor: Actor) => S
  table: string
  links: FilterSet
  service: RecordService<Static<R>, Static<CB>, Static<PB>> & {
    list(
      ctx: AppContext,
      scope: S,
      listing: Listing,
      base: string,
      page: Pager<Static<R>>,
    ): Promise<Static<R>[]>
  }
  create: CB
  patch: PB
}) {
  const { table, service } = spec
  return defineResource({
    path: spec.path,
    noun: spec.noun,
    record: spec.record,
    visibility: spec.visibility,
    list: {
      filters: {
        name: filter.contains(`${table}.name`),
        name_exact: filter.exact(`${table}.name`),
        ...spec.links,
        uuid: filter.uuid(`${table}.uuid`),
      },
      ordering: {
        fields: { name: `${table}.name`, created: `${table}.created` },
        default: [{ column: `${table}.name`, desc: false }],
      },
      run: (c) => service.list(c.ctx, c.scope, c.listing, c.base, c.page),
    },
    ...recordOperations(service, { create: spec.create, patch: spec.patch }),
  })
}

export const locations = namedRecord({
  path: s.PATHS.locations,
  noun: 'location',
  record: s.LocationSchema,
  visibility: settingsVisibility,
  table: 'cloud_a_locations',
  links: { service_settings_uuid: filter.uuid('service_settings.uuid') },
  service: svc.locationService,
  create: s.LocationCreateBody,
  patch: s.LocationPatchBody,
})

export const resourceGroups = namedRecord({
  path: s.PATHS.resourceGroups,
  noun: 'resource group',
  record: s.ResourceGroupSchema,
  visibility: resourceVisibility,
  table: 'cloud_a_resource_groups',
  links: {
    location_uuid: filter.uuid('cloud_a_locations.uuid'),
    service_settings_uuid: filter.uuid('service_settings.uuid'),
    project_uuid: filter.uuid('projects.uuid'),
    customer_uuid: filter.uuid('customers.uuid'),
  },
  service: svc.resourceGroupService,
  create: s.ResourceGroupCreateBody,
  patch: s.ResourceGroupPatchBody,
})

export const publicIps = defineResource({
  path: s.PATHS.publicIps,
  noun: 'public IP',
  record: s.PublicIpSchema,
  list: {
    filters: {
      ...commonFilters,
      // A resource group URL of another kind matches nothing (reference §0.5), not 400.
      resource_group: filter.link(s.PATHS.resourceGroups, 'cloud_a_resource_groups.uuid', {
        description: 'resource group URL',
      }),
      resource_group_uuid: filter.uuid('cloud_a_resource_groups.uuid'),
      external_ip: filter.exact('cloud_a_public_ips.ip_address', {
        description: 'the allocated public address (exact)',
      }),
    },
    ordering: {
      fields: s.PUBLIC_IP_ORDERING,
      default: [{ column: 'cloud_resources.name', desc: false }],
    },
    run: (c) => ips.listPublicIps(c.ctx, c.actor, c.filters, c.listing, c.base, c.page),
  },
  retrieve: { run: (c) => ips.getPublicIp(c.ctx, c.actor, c.uuid, c.base) },
  create: {
    summary: 'Create a public IP; the backend allocates it asynchronously (state CREATION_SCHEDULED)',
    body: s.PublicIpCreateBody,
    // The body's schema errors and the links' rules answer in one 400.
    fieldErrors: true,
    run: (c) => ips.createPublicIp(c.ctx, c.actor, c.body, c.base, c.fieldErrors),
  },
  update: {
    body: s.PublicIpPutBody,
    patch: s.PublicIpPatchBody,
    run: (c) => ips.updatePublicIp(c.ctx, c.actor, c.uuid, c.body, c.base),
  },
  destroy: scheduledDestroy(s.PUBLIC_IP_TYPE),
  actions: lifecycleActions(s.PUBLIC_IP_TYPE, 'public IP'),
})

export const cloudARoutes = resourceRoutes([locations, resourceGroups, publicIps], () => ips.registerScopes())
