// The cloudB emulator, an in-process OpenStack-like cloud: its tenants, networks, subnets,
// security groups and ports. Its state lives in the cloud base's emulator store, so every process
// and every restart sees the same backend; ids, MAC addresses and IP addresses come from
// per-settings counters, so answers are deterministic. Every operation goes through `step(op)`
// first, so the settings' fail_next / fail_all / slow_ms options reach it (operation names are
// the method names in snake case, e.g. attach_floating_ip).
import { BackendError, EmulatorBase, type DriverCall } from '../cloud/driver.js'
import type {
  BackendFloatingIp,
  BackendNetwork,
  BackendPort,
  BackendRule,
  BackendSecurityGroup,
  BackendSubnet,
  BackendTenant,
  FixedIp,
  PortInput,
  SecurityGroupInput,
  SubnetInput,
} from './driver.js'
import { addressAt, networkSize, parseCidr } from './validators.js'

export const K = {
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

/**
 * The emulator's tenants, networks, subnets, security groups and ports; the floating IPs and
 * routers (emulator.ts) build on it.
 */
export class NetworkEmulator extends EmulatorBase {
  constructor(call: DriverCall) {
    super(call)
  }

  protected async children<T extends { tenant_id: string }>(kind: string, tenantId: string): Promise<T[]> {
    return (await this.listObjects<T>(kind)).map((o) => o.data).filter((d) => d.tenant_id === tenantId)
  }

  /** The operation's step, then the object of `kind` (null when the backend has none). */
  protected async fetch<T>(op: string, kind: string, id: string): Promise<T | null> {
    await this.step(op)
    return this.getObject<T>(kind, id)
  }

  /** The operation's step, then the tenant's objects of `kind`. */
  protected async listOf<T extends { tenant_id: string }>(op: string, kind: string, tenantId: string) {
    await this.step(op)
    return this.children<T>(kind, tenantId)
  }

  /** The operation's step, then the tenant an object is made in, which must exist. */
  protected async inTenant(op: string, tenantId: string): Promise<void> {
    await this.step(op)
    await this.must<BackendTenant>(K.tenant, tenantId, 'Tenant')
  }

  /** The operation's step, then the network an object is made in, which must exist. */
  protected async inNetwork(op: string, networkId: string): Promise<BackendNetwork> {
    await this.step(op)
    return this.must<BackendNetwork>(K.network, networkId, 'Network')
  }

  private async macAddress(): Promise<string> {
    const n = await this.nextNumber('mac')
    return `fa:16:3e:${[(n >> 16) & 255, (n >> 8) & 255, n & 255].map((b) => b.toString(16).padStart(2, '0')).join(':')}`
  }

  // ---- tenants ----

  async createTenant(input: { name: string; description: string; limits: Record<string, number> }) {
    await this.step('create_tenant')
    // A tenant comes with an internal network, its subnet and a default security group, as
    // the reference's tenant creation does.
    const tenant = await this.insertObject<BackendTenant>(K.tenant, 'tenant', (backend_id) => ({
      backend_id,
      name: input.name,
      description: input.description,
      limits: input.limits,
      external_network_id: EMULATED_EXTERNAL_NETWORK,
      internal_network_id: '',
    }))
    const backend_id = tenant.backend_id
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

  updateTenant(
    backendId: string,
    input: { name?: string; description?: string; limits?: Record<string, number> },
  ) {
    return this.modify<BackendTenant>('update_tenant', K.tenant, backendId, 'Tenant', (t) => {
      if (input.name !== undefined) t.name = input.name
      if (input.description !== undefined) t.description = input.description
      if (input.limits !== undefined) t.limits = { ...t.limits, ...input.limits }
    })
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

  getTenant(backendId: string) {
    return this.fetch<BackendTenant>('pull_tenant', K.tenant, backendId)
  }

  listNetworks(tenantId: string) {
    return this.listOf<BackendNetwork>('list_networks', K.network, tenantId)
  }

  listSubnets(tenantId: string) {
    return this.listOf<BackendSubnet>('list_subnets', K.subnet, tenantId)
  }

  listSecurityGroups(tenantId: string) {
    return this.listOf<BackendSecurityGroup>('list_security_groups', K.securityGroup, tenantId)
  }

  listPorts(tenantId: string) {
    return this.listOf<BackendPort>('list_ports', K.port, tenantId)
  }

  // ---- networks and subnets ----

  private insertNetwork(tenantId: string, name: string): Promise<BackendNetwork> {
    return this.insertObject<BackendNetwork>(K.network, 'net', async (backend_id) => ({
      backend_id,
      tenant_id: tenantId,
      name,
      is_external: false,
      type: 'vxlan',
      segmentation_id: 1000 + (await this.nextNumber('segmentation')),
      mtu: 1450,
    }))
  }

  async createNetwork(tenantId: string, input: { name: string }) {
    await this.inTenant('create_network', tenantId)
    return this.insertNetwork(tenantId, input.name)
  }

  deleteNetwork(backendId: string) {
    return this.remove('delete_network', K.network, backendId, 'Network', async () => {
      const inUse = (await this.listObjects<BackendSubnet>(K.subnet)).some(
        (s) => s.data.network_id === backendId,
      )
      if (inUse) throw new BackendError(`Unable to delete network ${backendId}: it has subnets.`)
    })
  }

  private insertSubnet(net: BackendNetwork, input: SubnetInput): Promise<BackendSubnet> {
    const c = parseCidr(input.cidr)
    if (!c) throw new BackendError(`Invalid CIDR ${input.cidr}.`)
    const size = networkSize(c)
    if (size < 4) throw new BackendError(`Subnet ${c.text} is too small.`)
    const gateway = input.gateway_ip === undefined ? addressAt(c, 1) : input.gateway_ip
    return this.insertObject<BackendSubnet>(K.subnet, 'subnet', (backend_id) => ({
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
    }))
  }

  async createSubnet(networkId: string, input: SubnetInput) {
    return this.insertSubnet(await this.inNetwork('create_subnet', networkId), input)
  }

  deleteSubnet(backendId: string) {
    return this.remove('delete_subnet', K.subnet, backendId, 'Subnet', async () => {
      const inUse = (await this.listObjects<BackendPort>(K.port)).some((p) =>
        p.data.fixed_ips.some((f) => f.subnet_id === backendId),
      )
      if (inUse)
        throw new BackendError(
          `Unable to delete subnet ${backendId}: one or more ports have an IP allocation from this subnet.`,
        )
    })
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

  protected async release(fixed: FixedIp[]): Promise<void> {
    for (const f of fixed) {
      const s = await this.getObject<BackendSubnet>(K.subnet, f.subnet_id)
      if (!s) continue
      s.used = s.used.filter((ip) => ip !== f.ip_address)
      await this.putObject(K.subnet, s.backend_id, s)
    }
  }

  // ---- security groups ----

  private insertSecurityGroup(tenantId: string, input: SecurityGroupInput): Promise<BackendSecurityGroup> {
    return this.insertObject<BackendSecurityGroup>(K.securityGroup, 'sg', async (backend_id) => {
      const rules: BackendRule[] = []
      for (const r of input.rules) rules.push({ ...r, backend_id: await this.nextId('sg-rule') })
      return { backend_id, tenant_id: tenantId, name: input.name, description: input.description, rules }
    })
  }

  async createSecurityGroup(tenantId: string, input: SecurityGroupInput) {
    await this.inTenant('create_security_group', tenantId)
    return this.insertSecurityGroup(tenantId, input)
  }

  deleteSecurityGroup(backendId: string) {
    return this.remove('delete_security_group', K.securityGroup, backendId, 'Security group')
  }

  // ---- ports ----

  protected async insertPort(
    net: BackendNetwork,
    input: PortInput & { device_id?: string; device_owner?: string; status?: string },
  ): Promise<BackendPort> {
    const subnets = (await this.listObjects<BackendSubnet>(K.subnet))
      .map((s) => s.data)
      .filter((s) => s.network_id === net.backend_id)
    const subnet = input.subnet_id ? subnets.find((s) => s.backend_id === input.subnet_id) : subnets[0]
    if (input.subnet_id && !subnet) throw this.missing('Subnet', input.subnet_id)
    const fixed_ips: FixedIp[] = subnet
      ? [{ ip_address: await this.allocate(subnet, input.ip_address), subnet_id: subnet.backend_id }]
      : []
    return this.insertObject<BackendPort>(K.port, 'port', async (backend_id) => ({
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
    }))
  }

  async createPort(networkId: string, input: PortInput) {
    return this.insertPort(await this.inNetwork('create_port', networkId), input)
  }

  deletePort(backendId: string) {
    return this.remove<BackendPort>('delete_port', K.port, backendId, 'Port', async (port) => {
      if (port.device_owner === ROUTER_INTERFACE_OWNER) {
        throw new BackendError(
          `Port ${backendId} cannot be deleted directly via the port API: it has device owner ${port.device_owner}.`,
        )
      }
      await this.release(port.fixed_ips)
      await this.unlinkFloatingIps(backendId)
    })
  }

  getPort(backendId: string) {
    return this.fetch<BackendPort>('pull_port', K.port, backendId)
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
}
