// HTTP for /api/cloudA-locations/, /api/cloudA-resource-groups/ and /api/cloudA-public-ips/.
import { filter } from '../../http/filters.js'
import { defineResource, recordOperations, resourceRoutes } from '../../http/resource.js'
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

export const locations = defineResource({
  path: s.PATHS.locations,
  noun: 'location',
  record: s.LocationSchema,
  visibility: settingsVisibility,
  list: {
    filters: {
      name: filter.contains('cloud_a_locations.name'),
      name_exact: filter.exact('cloud_a_locations.name'),
      service_settings_uuid: filter.uuid('service_settings.uuid'),
      uuid: filter.uuid('cloud_a_locations.uuid'),
    },
    ordering: {
      fields: s.LOCATION_ORDERING,
      default: [{ column: 'cloud_a_locations.name', desc: false }],
    },
    run: (c) => svc.listLocations(c.ctx, c.scope, c.listing, c.base, c.page),
  },
  ...recordOperations(svc.locationService, { create: s.LocationCreateBody, patch: s.LocationPatchBody }),
})

export const resourceGroups = defineResource({
  path: s.PATHS.resourceGroups,
  noun: 'resource group',
  record: s.ResourceGroupSchema,
  visibility: resourceVisibility,
  list: {
    filters: {
      name: filter.contains('cloud_a_resource_groups.name'),
      name_exact: filter.exact('cloud_a_resource_groups.name'),
      location_uuid: filter.uuid('cloud_a_locations.uuid'),
      service_settings_uuid: filter.uuid('service_settings.uuid'),
      project_uuid: filter.uuid('projects.uuid'),
      customer_uuid: filter.uuid('customers.uuid'),
      uuid: filter.uuid('cloud_a_resource_groups.uuid'),
    },
    ordering: {
      fields: s.RESOURCE_GROUP_ORDERING,
      default: [{ column: 'cloud_a_resource_groups.name', desc: false }],
    },
    run: (c) => svc.listResourceGroups(c.ctx, c.scope, c.listing, c.base, c.page),
  },
  ...recordOperations(svc.resourceGroupService, {
    create: s.ResourceGroupCreateBody,
    patch: s.ResourceGroupPatchBody,
  }),
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
