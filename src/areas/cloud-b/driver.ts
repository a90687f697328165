// The cloudB backend contract and its shipped driver, an in-process emulator of an OpenStack-like
// cloud: tenants with networks, subnets, ports and security groups, floating IPs allocated from an
// external network, and routers with interfaces and static routes. Its state lives in the cloud
// base's emulator store, so every process and every restart sees the same backend; ids, MAC
// addresses and IP addresses come from per-settings counters, so answers are deterministic.
// Every operation goes through `step(op)` first, so the settings' fail_next / fail_all / slow_ms
// options reach it (operation names are the method names in snake case, e.g. attach_floating_ip).
import { BackendError, EmulatorBase, emulatedIpv4, registerDriver, type DriverCall } from '../cloud/driver.js'
import { addressAt, networkSize, parseCidr } from './validators.js'

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
  createSubnet(
    networkId: string,
    input: { name: string; cidr: string; gateway_ip?: string | null; dns_nameservers?: string[] },
  ): Promise<BackendSubnet>
  deleteSubnet(backendId: string): Promise<void>
  createSecurityGroup(
    tenantId: string,
    input: { name: string; description: string; rules: Omit<BackendRule, 'backend_id'>[] },
  ): Promise<BackendSecurityGroup>
  deleteSecurityGroup(backendId: string): Promise<void>
  createPort(
    networkId: string,
    input: {
      name: string
      subnet_id?: string | null
      ip_address?: string | null
      security_groups?: string[]
      allowed_address_pairs?: { ip_address: string; mac_address: string }[]
    },
  ): Promise<BackendPort>
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

const K = {
  tenant: 'tenant',
  network: 'network',
  subnet: 'subnet',
  securityGroup: 'security_group',
  port: 'port',
  floatingIp: 'floating_ip',
  router: 'router',
} as const

/** The external network every emulated tenant reaches; floating IPs are allocated there. */
export const EMULATED_EXTERNAL_NETWORK = 'ext-net-1'
export const ROUTER_INTERFACE_OWNER = 'network:router_interface'

function notFound(what: string, id: string): BackendError {
  return new BackendError(`${what} ${id} could not be found.`)
}

export class CloudBEmulator extends EmulatorBase implements CloudBDriver {
  constructor(call: DriverCall) {
    super(call)
  }

  private async must<T>(kind: string, id: string, what: string): Promise<T> {
    const o = await this.getObject<T>(kind, id)
    if (!o) throw notFound(what, id)
    return o
  }

  private async children<T extends { tenant_id: string }>(kind: string, tenantId: string): Promise<T[]> {
    return (await this.listObjects<T>(kind)).map((o) => o.data).filter((d) => d.tenant_id === tenantId)
  }

  private async macAddress(): Promise<string> {
    const n = await this.nextNumber('mac')
    return `fa:16:3e:${[(n >> 16) & 255, (n >> 8) & 255, n & 255].map((b) => b.toString(16).padStart(2, '0')).join(':')}`
  }

  // ---- tenants ----

  async createTenant(input: { name: string; description: string; limits: Record<string, number> }) {
    await this.step('create_tenant')
    const backend_id = await this.nextId('tenant')
    // A tenant comes with an internal network, its subnet and a default security group, as
    // the reference's tenant creation does.
    const tenant: BackendTenant = {
      backend_id,
      name: input.name,
      description: input.description,
      limits: input.limits,
      external_network_id: EMULATED_EXTERNAL_NETWORK,
      internal_network_id: '',
    }
    await this.putObject(K.tenant, backend_id, tenant)
    const net = await this.insertNetwork(backend_id, `${input.name}-int-net`)
    await this.insertSubnet(net, { name: `${input.name}-sub-net`, cidr: '192.168.42.0/24' })
    await this.insertSecurityGroup(backend_id, {
      name: 'default',
      description: 'Default security group',
      rules: [
        {
          ethertype: 'IPv4',
          direction: 'egress',
          protocol: '',
          from_port: null,
          to_port: null,
          cidr: '0.0.0.0/0',
          description: '',
        },
        {
          ethertype: 'IPv4',
          direction: 'ingress',
          protocol: 'tcp',
          from_port: 22,
          to_port: 22,
          cidr: '0.0.0.0/0',
          description: 'ssh',
        },
      ],
    })
    tenant.internal_network_id = net.backend_id
    await this.putObject(K.tenant, backend_id, tenant)
    return tenant
  }

  async updateTenant(
    backendId: string,
    input: { name?: string; description?: string; limits?: Record<string, number> },
  ) {
    await this.step('update_tenant')
    const t = await this.must<BackendTenant>(K.tenant, backendId, 'Tenant')
    if (input.name !== undefined) t.name = input.name
    if (input.description !== undefined) t.description = input.description
    if (input.limits !== undefined) t.limits = { ...t.limits, ...input.limits }
    await this.putObject(K.tenant, backendId, t)
    return t
  }

  async deleteTenant(backendId: string) {
    await this.step('delete_tenant')
    await this.must<BackendTenant>(K.tenant, backendId, 'Tenant')
    for (const kind of [K.floatingIp, K.router, K.port, K.securityGroup, K.subnet, K.network]) {
      for (const o of await this.children<{ tenant_id: string; backend_id: string }>(kind, backendId)) {
        await this.deleteObject(kind, o.backend_id)
      }
    }
    await this.deleteObject(K.tenant, backendId)
  }

  async getTenant(backendId: string) {
    await this.step('pull_tenant')
    return this.getObject<BackendTenant>(K.tenant, backendId)
  }

  async listNetworks(tenantId: string) {
    await this.step('list_networks')
    return this.children<BackendNetwork>(K.network, tenantId)
  }

  async listSubnets(tenantId: string) {
    await this.step('list_subnets')
    return this.children<BackendSubnet>(K.subnet, tenantId)
  }

  async listSecurityGroups(tenantId: string) {
    await this.step('list_security_groups')
    return this.children<BackendSecurityGroup>(K.securityGroup, tenantId)
  }

  async listPorts(tenantId: string) {
    await this.step('list_ports')
    return this.children<BackendPort>(K.port, tenantId)
  }

  // ---- networks and subnets ----

  private async insertNetwork(tenantId: string, name: string): Promise<BackendNetwork> {
    const backend_id = await this.nextId('net')
    const n = await this.nextNumber('segmentation')
    const net: BackendNetwork = {
      backend_id,
      tenant_id: tenantId,
      name,
      is_external: false,
      type: 'vxlan',
      segmentation_id: 1000 + n,
      mtu: 1450,
    }
    await this.putObject(K.network, backend_id, net)
    return net
  }

  async createNetwork(tenantId: string, input: { name: string }) {
    await this.step('create_network')
    await this.must<BackendTenant>(K.tenant, tenantId, 'Tenant')
    return this.insertNetwork(tenantId, input.name)
  }

  async deleteNetwork(backendId: string) {
    await this.step('delete_network')
    await this.must<BackendNetwork>(K.network, backendId, 'Network')
    const inUse = (await this.listObjects<BackendSubnet>(K.subnet)).some(
      (s) => s.data.network_id === backendId,
    )
    if (inUse) throw new BackendError(`Unable to delete network ${backendId}: it has subnets.`)
    await this.deleteObject(K.network, backendId)
  }

  private async insertSubnet(
    net: BackendNetwork,
    input: { name: string; cidr: string; gateway_ip?: string | null; dns_nameservers?: string[] },
  ): Promise<BackendSubnet> {
    const c = parseCidr(input.cidr)
    if (!c) throw new BackendError(`Invalid CIDR ${input.cidr}.`)
    const size = networkSize(c)
    if (size < 4) throw new BackendError(`Subnet ${c.text} is too small.`)
    const gateway = input.gateway_ip === undefined ? addressAt(c, 1) : input.gateway_ip
    const backend_id = await this.nextId('subnet')
    const subnet: BackendSubnet = {
      backend_id,
      tenant_id: net.tenant_id,
      network_id: net.backend_id,
      name: input.name,
      cidr: c.text,
      gateway_ip: gateway,
      ip_version: c.version,
      allocation_pools: [{ start: addressAt(c, 2), end: addressAt(c, size - 2) }],
      dns_nameservers: input.dns_nameservers ?? [],
      enable_dhcp: true,
      used: gateway ? [gateway] : [],
    }
    await this.putObject(K.subnet, backend_id, subnet)
    return subnet
  }

  async createSubnet(
    networkId: string,
    input: { name: string; cidr: string; gateway_ip?: string | null; dns_nameservers?: string[] },
  ) {
    await this.step('create_subnet')
    const net = await this.must<BackendNetwork>(K.network, networkId, 'Network')
    return this.insertSubnet(net, input)
  }

  async deleteSubnet(backendId: string) {
    await this.step('delete_subnet')
    await this.must<BackendSubnet>(K.subnet, backendId, 'Subnet')
    const inUse = (await this.listObjects<BackendPort>(K.port)).some((p) =>
      p.data.fixed_ips.some((f) => f.subnet_id === backendId),
    )
    if (inUse)
      throw new BackendError(
        `Unable to delete subnet ${backendId}: one or more ports have an IP allocation from this subnet.`,
      )
    await this.deleteObject(K.subnet, backendId)
  }

  /** The next free address of the subnet's pools, marked used. */
  private async allocate(subnet: BackendSubnet, wanted?: string | null): Promise<string> {
    const c = parseCidr(subnet.cidr)!
    if (wanted) {
      if (subnet.used.includes(wanted))
        throw new BackendError(`IP address ${wanted} already allocated in subnet ${subnet.backend_id}.`)
      subnet.used.push(wanted)
      await this.putObject(K.subnet, subnet.backend_id, subnet)
      return wanted
    }
    const size = networkSize(c)
    for (let i = 2; i <= size - 2; i++) {
      const ip = addressAt(c, i)
      if (!subnet.used.includes(ip)) {
        subnet.used.push(ip)
        await this.putObject(K.subnet, subnet.backend_id, subnet)
        return ip
      }
    }
    throw new BackendError(`No available IP addresses in subnet ${subnet.backend_id}.`)
  }

  private async release(fixed: FixedIp[]): Promise<void> {
    for (const f of fixed) {
      const s = await this.getObject<BackendSubnet>(K.subnet, f.subnet_id)
      if (!s) continue
      s.used = s.used.filter((ip) => ip !== f.ip_address)
      await this.putObject(K.subnet, s.backend_id, s)
    }
  }

  // ---- security groups ----

  private async insertSecurityGroup(
    tenantId: string,
    input: { name: string; description: string; rules: Omit<BackendRule, 'backend_id'>[] },
  ): Promise<BackendSecurityGroup> {
    const backend_id = await this.nextId('sg')
    const rules: BackendRule[] = []
    for (const r of input.rules) rules.push({ ...r, backend_id: await this.nextId('sg-rule') })
    const sg: BackendSecurityGroup = {
      backend_id,
      tenant_id: tenantId,
      name: input.name,
      description: input.description,
      rules,
    }
    await this.putObject(K.securityGroup, backend_id, sg)
    return sg
  }

  async createSecurityGroup(
    tenantId: string,
    input: { name: string; description: string; rules: Omit<BackendRule, 'backend_id'>[] },
  ) {
    await this.step('create_security_group')
    await this.must<BackendTenant>(K.tenant, tenantId, 'Tenant')
    return this.insertSecurityGroup(tenantId, input)
  }

  async deleteSecurityGroup(backendId: string) {
    await this.step('delete_security_group')
    await this.must<BackendSecurityGroup>(K.securityGroup, backendId, 'Security group')
    await this.deleteObject(K.securityGroup, backendId)
  }

  // ---- ports ----

  private async insertPort(
    net: BackendNetwork,
    input: {
      name: string
      subnet_id?: string | null
      ip_address?: string | null
      security_groups?: string[]
      allowed_address_pairs?: { ip_address: string; mac_address: string }[]
      device_id?: string
      device_owner?: string
      status?: string
    },
  ): Promise<BackendPort> {
    const subnets = (await this.listObjects<BackendSubnet>(K.subnet))
      .map((s) => s.data)
      .filter((s) => s.network_id === net.backend_id)
    const subnet = input.subnet_id ? subnets.find((s) => s.backend_id === input.subnet_id) : subnets[0]
    if (input.subnet_id && !subnet) throw notFound('Subnet', input.subnet_id)
    const fixed_ips: FixedIp[] = subnet
      ? [{ ip_address: await this.allocate(subnet, input.ip_address), subnet_id: subnet.backend_id }]
      : []
    const backend_id = await this.nextId('port')
    const port: BackendPort = {
      backend_id,
      tenant_id: net.tenant_id,
      network_id: net.backend_id,
      name: input.name,
      fixed_ips,
      mac_address: await this.macAddress(),
      device_id: input.device_id ?? '',
      device_owner: input.device_owner ?? '',
      status: input.status ?? 'DOWN',
      security_groups: input.security_groups ?? [],
      allowed_address_pairs: input.allowed_address_pairs ?? [],
    }
    await this.putObject(K.port, backend_id, port)
    return port
  }

  async createPort(
    networkId: string,
    input: {
      name: string
      subnet_id?: string | null
      ip_address?: string | null
      security_groups?: string[]
      allowed_address_pairs?: { ip_address: string; mac_address: string }[]
    },
  ) {
    await this.step('create_port')
    const net = await this.must<BackendNetwork>(K.network, networkId, 'Network')
    return this.insertPort(net, input)
  }

  async deletePort(backendId: string) {
    await this.step('delete_port')
    const port = await this.must<BackendPort>(K.port, backendId, 'Port')
    if (port.device_owner === ROUTER_INTERFACE_OWNER) {
      throw new BackendError(
        `Port ${backendId} cannot be deleted directly via the port API: it has device owner ${port.device_owner}.`,
      )
    }
    await this.release(port.fixed_ips)
    await this.unlinkFloatingIps(backendId)
    await this.deleteObject(K.port, backendId)
  }

  async getPort(backendId: string) {
    await this.step('pull_port')
    return this.getObject<BackendPort>(K.port, backendId)
  }

  private async unlinkFloatingIps(portId: string): Promise<void> {
    for (const f of await this.listObjects<BackendFloatingIp>(K.floatingIp)) {
      if (f.data.port_id === portId) {
        await this.putObject(K.floatingIp, f.backend_id, {
          ...f.data,
          port_id: null,
          fixed_ip_address: null,
          status: 'DOWN',
        })
      }
    }
  }

  // ---- floating IPs ----

  async createFloatingIp(tenantId: string, input: { description: string }) {
    await this.step('create_floating_ip')
    await this.must<BackendTenant>(K.tenant, tenantId, 'Tenant')
    const backend_id = await this.nextId('fip')
    const fip: BackendFloatingIp = {
      backend_id,
      tenant_id: tenantId,
      address: emulatedIpv4(await this.nextNumber('external_ip')),
      floating_network_id: EMULATED_EXTERNAL_NETWORK,
      port_id: null,
      fixed_ip_address: null,
      status: 'DOWN',
      description: input.description,
    }
    await this.putObject(K.floatingIp, backend_id, fip)
    return fip
  }

  async deleteFloatingIp(backendId: string) {
    await this.step('delete_floating_ip')
    await this.must<BackendFloatingIp>(K.floatingIp, backendId, 'Floating IP')
    await this.deleteObject(K.floatingIp, backendId)
  }

  async getFloatingIp(backendId: string) {
    await this.step('pull_floating_ip')
    return this.getObject<BackendFloatingIp>(K.floatingIp, backendId)
  }

  async listFloatingIps(tenantId: string) {
    await this.step('list_floating_ips')
    return this.children<BackendFloatingIp>(K.floatingIp, tenantId)
  }

  async updateFloatingIpDescription(backendId: string, description: string) {
    await this.step('update_floating_ip')
    const f = await this.must<BackendFloatingIp>(K.floatingIp, backendId, 'Floating IP')
    f.description = description
    await this.putObject(K.floatingIp, backendId, f)
    return f
  }

  async attachFloatingIp(backendId: string, portId: string) {
    await this.step('attach_floating_ip')
    const f = await this.must<BackendFloatingIp>(K.floatingIp, backendId, 'Floating IP')
    const port = await this.must<BackendPort>(K.port, portId, 'Port')
    if (port.tenant_id !== f.tenant_id) {
      throw new BackendError(`Port ${portId} does not belong to the tenant of floating IP ${backendId}.`)
    }
    if (!port.fixed_ips.length) throw new BackendError(`Port ${portId} has no fixed IP.`)
    f.port_id = portId
    f.fixed_ip_address = port.fixed_ips[0]!.ip_address
    f.status = 'ACTIVE'
    await this.putObject(K.floatingIp, backendId, f)
    return f
  }

  async detachFloatingIp(backendId: string) {
    await this.step('detach_floating_ip')
    const f = await this.must<BackendFloatingIp>(K.floatingIp, backendId, 'Floating IP')
    f.port_id = null
    f.fixed_ip_address = null
    f.status = 'DOWN'
    await this.putObject(K.floatingIp, backendId, f)
    return f
  }

  // ---- routers ----

  async createRouter(tenantId: string, input: { name: string }) {
    await this.step('create_router')
    await this.must<BackendTenant>(K.tenant, tenantId, 'Tenant')
    const backend_id = await this.nextId('router')
    const router: BackendRouter = {
      backend_id,
      tenant_id: tenantId,
      name: input.name,
      routes: [],
      fixed_ips: [
        {
          ip_address: emulatedIpv4(await this.nextNumber('external_ip')),
          subnet_id: `${EMULATED_EXTERNAL_NETWORK}-subnet`,
        },
      ],
      ports: [],
    }
    await this.putObject(K.router, backend_id, router)
    return router
  }

  async deleteRouter(backendId: string) {
    await this.step('delete_router')
    const r = await this.must<BackendRouter>(K.router, backendId, 'Router')
    if (r.ports.length) throw new BackendError(`Router ${backendId} still has ports.`)
    await this.deleteObject(K.router, backendId)
  }

  async getRouter(backendId: string) {
    await this.step('pull_router')
    return this.getObject<BackendRouter>(K.router, backendId)
  }

  async addRouterInterface(backendId: string, target: { subnet_id: string } | { port_id: string }) {
    await this.step('add_router_interface')
    const r = await this.must<BackendRouter>(K.router, backendId, 'Router')
    let port: BackendPort
    if ('subnet_id' in target) {
      const subnet = await this.must<BackendSubnet>(K.subnet, target.subnet_id, 'Subnet')
      if (subnet.tenant_id !== r.tenant_id)
        throw new BackendError(`Subnet ${subnet.backend_id} belongs to another tenant.`)
      for (const pid of r.ports) {
        const p = await this.getObject<BackendPort>(K.port, pid)
        if (p?.fixed_ips.some((f) => f.subnet_id === subnet.backend_id)) {
          throw new BackendError(`Router ${backendId} already has a port on subnet ${subnet.backend_id}.`)
        }
      }
      const net = await this.must<BackendNetwork>(K.network, subnet.network_id, 'Network')
      // The subnet's gateway address serves the interface; it is reserved at subnet creation.
      const gateway = subnet.gateway_ip
      const fixedIp = gateway && !(await this.portWithIp(subnet.backend_id, gateway)) ? gateway : null
      if (fixedIp) subnet.used = subnet.used.filter((ip) => ip !== fixedIp)
      if (fixedIp) await this.putObject(K.subnet, subnet.backend_id, subnet)
      port = await this.insertPort(net, {
        name: '',
        subnet_id: subnet.backend_id,
        ip_address: fixedIp,
        device_id: backendId,
        device_owner: ROUTER_INTERFACE_OWNER,
        status: 'ACTIVE',
      })
    } else {
      port = await this.must<BackendPort>(K.port, target.port_id, 'Port')
      if (port.tenant_id !== r.tenant_id)
        throw new BackendError(`Port ${port.backend_id} belongs to another tenant.`)
      if (port.device_owner)
        throw new BackendError(`Port ${port.backend_id} is in use by ${port.device_owner}.`)
      port.device_id = backendId
      port.device_owner = ROUTER_INTERFACE_OWNER
      port.status = 'ACTIVE'
      await this.putObject(K.port, port.backend_id, port)
    }
    r.ports.push(port.backend_id)
    await this.putObject(K.router, backendId, r)
    return port
  }

  private async portWithIp(subnetId: string, ip: string): Promise<boolean> {
    return (await this.listObjects<BackendPort>(K.port)).some((p) =>
      p.data.fixed_ips.some((f) => f.subnet_id === subnetId && f.ip_address === ip),
    )
  }

  async removeRouterInterface(backendId: string, target: { subnet_id: string } | { port_id: string }) {
    await this.step('remove_router_interface')
    const r = await this.must<BackendRouter>(K.router, backendId, 'Router')
    let port: BackendPort | null = null
    for (const pid of r.ports) {
      const p = await this.getObject<BackendPort>(K.port, pid)
      if (!p) continue
      if (
        'port_id' in target
          ? p.backend_id === target.port_id
          : p.fixed_ips.some((f) => f.subnet_id === target.subnet_id)
      ) {
        port = p
        break
      }
    }
    if (!port) {
      const what = 'port_id' in target ? `port ${target.port_id}` : `subnet ${target.subnet_id}`
      throw new BackendError(`Router ${backendId} has no interface on ${what}.`)
    }
    r.ports = r.ports.filter((p) => p !== port.backend_id)
    // Static routes through the removed interface's subnet would be unreachable.
    await this.putObject(K.router, backendId, r)
    if ('subnet_id' in target) {
      await this.release(port.fixed_ips)
      await this.deleteObject(K.port, port.backend_id)
      return { port_id: port.backend_id, deleted: true }
    }
    port.device_id = ''
    port.device_owner = ''
    port.status = 'DOWN'
    await this.putObject(K.port, port.backend_id, port)
    return { port_id: port.backend_id, deleted: false }
  }

  async setRoutes(backendId: string, routes: { destination: string; nexthop: string }[]) {
    await this.step('set_routes')
    const r = await this.must<BackendRouter>(K.router, backendId, 'Router')
    r.routes = routes
    await this.putObject(K.router, backendId, r)
    return r
  }
}

registerDriver<CloudBDriver>('cloudB', 'emulator', (call) => new CloudBEmulator(call))
