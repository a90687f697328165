// Directory: users, customers, projects, roles, role grants, organization groups.
import { Type, type Static, type TObject } from '@sinclair/typebox'
import {
  Body,
  DateOnly,
  DateTime,
  ListQuery,
  Nullable,
  StringList,
  Url,
  Uuid,
  UuidInput,
} from '../../http/schemas.js'

export const PATHS = {
  users: 'users',
  customers: 'customers',
  projects: 'projects',
  roles: 'roles',
  organizationGroups: 'organization-groups',
} as const

/** A record's create (and PUT) body, and its PATCH body: the same fields, each optional. */
function createAndPatch<T extends TObject>(create: T) {
  return { create, patch: Type.Partial(create, { additionalProperties: false }) }
}

// Usernames as the spec limits them for order reviewer fields: lowercase letters, digits, @.+-_
export const USERNAME_PATTERN = '^[a-z0-9@.+_-]+$'

// ---- users ----
export const UserSchema = Type.Object({
  url: Url,
  uuid: Uuid,
  username: Type.String(),
  email: Type.String(),
  full_name: Type.String(),
  civil_number: Nullable(Type.String()),
  is_staff: Type.Boolean(),
  is_support: Type.Boolean(),
  is_active: Type.Boolean(),
  affiliations: StringList,
  identity_source: Type.String(),
  image: Nullable(Type.String()),
  pending_email: Nullable(
    Type.String({
      description:
        'An e-mail address the user asked for and has not confirmed yet (see confirm_email); `email` stays the confirmed one',
    }),
  ),
  created: DateTime,
  modified: DateTime,
})
export type User = Static<typeof UserSchema>
export const USER_FIELDS = Object.keys(UserSchema.properties)

const userWritable = {
  email: Type.String({ maxLength: 320 }),
  full_name: Type.String({ maxLength: 200 }),
  civil_number: Nullable(Type.String({ maxLength: 50 })),
  is_staff: Type.Boolean(),
  is_support: Type.Boolean(),
  is_active: Type.Boolean(),
  affiliations: Type.Array(Type.String({ maxLength: 200 }), { maxItems: 100 }),
  identity_source: Type.String({ maxLength: 100 }),
  image: Nullable(Type.String({ maxLength: 500 })),
}
export const UserCreateBody = Body({
  username: Type.String({ minLength: 1, maxLength: 128, pattern: USERNAME_PATTERN }),
  password: Type.Optional(Type.String({ minLength: 8, maxLength: 200, writeOnly: true })),
  ...Type.Partial(Type.Object(userWritable)).properties,
})
export const UserUpdateBody = Body({
  username: Type.Optional(Type.String({ minLength: 1, maxLength: 128, pattern: USERNAME_PATTERN })),
  ...Type.Partial(Type.Object(userWritable)).properties,
})
export type UserCreate = {
  username: string
  password?: string
  email?: string
  full_name?: string
  civil_number?: string | null
  is_staff?: boolean
  is_support?: boolean
  is_active?: boolean
  affiliations?: string[]
  identity_source?: string
  image?: string | null
}
export type UserUpdate = Partial<UserCreate>
/** A user's create, PUT and PATCH bodies (PUT takes the patch body: no field is required). */
export const UserBodies = { create: UserCreateBody, put: UserUpdateBody, patch: UserUpdateBody }
export const ConfirmEmailBody = Body({
  token: Type.Optional(
    Type.String({ maxLength: 200, description: 'The token sent to the new address; staff may omit it' }),
  ),
})
export const PasswordBody = Body({ password: Type.String({ minLength: 8, maxLength: 200 }) })

export const LoginBody = Body({
  username: Type.String({ minLength: 1 }),
  password: Type.String({ minLength: 1 }),
})
export const TokenResponse = Type.Object({ token: Type.String() })

// ---- organization groups ----
export const OrganizationGroupSchema = Type.Object({
  url: Url,
  uuid: Uuid,
  name: Type.String(),
  parent: Nullable(Url),
  parent_uuid: Nullable(Uuid),
  parent_name: Nullable(Type.String()),
  customers_count: Type.Integer(),
  created: DateTime,
})
export type OrganizationGroup = Static<typeof OrganizationGroupSchema>
export const OrganizationGroupBody = Body({
  name: Type.String({ minLength: 1, maxLength: 150 }),
  parent: Type.Optional(Nullable(Type.String())),
})
export const OrganizationGroupPatchBody = Type.Partial(OrganizationGroupBody, { additionalProperties: false })

// ---- customers ----
export const CustomerSchema = Type.Object({
  url: Url,
  uuid: Uuid,
  name: Type.String(),
  abbreviation: Type.String(),
  native_name: Type.String(),
  slug: Type.String(),
  email: Type.String(),
  image: Nullable(Type.String()),
  blocked: Type.Boolean(),
  archived: Type.Boolean(),
  organization_groups: Type.Array(Url),
  projects_count: Type.Integer(),
  created: DateTime,
  modified: DateTime,
})
export type Customer = Static<typeof CustomerSchema>
const customerWritable = {
  abbreviation: Type.String({ maxLength: 20 }),
  native_name: Type.String({ maxLength: 160 }),
  slug: Type.String({ maxLength: 150, pattern: '^[-a-zA-Z0-9_]*$' }),
  email: Type.String({ maxLength: 320 }),
  image: Nullable(Type.String({ maxLength: 500 })),
  organization_groups: Type.Array(Type.String(), { maxItems: 100 }),
  blocked: Type.Boolean(),
  archived: Type.Boolean(),
}
/** A customer's create (and PUT) and PATCH bodies. */
export const CustomerBodies = createAndPatch(
  Body({
    name: Type.String({ minLength: 1, maxLength: 150 }),
    ...Type.Partial(Type.Object(customerWritable)).properties,
  }),
)
export type CustomerWrite = Static<typeof CustomerBodies.patch>

// ---- projects ----
export const ProjectSchema = Type.Object({
  url: Url,
  uuid: Uuid,
  name: Type.String(),
  customer: Url,
  customer_uuid: Uuid,
  customer_name: Type.String(),
  customer_abbreviation: Type.String(),
  customer_native_name: Type.String(),
  description: Type.String(),
  slug: Type.String(),
  start_date: Nullable(DateOnly),
  end_date: Nullable(DateOnly),
  created: DateTime,
  modified: DateTime,
})
export type Project = Static<typeof ProjectSchema>
const DateInput = Type.String({ format: 'date' })
/** A project's create (and PUT) and PATCH bodies. */
export const ProjectBodies = createAndPatch(
  Body({
    name: Type.String({ minLength: 1, maxLength: 500 }),
    customer: Type.String(),
    description: Type.Optional(Type.String({ maxLength: 5000 })),
    slug: Type.Optional(Type.String({ maxLength: 150, pattern: '^[-a-zA-Z0-9_]*$' })),
    start_date: Type.Optional(Nullable(DateInput)),
    end_date: Type.Optional(Nullable(DateInput)),
  }),
)
export type ProjectWrite = Static<typeof ProjectBodies.patch>

// ---- roles ----
export const RoleSchema = Type.Object({
  url: Url,
  uuid: Uuid,
  name: Type.String(),
  description: Type.String(),
  content_type: Type.String(),
  is_active: Type.Boolean(),
})
export type Role = Static<typeof RoleSchema>
export const RoleUpdateBody = Body({
  description: Type.Optional(Type.String({ maxLength: 2000 })),
})

// ---- role grants ----
export const GrantBody = Body({
  user: UuidInput,
  role: Type.String({ minLength: 1, maxLength: 150, description: 'role name or uuid' }),
  expiration_time: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
})
export const RevokeBody = Body({
  user: UuidInput,
  role: Type.String({ minLength: 1, maxLength: 150, description: 'role name or uuid' }),
})
export const GrantSchema = Type.Object({
  uuid: Uuid,
  user_uuid: Uuid,
  user_username: Type.String(),
  user_full_name: Type.String(),
  user_email: Type.String(),
  role_name: Type.String(),
  role_uuid: Uuid,
  scope_type: Type.String(),
  scope_uuid: Uuid,
  scope_name: Type.String(),
  expiration_time: Nullable(DateTime),
  created: DateTime,
  created_by_full_name: Nullable(Type.String()),
})
export type GrantRecord = Static<typeof GrantSchema>
export const GRANT_FIELDS = Object.keys(GrantSchema.properties)
export const GrantListQuery = ListQuery({
  role: Type.Optional(Type.String({ description: 'role name or uuid' })),
  user_uuid: Type.Optional(Type.String()),
  user_username: Type.Optional(Type.String()),
})
