// The user side of offerings: offering users (a user's account on an offering), the offerings'
// user attribute configs, project service accounts and course accounts, and per-user component
// limits. Shapes as the reference's clients read them.
import { Type, type Static, type TBoolean, type TOptional } from '@sinclair/typebox'
import {
  Body,
  DateOnly,
  DateTime,
  DescribedObject,
  ListQuery,
  Nullable,
  OneOf,
  StringList,
  Url,
  Uuid,
} from '../../http/schemas.js'

export const PATHS = {
  offeringUsers: 'marketplace-offering-users',
  offerings: 'marketplace-provider-offerings',
  users: 'users',
  resources: 'marketplace-resources',
  projects: 'projects',
  projectServiceAccounts: 'marketplace-project-service-accounts',
  courseAccounts: 'marketplace-course-accounts',
  usageLimits: 'component-user-usage-limits',
} as const

// ---- offering users ----

export const OFFERING_USER_STATES = [
  'Requested',
  'Creating',
  'Pending account linking',
  'Pending additional validation',
  'OK',
  'Requested deletion',
  'Deleting',
  'Deleted',
  'Error creating',
  'Error deleting',
] as const
export type OfferingUserState = (typeof OFFERING_USER_STATES)[number]

export const RUNTIME_STATES = ['Active', 'Pending account linking', 'Pending additional validation'] as const
export type RuntimeState = (typeof RUNTIME_STATES)[number]

export const OfferingUserSchema = Type.Object({
  url: Url,
  uuid: Uuid,
  user: Url,
  offering: Url,
  username: Nullable(Type.String({ description: "the account's username on the provider's backend" })),
  offering_uuid: Uuid,
  offering_name: Type.String(),
  user_uuid: Uuid,
  user_username: Type.String(),
  user_full_name: Type.String(),
  user_first_name: Type.String({ description: 'the first word of the full name' }),
  user_last_name: Type.String({ description: 'the full name after its first word' }),
  user_email: Type.String(),
  user_phone_number: Type.String(),
  user_organization: Type.String(),
  user_job_title: Type.String(),
  user_affiliations: StringList,
  user_gender: Nullable(Type.String({ description: 'male, female, unknown or empty' })),
  user_personal_title: Type.String(),
  user_place_of_birth: Type.String(),
  user_address: Type.String(),
  user_country_of_residence: Type.String(),
  user_nationality: Type.String(),
  user_nationalities: StringList,
  user_organization_country: Type.String(),
  user_organization_type: Type.String(),
  user_organization_registry_code: Type.String(),
  user_organization_vat_code: Type.String(),
  user_organization_address: Type.String(),
  user_eduperson_assurance: StringList,
  user_civil_number: Nullable(Type.String()),
  user_birth_date: Nullable(DateOnly),
  user_identity_source: Type.String(),
  user_uid_number: Nullable(Type.Integer()),
  user_primary_gid: Nullable(Type.Integer()),
  user_active_isds: StringList,
  created: DateTime,
  modified: DateTime,
  customer_uuid: Uuid,
  customer_name: Type.String(),
  is_restricted: Type.Boolean(),
  state: OneOf(OFFERING_USER_STATES),
  runtime_state: OneOf(RUNTIME_STATES),
  service_provider_comment: Type.String(),
  service_provider_comment_url: Type.String(),
  has_consent: Type.Boolean(),
  requires_reconsent: Type.Boolean(),
  offering_has_active_tos: Type.Boolean(),
  has_compliance_checklist: Type.Boolean(),
  consent_data: Nullable(DescribedObject('uuid, version and agreement_date of the consent')),
  is_profile_complete: Type.Boolean(),
  missing_profile_attributes: StringList,
  uidnumber: Nullable(Type.Integer()),
  primarygroup: Nullable(Type.Integer()),
  login_shell: Nullable(Type.String()),
  home_directory: Nullable(Type.String()),
})
export type OfferingUser = Static<typeof OfferingUserSchema>

const link = (what: string) => Type.String({ maxLength: 500, description: `${what} URL` })
const uuidIn = (what: string) => Type.String({ maxLength: 64, description: `${what} uuid` })
const usernameIn = Nullable(Type.String({ maxLength: 100 }))

/** Create (and PUT): the user and the offering, each by URL or by uuid, and maybe the username. */
export const OfferingUserCreateBody = Body({
  user: Type.Optional(link('user')),
  offering: Type.Optional(link('offering')),
  username: Type.Optional(usernameIn),
  offering_uuid: Type.Optional(uuidIn('offering')),
  user_uuid: Type.Optional(uuidIn('user')),
})
export type OfferingUserCreate = Static<typeof OfferingUserCreateBody>
/** Update: only the username changes (the user and the offering are kept). */
export const OfferingUserUpdateBody = OfferingUserCreateBody
export type OfferingUserUpdate = Static<typeof OfferingUserUpdateBody>

export const StateTransitionBody = Body({
  comment: Type.Optional(Type.String({ maxLength: 2000, description: 'why the state changes' })),
  comment_url: Type.Optional(Type.String({ maxLength: 500, description: 'a link for the user' })),
})
export const RestrictionBody = Body({ is_restricted: Type.Boolean() })
export const RuntimeStateBody = Body({
  runtime_state: OneOf(RUNTIME_STATES),
  service_provider_comment: Type.Optional(Type.String({ maxLength: 2000 })),
  service_provider_comment_url: Type.Optional(Type.String({ maxLength: 500 })),
})
export const CommentsSchema = Type.Object({
  service_provider_comment: Type.String(),
  service_provider_comment_url: Type.String(),
})
export const CommentsBody = Body({
  service_provider_comment: Type.Optional(Type.String({ maxLength: 2000 })),
  service_provider_comment_url: Type.Optional(Type.String({ maxLength: 500 })),
})

// ---- user attribute configs ----

/**
 * The user attributes an offering may expose to its provider, as the reference names them
 * (`expose_<name>` in the config record).
 */
export const USER_ATTRIBUTES = [
  'full_name',
  'email',
  'username',
  'registration_method',
  'organization',
  'organization_country',
  'organization_type',
  'organization_registry_code',
  'organization_vat_code',
  'organization_address',
  'affiliations',
  'phone_number',
  'job_title',
  'gender',
  'personal_title',
  'place_of_birth',
  'address',
  'country_of_residence',
  'nationality',
  'nationalities',
  'eduperson_assurance',
  'identity_source',
  'civil_number',
  'birth_date',
  'active_isds',
  'uid_number',
  'primary_gid',
] as const
export type UserAttribute = (typeof USER_ATTRIBUTES)[number]
/** Exposed by an offering that has no config of its own. */
export const DEFAULT_EXPOSED: readonly UserAttribute[] = ['username', 'full_name', 'email']

type ExposeName = `expose_${UserAttribute}`
const exposeFlags = Object.fromEntries(USER_ATTRIBUTES.map((a) => [`expose_${a}`, Type.Boolean()])) as Record<
  ExposeName,
  TBoolean
>

export const AttributeConfigSchema = Type.Object({
  uuid: Uuid,
  created: DateTime,
  modified: DateTime,
  ...exposeFlags,
  exposed_fields: StringList,
  is_default: Type.Boolean({ description: 'true while the offering has no config of its own' }),
  offering_uuid: Uuid,
  offering_name: Type.String(),
})
export type AttributeConfig = Static<typeof AttributeConfigSchema>

export const AttributeConfigBody = Body(
  Object.fromEntries(USER_ATTRIBUTES.map((a) => [`expose_${a}`, Type.Optional(Type.Boolean())])) as Record<
    ExposeName,
    TOptional<TBoolean>
  >,
)
export type AttributeConfigUpdate = Partial<Record<ExposeName, boolean>>

// ---- project service accounts and course accounts ----

export const SERVICE_ACCOUNT_STATES = ['OK', 'Closed', 'Erred'] as const
export const COURSE_ACCOUNT_STATES = ['OK', 'Closed', 'Erred', 'Pending'] as const

export const ProjectServiceAccountSchema = Type.Object({
  url: Url,
  uuid: Uuid,
  created: DateTime,
  modified: DateTime,
  username: Type.String(),
  description: Type.String(),
  error_message: Type.String(),
  error_traceback: Type.String(),
  state: OneOf(SERVICE_ACCOUNT_STATES),
  token: Nullable(Type.String()),
  email: Type.String(),
  expires_at: Nullable(DateTime),
  preferred_identifier: Type.String(),
  project: Uuid,
  project_uuid: Uuid,
  project_name: Type.String(),
  customer_uuid: Uuid,
  customer_name: Type.String(),
  customer_abbreviation: Type.String(),
})
export type ProjectServiceAccount = Static<typeof ProjectServiceAccountSchema>

export const CourseAccountSchema = Type.Object({
  url: Url,
  uuid: Uuid,
  created: DateTime,
  modified: DateTime,
  project: Uuid,
  project_uuid: Uuid,
  project_name: Type.String(),
  project_slug: Type.String(),
  project_start_date: Nullable(DateOnly),
  project_end_date: Nullable(DateOnly),
  user_uuid: Uuid,
  username: Type.String(),
  customer_uuid: Uuid,
  customer_name: Type.String(),
  state: OneOf(COURSE_ACCOUNT_STATES),
  email: Type.String(),
  description: Type.String(),
  error_message: Type.String(),
  error_traceback: Type.String(),
})
export type CourseAccount = Static<typeof CourseAccountSchema>

/** The query of the offering's account lists: pages, and a few filters of the accounts. */
export const AccountListQuery = ListQuery({
  project_uuid: Type.Optional(Type.String({ format: 'uuid' })),
  username: Type.Optional(Type.String({ description: 'username contains' })),
  state: Type.Optional(StringList),
})

// ---- per-user component limits ----

export const UsageLimitSchema = Type.Object({
  url: Url,
  uuid: Uuid,
  resource: Url,
  component: Type.String({
    description: "the offering component's uuid (its type until the offering's components are listed)",
  }),
  component_type: Type.String(),
  user: Type.String({ description: "the offering user's username on the backend" }),
  limit: Type.String({ description: 'decimal' }),
})
export type UsageLimit = Static<typeof UsageLimitSchema>

const decimalIn = Type.Union([Type.String({ maxLength: 40 }), Type.Number()], { description: 'decimal' })
export const UsageLimitCreateBody = Body({
  resource: link('marketplace resource'),
  component: Type.String({ maxLength: 100, description: 'offering component uuid or type' }),
  user: link('offering user'),
  limit: Type.Optional(decimalIn),
})
export const UsageLimitPatchBody = Body({
  resource: Type.Optional(link('marketplace resource')),
  component: Type.Optional(Type.String({ maxLength: 100 })),
  user: Type.Optional(link('offering user')),
  limit: Type.Optional(decimalIn),
})
export type UsageLimitCreate = Static<typeof UsageLimitCreateBody>
export type UsageLimitPatch = Static<typeof UsageLimitPatchBody>
