// Offering estimated cost policies (spec 2.3 / 4.2, reference §2).
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { Body, DateTime, Nullable, Url, Uuid } from '../../http/schemas.js'
import { PERIODS } from './estimate.js'

export const PATH = 'marketplace-offering-estimated-cost-policies'
export const OFFERINGS_PATH = 'marketplace-provider-offerings'

/** The actions an offering policy may take, with the description `actions/` lists. */
export const ACTIONS = {
  notify_organization_owners:
    'Notify the owners of the organization providing the offering when the estimated cost exceeds the limit.',
  block_creation_of_new_resources:
    'Refuse new resource orders for the offering from the organizations in scope while the limit is exceeded.',
} as const
export type ActionName = keyof typeof ACTIONS
export const ACTION_NAMES = Object.keys(ACTIONS) as ActionName[]

export const PolicySchema = Type.Object({
  uuid: Uuid,
  url: Url,
  scope: Url,
  scope_name: Type.String(),
  scope_uuid: Uuid,
  actions: Type.String({ description: `comma-separated: ${ACTION_NAMES.join(', ')}` }),
  created: DateTime,
  created_by_full_name: Nullable(Type.String()),
  created_by_username: Nullable(Type.String()),
  has_fired: Type.Boolean(),
  fired_datetime: Nullable(DateTime),
  options: Type.Object({}, { additionalProperties: true, description: 'action name → extra data' }),
  limit_cost: Type.Integer(),
  period: Type.Integer({
    description: Object.entries(PERIODS)
      .map(([k, v]) => `${k} ${v}`)
      .join(', '),
  }),
  period_name: Type.String(),
  organization_groups: Type.Array(Url),
  apply_to_all: Type.Boolean(),
  affected_resources_count: Type.Integer({
    description: "the offering's resources the policy covers now (not terminated, of the customers in scope)",
  }),
  current_cost: Type.Number({
    description: 'the estimated cost over the period now, as the policy is evaluated',
  }),
})
export type Policy = Static<typeof PolicySchema>

/** `actions/`: the policy record's shape, every field nullable (only actions and options are set). */
export const PolicyActionsSchema = Type.Object(
  Object.fromEntries(Object.entries(PolicySchema.properties).map(([k, v]) => [k, Nullable(v as TSchema)])),
)

const writable = {
  scope: Type.String({ description: 'URL of the offering' }),
  actions: Type.String({ minLength: 1, maxLength: 255 }),
  options: Type.Unknown({ description: 'object keyed by action name' }),
  limit_cost: Type.Integer({ minimum: 0, maximum: 2147483647 }),
  period: Type.Unknown({ description: '1 Total, 2 1 month (default), 3 3 month, 4 12 month' }),
  organization_groups: Type.Array(Type.String(), { maxItems: 1000 }),
  apply_to_all: Type.Boolean({
    description:
      'true: the policy covers every customer; exclusive with organization_groups. A policy given neither covers every customer and reads back as true.',
  }),
}
export const PolicyCreateBody = Body({
  scope: writable.scope,
  actions: writable.actions,
  options: Type.Optional(writable.options),
  limit_cost: writable.limit_cost,
  period: Type.Optional(writable.period),
  organization_groups: Type.Optional(writable.organization_groups),
  apply_to_all: Type.Optional(writable.apply_to_all),
})
/** PATCH: any of the create body's fields. */
export const PolicyPatchBody = Type.Partial(PolicyCreateBody)
export interface PolicyWrite {
  scope?: string
  actions?: string
  options?: unknown
  limit_cost?: number
  period?: unknown
  organization_groups?: string[]
  apply_to_all?: boolean
}
