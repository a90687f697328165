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
