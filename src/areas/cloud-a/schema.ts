// cloudA: locations, resource groups and public IPs (spec 2.10 / 4.8, reference §9).
import { Type, type Static } from '@sinclair/typebox'
import { Body, DateTime, Url, Uuid } from '../../http/schemas.js'
import { PATTERN_MESSAGES } from '../../http/errors.js'
import { CloudResourceProps, COMMON_ORDERING } from '../cloud/common.js'

export const PATHS = {
  locations: 'cloudA-locations',
  resourceGroups: 'cloudA-resource-groups',
  publicIps: 'cloudA-public-ips',
} as const

export const PUBLIC_IP_TYPE = 'cloudA.PublicIP'

// What a location and a resource group both show: the record's own link, uuid and name, its
// service settings, and when it was created and last changed.
const NamedProps = { url: Url, uuid: Uuid, name: Type.String() }
const SettingsProps = {
  service_settings: Url,
  service_settings_uuid: Uuid,
  service_settings_name: Type.String(),
}
const TimesProps = { created: DateTime, modified: DateTime }

// ---- locations ----

export const LocationSchema = Type.Object({
  ...NamedProps,
  ...SettingsProps,
  backend_id: Type.String(),
  ...TimesProps,
})
export type Location = Static<typeof LocationSchema>

const Link = (what: string) => Type.String({ description: `URL of the ${what}` })
const Name = Type.String({ minLength: 1, maxLength: 150 })

export const LocationCreateBody = Body({
  name: Name,
  service_settings: Link('cloudA service settings'),
  backend_id: Type.Optional(Type.String({ maxLength: 255 })),
})
export const LocationPatchBody = Body({
  name: Type.Optional(Name),
  backend_id: Type.Optional(Type.String({ maxLength: 255 })),
})
/** What a create, PUT or PATCH of a location may send. */
export type LocationWrite = Partial<Static<typeof LocationCreateBody>>

/** `o` of a list of named records of a table: by name or by creation. */
export function byNameOrCreation<T extends string>(table: T) {
  return { name: `${table}.name`, created: `${table}.created` } as const
}

// ---- resource groups ----

export const ResourceGroupSchema = Type.Object({
  ...NamedProps,
  location: Url,
  location_uuid: Uuid,
  location_name: Type.String(),
  ...SettingsProps,
  project: Url,
  project_uuid: Uuid,
  project_name: Type.String(),
  customer_uuid: Uuid,
  ...TimesProps,
})
export type ResourceGroup = Static<typeof ResourceGroupSchema>

export const ResourceGroupCreateBody = Body({
  name: Name,
  location: Link('location'),
  service_settings: Link('cloudA service settings'),
  project: Link('project'),
})
export const ResourceGroupPatchBody = Body({
  name: Type.Optional(Name),
})
/** What a create, PUT or PATCH of a resource group may send. */
export type ResourceGroupWrite = Partial<Static<typeof ResourceGroupCreateBody>>

// ---- public IPs ----

export const PublicIpSchema = Type.Object({
  ...CloudResourceProps,
  location: Url,
  resource_group: Url,
})
export type PublicIp = Static<typeof PublicIpSchema>

/** Reference §9: a letter first, then one or more letters, digits, `_`, `.`, `-`; at most 80. */
const PUBLIC_IP_NAME_PATTERN = '^[a-zA-Z][a-zA-Z0-9._-]+$'
export const PUBLIC_IP_NAME_RE = new RegExp(PUBLIC_IP_NAME_PATTERN)
PATTERN_MESSAGES.set(
  PUBLIC_IP_NAME_PATTERN,
  'The name can contain only letters, numbers, underscore, period and hyphens.',
)

const publicIpWritable = {
  name: Type.String({
    maxLength: 80,
    pattern: PUBLIC_IP_NAME_PATTERN,
    description: 'a letter first, then letters, digits, _ . - (2 to 80 characters)',
  }),
  description: Type.String({ maxLength: 2000 }),
  service_settings: Link('cloudA service settings'),
  project: Link('project'),
  location: Link('location'),
  resource_group: Link('resource group'),
}

export const PublicIpCreateBody = Body({
  name: publicIpWritable.name,
  description: Type.Optional(publicIpWritable.description),
  service_settings: publicIpWritable.service_settings,
  project: publicIpWritable.project,
  location: publicIpWritable.location,
  resource_group: publicIpWritable.resource_group,
})
/** PUT: the full writable set (description may be left out, as at creation). */
export const PublicIpPutBody = PublicIpCreateBody
/** PATCH: only description, location and resource_group change (spec 4.8). */
export const PublicIpPatchBody = Body({
  description: Type.Optional(publicIpWritable.description),
  location: Type.Optional(publicIpWritable.location),
  resource_group: Type.Optional(publicIpWritable.resource_group),
})
export interface PublicIpWrite {
  name?: string
  description?: string
  service_settings?: string
  project?: string
  location?: string
  resource_group?: string
}

export const PUBLIC_IP_ORDERING = COMMON_ORDERING
