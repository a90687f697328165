// Row types of the tables of the user side of offerings: offering users (a user's account on an
// offering), the offerings' user attribute configs, SSH keys, project service accounts, course
// accounts and per-user component limits.
import type { Generated } from 'kysely'
import type { Bool, Json } from './values.js'

export interface OfferingUsersTable {
  id: Generated<number>
  uuid: string
  offering_id: number
  user_id: number
  /** The account's username on the provider's backend; null until it is known. */
  username: string | null
  /** Requested | Creating | Pending account linking | … (OFFERING_USER_STATES) */
  state: Generated<string>
  /** Active | Pending account linking | Pending additional validation */
  runtime_state: Generated<string>
  is_restricted: Generated<Bool>
  service_provider_comment: Generated<string>
  service_provider_comment_url: Generated<string>
  created: string
  modified: string
}

export interface OfferingUserAttributeConfigsTable {
  id: Generated<number>
  uuid: string
  offering_id: number
  /** The names of the attributes exposed, a JSON list. */
  exposed: Json
  created: string
  modified: string
}

export interface SshKeysTable {
  id: Generated<number>
  uuid: string
  user_id: number
  name: Generated<string>
  public_key: string
  fingerprint_md5: string
  fingerprint_sha256: string
  fingerprint_sha512: string
  is_shared: Generated<Bool>
  created: string
  modified: string
}

export interface ProjectServiceAccountsTable {
  id: Generated<number>
  uuid: string
  project_id: number
  username: Generated<string>
  description: Generated<string>
  email: Generated<string>
  preferred_identifier: Generated<string>
  /** OK | Closed | Erred */
  state: Generated<string>
  error_message: Generated<string>
  error_traceback: Generated<string>
  expires_at: string | null
  created: string
  modified: string
}

export interface CourseAccountsTable {
  id: Generated<number>
  uuid: string
  project_id: number
  user_id: number
  username: Generated<string>
  email: Generated<string>
  description: Generated<string>
  /** OK | Closed | Erred | Pending */
  state: Generated<string>
  error_message: Generated<string>
  error_traceback: Generated<string>
  created: string
  modified: string
}

export interface ComponentUserUsageLimitsTable {
  id: Generated<number>
  uuid: string
  resource_id: number
  /** The offering component's type (unique within the resource's offering). */
  component_type: string
  offering_user_id: number
  usage_limit: Generated<number | string>
  created: string
  modified: string
}

export interface OfferingUsersTables {
  offering_users: OfferingUsersTable
  offering_user_attribute_configs: OfferingUserAttributeConfigsTable
  ssh_keys: SshKeysTable
  project_service_accounts: ProjectServiceAccountsTable
  course_accounts: CourseAccountsTable
  component_user_usage_limits: ComponentUserUsageLimitsTable
}
