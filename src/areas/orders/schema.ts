// Marketplace orders: the record of spec 2.1, the create request of 2.2, list query of 4.1.
import { Type, type Static } from '@sinclair/typebox'
import { AnyValue, Body, DateOnly, DateTime, FreeObject, Nullable, Url, Uuid } from '../../http/schemas.js'
import { SLUG_PATTERN } from '../../http/slug.js'
import { ORDER_STATES, ORDER_TYPES } from './state-machine.js'

export const PATH = 'marketplace-orders'

// Usernames in reviewer and creator fields: at most 128 lowercase letters, digits and @.+-_
const Username = Nullable(Type.String({ maxLength: 128, pattern: '^[a-z0-9@.+_-]*$' }))
const Str = Nullable(Type.String())
const DecimalString = Nullable(Type.String({ description: 'decimal' }))

export const OrderSchema = Type.Object({
  // offering and provider
  offering: Url,
  offering_name: Type.String(),
  offering_uuid: Uuid,
  offering_description: Type.String(),
  offering_image: Str,
  offering_thumbnail: Str,
  offering_type: Type.String(),
  offering_shared: Type.Boolean(),
  offering_billable: Type.Boolean(),
  offering_plugin_options: AnyValue,
  provider_name: Type.String(),
  provider_uuid: Uuid,
  provider_slug: Type.String(),
  category_title: Str,
  category_uuid: Nullable(Uuid),
  category_icon: Str,
  // plan
  plan: Nullable(Url),
  plan_unit: AnyValue,
  plan_name: Str,
  plan_uuid: Nullable(Uuid),
  plan_description: Str,
  old_plan_name: Str,
  new_plan_name: Str,
  old_plan_uuid: Nullable(Uuid),
  new_plan_uuid: Nullable(Uuid),
  old_cost_estimate: Nullable(Type.Number()),
  new_cost_estimate: DecimalString,
  cost: DecimalString,
  fixed_price: Nullable(Type.Number()),
  activation_price: Nullable(Type.Number()),
  // order
  attributes: AnyValue,
  limits: Type.Object({}, { additionalProperties: true }),
  uuid: Uuid,
  created: DateTime,
  modified: DateTime,
  state: Type.String({ enum: [...ORDER_STATES] }),
  type: Type.String({ enum: [...ORDER_TYPES] }),
  order_subtype: Str,
  output: Type.String(),
  error_message: Type.String(),
  error_traceback: Type.String(),
  callback_url: Str,
  completed_at: Nullable(DateTime),
  request_comment: Str,
  attachment: Nullable(Url),
  start_date: Nullable(DateOnly),
  slug: Type.String({ pattern: SLUG_PATTERN }),
  url: Url,
  can_terminate: Type.Boolean(),
  termination_comment: Str,
  backend_id: Type.String(),
  issue: AnyValue,
  // resource
  resource_uuid: Nullable(Uuid),
  resource_type: Str,
  resource_name: Str,
  marketplace_resource_uuid: Nullable(Uuid),
  // reviewers and creator
  consumer_reviewed_by: Username,
  consumer_reviewed_by_full_name: Str,
  consumer_reviewed_by_username: Username,
  consumer_reviewed_at: Nullable(DateTime),
  provider_reviewed_by: Username,
  provider_reviewed_by_full_name: Str,
  provider_reviewed_by_username: Username,
  provider_reviewed_at: Nullable(DateTime),
  created_by_username: Username,
  created_by_full_name: Str,
  created_by_civil_number: Str,
  created_by_email: Str,
  created_by_organization: Nullable(Type.String(), { description: 'null: users carry no organization' }),
  created_by_organization_registry_code: Nullable(Type.String(), {
    description: 'null: users carry no organization',
  }),
  // reviews
  consumer_rejection_comment: Type.String({ description: 'given with reject_by_consumer; empty otherwise' }),
  provider_rejection_comment: Type.String({ description: 'given with reject_by_provider; empty otherwise' }),
  auto_approved: Type.Boolean({
    description: 'consumer review was skipped by a rule when the order was placed',
  }),
  auto_approved_by_rule_uuid: Nullable(Uuid, {
    description: 'null: the skip rules are fixed, not stored rules',
  }),
  auto_approved_cost_limit_snapshot: Nullable(Type.String(), {
    description: 'null: no skip rule has a cost limit',
  }),
  provider_description: Str,
  output_updated_at: Nullable(DateTime, { description: 'when output last changed' }),
  error_updated_at: Nullable(DateTime, { description: 'when error_message last changed' }),
  provider_message_updated_at: Nullable(DateTime, { description: 'null: orders carry no provider message' }),
  consumer_message_updated_at: Nullable(DateTime, { description: 'null: orders carry no consumer message' }),
  // owner
  customer_name: Type.String(),
  customer_uuid: Uuid,
  customer_slug: Type.String(),
  project_name: Type.String(),
  project_uuid: Uuid,
  project_description: Type.String(),
  project_slug: Type.String(),
})
export type Order = Static<typeof OrderSchema>
export const ORDER_FIELDS = Object.keys(OrderSchema.properties)

/** Order attributes: an object whose keys depend on the offering type (`name` names the new
 * resource); a string, number, list or null is 400 on attributes, never silently dropped. */
const AttributesInput = {
  ...FreeObject,
  description: 'an object; its keys depend on the offering type (name becomes the resource name)',
} as typeof FreeObject

export const OrderCreateBody = Body({
  offering: Type.String(),
  plan: Type.Optional(Nullable(Type.String())),
  project: Type.String(),
  attributes: Type.Optional(AttributesInput),
  limits: Type.Optional(Type.Record(Type.String(), Type.Integer({ minimum: 0 }))),
  accepting_terms_of_service: Type.Optional(Type.Boolean({ writeOnly: true })),
  callback_url: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
  request_comment: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
  type: Type.Optional(Type.String({ enum: [...ORDER_TYPES] })),
  start_date: Type.Optional(Nullable(Type.String({ format: 'date' }))),
  slug: Type.Optional(Type.String({ maxLength: 150, pattern: SLUG_PATTERN })),
})
export type OrderCreate = Static<typeof OrderCreateBody>

export const ErrorFieldsBody = Body({
  error_message: Type.Optional(Type.String({ maxLength: 10000 })),
  error_traceback: Type.Optional(Type.String({ maxLength: 100000 })),
})
export const ConsumerRejectionBody = Body({
  error_message: Type.Optional(Type.String({ maxLength: 10000 })),
  error_traceback: Type.Optional(Type.String({ maxLength: 100000 })),
  consumer_rejection_comment: Type.Optional(Type.String({ maxLength: 10000 })),
})
export const ProviderRejectionBody = Body({
  provider_rejection_comment: Type.Optional(Type.String({ maxLength: 10000 })),
})
export const DetailResponse = Type.Object({ detail: Type.String() })
export const BackendIdBody = Body({ backend_id: Type.String({ minLength: 1, maxLength: 255 }) })
export const AttachmentResponse = Type.Object({ attachment: Url })
export const SwitchPlanBody = Body({ plan: Type.String() })
export const UpdateLimitsBody = Body({ limits: Type.Record(Type.String(), Type.Integer({ minimum: 0 })) })
export const TerminateBody = Body({ attributes: Type.Optional(AttributesInput) })
export const OrderUuidResponse = Type.Object({ order_uuid: Uuid })
