// Row types of the tables of cloud resources: the common record, the emulator's state, cloudA.
import type { Generated } from 'kysely'
import type { Json } from './values.js'

export interface CloudResourcesTable {
  id: Generated<number>
  uuid: string
  /** e.g. cloudA.PublicIP; also the marketplace resources' scope_type */
  resource_type: string
  name: string
  description: Generated<string>
  service_settings_id: number
  project_id: number
  /** The cloud resource it belongs to (a cloudB tenant's objects: their tenant), whose marketplace resource is theirs. */
  parent_id: number | null
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
