// HTTP for /api/service-settings/, and the cloud lifecycle job (defined once per app here, so
// the cloud areas registered after this plugin can enqueue steps).
import { filter } from '../../http/filters.js'
import { defineResource, recordOperations, resourceRoutes } from '../../http/resource.js'
import { CLOUD_KINDS } from './driver.js'
import { defineLifecycleJobs } from './lifecycle.js'
import * as svc from './service.js'
import * as s from './schema.js'

export const serviceSettings = defineResource({
  path: s.SETTINGS_PATH,
  noun: 'service settings',
  plural: 'service settings',
  record: s.ServiceSettingsSchema,
  visibility: svc.settingsVisibility,
  list: {
    filters: {
      // Both name the customer: given both, they must agree, or nothing matches.
      customer: filter.uuid('customers.uuid', { description: 'customer uuid' }),
      customer_uuid: filter.uuid('customers.uuid'),
      name: filter.contains('service_settings.name'),
      name_exact: filter.exact('service_settings.name'),
      type: filter.choice(CLOUD_KINDS, 'service_settings.type'),
      shared: filter.boolean('service_settings.shared'),
      state: filter.choice(s.SETTINGS_STATES, 'service_settings.state'),
      uuid: filter.uuid('service_settings.uuid'),
    },
    ordering: {
      fields: s.SETTINGS_ORDERING,
      default: [{ column: 'service_settings.name', desc: false }],
    },
    run: (c) => svc.listServiceSettings(c.ctx, c.actor, c.scope, c.listing, c.base, c.page),
  },
  ...recordOperations(svc.serviceSettingsService, {
    create: s.ServiceSettingsCreateBody,
    patch: s.ServiceSettingsPatchBody,
  }),
})

export const cloudRoutes = resourceRoutes([serviceSettings], (_app, ctx) => defineLifecycleJobs(ctx))
