// Reported usage: a resource's usage of its offering's components per billing period, and each
// account's share of it. Shapes as the reference's clients (and its site agent) read and send them.
import { Type, type Static } from '@sinclair/typebox'
import { Body, DateOnly, DateTime, Nullable, OneOf, Url, Uuid } from '../../http/schemas.js'

export const PATHS = {
  usages: 'marketplace-component-usages',
  userUsages: 'marketplace-component-user-usages',
  resources: 'marketplace-resources',
  offeringUsers: 'marketplace-offering-users',
} as const

/** What a billing period without a report takes: nothing, the last report again, or zero. */
export const MISSING_USAGE_POLICIES = ['none', 'reuse', 'zero'] as const
export type MissingUsagePolicy = (typeof MISSING_USAGE_POLICIES)[number]

const Decimal = Type.String({ description: 'decimal (2 places)' })

/** The names and uuids of the resource a usage is of, its offering, project and organization. */
const resourceNames = {
  resource_name: Type.String(),
  resource_uuid: Uuid,
  offering_name: Type.String(),
  offering_uuid: Uuid,
  project_name: Type.String(),
  project_uuid: Uuid,
  customer_name: Type.String(),
  customer_uuid: Uuid,
}

export const ComponentUsageSchema = Type.Object({
  url: Url,
  uuid: Uuid,
  created: DateTime,
  description: Type.String(),
  type: Type.String({ description: "the offering component's type" }),
  name: Type.String({ description: "the offering component's name" }),
  measured_unit: Type.String(),
  usage: Decimal,
  date: DateTime,
  missing_usage_policy: OneOf(MISSING_USAGE_POLICIES),
  recurring: Type.Boolean({
    description: 'the report is reused in later periods (missing_usage_policy reuse)',
  }),
  ...resourceNames,
  billing_period: DateOnly,
  modified_by: Nullable(Type.Integer({ description: 'the id of the user who reported it last' })),
})
export type ComponentUsage = Static<typeof ComponentUsageSchema>

export const ComponentUserUsageSchema = Type.Object({
  url: Url,
  uuid: Uuid,
  user: Nullable(Url, { description: 'the offering user (account) the username is, when known' }),
  username: Type.String(),
  component_usage: Url,
  usage: Decimal,
  measured_unit: Type.String(),
  description: Type.String(),
  created: DateTime,
  modified: DateTime,
  backend_id: Type.String(),
  ...resourceNames,
  component_type: Type.String(),
  date: DateTime,
  billing_period: DateOnly,
})
export type ComponentUserUsage = Static<typeof ComponentUserUsageSchema>

const DecimalInput = Type.Union([Type.String({ maxLength: 40 }), Type.Number()], { description: 'decimal' })
const DateTimeInput = Type.String({
  maxLength: 64,
  description: 'date-time (its calendar month, as written, is the billing period)',
})

export const UsageItemBody = Body({
  type: Type.String({ maxLength: 50, description: "the offering component's type" }),
  amount: DecimalInput,
  description: Type.Optional(Type.String({ maxLength: 1000 })),
  recurring: Type.Optional(Nullable(Type.Boolean())),
  missing_usage_policy: Type.Optional(OneOf(MISSING_USAGE_POLICIES)),
})

export const SetUsageBody = Body({
  usages: Type.Array(UsageItemBody, { maxItems: 100 }),
  resource: Type.Optional(Type.String({ maxLength: 200, description: "the resource's uuid" })),
  date: Type.Optional(DateTimeInput),
})
export type SetUsage = Static<typeof SetUsageBody>

export const UserUsageItemBody = Body({
  username: Type.String({ minLength: 1, maxLength: 100 }),
  usage: Type.Optional(DecimalInput),
  user: Type.Optional(Nullable(Type.String({ maxLength: 500, description: 'URL of the offering user' }))),
  date: Type.Optional(DateTimeInput),
})
export type UserUsageItem = Static<typeof UserUsageItemBody>

export const SetUserUsagesBody = Body({
  usages: Type.Array(UserUsageItemBody, { maxItems: 1000 }),
})
export type SetUserUsages = Static<typeof SetUserUsagesBody>
