// Row types of every table, as Kysely sees them. Booleans are stored as 0/1 integers, timestamps
// as ISO-8601 text, JSON as text (SQLite) or jsonb (PostgreSQL): see src/db/values.ts.
// Each area adds its tables in its own section below and to the DB interface at the end.
import type { Generated } from 'kysely'

export type Json = unknown
export type Bool = number

// ---- platform / directory ----
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
}

// ---- catalog (and the cloud service settings offerings point at) ----
export interface ServiceSettingsTable {
  id: Generated<number>
  uuid: string
  name: string
  /** cloudA | cloudB */
  type: string
  shared: Generated<Bool>
  customer_id: number | null
  state: Generated<string>
  error_message: Generated<string>
  /** backend driver and its parameters */
  options: Json
  created: string
  modified: string
}

export interface ServiceProvidersTable {
  id: Generated<number>
  uuid: string
  customer_id: number
  description: Generated<string>
  image: string | null
  created: string
  modified: string
}

export interface CategoriesTable {
  id: Generated<number>
  uuid: string
  title: string
  description: Generated<string>
  icon: string | null
  created: string
  modified: string
}

export interface OfferingsTable {
  id: Generated<number>
  uuid: string
  name: string
  description: Generated<string>
  slug: string
  category_id: number | null
  /** the provider organization */
  customer_id: number
  parent_id: number | null
  type: string
  /** Draft | Active | Paused | Archived */
  state: Generated<string>
  shared: Generated<Bool>
  billable: Generated<Bool>
  plugin_options: Json
  terms_of_service: Generated<string>
  image: string | null
  thumbnail: string | null
  service_settings_id: number | null
  /** for private offerings: the project they are limited to */
  project_id: number | null
  created: string
  modified: string
}

export interface OfferingOrganizationGroupsTable {
  offering_id: number
  organization_group_id: number
}

export interface PlansTable {
  id: Generated<number>
  uuid: string
  offering_id: number
  name: string
  description: Generated<string>
  unit: Generated<string>
  unit_price: Generated<number | string>
  fixed_price: Generated<number | string>
  activation_price: Generated<number | string>
  archived: Generated<Bool>
  created: string
  modified: string
}

export interface ResourcesTable {
  id: Generated<number>
  uuid: string
  name: Generated<string>
  offering_id: number
  plan_id: number | null
  project_id: number
  customer_id: number
  /** Creating | OK | Erred | Updating | Terminating | Terminated */
  state: Generated<string>
  attributes: Json
  limits: Json
  backend_id: Generated<string>
  resource_type: Generated<string>
  scope_type: string | null
  scope_id: number | null
  end_date: string | null
  created: string
  modified: string
}

export interface CatalogTables {
  service_settings: ServiceSettingsTable
  service_providers: ServiceProvidersTable
  categories: CategoriesTable
  offerings: OfferingsTable
  offering_organization_groups: OfferingOrganizationGroupsTable
  plans: PlansTable
  resources: ResourcesTable
}

// ---- cost policies, payment profiles, support ----
export interface PaymentProfilesTable {
  id: Generated<number>
  uuid: string
  name: string
  organization_id: number
  attributes: Json
  /** fixed_price | invoices | payment_gw_monthly */
  payment_type: string
  is_active: Generated<Bool>
  created: string
  modified: string
}

export interface SupportIssuesTable {
  id: Generated<number>
  uuid: string
  key: string
  summary: string
  description: Generated<string>
  caller_id: number | null
  reporter_id: number | null
  customer_id: number | null
  project_id: number | null
  state: Generated<string>
  resolved: Generated<Bool>
  created: string
  modified: string
}

export interface SupportFeedbacksTable {
  id: Generated<number>
  uuid: string
  issue_id: number
  evaluation: number
  comment: Generated<string>
  state: Generated<string>
  created: string
  modified: string
}

export interface CostPoliciesTable {
  id: Generated<number>
  uuid: string
  offering_id: number
  actions: string
  options: Json
  limit_cost: number
  /** 1 Total, 2 1 month, 3 3 month, 4 12 month */
  period: Generated<number>
  apply_to_all: Generated<Bool>
  has_fired: Generated<Bool>
  fired_datetime: string | null
  recheck_at: string | null
  created_by_id: number | null
  created: string
  modified: string
}

export interface CostPolicyOrganizationGroupsTable {
  policy_id: number
  organization_group_id: number
}

export interface PoliciesTables {
  payment_profiles: PaymentProfilesTable
  support_issues: SupportIssuesTable
  support_feedbacks: SupportFeedbacksTable
  cost_policies: CostPoliciesTable
  cost_policy_organization_groups: CostPolicyOrganizationGroupsTable
}

// ---- orders ----
export interface OrdersTable {
  id: Generated<number>
  uuid: string
  slug: Generated<string>
  type: string
  state: string
  offering_id: number
  provider_customer_id: number
  plan_id: number | null
  old_plan_id: number | null
  project_id: number
  customer_id: number
  resource_id: number | null
  attributes: Json
  limits: Json
  cost: number | string | null
  callback_url: string | null
  request_comment: string | null
  start_date: string | null
  output: Generated<string>
  error_message: Generated<string>
  error_traceback: Generated<string>
  backend_id: Generated<string>
  attachment: string | null
  termination_comment: string | null
  consumer_reviewed_by_id: number | null
  consumer_reviewed_at: string | null
  provider_reviewed_by_id: number | null
  provider_reviewed_at: string | null
  created_by_id: number | null
  completed_at: string | null
  consumer_rejection_comment: Generated<string>
  provider_rejection_comment: Generated<string>
  /** 1 when consumer review was skipped by a rule at creation. */
  auto_approved: Generated<Bool>
  output_updated_at: Generated<string | null>
  error_updated_at: Generated<string | null>
  created: string
  modified: string
  /** Raised by a trigger on every update of the row (see record-cache.ts). */
  version: Generated<number>
}

/** Raised by triggers when rows that records of `name` show change (see record-cache.ts). */
export interface RecordEpochsTable {
  name: string
  n: number
}

/** Orders per project and state, kept by triggers. */
export interface OrderCountsTable {
  project_id: number
  state: string
  n: number
}

export interface OrderTables {
  orders: OrdersTable
  record_epochs: RecordEpochsTable
  order_counts: OrderCountsTable
}

// ---- site agents, backend resource requests, invitations ----
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

// ---- cloud resources: the common record and the emulator's state ----
export interface CloudResourcesTable {
  id: Generated<number>
  uuid: string
  /** e.g. cloudA.PublicIP; also the marketplace resources' scope_type */
  resource_type: string
  name: string
  description: Generated<string>
  service_settings_id: number
  project_id: number
  /** CREATION_SCHEDULED | CREATING | OK | UPDATE_SCHEDULED | UPDATING | DELETION_SCHEDULED | DELETING | ERRED */
  state: Generated<string>
  error_message: Generated<string>
  error_traceback: Generated<string>
  backend_id: Generated<string>
  access_url: string | null
  runtime_state: Generated<string>
  created: string
  modified: string
}

export interface CloudEmulatorObjectsTable {
  id: Generated<number>
  service_settings_id: number
  kind: string
  backend_id: string
  data: Json
  created: string
  modified: string
}

export interface CloudEmulatorCountersTable {
  service_settings_id: number
  name: string
  value: Generated<number>
}

export interface CloudCommonTables {
  cloud_resources: CloudResourcesTable
  cloud_emulator_objects: CloudEmulatorObjectsTable
  cloud_emulator_counters: CloudEmulatorCountersTable
}

// ---- cloudA ----
export interface CloudALocationsTable {
  id: Generated<number>
  uuid: string
  name: string
  service_settings_id: number
  backend_id: Generated<string>
  created: string
  modified: string
}

export interface CloudAResourceGroupsTable {
  id: Generated<number>
  uuid: string
  name: string
  location_id: number
  service_settings_id: number
  project_id: number
  created: string
  modified: string
}

export interface CloudAPublicIpsTable {
  resource_id: number
  location_id: number
  resource_group_id: number
  ip_address: Generated<string>
}

export interface CloudATables {
  cloud_a_locations: CloudALocationsTable
  cloud_a_resource_groups: CloudAResourceGroupsTable
  cloud_a_public_ips: CloudAPublicIpsTable
}

// ---- cloudB: extension tables of cloud_resources rows (resource_type cloudB.*), migrations ----
export interface CloudBTenantsTable {
  resource_id: number
  limits: Json
  external_network_id: Generated<string>
  internal_network_id: Generated<string>
}

export interface CloudBNetworksTable {
  resource_id: number
  tenant_id: number
  is_external: Generated<Bool>
  type: Generated<string>
  segmentation_id: number | null
  mtu: number | null
}

export interface CloudBSubnetsTable {
  resource_id: number
  tenant_id: number
  network_id: number
  cidr: string
  gateway_ip: string | null
  ip_version: Generated<number>
  allocation_pools: Json
  dns_nameservers: Json
  enable_dhcp: Generated<Bool>
}

export interface CloudBSecurityGroupsTable {
  resource_id: number
  tenant_id: number
}

export interface CloudBSecurityGroupRulesTable {
  id: Generated<number>
  security_group_id: number
  ethertype: Generated<string>
  direction: Generated<string>
  protocol: Generated<string>
  from_port: number | null
  to_port: number | null
  cidr: Generated<string>
  description: Generated<string>
  remote_group_id: number | null
  backend_id: Generated<string>
}

export interface CloudBPortsTable {
  resource_id: number
  tenant_id: number
  network_id: number | null
  subnet_id: number | null
  /** [{ip_address, subnet_id}] */
  fixed_ips: Json
  mac_address: Generated<string>
  device_id: Generated<string>
  device_owner: Generated<string>
  /** [{ip_address, mac_address}] */
  allowed_address_pairs: Json
}

export interface CloudBPortSecurityGroupsTable {
  port_id: number
  security_group_id: number
}

export interface CloudBFloatingIpsTable {
  resource_id: number
  tenant_id: number
  address: string | null
  backend_network_id: Generated<string>
  port_id: number | null
  external_address: string | null
}

export interface CloudBRoutersTable {
  resource_id: number
  tenant_id: number
  /** [{destination, nexthop}] */
  routes: Json
  /** [{ip_address, subnet_id}] */
  fixed_ips: Json
}

export interface CloudBRouterInterfacesTable {
  router_id: number
  port_id: number
}

export interface CloudBMigrationsTable {
  id: Generated<number>
  uuid: string
  name: Generated<string>
  description: Generated<string>
  mappings: Json
  created_by_id: number | null
  src_resource_id: number
  dst_offering_id: number
  dst_plan_id: number | null
  dst_resource_id: number | null
  state: Generated<string>
  error_message: Generated<string>
  error_traceback: Generated<string>
  created: string
  modified: string
}

export interface CloudBTables {
  cloud_b_tenants: CloudBTenantsTable
  cloud_b_networks: CloudBNetworksTable
  cloud_b_subnets: CloudBSubnetsTable
  cloud_b_security_groups: CloudBSecurityGroupsTable
  cloud_b_security_group_rules: CloudBSecurityGroupRulesTable
  cloud_b_ports: CloudBPortsTable
  cloud_b_port_security_groups: CloudBPortSecurityGroupsTable
  cloud_b_floating_ips: CloudBFloatingIpsTable
  cloud_b_routers: CloudBRoutersTable
  cloud_b_router_interfaces: CloudBRouterInterfacesTable
  cloud_b_migrations: CloudBMigrationsTable
}

// ---- the database: one interface per area, joined here ----
export interface DB
  extends
    PlatformTables,
    CatalogTables,
    OrderTables,
    PoliciesTables,
    AgentsInvitationsTables,
    CloudCommonTables,
    CloudATables,
    CloudBTables {}
