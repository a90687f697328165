// The cloudB emulator's floating IPs (allocated from the external network) and routers (with
// interfaces and static routes), on top of its networking (emulator-network.ts); registered as
// the cloudB driver `emulator`.
import { BackendError, emulatedIpv4, registerDriver, type DriverCall } from '../cloud/driver.js'
import type {
  BackendFloatingIp,
  BackendNetwork,
  BackendPort,
  BackendRouter,
  BackendSubnet,
  CloudBDriver,
} from './driver.js'
import { EMULATED_EXTERNAL_NETWORK, K, NetworkEmulator, ROUTER_INTERFACE_OWNER } from './emulator-network.js'

export class CloudBEmulator extends NetworkEmulator implements CloudBDriver {
  constructor(call: DriverCall) {
    super(call)
  }

  // ---- floating IPs ----

  async createFloatingIp(tenantId: string, input: { description: string }) {
    await this.inTenant('create_floating_ip', tenantId)
    return this.insertObject<BackendFloatingIp>(K.floatingIp, 'fip', async (backend_id) => ({
      backend_id,
      tenant_id: tenantId,
      address: emulatedIpv4(await this.nextNumber('external_ip')),
      floating_network_id: EMULATED_EXTERNAL_NETWORK,
      port_id: null,
      fixed_ip_address: null,
      status: 'DOWN',
      description: input.description,
    }))
  }

  deleteFloatingIp(backendId: string) {
    return this.remove('delete_floating_ip', K.floatingIp, backendId, 'Floating IP')
  }

  getFloatingIp(backendId: string) {
    return this.fetch<BackendFloatingIp>('pull_floating_ip', K.floatingIp, backendId)
  }

  listFloatingIps(tenantId: string) {
    return this.listOf<BackendFloatingIp>('list_floating_ips', K.floatingIp, tenantId)
  }

  /** The operation's step, then the floating IP (it must exist) changed and stored again. */
  private modifyFloatingIp(
    op: string,
    backendId: string,
    change: (f: BackendFloatingIp) => void | Promise<void>,
  ) {
    return this.modify<BackendFloatingIp>(op, K.floatingIp, backendId, 'Floating IP', change)
  }

  updateFloatingIpDescription(backendId: string, description: string) {
    return this.modifyFloatingIp('update_floating_ip', backendId, (f) => {
      f.description = description
    })
  }

  attachFloatingIp(backendId: string, portId: string) {
    return this.modifyFloatingIp('attach_floating_ip', backendId, async (f) => {
      const port = await this.must<BackendPort>(K.port, portId, 'Port')
      if (port.tenant_id !== f.tenant_id) {
        throw new BackendError(`Port ${portId} does not belong to the tenant of floating IP ${backendId}.`)
      }
      if (!port.fixed_ips.length) throw new BackendError(`Port ${portId} has no fixed IP.`)
      f.port_id = portId
      f.fixed_ip_address = port.fixed_ips[0]!.ip_address
      f.status = 'ACTIVE'
    })
  }

  detachFloatingIp(backendId: string) {
    return this.modifyFloatingIp('detach_floating_ip', backendId, (f) => {
      f.port_id = null
      f.fixed_ip_address = null
      f.status = 'DOWN'
    })
  }

  // ---- routers ----

  async createRouter(tenantId: string, input: { name: string }) {
    await this.inTenant('create_router', tenantId)
    return this.insertObject<BackendRouter>(K.router, 'router', async (backend_id) => ({
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
    }))
  }

  deleteRouter(backendId: string) {
    return this.remove<BackendRouter>('delete_router', K.router, backendId, 'Router', async (r) => {
      if (r.ports.length) throw new BackendError(`Router ${backendId} still has ports.`)
    })
  }

  getRouter(backendId: string) {
    return this.fetch<BackendRouter>('pull_router', K.router, backendId)
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

  setRoutes(backendId: string, routes: { destination: string; nexthop: string }[]) {
    return this.modify<BackendRouter>('set_routes', K.router, backendId, 'Router', (r) => {
      r.routes = routes
    })
  }
}

registerDriver<CloudBDriver>('cloudB', 'emulator', (call) => new CloudBEmulator(call))
