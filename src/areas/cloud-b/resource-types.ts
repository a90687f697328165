// The cloudB resource types registered with the cloud base: for each, the backend steps (create,
// update, delete, pull through the driver) and how a step's `extra` is saved in its extension table.
import type { AppContext } from '../../context.js'
import { parseJson, toJson } from '../../db/values.js'
import { registerCloudResourceType, type CloudResourceType } from '../cloud/common.js'
import { removeCloudResources } from '../cloud/states.js'
import type { BackendResource, BackendResult, LifecycleOp, ResourceOps } from '../cloud/lifecycle.js'
import type { CloudBDriver } from './driver.js'
import { importTenantObjects } from './importing.js'
import { backendIdOf, cloudBDriver, EXT, ext, type Db } from './objects.js'
import { cloudBRepository } from './repository.js'
import { PATHS, TYPES } from './schema.js'

type Outcome = 'OK' | 'ERRED' | 'DELETED'
type SettleHook = (ctx: AppContext, id: number, op: LifecycleOp, outcome: Outcome) => Promise<void>

/** Hooks other parts of this area add to settle events (orders, migrations). */
const settleHooks: SettleHook[] = []
export function onTenantSettled(hook: SettleHook): void {
  settleHooks.push(hook)
}

/**
 * Registers one kind. `create` is the create step, given the driver, the database, the row and
 * its extension row; `ops` (the other steps) gets the driver, the database and the kind's
 * extension row by id; `remove` is the delete step when it only removes the backend object (a row
 * without a backend id has nothing to remove). `saveExtra` defaults to writing `extra` into the
 * extension table.
 */
function registerKind(
  kind: keyof typeof TYPES,
  modelName: string,
  spec: {
    create: (d: CloudBDriver, db: Db, r: BackendResource, e: Record<string, any>) => Promise<BackendResult>
    ops?: (
      d: CloudBDriver,
      db: Db,
      extOf: (id: number) => Promise<Record<string, any>>,
      ctx: AppContext,
    ) => Partial<Omit<ResourceOps, 'create'>>
    remove?: (d: CloudBDriver, backendId: string) => Promise<void>
    saveExtra?: CloudResourceType['saveExtra']
    onSettled?: CloudResourceType['onSettled']
  },
): void {
  registerCloudResourceType({
    type: TYPES[kind],
    kind: 'cloudB',
    path: PATHS[kind],
    modelName,
    // floatingIp → floating_ip
    eventObject: kind.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`),
    ops: (call) => {
      const d = cloudBDriver(call)
      const db = call.ctx.db
      const extOf = (id: number) => ext(db, EXT[kind], id)
      return {
        create: async (r) => spec.create(d, db, r, await extOf(r.id)),
        async delete(r) {
          if (r.backend_id) await spec.remove?.(d, r.backend_id)
        },
        ...spec.ops?.(d, db, extOf, call.ctx),
      }
    },
    saveExtra: spec.saveExtra ?? ((db, id, extra) => cloudBRepository(db).updateExt(EXT[kind], id, extra)),
    ...(spec.onSettled ? { onSettled: spec.onSettled } : {}),
  })
}

/** The given keys of `extra` that are present, each through `map` (default: as given). */
function present(
  extra: Record<string, unknown>,
  keys: readonly string[],
  map: (v: unknown) => unknown = (v) => v,
): Record<string, unknown> {
  const v: Record<string, unknown> = {}
  for (const k of keys) if (extra[k] !== undefined) v[k] = map(extra[k])
  return v
}

registerKind('tenant', 'Tenant', {
  async create(d, db, r, e) {
    const t = await d.createTenant({
      name: r.name,
      description: r.description,
      limits: parseJson(e.limits, {}),
    })
    return {
      backend_id: t.backend_id,
      extra: { external_network_id: t.external_network_id, internal_network_id: t.internal_network_id },
    }
  },
  ops: (d, db, extOf, ctx) => ({
    async update(r) {
      const e = await extOf(r.id)
      await d.updateTenant(r.backend_id, {
        name: r.name,
        description: r.description,
        limits: parseJson(e.limits, {}),
      })
    },
    async delete(r) {
      if (r.backend_id) await d.deleteTenant(r.backend_id)
      await removeCloudResources(ctx, db, await cloudBRepository(db).tenantChildren(r.id))
    },
    async pull(r) {
      const t = await d.getTenant(r.backend_id)
      if (!t) return null
      return { name: t.name, description: t.description, extra: { limits: t.limits } }
    },
  }),
  async saveExtra(db, id, extra) {
    const v = present(extra, ['limits'], toJson)
    if (typeof extra.external_network_id === 'string') v.external_network_id = extra.external_network_id
    if (typeof extra.internal_network_id === 'string') v.internal_network_id = extra.internal_network_id
    await cloudBRepository(db).updateExt('cloud_b_tenants', id, v)
  },
  async onSettled(ctx, id, op, outcome) {
    if (outcome === 'OK' && (op === 'create' || op === 'pull')) await importTenantObjects(ctx, id)
    if (outcome === 'OK' && op === 'create') {
      const t = await cloudBRepository(ctx.db).resource(id)
      if (t) await cloudBRepository(ctx.db).setResourceBackendId(TYPES.tenant, id, t.backend_id)
    }
    for (const hook of settleHooks) await hook(ctx, id, op, outcome)
  },
})

registerKind('network', 'Network', {
  async create(d, db, r, e) {
    const n = await d.createNetwork(await backendIdOf(db, e.tenant_id), { name: r.name })
    return {
      backend_id: n.backend_id,
      extra: { type: n.type, segmentation_id: n.segmentation_id, mtu: n.mtu },
    }
  },
  remove: (d, id) => d.deleteNetwork(id),
})

registerKind('subnet', 'SubNet', {
  async create(d, db, r, e) {
    const s = await d.createSubnet(await backendIdOf(db, e.network_id), {
      name: r.name,
      cidr: e.cidr,
      gateway_ip: e.gateway_ip ?? undefined,
      dns_nameservers: parseJson<string[]>(e.dns_nameservers, []),
    })
    return {
      backend_id: s.backend_id,
      extra: {
        gateway_ip: s.gateway_ip,
        allocation_pools: toJson(s.allocation_pools),
        ip_version: s.ip_version,
        cidr: s.cidr,
      },
    }
  },
  remove: (d, id) => d.deleteSubnet(id),
})

registerKind('securityGroup', 'SecurityGroup', {
  async create(d, db, r, e) {
    const rules = await cloudBRepository(db).rulesOf([r.id])
    const g = await d.createSecurityGroup(await backendIdOf(db, e.tenant_id), {
      name: r.name,
      description: r.description,
      rules: rules.map((x) => ({
        ethertype: x.ethertype,
        direction: x.direction,
        protocol: x.protocol,
        from_port: x.from_port,
        to_port: x.to_port,
        cidr: x.cidr,
        description: x.description,
      })),
    })
    return { backend_id: g.backend_id }
  },
  remove: (d, id) => d.deleteSecurityGroup(id),
})

registerKind('port', 'Port', {
  async create(d, db, r, e) {
    const wanted = parseJson<{ ip_address: string }[]>(e.fixed_ips, [])
    const p = await d.createPort(await backendIdOf(db, e.network_id), {
      name: r.name,
      subnet_id: e.subnet_id ? await backendIdOf(db, e.subnet_id) : null,
      ip_address: wanted[0]?.ip_address ?? null,
      security_groups: await cloudBRepository(db).securityGroupBackendIds(r.id),
      allowed_address_pairs: parseJson(e.allowed_address_pairs, []),
    })
    return {
      backend_id: p.backend_id,
      runtime_state: p.status,
      extra: { fixed_ips: toJson(p.fixed_ips), mac_address: p.mac_address },
    }
  },
  ops: (d) => ({
    async pull(r) {
      const p = await d.getPort(r.backend_id)
      if (!p) return null
      return {
        runtime_state: p.status,
        extra: {
          fixed_ips: toJson(p.fixed_ips),
          mac_address: p.mac_address,
          device_id: p.device_id,
          device_owner: p.device_owner,
        },
      }
    },
  }),
  remove: (d, id) => d.deletePort(id),
})

registerKind('floatingIp', 'FloatingIP', {
  async create(d, db, r, e) {
    const f = await d.createFloatingIp(await backendIdOf(db, e.tenant_id), { description: r.description })
    return {
      backend_id: f.backend_id,
      runtime_state: f.status,
      extra: { address: f.address, backend_network_id: f.floating_network_id },
    }
  },
  ops: (d) => ({
    async update(r) {
      const f = await d.updateFloatingIpDescription(r.backend_id, r.description)
      return { runtime_state: f.status }
    },
    async pull(r) {
      const f = await d.getFloatingIp(r.backend_id)
      if (!f) return null
      return {
        runtime_state: f.status,
        description: f.description,
        extra: { address: f.address, backend_network_id: f.floating_network_id, port_backend_id: f.port_id },
      }
    },
  }),
  remove: (d, id) => d.deleteFloatingIp(id),
  async saveExtra(db, id, extra) {
    const repo = cloudBRepository(db)
    const v = present(extra, ['address', 'backend_network_id'])
    if (extra.port_backend_id !== undefined) {
      const row = await repo.resource(id)
      const port =
        typeof extra.port_backend_id === 'string' && row
          ? await repo.resourceByBackendId(TYPES.port, row.service_settings_id, extra.port_backend_id)
          : undefined
      v.port_id = port?.id ?? null
    }
    await repo.updateExt('cloud_b_floating_ips', id, v)
  },
})

registerKind('router', 'Router', {
  async create(d, db, r, e) {
    const x = await d.createRouter(await backendIdOf(db, e.tenant_id), { name: r.name })
    return { backend_id: x.backend_id, extra: { fixed_ips: x.fixed_ips } }
  },
  ops: (d, db, _extOf, ctx) => ({
    async delete(r) {
      const repo = cloudBRepository(db)
      // A router goes with its interfaces: ports made for a subnet are removed, others freed.
      for (const i of await repo.interfacePorts([r.id])) {
        if (r.backend_id && i.port_backend_id) {
          const out = await d.removeRouterInterface(r.backend_id, { port_id: i.port_backend_id })
          await afterInterfaceRemoved(ctx, db, i.port_id, out.deleted)
        }
      }
      if (r.backend_id) await d.deleteRouter(r.backend_id)
    },
    async pull(r) {
      const x = await d.getRouter(r.backend_id)
      if (!x) return null
      return { name: x.name, extra: { fixed_ips: x.fixed_ips, routes: x.routes } }
    },
  }),
  async saveExtra(db, id, extra) {
    await cloudBRepository(db).updateExt(
      'cloud_b_routers',
      id,
      present(extra, ['fixed_ips', 'routes'], toJson),
    )
  },
})

/** After the backend removed a router interface: the port is deleted with it, or freed. */
export async function afterInterfaceRemoved(
  ctx: AppContext,
  db: Db,
  portId: number,
  deleted: boolean,
): Promise<void> {
  const repo = cloudBRepository(db)
  await repo.removeInterface(portId)
  if (deleted) await removeCloudResources(ctx, db, [portId])
  else await repo.updateExt('cloud_b_ports', portId, { device_id: '', device_owner: '' })
  if (!deleted) await repo.updateResource(portId, { runtime_state: 'DOWN' })
}
