// Service settings: the cloud backend a resource lives in (spec 2.9 `service_settings`).
import { Type, type Static } from '@sinclair/typebox'
import { Body, DateTime, DescribedObject, Nullable, OneOf, Url, Uuid } from '../../http/schemas.js'
import { CLOUD_KINDS } from './driver.js'

export const SETTINGS_PATH = 'service-settings'

/** States of service settings (the cloud resource tokens; settings are usable when OK). */
export const SETTINGS_STATES = ['OK', 'ERRED'] as const

export const ServiceSettingsSchema = Type.Object({
  url: Url,
  uuid: Uuid,
  name: Type.String(),
  type: OneOf(CLOUD_KINDS),
  shared: Type.Boolean(),
  customer: Nullable(Url),
  customer_uuid: Nullable(Uuid),
  customer_name: Nullable(Type.String()),
  state: Type.String({ description: 'OK or ERRED' }),
  error_message: Type.String(),
  options: DescribedObject(
    'driver (default "emulator") and its parameters; staff and support see all keys, others only driver',
  ),
  created: DateTime,
  modified: DateTime,
})
export type ServiceSettings = Static<typeof ServiceSettingsSchema>

const writable = {
  name: Type.String({ minLength: 1, maxLength: 150 }),
  type: Type.String({ description: CLOUD_KINDS.join(', ') }),
  shared: Type.Boolean(),
  customer: Nullable(Type.String({ description: 'URL of the owning customer, or null' })),
  options: DescribedObject(
    'driver (default "emulator"); emulator: fail_next (operation names or a count), fail_all (true or operation names), slow_ms',
  ),
}

export const ServiceSettingsCreateBody = Body({
  name: writable.name,
  type: writable.type,
  shared: Type.Optional(writable.shared),
  customer: Type.Optional(writable.customer),
  options: Type.Optional(writable.options),
})
export const ServiceSettingsPatchBody = Body({
  name: Type.Optional(writable.name),
  type: Type.Optional(writable.type),
  shared: Type.Optional(writable.shared),
  customer: Type.Optional(writable.customer),
  options: Type.Optional(writable.options),
})
export interface ServiceSettingsWrite {
  name?: string
  type?: string
  shared?: boolean
  customer?: string | null
  options?: Record<string, unknown>
}

export const SETTINGS_ORDERING = {
  name: 'service_settings.name',
  type: 'service_settings.type',
  created: 'service_settings.created',
  state: 'service_settings.state',
} as const
