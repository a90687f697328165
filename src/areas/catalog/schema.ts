// Catalog: service providers, categories, offerings, plans, offering types and marketplace
// resources. Records, request bodies, the area's paths and choices.
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { PATTERN_MESSAGES } from '../../http/errors.js'
import {
  AnyValue,
  Body,
  DateOnly,
  DateTime,
  DescribedObject,
  FreeObject,
  HttpUrlInput,
  Nullable,
  OneOf,
  Url,
  Uuid,
  UuidInput,
} from '../../http/schemas.js'
import { OrganizationGroupSchema } from '../directory/schema.js'

export const PATHS = {
  providers: 'marketplace-service-providers',
  categories: 'marketplace-categories',
  offerings: 'marketplace-provider-offerings',
  plans: 'marketplace-plans',
  planComponents: 'marketplace-plan-components',
  resources: 'marketplace-resources',
  providerResources: 'marketplace-provider-resources',
  users: 'users',
  serviceSettings: 'service-settings',
  customers: 'customers',
  projects: 'projects',
  organizationGroups: 'organization-groups',
} as const

export const OFFERING_STATES = ['Draft', 'Active', 'Paused', 'Archived'] as const
export type OfferingState = (typeof OFFERING_STATES)[number]

export const PLAN_UNITS = ['month', 'half_month', 'day', 'hour', 'quantity'] as const
export type PlanUnit = (typeof PLAN_UNITS)[number]

/**
 * How a component is billed: `usage` (as reported), `limit` (the limit a consumer asks for),
 * `fixed` (the plan's amount each period), `one` (once, at activation), `few` (at activation and
 * on every plan switch).
 */
export const BILLING_TYPES = ['usage', 'limit', 'fixed', 'one', 'few'] as const
export type BillingType = (typeof BILLING_TYPES)[number]

/** The period a component's `limit_amount` caps usage over. */
export const LIMIT_PERIODS = ['month', 'quarterly', 'annual', 'total'] as const

/** A component's type: letters, digits and `_ - / :` (the key of limits, prices and usages). */
export const COMPONENT_TYPE_PATTERN = '^[a-zA-Z0-9_\\-\\/:]+$'
PATTERN_MESSAGES.set(COMPONENT_TYPE_PATTERN, 'Enter a valid value.')

export const RESOURCE_STATES = ['Creating', 'OK', 'Erred', 'Updating', 'Terminating', 'Terminated'] as const

const Str = (maxLength: number) => Type.String({ maxLength })
/** A decimal given as a JSON number or a numeric string; checked in the service. */
const DecimalInput = Type.Union([Type.Number(), Type.String({ maxLength: 40 })], {
  description: 'decimal, as a number or a numeric string; not negative',
})
/** A plan's prices by component type (each component not named is priced 0). */
const PricesInput = Type.Record(Type.String({ maxLength: 50 }), DecimalInput, {
  maxProperties: 200,
  description: 'component type → price per unit and billing period',
})
/** A plan's amounts of its fixed components by type (each one not named: 0). */
const QuotasInput = Type.Record(
  Type.String({ maxLength: 50 }),
  Type.Integer({ minimum: 0, maximum: 2147483647 }),
  {
    maxProperties: 200,
    description: 'fixed component type → amount',
  },
)

// ---- service providers ----
export const ServiceProviderSchema = Type.Object({
  url: Url,
  uuid: Uuid,
  customer: Url,
  customer_uuid: Uuid,
  customer_name: Type.String(),
  description: Type.String(),
  image: Nullable(Type.String()),
  created: DateTime,
})
export type ServiceProvider = Static<typeof ServiceProviderSchema>
export const ServiceProviderCreateBody = Body({
  customer: Type.String({ description: 'URL of the customer that becomes a provider' }),
  description: Type.Optional(Str(5000)),
  image: Type.Optional(Nullable(HttpUrlInput(500))),
})
export const ServiceProviderUpdateBody = Body({
  customer: Type.Optional(Type.String({ description: 'cannot be changed' })),
  description: Type.Optional(Str(5000)),
  image: Type.Optional(Nullable(HttpUrlInput(500))),
})
export type ServiceProviderWrite = Static<typeof ServiceProviderUpdateBody>

// ---- categories ----
export const CategorySchema = Type.Object({
  url: Url,
  uuid: Uuid,
  title: Type.String(),
  description: Type.String(),
  icon: Nullable(Type.String()),
  offering_count: Type.Integer({ description: 'Active shared offerings in the category' }),
  created: DateTime,
})
export type Category = Static<typeof CategorySchema>
export const CategoryBody = Body({
  title: Type.String({ minLength: 1, maxLength: 255 }),
  description: Type.Optional(Str(5000)),
  icon: Type.Optional(Nullable(HttpUrlInput(500))),
})
export const CategoryPatchBody = Type.Partial(CategoryBody, { additionalProperties: false })
export type CategoryWrite = Partial<Static<typeof CategoryBody>>

const Int32 = Type.Integer({ minimum: -2147483648, maximum: 2147483647 })
const Count32 = Type.Integer({ minimum: 0, maximum: 2147483647 })
/** A map of component types to values of `value`. */
const ByComponent = <T extends TSchema>(value: T, description: string) =>
  Type.Record(Type.String(), value, { description })

// ---- offering components ----
export const OfferingComponentSchema = Type.Object({
  uuid: Uuid,
  offering_uuid: Uuid,
  billing_type: OneOf(BILLING_TYPES),
  type: Type.String(),
  name: Type.String(),
  description: Type.String(),
  measured_unit: Type.String(),
  unit_factor: Type.Integer(),
  limit_period: Nullable(OneOf(LIMIT_PERIODS)),
  limit_amount: Nullable(Type.Integer()),
  article_code: Type.String(),
  max_value: Nullable(Type.Integer()),
  min_value: Nullable(Type.Integer()),
  max_available_limit: Nullable(Type.Integer()),
  is_boolean: Type.Boolean(),
  default_limit: Nullable(Type.Integer()),
  factor: Nullable(Type.Integer()),
  is_builtin: Type.Boolean(),
  is_prepaid: Type.Boolean(),
  overage_component: Nullable(Uuid),
  min_prepaid_duration: Nullable(Type.Integer()),
  max_prepaid_duration: Nullable(Type.Integer()),
  prepaid_duration_step: Nullable(Type.Integer()),
  min_renewal_duration: Nullable(Type.Integer()),
  max_renewal_duration: Nullable(Type.Integer()),
  renewal_duration_step: Nullable(Type.Integer()),
})
export type OfferingComponent = Static<typeof OfferingComponentSchema>

/** The fields of a component a provider writes (without the three every create needs). */
const componentOptional = {
  description: Type.Optional(Str(4096)),
  measured_unit: Type.Optional(Str(30)),
  unit_factor: Type.Optional(Int32),
  limit_period: Type.Optional(
    Nullable(Type.String({ maxLength: 10, description: `${LIMIT_PERIODS.join(', ')}, blank or null` })),
  ),
  limit_amount: Type.Optional(Nullable(Int32)),
  article_code: Type.Optional(Str(30)),
  max_value: Type.Optional(Nullable(Int32)),
  min_value: Type.Optional(Nullable(Int32)),
  max_available_limit: Type.Optional(Nullable(Int32)),
  is_boolean: Type.Optional(Type.Boolean()),
  default_limit: Type.Optional(Nullable(Int32)),
  is_prepaid: Type.Optional(Type.Boolean()),
  overage_component: Type.Optional(Nullable(UuidInput)),
  min_prepaid_duration: Type.Optional(Nullable(Int32)),
  max_prepaid_duration: Type.Optional(Nullable(Int32)),
  prepaid_duration_step: Type.Optional(Nullable(Count32)),
  min_renewal_duration: Type.Optional(Nullable(Count32)),
  max_renewal_duration: Type.Optional(Nullable(Count32)),
  renewal_duration_step: Type.Optional(Nullable(Count32)),
}
const componentKey = {
  billing_type: Type.String({ maxLength: 10, description: BILLING_TYPES.join(', ') }),
  type: Type.String({ minLength: 1, maxLength: 50, pattern: COMPONENT_TYPE_PATTERN }),
  name: Type.String({ minLength: 1, maxLength: 150 }),
}
/** `create_offering_component`, and each of an offering's inline `components`. */
export const OfferingComponentBody = Body({ ...componentKey, ...componentOptional })
/** `update_offering_component`: the component's uuid and the fields to change. */
export const UpdateOfferingComponentBody = Body({
  uuid: UuidInput,
  billing_type: Type.Optional(componentKey.billing_type),
  type: Type.Optional(componentKey.type),
  name: Type.Optional(componentKey.name),
  ...componentOptional,
})
export const RemoveOfferingComponentBody = Body({ uuid: UuidInput })
export type OfferingComponentWrite = Partial<Static<typeof UpdateOfferingComponentBody>>

// ---- plans ----
/** A plan's price and amount of one component (in the plan record). */
export const NestedPlanComponentSchema = Type.Object({
  type: Type.String(),
  name: Type.String(),
  measured_unit: Type.String(),
  amount: Type.Integer(),
  price: Type.String({ description: 'decimal: per unit and billing period' }),
  future_price: Nullable(Type.String({ description: 'decimal: the price from the next month on' })),
})
export type NestedPlanComponent = Static<typeof NestedPlanComponentSchema>

export const PlanSchema = Type.Object({
  url: Url,
  uuid: Uuid,
  offering: Url,
  offering_uuid: Uuid,
  offering_name: Type.String(),
  name: Type.String(),
  description: Type.String(),
  unit: Type.String({ enum: [...PLAN_UNITS] }),
  unit_price: Type.String({ description: 'decimal' }),
  fixed_price: Type.String({ description: 'decimal' }),
  activation_price: Type.String({ description: 'decimal' }),
  archived: Type.Boolean(),
  article_code: Type.String(),
  max_amount: Nullable(Type.Integer({ description: 'at most this many resources may use the plan' })),
  backend_id: Type.String(),
  is_active: Type.Boolean({ description: 'fewer than max_amount resources use it (or no maximum)' }),
  init_price: Type.Number({ description: 'the one-time components: their prices times amounts' }),
  switch_price: Type.Number({ description: 'the on-plan-switch components: prices times amounts' }),
  organization_groups: Type.Array(OrganizationGroupSchema),
  components: Type.Array(NestedPlanComponentSchema),
  prices: ByComponent(Type.String(), 'decimal price per component type'),
  future_prices: ByComponent(Type.String(), 'decimal price from the next month on, per component type'),
  quotas: ByComponent(Type.Integer(), 'amount per component type'),
  resources_count: Type.Integer({ description: 'resources using the plan, not terminated' }),
  plan_type: Nullable(Type.String({ description: 'which billing types the priced components have' })),
  minimal_price: Type.String({ description: 'decimal' }),
  created: DateTime,
})
export type Plan = Static<typeof PlanSchema>
const planWritable = {
  name: Type.String({ minLength: 1, maxLength: 150 }),
  description: Type.Optional(Str(5000)),
  unit: Type.Optional(Type.String({ description: PLAN_UNITS.join(', ') })),
  unit_price: Type.Optional(DecimalInput),
  fixed_price: Type.Optional(DecimalInput),
  activation_price: Type.Optional(DecimalInput),
  article_code: Type.Optional(Str(30)),
  max_amount: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 32767 }))),
  backend_id: Type.Optional(Str(255)),
  prices: Type.Optional(PricesInput),
  quotas: Type.Optional(QuotasInput),
}
/** A plan given inline when an offering is created. */
export const InlinePlanBody = Body(planWritable)
export const PlanCreateBody = Body({
  offering: Type.String({ description: 'URL of the offering' }),
  ...planWritable,
  archived: Type.Optional(Type.Boolean()),
})
export const PlanUpdateBody = Body({
  offering: Type.Optional(Type.String({ description: 'cannot be changed' })),
  ...planWritable,
  archived: Type.Optional(Type.Boolean()),
})
export const PlanPatchBody = Type.Partial(PlanUpdateBody, { additionalProperties: false })
export interface PlanWrite {
  offering?: string
  name?: string
  description?: string
  unit?: string
  unit_price?: number | string
  fixed_price?: number | string
  activation_price?: number | string
  archived?: boolean
  article_code?: string
  max_amount?: number | null
  backend_id?: string
  prices?: Record<string, number | string>
  quotas?: Record<string, number>
}
export const PricesUpdateBody = Body({ prices: PricesInput })
export const QuotasUpdateBody = Body({ quotas: QuotasInput })
export const OrganizationGroupsBody = Body({
  organization_groups: Type.Optional(Type.Array(Type.String(), { maxItems: 500 })),
})

/** A plan's component as `/api/marketplace-plan-components/` lists it. */
export const PlanComponentSchema = Type.Object({
  offering_uuid: Uuid,
  offering_name: Type.String(),
  plan_uuid: Uuid,
  plan_name: Type.String(),
  plan_unit: Type.String({ enum: [...PLAN_UNITS] }),
  component_name: Type.String(),
  measured_unit: Type.String(),
  billing_type: OneOf(BILLING_TYPES),
  amount: Type.Integer(),
  price: Type.String({ description: 'decimal' }),
  future_price: Nullable(Type.String({ description: 'decimal' })),
})
export type PlanComponent = Static<typeof PlanComponentSchema>

// ---- offerings ----
export const OfferingSchema = Type.Object({
  url: Url,
  uuid: Uuid,
  name: Type.String(),
  description: Type.String(),
  slug: Type.String(),
  category: Nullable(Url),
  category_uuid: Nullable(Uuid),
  category_title: Nullable(Type.String()),
  customer: Url,
  customer_uuid: Uuid,
  customer_name: Type.String(),
  type: Type.String(),
  state: Type.String({ enum: [...OFFERING_STATES] }),
  shared: Type.Boolean(),
  billable: Type.Boolean(),
  plugin_options: FreeObject,
  terms_of_service: Type.String(),
  image: Nullable(Type.String()),
  thumbnail: Nullable(Type.String()),
  scope: Nullable(Url),
  scope_uuid: Nullable(Uuid),
  backend_id: Type.String({ description: "the provider's identifier of the offering on its backend" }),
  organization_groups: Type.Array(Url),
  project: Nullable(Url),
  parent: Nullable(Url),
  components: Type.Array(OfferingComponentSchema),
  plans: Type.Array(PlanSchema),
  created: DateTime,
  modified: DateTime,
})
export type Offering = Static<typeof OfferingSchema>
const offeringWritable = {
  description: Type.Optional(Str(10000)),
  slug: Type.Optional(Type.String({ minLength: 1, maxLength: 150, pattern: '^[-a-zA-Z0-9_]+$' })),
  category: Type.Optional(Nullable(Type.String())),
  shared: Type.Optional(Type.Boolean()),
  billable: Type.Optional(Type.Boolean()),
  plugin_options: Type.Optional(FreeObject),
  terms_of_service: Type.Optional(Str(100000)),
  image: Type.Optional(Nullable(HttpUrlInput(500))),
  thumbnail: Type.Optional(Nullable(HttpUrlInput(500))),
  scope: Type.Optional(Nullable(Type.String())),
  backend_id: Type.Optional(Type.String({ maxLength: 255 })),
  organization_groups: Type.Optional(Type.Array(Type.String(), { maxItems: 500 })),
  project: Type.Optional(Nullable(Type.String())),
  parent: Type.Optional(Nullable(Type.String())),
}
export const OfferingCreateBody = Body({
  name: Type.String({ minLength: 1, maxLength: 150 }),
  customer: Type.String({ description: 'URL of the provider customer' }),
  type: Type.String({ minLength: 1, maxLength: 100 }),
  ...offeringWritable,
  components: Type.Optional(Type.Array(OfferingComponentBody, { maxItems: 100 })),
  plans: Type.Optional(Type.Array(InlinePlanBody, { maxItems: 100 })),
})
export const OfferingUpdateBody = Body({
  name: Type.String({ minLength: 1, maxLength: 150 }),
  customer: Type.Optional(Type.String({ description: 'cannot be changed' })),
  type: Type.Optional(Type.String({ description: 'cannot be changed' })),
  ...offeringWritable,
})
export const OfferingPatchBody = Type.Partial(OfferingUpdateBody, { additionalProperties: false })
export interface OfferingWrite {
  name?: string
  customer?: string
  type?: string
  description?: string
  slug?: string
  category?: string | null
  shared?: boolean
  billable?: boolean
  plugin_options?: Record<string, unknown>
  terms_of_service?: string
  image?: string | null
  thumbnail?: string | null
  scope?: string | null
  backend_id?: string
  organization_groups?: string[]
  project?: string | null
  parent?: string | null
  components?: (OfferingComponentWrite & { billing_type: string; type: string; name: string })[]
  plans?: PlanWrite[]
}

// ---- offering types ----
export const OfferingTypeSchema = Type.Object({
  type: Type.String(),
  label: Type.String(),
  description: Type.String(),
  provider_approval_required: Type.Boolean(),
  processed_by: Type.String(),
  allowed_actions: Type.Array(Type.String()),
})
export type OfferingTypeRecord = Static<typeof OfferingTypeSchema>

// ---- marketplace resources ----
const Str255 = Type.String({ maxLength: 255 })

/** An access endpoint of a resource: a name and its URL. */
export const EndpointSchema = Type.Object({ uuid: Uuid, name: Type.String(), url: Type.String() })

/**
 * The marketplace resource record, the same in the consumer's view (`/api/marketplace-resources/`)
 * and the provider's (`/api/marketplace-provider-resources/`). Fields the reference leaves out
 * when they have no value (a UUID its clients could not parse as null) are optional here:
 * `category_*` without a category, `parent_offering_*` without a parent offering,
 * `service_settings_uuid` without service settings, `parent_*` (resources have no parent
 * resource here) and `order_in_progress`/`creation_order` (shown by retrieve, not by lists).
 */
export const ResourceSchema = Type.Object({
  url: Url,
  uuid: Uuid,
  name: Type.String(),
  slug: Type.String({ description: 'unique; generated from the name (`<name>-<n>`); staff may change it' }),
  description: Type.String(),
  offering: Url,
  offering_uuid: Uuid,
  offering_name: Type.String(),
  offering_type: Type.String(),
  offering_description: Type.String(),
  offering_slug: Type.String(),
  offering_image: Nullable(Type.String()),
  offering_thumbnail: Nullable(Type.String()),
  offering_shared: Type.Boolean(),
  offering_billable: Type.Boolean(),
  offering_plugin_options: FreeObject,
  offering_backend_id: Type.String(),
  offering_state: Type.String({ enum: [...OFFERING_STATES] }),
  offering_components: Type.Array(FreeObject),
  parent_offering_uuid: Type.Optional(Uuid),
  parent_offering_name: Type.Optional(Type.String()),
  parent_offering_slug: Type.Optional(Type.String()),
  plan: Nullable(Url),
  plan_uuid: Nullable(Uuid),
  plan_name: Nullable(Type.String()),
  plan_unit: Nullable(OneOf(PLAN_UNITS)),
  plan_description: Nullable(Type.String()),
  project: Url,
  project_uuid: Uuid,
  project_name: Type.String(),
  project_slug: Type.String(),
  project_description: Type.String(),
  project_end_date: Nullable(DateOnly),
  project_end_date_requested_by: Nullable(Url, { description: 'null: projects do not record who set it' }),
  project_effective_end_date: Nullable(DateOnly),
  project_is_in_grace_period: Type.Boolean(),
  customer: Url,
  customer_uuid: Uuid,
  customer_name: Type.String(),
  customer_slug: Type.String(),
  provider_uuid: Uuid,
  provider_name: Type.String(),
  provider_slug: Type.String(),
  provider_description: Type.String(),
  category_uuid: Type.Optional(Uuid),
  category_title: Type.Optional(Type.String()),
  category_icon: Type.Optional(Nullable(Type.String())),
  service_settings_uuid: Type.Optional(Uuid),
  state: Type.String({ enum: [...RESOURCE_STATES] }),
  attributes: AnyValue,
  limits: FreeObject,
  backend_id: Type.String(),
  effective_id: Type.String(),
  backend_metadata: FreeObject,
  resource_type: Type.String(),
  scope: Nullable(Url),
  resource_uuid: Nullable(Uuid),
  parent_uuid: Type.Optional(Uuid),
  parent_name: Type.Optional(Type.String()),
  end_date: Nullable(DateOnly),
  end_date_requested_by: Nullable(Url),
  end_date_updated_at: Nullable(DateTime),
  resource_effective_end_date: Nullable(DateOnly),
  renewal_date: Nullable(FreeObject),
  paused: Type.Boolean(),
  downscaled: Type.Boolean(),
  restrict_member_access: Type.Boolean(),
  usage_limit_restriction: Type.String({ enum: ['', 'paused', 'downscaled'] }),
  is_usage_based: Type.Boolean(),
  is_limit_based: Type.Boolean(),
  current_usages: FreeObject,
  limit_usage: FreeObject,
  report: Type.Array(FreeObject),
  endpoints: Type.Array(EndpointSchema),
  error_message: Type.String(),
  error_traceback: Type.String(),
  options: Nullable(FreeObject),
  available_actions: Type.Array(Type.String()),
  can_terminate: Type.Boolean(),
  username: Nullable(Type.String()),
  user_requires_reconsent: Type.Boolean(),
  has_api_keys: Type.Boolean(),
  last_sync: DateTime,
  order_in_progress: Type.Optional(Nullable(FreeObject)),
  creation_order: Type.Optional(Nullable(FreeObject)),
  created: DateTime,
  modified: DateTime,
})
export type Resource = Static<typeof ResourceSchema>

/** A user of a resource's project, as the provider sees the resource's team. */
export const ProjectUserSchema = Type.Object({
  url: Url,
  uuid: Uuid,
  username: Type.String(),
  full_name: Type.String(),
  email: Type.String(),
  role: Type.String({ description: 'the project role, e.g. PROJECT.MANAGER' }),
  expiration_time: Nullable(DateTime),
  offering_user_username: Nullable(Type.String()),
  offering_user_state: Nullable(Type.String()),
})
export type ProjectUser = Static<typeof ProjectUserSchema>

export const TeamQuery = Type.Object(
  { has_consent: Type.Optional(Type.String({ description: 'accepted; every member is shown' })) },
  { additionalProperties: true },
)

// The provider's actions' bodies. Required fields are required (the reference's clients send them).
export const SetBackendIdBody = Body({ backend_id: Str255 })
export const SetEffectiveIdBody = Body({ effective_id: Str255 })
export const SetSlugBody = Body({
  slug: Type.String({ minLength: 1, maxLength: 50, pattern: '^[-a-zA-Z0-9_]+$' }),
})
export const SetLimitsBody = Body({
  limits: DescribedObject('component type → limit, each a whole number not below 0'),
})
export const SetBackendMetadataBody = Body({ backend_metadata: FreeObject })
export const SetEndpointsBody = Body({
  endpoints: Type.Array(Body({ name: Str255, url: HttpUrlInput(2048) }), { maxItems: 100 }),
})
export const SetErredBody = Body({
  error_message: Type.Optional(Type.String({ maxLength: 100000 })),
  error_traceback: Type.Optional(Type.String({ maxLength: 100000 })),
})
export const SetPausedBody = Body({ paused: Type.Boolean() })
export const SetDownscaledBody = Body({ downscaled: Type.Boolean() })
export const SetRestrictMemberAccessBody = Body({ restrict_member_access: Type.Boolean() })
export const SetEndDateBody = Body({ end_date: Type.Optional(Nullable(Type.String({ format: 'date' }))) })
export const SubmitReportBody = Body({
  report: Type.Array(Body({ header: Type.String({ minLength: 1 }), body: Type.String({ minLength: 1 }) }), {
    maxItems: 100,
  }),
})

export const MEMBER_SYNC_SCOPES = ['resource', 'resource_project'] as const
export const MEMBER_SYNC_STATES = ['synced', 'pending', 'error', 'missing_in_idp'] as const
export const MemberSyncStatusesBody = Body({
  statuses: Type.Array(
    Body({
      scope_type: Type.String({ enum: [...MEMBER_SYNC_SCOPES] }),
      role_name: Type.String({ minLength: 1, maxLength: 150 }),
      state: Type.String({ enum: [...MEMBER_SYNC_STATES] }),
      username: Type.Optional(Type.String({ maxLength: 150 })),
      user_uuid: Type.Optional(UuidInput),
      resource_project_uuid: Type.Optional(UuidInput),
      message: Type.Optional(Type.String({ maxLength: 10000 })),
    }),
    { maxItems: 10000 },
  ),
})
export const MemberSyncStatusesResult = Type.Object({
  stored: Type.Integer(),
  skipped: Type.Array(Type.String()),
})
