// The common record of every cloud resource (spec 2.9): its schema, the query parameters and
// orderings every cloud resource list shares, and the rendering of a common row.
import { Type } from '@sinclair/typebox'
import { DateTime, FreeObject, Nullable, OneOf, StringList, Url, Uuid } from '../../http/schemas.js'
import { parseJson } from '../../db/values.js'
import { urlOf } from '../../http/links.js'
import { CLOUD_STATES, type CloudState } from './lifecycle.js'
import type { CommonRow } from './repository.js'
import { SETTINGS_PATH } from './schema.js'

const NullableString = Nullable(Type.String())

/** The common record and marketplace block of spec 2.9, to spread into a resource schema. */
export const CloudResourceProps = {
  url: Url,
  uuid: Uuid,
  name: Type.String(),
  description: Type.String(),
  service_name: Type.String({ description: 'name of the service settings' }),
  service_settings: Url,
  service_settings_uuid: Uuid,
  service_settings_state: Type.String(),
  service_settings_error_message: Type.String(),
  project: Url,
  project_name: Type.String(),
  project_uuid: Uuid,
  customer: Url,
  customer_uuid: Uuid,
  customer_name: Type.String(),
  customer_native_name: Type.String(),
  customer_abbreviation: Type.String(),
  error_message: Type.String(),
  error_traceback: Type.String(),
  resource_type: Type.String(),
  state: OneOf(CLOUD_STATES),
  created: DateTime,
  modified: DateTime,
  backend_id: Type.String(),
  access_url: NullableString,
  marketplace_offering_uuid: NullableString,
  marketplace_offering_name: NullableString,
  marketplace_offering_type: NullableString,
  marketplace_offering_plugin_options: Nullable(FreeObject),
  marketplace_category_uuid: NullableString,
  marketplace_category_name: NullableString,
  marketplace_resource_uuid: NullableString,
  marketplace_plan_uuid: NullableString,
  marketplace_resource_state: NullableString,
  is_usage_based: Type.Boolean(),
  is_limit_based: Type.Boolean(),
}

/** Query parameters of the common filters (spec 4.8), to spread into a ListQuery. */
export const CommonFilterQuery = {
  backend_id: Type.Optional(Type.String()),
  can_manage: Type.Optional(Type.String({ description: 'true: only resources the caller may manage' })),
  customer: Type.Optional(Type.String({ description: 'customer uuid' })),
  customer_abbreviation: Type.Optional(Type.String()),
  customer_name: Type.Optional(Type.String()),
  customer_native_name: Type.Optional(Type.String()),
  customer_uuid: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
  name_exact: Type.Optional(Type.String()),
  project: Type.Optional(Type.String({ description: 'project uuid' })),
  project_name: Type.Optional(Type.String()),
  project_uuid: Type.Optional(Type.String()),
  service_settings_name: Type.Optional(Type.String()),
  service_settings_uuid: Type.Optional(Type.String()),
  state: Type.Optional(StringList),
  uuid: Type.Optional(Type.String()),
}

/** Orderings every cloud resource list accepts (`o`). */
export const COMMON_ORDERING = {
  name: 'cloud_resources.name',
  created: 'cloud_resources.created',
  modified: 'cloud_resources.modified',
  state: 'cloud_resources.state',
  project_name: 'projects.name',
  customer_name: 'customers.name',
  service_settings_name: 'service_settings.name',
} as const

// ---- rendering ----

export interface CommonRecord {
  url: string
  uuid: string
  name: string
  description: string
  service_name: string
  service_settings: string
  service_settings_uuid: string
  service_settings_state: string
  service_settings_error_message: string
  project: string
  project_name: string
  project_uuid: string
  customer: string
  customer_uuid: string
  customer_name: string
  customer_native_name: string
  customer_abbreviation: string
  error_message: string
  error_traceback: string
  resource_type: string
  state: CloudState
  created: string
  modified: string
  backend_id: string
  access_url: string | null
  marketplace_offering_uuid: string | null
  marketplace_offering_name: string | null
  marketplace_offering_type: string | null
  marketplace_offering_plugin_options: Record<string, unknown> | null
  marketplace_category_uuid: string | null
  marketplace_category_name: string | null
  marketplace_resource_uuid: string | null
  marketplace_plan_uuid: string | null
  marketplace_resource_state: string | null
  is_usage_based: boolean
  is_limit_based: boolean
}

/**
 * The common record and marketplace block of a row selected with COMMON_COLUMNS. Kinds add their
 * fields with `Object.assign(toCommonRecord(…), {…})`, not with a spread: V8 copies a spread object
 * of this size (35 properties) through its slow path, about 40 µs and several KB of garbage per
 * record, against well under 1 µs.
 */
export function toCommonRecord(base: string, path: string, r: CommonRow): CommonRecord {
  return {
    url: urlOf(base, path, r.uuid)!,
    uuid: r.uuid,
    name: r.name,
    description: r.description,
    service_name: r.service_settings_name,
    service_settings: urlOf(base, SETTINGS_PATH, r.service_settings_uuid)!,
    service_settings_uuid: r.service_settings_uuid,
    service_settings_state: r.service_settings_state,
    service_settings_error_message: r.service_settings_error_message,
    project: urlOf(base, 'projects', r.project_uuid)!,
    project_name: r.project_name,
    project_uuid: r.project_uuid,
    customer: urlOf(base, 'customers', r.customer_uuid)!,
    customer_uuid: r.customer_uuid,
    customer_name: r.customer_name,
    customer_native_name: r.customer_native_name,
    customer_abbreviation: r.customer_abbreviation,
    error_message: r.error_message,
    error_traceback: r.error_traceback,
    resource_type: r.resource_type,
    state: r.state as CloudState,
    created: r.created,
    modified: r.modified,
    backend_id: r.backend_id,
    access_url: r.access_url ?? null,
    marketplace_offering_uuid: r.marketplace_offering_uuid ?? null,
    marketplace_offering_name: r.marketplace_offering_name ?? null,
    marketplace_offering_type: r.marketplace_offering_type ?? null,
    marketplace_offering_plugin_options: r.marketplace_offering_uuid
      ? parseJson<Record<string, unknown>>(r.marketplace_offering_plugin_options, {})
      : null,
    marketplace_category_uuid: r.marketplace_category_uuid ?? null,
    marketplace_category_name: r.marketplace_category_name ?? null,
    marketplace_resource_uuid: r.marketplace_resource_uuid ?? null,
    marketplace_plan_uuid: r.marketplace_plan_uuid ?? null,
    marketplace_resource_state: r.marketplace_resource_state ?? null,
    // The catalog has no usage or limit components yet: no offering is usage- or limit-based.
    is_usage_based: false,
    is_limit_based: false,
  }
}
