// Site agent identities, services and processors (spec 2.4 / 4.3, reference §3).
import { Type, type Static } from '@sinclair/typebox'
import { AnyValue, Body, DateTime, FreeObject, Nullable, Url, Uuid } from '../../http/schemas.js'

export const IDENTITY_PATH = 'marketplace-site-agent-identities'
export const SERVICE_PATH = 'marketplace-site-agent-services'
export const PROCESSOR_PATH = 'marketplace-site-agent-processors'
export const STATS_PATH = 'marketplace-site-agent-stats'

/** Stored integers and their labels (the product renders labels, reference Precedence). */
export const STATE_LABELS = { 1: 'Active', 2: 'Idle', 3: 'Error' } as const
export type StateCode = keyof typeof STATE_LABELS
export const STATE_CHOICES = ['Active', 'Idle', 'Error', '1', '2', '3'] as const
const CHOICE_CODES: Record<(typeof STATE_CHOICES)[number], StateCode> = {
  Active: 1,
  Idle: 2,
  Error: 3,
  '1': 1,
  '2': 2,
  '3': 3,
}
export function stateCode(choice: (typeof STATE_CHOICES)[number]): StateCode {
  return CHOICE_CODES[choice]
}
export function stateLabel(code: number): string {
  return STATE_LABELS[code as StateCode] ?? String(code)
}

/** Offering types a site agent may serve (reference §3.1: the site-agent type, basic, cloudB tenant). */
export const AGENT_OFFERING_TYPES = ['Marketplace.Slurm', 'Marketplace.Basic', 'CloudB.Tenant']

const identityWritable = {
  name: Type.String({ minLength: 1, maxLength: 255 }),
  offering: Type.String({ description: 'the offering: its URL or its uuid' }),
  version: Nullable(Type.String({ maxLength: 100 })),
  last_polled_at: Nullable(Type.String({ description: 'date-time' })),
}
export const IdentityCreateBody = Body({
  name: identityWritable.name,
  offering: identityWritable.offering,
  version: Type.Optional(identityWritable.version),
  last_polled_at: Type.Optional(identityWritable.last_polled_at),
})
export const IdentityPatchBody = Body({
  name: Type.Optional(identityWritable.name),
  offering: Type.Optional(identityWritable.offering),
  version: Type.Optional(identityWritable.version),
  last_polled_at: Type.Optional(identityWritable.last_polled_at),
})
export interface IdentityWrite {
  name?: string
  offering?: string
  version?: string | null
  last_polled_at?: string | null
}

/** A processor's own fields (after its uuid and url, and its service where it is shown). */
const processorFields = {
  name: Type.String(),
  last_run: Nullable(DateTime),
  backend_type: Type.String(),
  backend_version: Nullable(Type.String()),
  created: DateTime,
  modified: DateTime,
}

/** A processor as its service lists it. */
export const ServiceProcessorSchema = Type.Object({ uuid: Uuid, url: Url, ...processorFields })

export const ServiceSchema = Type.Object({
  uuid: Uuid,
  url: Url,
  identity: Uuid,
  identity_name: Type.String(),
  name: Type.String(),
  mode: Nullable(Type.String()),
  state: Type.String({ description: 'Active, Idle or Error' }),
  statistics: AnyValue,
  created: DateTime,
  modified: DateTime,
  processors: Type.Array(ServiceProcessorSchema),
})
export type Service = Static<typeof ServiceSchema>

export const IdentitySchema = Type.Object({
  uuid: Uuid,
  url: Url,
  name: Type.String(),
  offering: Url,
  offering_uuid: Uuid,
  offering_name: Type.String(),
  version: Nullable(Type.String()),
  last_polled_at: Nullable(DateTime),
  created: DateTime,
  modified: DateTime,
  created_by: Nullable(Url, { description: 'the user who registered the identity' }),
  services: Type.Array(ServiceSchema, { description: 'the services of this identity, oldest first' }),
})
export type Identity = Static<typeof IdentitySchema>

export const ProcessorSchema = Type.Object({
  uuid: Uuid,
  url: Url,
  service: Uuid,
  service_name: Type.String(),
  ...processorFields,
})
export type Processor = Static<typeof ProcessorSchema>

const Count = Type.Integer({ minimum: 0 })
/** GET marketplace-site-agent-stats/: what the agents of the platform are doing. */
export const StatsSchema = Type.Object({
  identities: Type.Object({
    total: Count,
    by_offering: Type.Array(
      Type.Object({ offering_uuid: Uuid, offering_name: Type.String(), count: Count }),
      { description: 'offerings with at least one identity, by name' },
    ),
  }),
  services: Type.Object({
    total: Count,
    active: Count,
    idle: Count,
    error: Count,
    stale: Type.Integer({ minimum: 0, description: 'not modified for more than 24 hours' }),
  }),
  processors: Type.Object({
    total: Count,
    by_backend_type: Type.Record(Type.String(), Count),
    stale: Type.Integer({ minimum: 0, description: 'last run more than an hour ago, or never' }),
  }),
})
export type Stats = Static<typeof StatsSchema>

export const RegisterServiceBody = Body({
  name: Type.String({ minLength: 1, maxLength: 150 }),
  mode: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
})
export const RegisterProcessorBody = Body({
  name: Type.String({ minLength: 1, maxLength: 150 }),
  backend_type: Type.String({ minLength: 1, maxLength: 100 }),
  backend_version: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
})
/** The statistics replace the stored object: an object again (a string, number, list or null is
 * 400 on statistics), so every service's statistics read back as an object. */
export const StatisticsBody = Body({ statistics: FreeObject })
export const CleanupBody = Body({
  dry_run: Type.Optional(Type.Unknown({ description: 'boolean, default true' })),
  older_than_hours: Type.Optional(Type.Unknown({ description: 'integer from 1 to 1000000, default 24' })),
})
export const CleanupItem = Type.Object({
  uuid: Uuid,
  name: Type.String(),
  identity_name: Type.String(),
  state: Type.String({ description: 'the stored state code: "1" Active, "2" Idle, "3" Error' }),
  modified: DateTime,
})
export const CleanupResult = Type.Object({
  deleted_count: Type.Integer(),
  dry_run: Type.Boolean(),
  items: Type.Array(CleanupItem),
})
export type CleanupResultT = Static<typeof CleanupResult>
