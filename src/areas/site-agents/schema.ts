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

/** One package an agent runs, as it reports it. */
export const DependencySchema = Type.Object({ package: Type.String(), version: Type.String() })
export type Dependency = Static<typeof DependencySchema>

const identityWritable = {
  name: Type.String({ minLength: 1, maxLength: 150 }),
  offering: Type.String({ description: 'the offering: its uuid (hyphenated or 32 hex digits) or its URL' }),
  version: Nullable(Type.String({ maxLength: 100 })),
  dependencies: Type.Array(DependencySchema, {
    description: 'the packages the agent runs: [{"package": ..., "version": ...}]',
  }),
  config_file_path: Nullable(
    Type.String({ maxLength: 150, description: "absolute path of the agent's configuration file, or empty" }),
  ),
  config_file_content: Nullable(Type.String()),
  last_restarted: Type.String({ description: 'date-time' }),
  last_polled_at: Nullable(Type.String({ description: 'date-time' })),
}
/** The fields a create or PUT may leave out (a PATCH may leave out all). */
const optionalFields = {
  version: Type.Optional(identityWritable.version),
  dependencies: Type.Optional(identityWritable.dependencies),
  config_file_path: Type.Optional(identityWritable.config_file_path),
  config_file_content: Type.Optional(identityWritable.config_file_content),
  last_restarted: Type.Optional(identityWritable.last_restarted),
  last_polled_at: Type.Optional(identityWritable.last_polled_at),
}
export const IdentityCreateBody = Body({
  name: identityWritable.name,
  offering: identityWritable.offering,
  ...optionalFields,
})
export const IdentityPatchBody = Body({
  name: Type.Optional(identityWritable.name),
  offering: Type.Optional(identityWritable.offering),
  ...optionalFields,
})
export interface IdentityWrite {
  name?: string
  offering?: string
  version?: string | null
  dependencies?: Dependency[]
  config_file_path?: string | null
  config_file_content?: string | null
  last_restarted?: string
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
  offering: Uuid,
  offering_uuid: Uuid,
  offering_name: Type.String(),
  version: Nullable(Type.String()),
  dependencies: Type.Array(DependencySchema),
  config_file_path: Nullable(Type.String()),
  config_file_content: Nullable(Type.String()),
  last_restarted: DateTime,
  last_polled_at: Nullable(DateTime),
  created: DateTime,
  modified: DateTime,
  created_by: Nullable(Uuid, { description: 'uuid of the user who registered the identity' }),
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
/** GET marketplace-site-agent-stats/: what the agents of the platform are doing (the shape the
 * reference's clients read: `AgentStatsResponse`). */
export const StatsSchema = Type.Object({
  identities: Type.Object({
    total: Count,
    by_offering: Type.Array(
      Type.Object({ offering__uuid: Uuid, offering__name: Type.String(), count: Count }),
      { description: 'offerings with at least one identity, by name' },
    ),
  }),
  services: Type.Object({
    total: Count,
    by_state: Type.Object({ active: Count, idle: Count, error: Count }),
    stale_count: Type.Integer({ minimum: 0, description: 'not modified for more than 24 hours' }),
  }),
  processors: Type.Object({
    total: Count,
    by_backend_type: Type.Array(Type.Object({ backend_type: Nullable(Type.String()), count: Count }), {
      description: 'backend types with at least one processor, by type',
    }),
    stale_count: Type.Integer({ minimum: 0, description: 'last run more than an hour ago, or never' }),
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
