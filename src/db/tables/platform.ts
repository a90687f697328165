// Row types of the tables of platform and directory: users, organizations, projects, roles, jobs, events.
import type { Generated } from 'kysely'
import type { Bool, Json } from './values.js'

export interface UsersTable {
  id: Generated<number>
  uuid: string
  username: string
  email: Generated<string>
  full_name: Generated<string>
  civil_number: string | null
  is_staff: Generated<Bool>
  is_support: Generated<Bool>
  is_active: Generated<Bool>
  affiliations: Json
  identity_source: Generated<string>
  image: string | null
  password_hash: string | null
  /** An address the user asked for and has not confirmed yet; `email` stays the proven one. */
  pending_email: string | null
  /** sha256 of the confirmation token for pending_email, and when it stops being accepted. */
  email_token_hash: string | null
  email_token_expires: string | null
  created: string
  modified: string
}

export interface TokensTable {
  id: Generated<number>
  user_id: number
  key_hash: string
  created: string
}

export interface OrganizationGroupsTable {
  id: Generated<number>
  uuid: string
  name: string
  parent_id: number | null
  created: string
  modified: string
}

export interface CustomersTable {
  id: Generated<number>
  uuid: string
  name: string
  abbreviation: Generated<string>
  native_name: Generated<string>
  slug: string
  email: Generated<string>
  image: string | null
  blocked: Generated<Bool>
  archived: Generated<Bool>
  created: string
  modified: string
}

export interface CustomerOrganizationGroupsTable {
  customer_id: number
  organization_group_id: number
}

export interface ProjectsTable {
  id: Generated<number>
  uuid: string
  name: string
  customer_id: number
  description: Generated<string>
  slug: string
  start_date: string | null
  end_date: string | null
  created: string
  modified: string
}

export interface RolesTable {
  id: Generated<number>
  uuid: string
  name: string
  description: Generated<string>
  content_type: string
  is_active: Generated<Bool>
}

export interface UserRolesTable {
  id: Generated<number>
  uuid: string
  user_id: number
  role_id: number
  scope_type: string
  scope_id: number
  expiration_time: string | null
  is_active: Generated<Bool>
  created_by_id: number | null
  created: string
}

export interface JobsTable {
  id: Generated<number>
  kind: string
  payload: Json
  state: Generated<string>
  attempts: Generated<number>
  max_attempts: Generated<number>
  run_at: string
  locked_by: string | null
  locked_at: string | null
  last_error: string | null
  created: string
  finished: string | null
  /** The job's group in a lane with a limit per group (e.g. a callback's host), else null. */
  group_key: string | null
}

export interface EventsTable {
  id: Generated<number>
  uuid: string
  event_type: string
  message: string
  recipient_user_id: number | null
  context: Json
  created: string
}

/** Secrets the install generated for itself, by name (see installSecret). */
export interface InstallSecretsTable {
  name: string
  value: string
}

/** Totals kept by triggers (name → row count), so unfiltered lists need not count. */
export interface RowCountsTable {
  name: string
  n: number
}

export interface PlatformTables {
  row_counts: RowCountsTable
  users: UsersTable
  tokens: TokensTable
  organization_groups: OrganizationGroupsTable
  customers: CustomersTable
  customer_organization_groups: CustomerOrganizationGroupsTable
  projects: ProjectsTable
  roles: RolesTable
  user_roles: UserRolesTable
  jobs: JobsTable
  events: EventsTable
  install_secrets: InstallSecretsTable
}
