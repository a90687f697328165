// The cloudB backend contract: the objects an OpenStack-like cloud answers and the operations
// the service calls. The shipped driver is the emulator (emulator.ts).

export interface FixedIp {
  ip_address: string
  subnet_id: string
}

export interface BackendTenant {
  backend_id: string
  name: string
  description: string
  limits: Record<string, number>
  external_network_id: string
  internal_network_id: string
}

export interface BackendNetwork {
  backend_id: string
  tenant_id: string
  name: string
  is_external: boolean
  type: string
  segmentation_id: number | null
  mtu: number | null
}

export interface BackendSubnet {
  backend_id: string
  tenant_id: string
  network_id: string
  name: string
  cidr: string
  gateway_ip: string | null
  ip_version: 4 | 6
  allocation_pools: { start: string; end: string }[]
  dns_nameservers: string[]
  enable_dhcp: boolean
  /** addresses handed out, the gateway included */
  used: string[]
}

export interface BackendRule {
  ethertype: string
  direction: string
  protocol: string
  from_port: number | null
  to_port: number | null
  cidr: string
  description: string
  backend_id: string
}

export interface BackendSecurityGroup {
  backend_id: string
  tenant_id: string
  name: string
  description: string
  rules: BackendRule[]
}

export interface BackendPort {
  backend_id: string
  tenant_id: string
  network_id: string
  name: string
  fixed_ips: FixedIp[]
  mac_address: string
  device_id: string
  device_owner: string
  /** DOWN until something uses it */
  status: string
  security_groups: string[]
  allowed_address_pairs: { ip_address: string; mac_address: string }[]
}

export interface BackendFloatingIp {
  backend_id: string
  tenant_id: string
  address: string
  floating_network_id: string
  port_id: string | null
  fixed_ip_address: string | null
  /** DOWN when not linked to a port, ACTIVE when in use */
  status: string
  description: string
}

export interface BackendRouter {
  backend_id: string
  tenant_id: string
  name: string
  routes: { destination: string; nexthop: string }[]
  /** the router's external gateway addresses */
  fixed_ips: FixedIp[]
  ports: string[]
}

/** What a new subnet is made from. */
export interface SubnetInput {
  name: string
  cidr: string
  gateway_ip?: string | null
  dns_nameservers?: string[]
}

/** What a new security group is made from. */
export interface SecurityGroupInput {
  name: string
  description: string
  rules: Omit<BackendRule, 'backend_id'>[]
}

/** What a new port is made from. */
export interface PortInput {
  name: string
  subnet_id?: string | null
  ip_address?: string | null
  security_groups?: string[]
  allowed_address_pairs?: { ip_address: string; mac_address: string }[]
}

export interface CloudBDriver {
  createTenant(input: {
    name: string
    description: string
    limits: Record<string, number>
  }): Promise<BackendTenant>
  updateTenant(
    backendId: string,
    input: { name?: string; description?: string; limits?: Record<string, number> },
  ): Promise<BackendTenant>
  deleteTenant(backendId: string): Promise<void>
  getTenant(backendId: string): Promise<BackendTenant | null>
  listNetworks(tenantId: string): Promise<BackendNetwork[]>
  listSubnets(tenantId: string): Promise<BackendSubnet[]>
  listSecurityGroups(tenantId: string): Promise<BackendSecurityGroup[]>
  listPorts(tenantId: string): Promise<BackendPort[]>
  createNetwork(tenantId: string, input: { name: string }): Promise<BackendNetwork>
  deleteNetwork(backendId: string): Promise<void>
  createSubnet(networkId: string, input: SubnetInput): Promise<BackendSubnet>
  deleteSubnet(backendId: string): Promise<void>
  createSecurityGroup(tenantId: string, input: SecurityGroupInput): Promise<BackendSecurityGroup>
  deleteSecurityGroup(backendId: string): Promise<void>
  createPort(networkId: string, input: PortInput): Promise<BackendPort>
  deletePort(backendId: string): Promise<void>
  getPort(backendId: string): Promise<BackendPort | null>
  createFloatingIp(tenantId: string, input: { description: string }): Promise<BackendFloatingIp>
  deleteFloatingIp(backendId: string): Promise<void>
  getFloatingIp(backendId: string): Promise<BackendFloatingIp | null>
  listFloatingIps(tenantId: string): Promise<BackendFloatingIp[]>
  updateFloatingIpDescription(backendId: string, description: string): Promise<BackendFloatingIp>
  attachFloatingIp(backendId: string, portId: string): Promise<BackendFloatingIp>
  detachFloatingIp(backendId: string): Promise<BackendFloatingIp>
  createRouter(tenantId: string, input: { name: string }): Promise<BackendRouter>
  deleteRouter(backendId: string): Promise<void>
  getRouter(backendId: string): Promise<BackendRouter | null>
  /** Adds an interface on a subnet (a new port with a free address) or on an existing port. */
  addRouterInterface(
    backendId: string,
    target: { subnet_id: string } | { port_id: string },
  ): Promise<BackendPort>
  /** Removes the interface; returns the port that served it (deleted when it was made for a subnet). */
  removeRouterInterface(
    backendId: string,
    target: { subnet_id: string } | { port_id: string },
  ): Promise<{ port_id: string; deleted: boolean }>
  setRoutes(backendId: string, routes: { destination: string; nexthop: string }[]): Promise<BackendRouter>
}
