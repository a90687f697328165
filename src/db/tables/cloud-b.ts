// Row types of the tables of cloudB: extension tables of cloud_resources rows (resource_type cloudB.*), migrations.
import type { Generated } from 'kysely'
import type { Bool, Json } from './values.js'

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
