// Row types of the tables of site agents, backend resource requests, invitations.
import type { Generated } from 'kysely'
import type { Bool, Json } from './values.js'

export interface BackendResourceRequestsTable {
  id: Generated<number>
  uuid: string
  offering_id: number
  /** Sent | Processing | Done | Erred */
  state: Generated<string>
  started: string | null
  finished: string | null
  error_message: Generated<string>
  error_traceback: Generated<string>
  created_by_id: number | null
  created: string
  modified: string
}

export interface SiteAgentIdentitiesTable {
  id: Generated<number>
  uuid: string
  name: string
  offering_id: number
  version: string | null
  last_polled_at: string | null
  created_by_id: number | null
  /** [{package, version}, ...] as the agent reported them */
  dependencies: Generated<Json>
  config_file_path: string | null
  config_file_content: string | null
  last_restarted_at: string | null
  created: string
  modified: string
}

export interface SiteAgentServicesTable {
  id: Generated<number>
  uuid: string
  identity_id: number
  name: string
  mode: string | null
  /** 1 Active, 2 Idle, 3 Error */
  state: Generated<number>
  statistics: Json
  created: string
  modified: string
}

export interface SiteAgentProcessorsTable {
  id: Generated<number>
  uuid: string
  service_id: number
  name: string
  backend_type: string
  backend_version: string | null
  last_run: string | null
  created: string
  modified: string
}

export interface UserGroupInvitationsTable {
  id: Generated<number>
  uuid: string
  role_id: number
  /** customer | project */
  scope_type: string
  scope_id: number
  customer_id: number
  created_by_id: number | null
  is_active: Generated<Bool>
  is_public: Generated<Bool>
  auto_create_project: Generated<Bool>
  auto_approve: Generated<Bool>
  project_name_template: Generated<string>
  project_role_id: number | null
  user_affiliations: Json
  user_email_patterns: Json
  user_identity_sources: Json
  created: string
  modified: string
}

export interface UserPermissionRequestsTable {
  id: Generated<number>
  uuid: string
  invitation_id: number
  created_by_id: number
  /** pending | approved | rejected | canceled */
  state: Generated<string>
  reviewed_by_id: number | null
  reviewed_at: string | null
  review_comment: string | null
  created: string
  modified: string
}

/** A project an invitation created for a user: the only project a later approval may reuse. */
export interface InvitationProjectsTable {
  id: Generated<number>
  invitation_id: number
  user_id: number
  project_id: number
  created: string
}

export interface AgentsInvitationsTables {
  invitation_projects: InvitationProjectsTable
  backend_resource_requests: BackendResourceRequestsTable
  site_agent_identities: SiteAgentIdentitiesTable
  site_agent_services: SiteAgentServicesTable
  site_agent_processors: SiteAgentProcessorsTable
  user_group_invitations: UserGroupInvitationsTable
  user_permission_requests: UserPermissionRequestsTable
}
