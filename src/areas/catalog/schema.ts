// Catalog: service providers, categories, offerings, plans, offering types and (read-only)
// marketplace resources. Records, request bodies, the area's paths and choices.
import { Type, type Static } from '@sinclair/typebox'
import {
  AnyValue,
  Body,
  DateOnly,
  DateTime,
  FreeObject,
  HttpUrlInput,
  Nullable,
  Url,
  Uuid,
} from '../../http/schemas.js'

export const PATHS = {
  providers: 'marketplace-service-providers',
  categories: 'marketplace-categories',
  offerings: 'marketplace-provider-offerings',
  plans: 'marketplace-plans',
  resources: 'marketplace-resources',
  serviceSettings: 'service-settings',
  customers: 'customers',
  projects: 'projects',
  organizationGroups: 'organization-groups',
} as const

export const OFFERING_STATES = ['Draft', 'Active', 'Paused', 'Archived'] as const
export type OfferingState = (typeof OFFERING_STATES)[number]

export const PLAN_UNITS = ['month', 'half_month', 'day', 'hour', 'quantity'] as const
export type PlanUnit = (typeof PLAN_UNITS)[number]

export const RESOURCE_STATES = ['Creating', 'OK', 'Erred', 'Updating', 'Terminating', 'Terminated'] as const

const Str = (maxLength: number) => Type.String({ maxLength })
/** A decimal given as a JSON number or a numeric string; checked in the service. */
const DecimalInput = Type.Union([Type.Number(), Type.String({ maxLength: 40 })], {
  description: 'decimal, as a number or a numeric string; not negative',
})

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

// ---- plans ----
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
}

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
  organization_groups: Type.Array(Url),
  project: Nullable(Url),
  parent: Nullable(Url),
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
  organization_groups: Type.Optional(Type.Array(Type.String(), { maxItems: 500 })),
  project: Type.Optional(Nullable(Type.String())),
  parent: Type.Optional(Nullable(Type.String())),
}
export const OfferingCreateBody = Body({
  name: Type.String({ minLength: 1, maxLength: 150 }),
  customer: Type.String({ description: 'URL of the provider customer' }),
  type: Type.String({ minLength: 1, maxLength: 100 }),
  ...offeringWritable,
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
  organization_groups?: string[]
  project?: string | null
  parent?: string | null
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
export const ResourceSchema = Type.Object({
  url: Url,
  uuid: Uuid,
  name: Type.String(),
  offering: Url,
  offering_uuid: Uuid,
  offering_name: Type.String(),
  offering_type: Type.String(),
  plan: Nullable(Url),
  plan_uuid: Nullable(Uuid),
  plan_name: Nullable(Type.String()),
  project: Url,
  project_uuid: Uuid,
  project_name: Type.String(),
  customer: Url,
  customer_uuid: Uuid,
  customer_name: Type.String(),
  provider_uuid: Uuid,
  provider_name: Type.String(),
  category_uuid: Nullable(Uuid),
  category_title: Nullable(Type.String()),
  state: Type.String(),
  attributes: AnyValue,
  limits: FreeObject,
  backend_id: Type.String(),
  resource_type: Type.String(),
  end_date: Nullable(DateOnly),
  created: DateTime,
  modified: DateTime,
  scope: Nullable(Url),
  resource_uuid: Nullable(Uuid),
})
export type Resource = Static<typeof ResourceSchema>
