// Row types of the tables of catalog, and the cloud service settings offerings point at.
import type { Generated } from 'kysely'
import type { Bool, Json } from './values.js'

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
  /** null until set */
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
  /** the provider's own identifier of the offering on its backend */
  backend_id: Generated<string>
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
  article_code: Generated<string>
  /** at most this many resources (not terminated) may use the plan; null: no limit */
  max_amount: number | null
  backend_id: Generated<string>
  created: string
  modified: string
}

export interface PlanOrganizationGroupsTable {
  plan_id: number
  organization_group_id: number
}

/** What an offering bills: one measured unit and how it is billed. */
export interface OfferingComponentsTable {
  id: Generated<number>
  uuid: string
  offering_id: number
  /** unique per offering: the key of limits, prices, quotas and usages */
  type: string
  name: string
  description: Generated<string>
  measured_unit: Generated<string>
  /** usage | limit | fixed | one | few */
  billing_type: Generated<string>
  unit_factor: Generated<number>
  /** month | quarterly | annual | total, or null */
  limit_period: string | null
  limit_amount: number | null
  article_code: Generated<string>
  max_value: number | null
  min_value: number | null
  max_available_limit: number | null
  is_boolean: Generated<Bool>
  default_limit: number | null
  is_prepaid: Generated<Bool>
  overage_component_id: number | null
  min_prepaid_duration: number | null
  max_prepaid_duration: number | null
  prepaid_duration_step: number | null
  min_renewal_duration: number | null
  max_renewal_duration: number | null
  renewal_duration_step: number | null
  created: string
  modified: string
}

/** A plan's price and amount of one component of its offering. */
export interface PlanComponentsTable {
  id: Generated<number>
  plan_id: number
  component_id: number
  amount: Generated<number>
  price: Generated<number | string>
  /** the price from `future_price_start_date` (a YYYY-MM-DD date) on */
  future_price: number | string | null
  future_price_start_date: string | null
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
  /** unique; the site agent names backend accounts after it */
  slug: string
  description: Generated<string>
  /** the identifier a downstream provider gave it (federated setups) */
  effective_id: Generated<string>
  backend_metadata: Generated<Json>
  paused: Generated<Bool>
  downscaled: Generated<Bool>
  restrict_member_access: Generated<Bool>
  error_message: Generated<string>
  error_traceback: Generated<string>
  /** when the provider's agent last reported on it */
  last_sync: string | null
  /** when `end_date` last changed, and by whom */
  end_date_updated_at: string | null
  end_date_requested_by_id: number | null
  /** null until set */
  options: Json
  /** component type → the latest reported usage */
  current_usages: Generated<Json>
  /** the provider's report: [{header, body}]; null until submitted */
  report: Json
  /** '' | 'paused' | 'downscaled': the restriction applied because usage reached a limit */
  usage_limit_restriction: Generated<string>
  created: string
  modified: string
}

/** A resource's access endpoints, as its provider reports them. */
export interface ResourceEndpointsTable {
  id: Generated<number>
  uuid: string
  resource_id: number
  name: string
  url: string
  created: string
  modified: string
}

/** Per member and role: how far the provider's backend has synced a resource's membership. */
export interface ResourceMemberSyncStatusesTable {
  id: Generated<number>
  uuid: string
  resource_id: number
  user_id: number
  /** resource | resource_project */
  scope_type: string
  resource_project_id: number | null
  role_name: string
  /** synced | pending | error | missing_in_idp */
  state: string
  message: Generated<string>
  created: string
  modified: string
}

/** Per table and slugified name: the last numeric suffix given to a generated slug. */
export interface SlugCountersTable {
  scope: string
  base: string
  n: number
}

export interface CatalogTables {
  service_settings: ServiceSettingsTable
  service_providers: ServiceProvidersTable
  categories: CategoriesTable
  offerings: OfferingsTable
  offering_organization_groups: OfferingOrganizationGroupsTable
  plans: PlansTable
  plan_organization_groups: PlanOrganizationGroupsTable
  offering_components: OfferingComponentsTable
  plan_components: PlanComponentsTable
  resources: ResourcesTable
  resource_endpoints: ResourceEndpointsTable
  resource_member_sync_statuses: ResourceMemberSyncStatusesTable
  slug_counters: SlugCountersTable
}
