// cloudB use cases: the resource types this area registers with the cloud base (their backend
// steps through the driver), rendering, and the actions of tenants, floating IPs and routers.
// Actions that change a resource on the backend move it OK → UPDATE_SCHEDULED at once and a job
// (`cloudB.action`) makes the backend call: UPDATING → OK, or ERRED with the error recorded.
import type { Kysely, Transaction } from 'kysely'
import type { AppContext } from '../../context.js'
import type { DB } from '../../db/tables.js'
import { parseJson, toBool, toJson } from '../../db/values.js'
import { AppError, fieldError, forbidden, invalidState, nonFieldError, notFound } from '../../http/errors.js'
import { uuidFromLink, urlOf } from '../../http/links.js'
import type { Actor } from '../../http/permissions.js'
import type { OrderTerm } from '../../http/query.js'
import { normalizeUuid } from '../../http/uuid.js'
import {
  canManage,
  cloudResourcesQuery,
  cloudResourceType,
  findVisibleResource,
  resourceVisibility,
  insertResource,
  registerCloudResourceType,
  resolveManagedProject,
  resolveSettingsLink,
  settingsInfo,
  toCommonRecord,
  type BackendResult,
  type CommonFilters,
  type CommonRow,
} from '../cloud/common.js'
import type { LifecycleOp } from '../cloud/lifecycle.js'
import { BackendError, driverFor, type DriverCall } from '../cloud/driver.js'
import './driver.js'
import type { CloudBDriver, BackendPort } from './driver.js'
import { cloudBRepository, type ExtFilters, type ExtRow, type ExtTable } from './repository.js'
import {
  PATHS,
  TYPES,
  type FloatingIp,
  type Network,
  type Port,
  type PortRecord,
  type Router,
  type SecurityGroup,
  type Subnet,
  type Tenant,
} from './schema.js'
import { cidrContains, normalizeIp, parseCidr, ruleErrors, validateRoutes, type Route } from './validators.js'

type Db = Kysely<DB> | Transaction<DB>
type Page<T> = (
  count: () => Promise<number>,
  fetch: (limit: number, offset: number) => Promise<T[]>,
) => Promise<T[]>

/** Used for rendering inside jobs and after writes (visibility was checked by the caller). */
const SYSTEM: Actor = {
  id: 0,
  uuid: '',
  username: 'system',
  fullName: '',
  email: '',
  civilNumber: null,
  isStaff: true,
  isSupport: false,
  affiliations: [],
  identitySource: '',
  image: null,
  grants: [],
}

export const ACTION_JOB = 'cloudB.action'
export const PULL_FLOATING_IPS_JOB = 'cloudB.tenant.pull-floating-ips'

export function cloudBDriver(call: DriverCall): CloudBDriver {
  return driverFor<CloudBDriver>('cloudB', call)
}

async function driverOf(ctx: AppContext, settingsId: number): Promise<CloudBDriver> {
  const settings = await settingsInfo(ctx, settingsId)
  if (!settings) throw new BackendError('The service settings of this resource no longer exist.')
  return cloudBDriver({ ctx, settings })
}

const EXT: Record<keyof typeof TYPES, ExtTable> = {
  tenant: 'cloud_b_tenants',
  network: 'cloud_b_networks',
  subnet: 'cloud_b_subnets',
  port: 'cloud_b_ports',
  securityGroup: 'cloud_b_security_groups',
  floatingIp: 'cloud_b_floating_ips',
  router: 'cloud_b_routers',
}

async function backendIdOf(db: Db, id: number | null | undefined): Promise<string> {
  if (id == null) return ''
  return (await cloudBRepository(db).resource(id))?.backend_id ?? ''
}

async function ext(db: Db, table: ExtTable, id: number): Promise<Record<string, any>> {
  const e = await cloudBRepository(db).extOf(table, id)
  if (!e) throw new BackendError('The resource has no cloudB details.')
  return e
}

// ---- importing what the backend has (tenant creation and pull) ----

/** Makes the rows of a tenant's backend networks, subnets, security groups and ports exist. */
export async function importTenantObjects(ctx: AppContext, tenantId: number): Promise<void> {
  const repo = cloudBRepository(ctx.db)
  const tenant = await repo.resource(tenantId)
  if (!tenant?.backend_id) return
  const d = await driverOf(ctx, tenant.service_settings_id)
  const now = ctx.clock().toISOString()
  const common = (name: string, description: string, backend_id: string, type: string) => ({
    uuid: ctx.newUuid(),
    resource_type: type,
    name,
    description,
    service_settings_id: tenant.service_settings_id,
    project_id: tenant.project_id,
    state: 'OK',
    backend_id,
    created: now,
    modified: now,
  })
  const nets = await repo.backendIds('cloud_b_networks', tenantId)
  for (const n of await d.listNetworks(tenant.backend_id)) {
    if (nets.has(n.backend_id)) continue
    const id = await repo.insertResource(common(n.name, '', n.backend_id, TYPES.network))
    await repo.insertExt('cloud_b_networks', {
      resource_id: id,
      tenant_id: tenantId,
      is_external: n.is_external ? 1 : 0,
      type: n.type,
      segmentation_id: n.segmentation_id,
      mtu: n.mtu,
    })
    nets.set(n.backend_id, id)
  }
  const subnets = await repo.backendIds('cloud_b_subnets', tenantId)
  for (const s of await d.listSubnets(tenant.backend_id)) {
    const networkId = nets.get(s.network_id)
    if (subnets.has(s.backend_id) || networkId === undefined) continue
    const id = await repo.insertResource(common(s.name, '', s.backend_id, TYPES.subnet))
    await repo.insertExt('cloud_b_subnets', {
      resource_id: id,
      tenant_id: tenantId,
      network_id: networkId,
      cidr: s.cidr,
      gateway_ip: s.gateway_ip,
      ip_version: s.ip_version,
      allocation_pools: toJson(s.allocation_pools),
      dns_nameservers: toJson(s.dns_nameservers),
      enable_dhcp: s.enable_dhcp ? 1 : 0,
    })
    subnets.set(s.backend_id, id)
  }
  const groups = await repo.backendIds('cloud_b_security_groups', tenantId)
  for (const g of await d.listSecurityGroups(tenant.backend_id)) {
    if (groups.has(g.backend_id)) continue
    const id = await repo.insertResource(common(g.name, g.description, g.backend_id, TYPES.securityGroup))
    await repo.insertExt('cloud_b_security_groups', { resource_id: id, tenant_id: tenantId })
    await repo.insertRules(id, g.rules)
    groups.set(g.backend_id, id)
  }
  const ports = await repo.backendIds('cloud_b_ports', tenantId)
  for (const p of await d.listPorts(tenant.backend_id)) {
    if (ports.has(p.backend_id)) continue
    const id = await insertPortRow(ctx, ctx.db, tenant, tenantId, p, nets, subnets)
    await repo.linkSecurityGroups(
      id,
      p.security_groups.map((b) => groups.get(b)).filter((x): x is number => x !== undefined),
    )
  }
}

async function insertPortRow(
  ctx: AppContext,
  db: Db,
  owner: { service_settings_id: number; project_id: number },
  tenantId: number,
  p: BackendPort,
  nets: Map<string, number>,
  subnets: Map<string, number>,
): Promise<number> {
  const repo = cloudBRepository(db)
  const now = ctx.clock().toISOString()
  const id = await repo.insertResource({
    uuid: ctx.newUuid(),
    resource_type: TYPES.port,
    name: p.name,
    description: '',
    service_settings_id: owner.service_settings_id,
    project_id: owner.project_id,
    state: 'OK',
    backend_id: p.backend_id,
    runtime_state: p.status,
    created: now,
    modified: now,
  })
  await repo.insertExt('cloud_b_ports', {
    resource_id: id,
    tenant_id: tenantId,
    network_id: nets.get(p.network_id) ?? null,
    subnet_id: p.fixed_ips[0] ? (subnets.get(p.fixed_ips[0].subnet_id) ?? null) : null,
    fixed_ips: toJson(p.fixed_ips),
    mac_address: p.mac_address,
    device_id: p.device_id,
    device_owner: p.device_owner,
    allowed_address_pairs: toJson(p.allowed_address_pairs),
  })
  return id
}

// ---- the resource types ----

/** Hooks other parts of this area add to settle events (orders, migrations). */
const settleHooks: ((
  ctx: AppContext,
  id: number,
  op: LifecycleOp,
  outcome: 'OK' | 'ERRED' | 'DELETED',
) => Promise<void>)[] = []
export function onTenantSettled(
  hook: (ctx: AppContext, id: number, op: LifecycleOp, outcome: 'OK' | 'ERRED' | 'DELETED') => Promise<void>,
): void {
  settleHooks.push(hook)
}

registerCloudResourceType({
  type: TYPES.tenant,
  kind: 'cloudB',
  path: PATHS.tenant,
  modelName: 'Tenant',
  ops: (call) => {
    const d = cloudBDriver(call)
    const db = call.ctx.db
    return {
      async create(r) {
        const e = await ext(db, 'cloud_b_tenants', r.id)
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
      async update(r) {
        const e = await ext(db, 'cloud_b_tenants', r.id)
        await d.updateTenant(r.backend_id, {
          name: r.name,
          description: r.description,
          limits: parseJson(e.limits, {}),
        })
      },
      async delete(r) {
        if (r.backend_id) await d.deleteTenant(r.backend_id)
        const repo = cloudBRepository(db)
        await repo.deleteResources(await repo.tenantChildren(r.id))
      },
      async pull(r) {
        const t = await d.getTenant(r.backend_id)
        if (!t) return null
        return { name: t.name, description: t.description, extra: { limits: t.limits } }
      },
    }
  },
  async saveExtra(db, id, extra) {
    const v: Record<string, unknown> = {}
    if (extra.limits !== undefined) v.limits = toJson(extra.limits)
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

registerCloudResourceType({
  type: TYPES.network,
  kind: 'cloudB',
  path: PATHS.network,
  modelName: 'Network',
  ops: (call) => {
    const d = cloudBDriver(call)
    const db = call.ctx.db
    return {
      async create(r) {
        const e = await ext(db, 'cloud_b_networks', r.id)
        const n = await d.createNetwork(await backendIdOf(db, e.tenant_id), { name: r.name })
        return {
          backend_id: n.backend_id,
          extra: { type: n.type, segmentation_id: n.segmentation_id, mtu: n.mtu },
        }
      },
      async delete(r) {
        if (r.backend_id) await d.deleteNetwork(r.backend_id)
      },
    }
  },
  async saveExtra(db, id, extra) {
    await cloudBRepository(db).updateExt('cloud_b_networks', id, extra)
  },
})

registerCloudResourceType({
  type: TYPES.subnet,
  kind: 'cloudB',
  path: PATHS.subnet,
  modelName: 'SubNet',
  ops: (call) => {
    const d = cloudBDriver(call)
    const db = call.ctx.db
    return {
      async create(r) {
        const e = await ext(db, 'cloud_b_subnets', r.id)
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
      async delete(r) {
        if (r.backend_id) await d.deleteSubnet(r.backend_id)
      },
    }
  },
  async saveExtra(db, id, extra) {
    await cloudBRepository(db).updateExt('cloud_b_subnets', id, extra)
  },
})

registerCloudResourceType({
  type: TYPES.securityGroup,
  kind: 'cloudB',
  path: PATHS.securityGroup,
  modelName: 'SecurityGroup',
  ops: (call) => {
    const d = cloudBDriver(call)
    const db = call.ctx.db
    return {
      async create(r) {
        const e = await ext(db, 'cloud_b_security_groups', r.id)
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
      async delete(r) {
        if (r.backend_id) await d.deleteSecurityGroup(r.backend_id)
      },
    }
  },
})

registerCloudResourceType({
  type: TYPES.port,
  kind: 'cloudB',
  path: PATHS.port,
  modelName: 'Port',
  ops: (call) => {
    const d = cloudBDriver(call)
    const db = call.ctx.db
    return {
      async create(r) {
        const repo = cloudBRepository(db)
        const e = await ext(db, 'cloud_b_ports', r.id)
        const wanted = parseJson<{ ip_address: string }[]>(e.fixed_ips, [])
        const groups = await repo.securityGroupLinks([r.id])
        const groupBackends: string[] = []
        for (const g of groups) groupBackends.push(await backendIdOf(db, g.security_group_id))
        const p = await d.createPort(await backendIdOf(db, e.network_id), {
          name: r.name,
          subnet_id: e.subnet_id ? await backendIdOf(db, e.subnet_id) : null,
          ip_address: wanted[0]?.ip_address ?? null,
          security_groups: groupBackends,
          allowed_address_pairs: parseJson(e.allowed_address_pairs, []),
        })
        return {
          backend_id: p.backend_id,
          runtime_state: p.status,
          extra: { fixed_ips: toJson(p.fixed_ips), mac_address: p.mac_address },
        }
      },
      async delete(r) {
        if (r.backend_id) await d.deletePort(r.backend_id)
      },
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
    }
  },
  async saveExtra(db, id, extra) {
    await cloudBRepository(db).updateExt('cloud_b_ports', id, extra)
  },
})

registerCloudResourceType({
  type: TYPES.floatingIp,
  kind: 'cloudB',
  path: PATHS.floatingIp,
  modelName: 'FloatingIP',
  ops: (call) => {
    const d = cloudBDriver(call)
    const db = call.ctx.db
    return {
      async create(r) {
        const e = await ext(db, 'cloud_b_floating_ips', r.id)
        const f = await d.createFloatingIp(await backendIdOf(db, e.tenant_id), { description: r.description })
        return {
          backend_id: f.backend_id,
          runtime_state: f.status,
          extra: { address: f.address, backend_network_id: f.floating_network_id },
        }
      },
      async update(r) {
        const f = await d.updateFloatingIpDescription(r.backend_id, r.description)
        return { runtime_state: f.status }
      },
      async delete(r) {
        if (r.backend_id) await d.deleteFloatingIp(r.backend_id)
      },
      async pull(r) {
        const f = await d.getFloatingIp(r.backend_id)
        if (!f) return null
        return {
          runtime_state: f.status,
          description: f.description,
          extra: {
            address: f.address,
            backend_network_id: f.floating_network_id,
            port_backend_id: f.port_id,
          },
        }
      },
    }
  },
  async saveExtra(db, id, extra) {
    const repo = cloudBRepository(db)
    const v: Record<string, unknown> = {}
    if (extra.address !== undefined) v.address = extra.address
    if (extra.backend_network_id !== undefined) v.backend_network_id = extra.backend_network_id
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

registerCloudResourceType({
  type: TYPES.router,
  kind: 'cloudB',
  path: PATHS.router,
  modelName: 'Router',
  ops: (call) => {
    const d = cloudBDriver(call)
    const db = call.ctx.db
    return {
      async create(r) {
        const e = await ext(db, 'cloud_b_routers', r.id)
        const x = await d.createRouter(await backendIdOf(db, e.tenant_id), { name: r.name })
        return { backend_id: x.backend_id, extra: { fixed_ips: x.fixed_ips } }
      },
      async delete(r) {
        const repo = cloudBRepository(db)
        // A router goes with its interfaces: ports made for a subnet are removed, others freed.
        for (const i of await repo.interfacePorts([r.id])) {
          const port = await repo.resource(i.port_id)
          if (r.backend_id && port?.backend_id) {
            const out = await d.removeRouterInterface(r.backend_id, { port_id: port.backend_id })
            await afterInterfaceRemoved(db, i.port_id, out.deleted)
          }
        }
        if (r.backend_id) await d.deleteRouter(r.backend_id)
      },
      async pull(r) {
        const x = await d.getRouter(r.backend_id)
        if (!x) return null
        return { name: x.name, extra: { fixed_ips: x.fixed_ips, routes: x.routes } }
      },
    }
  },
  async saveExtra(db, id, extra) {
    const v: Record<string, unknown> = {}
    if (extra.fixed_ips !== undefined) v.fixed_ips = toJson(extra.fixed_ips)
    if (extra.routes !== undefined) v.routes = toJson(extra.routes)
    await cloudBRepository(db).updateExt('cloud_b_routers', id, v)
  },
})

async function afterInterfaceRemoved(db: Db, portId: number, deleted: boolean): Promise<void> {
  const repo = cloudBRepository(db)
  await repo.removeInterface(portId)
  if (deleted) await repo.deleteResources([portId])
  else await repo.updateExt('cloud_b_ports', portId, { device_id: '', device_owner: '' })
  if (!deleted) await repo.updateResource(portId, { runtime_state: 'DOWN' })
}

// ---- rendering ----

function tenantLink(base: string, r: ExtRow) {
  return {
    tenant: urlOf(base, PATHS.tenant, r.tenant_uuid)!,
    tenant_name: r.tenant_name,
    tenant_uuid: r.tenant_uuid,
  }
}

async function rulesByGroup(db: Db, base: string, ids: number[]) {
  const out = new Map<number, SecurityGroup['rules']>()
  for (const r of await cloudBRepository(db).rulesOf(ids)) {
    const list = out.get(r.security_group_id) ?? []
    list.push({
      id: r.id,
      ethertype: r.ethertype,
      direction: r.direction,
      protocol: r.protocol,
      from_port: r.from_port,
      to_port: r.to_port,
      cidr: r.cidr,
      description: r.description,
      remote_group_name: r.remote_group_name ?? null,
      remote_group_uuid: r.remote_group_uuid ?? null,
      remote_group: urlOf(base, PATHS.securityGroup, r.remote_group_uuid),
    })
    out.set(r.security_group_id, list)
  }
  return out
}

async function toSecurityGroups(db: Db, base: string, rows: ExtRow[]): Promise<SecurityGroup[]> {
  const rules = await rulesByGroup(
    db,
    base,
    rows.map((r) => r.id),
  )
  return rows.map((r) =>
    Object.assign(toCommonRecord(base, PATHS.securityGroup, r), {
      ...tenantLink(base, r),
      rules: rules.get(r.id) ?? [],
    }),
  )
}

/** Port records of spec 2.12, with their security groups, by port id. */
async function portRecords(
  ctx: AppContext,
  db: Db,
  base: string,
  ids: number[],
): Promise<Map<number, PortRecord>> {
  const repo = cloudBRepository(db)
  const ports = await repo.portsByIds(ids)
  const links = await repo.securityGroupLinks(ids)
  const groupIds = [...new Set(links.map((l) => l.security_group_id))]
  const groups = new Map<number, SecurityGroup>()
  if (groupIds.length) {
    const q = cloudResourcesQuery(db, TYPES.securityGroup, SYSTEM, {}).where(
      'cloud_resources.id',
      'in',
      groupIds,
    )
    const rows = await repo.listExt(q, 'cloud_b_security_groups', {}, [], groupIds.length, 0)
    for (const g of await toSecurityGroups(db, base, rows))
      groups.set(rows.find((r) => r.uuid === g.uuid)!.id, g)
  }
  void ctx
  const out = new Map<number, PortRecord>()
  for (const p of ports) {
    out.set(p.resource_id, {
      url: urlOf(base, PATHS.port, p.uuid)!,
      fixed_ips: parseJson(p.fixed_ips, []),
      mac_address: p.mac_address,
      subnet: urlOf(base, PATHS.subnet, p.subnet_uuid),
      subnet_uuid: p.subnet_uuid ?? null,
      subnet_name: p.subnet_name ?? null,
      subnet_description: p.subnet_description ?? null,
      subnet_cidr: p.subnet_cidr ?? null,
      allowed_address_pairs: parseJson(p.allowed_address_pairs, []),
      device_id: p.device_id,
      device_owner: p.device_owner,
      security_groups: links
        .filter((l) => l.port_id === p.resource_id)
        .map((l) => groups.get(l.security_group_id))
        .filter((g): g is SecurityGroup => !!g),
    })
  }
  return out
}

/** The quotas whose usage is the number of the tenant's objects of a kind, and the kind's table. */
const COUNTED_QUOTAS = [
  ['network_count', 'cloud_b_networks'],
  ['subnet_count', 'cloud_b_subnets'],
  ['security_group_count', 'cloud_b_security_groups'],
  ['port_count', 'cloud_b_ports'],
  ['floating_ip_count', 'cloud_b_floating_ips'],
  ['router_count', 'cloud_b_routers'],
] as const

/**
 * A tenant's quotas: each of its limits, and each counted quota (unlimited, -1, unless a limit
 * names it), with its usage: the number of the tenant's objects for a counted quota, else 0 (the
 * service runs no instances or volumes that would use cores, RAM or storage).
 */
async function tenantQuotas(db: Db, rows: ExtRow[]) {
  const ids = rows.map((r) => r.id)
  const usage = new Map<string, number>()
  if (ids.length) {
    for (const [name, table] of COUNTED_QUOTAS) {
      const counts = await db
        .selectFrom(table)
        .select(['tenant_id', (eb) => eb.fn.countAll<number | string>().as('n')])
        .where('tenant_id', 'in', ids)
        .groupBy('tenant_id')
        .execute()
      for (const c of counts) usage.set(`${c.tenant_id}/${name}`, Number(c.n))
    }
  }
  return (r: ExtRow) => {
    const limits = parseJson<Record<string, number>>(r.limits, {})
    const names = [...Object.keys(limits), ...COUNTED_QUOTAS.map(([n]) => n).filter((n) => !(n in limits))]
    return names.map((name) => ({
      name,
      limit: limits[name] ?? -1,
      usage: usage.get(`${r.id}/${name}`) ?? 0,
    }))
  }
}

async function toTenants(_ctx: AppContext, db: Db, base: string, rows: ExtRow[]): Promise<Tenant[]> {
  const quotas = await tenantQuotas(db, rows)
  return rows.map((r) =>
    Object.assign(toCommonRecord(base, PATHS.tenant, r), {
      limits: parseJson<Record<string, number>>(r.limits, {}),
      external_network_id: r.external_network_id,
      internal_network_id: r.internal_network_id,
      quotas: quotas(r),
    }),
  )
}

async function toNetworks(_ctx: AppContext, db: Db, base: string, rows: ExtRow[]): Promise<Network[]> {
  const subnets = await cloudBRepository(db).subnetsOfNetworks(rows.map((r) => r.id))
  return rows.map((r) =>
    Object.assign(toCommonRecord(base, PATHS.network, r), {
      ...tenantLink(base, r),
      is_external: toBool(r.is_external),
      type: r.type,
      segmentation_id: r.segmentation_id,
      mtu: r.mtu,
      subnets: subnets
        .filter((s) => s.network_id === r.id)
        .map((s) => ({
          uuid: s.uuid,
          url: urlOf(base, PATHS.subnet, s.uuid)!,
          name: s.name,
          description: s.description,
          cidr: s.cidr,
          gateway_ip: s.gateway_ip,
          allocation_pools: parseJson(s.allocation_pools, []),
          ip_version: s.ip_version,
          enable_dhcp: toBool(s.enable_dhcp),
        })),
    }),
  )
}

async function toSubnets(_ctx: AppContext, db: Db, base: string, rows: ExtRow[]): Promise<Subnet[]> {
  const repo = cloudBRepository(db)
  const out: Subnet[] = []
  for (const r of rows) {
    const net = await repo.resource(r.network_id)
    out.push(
      Object.assign(toCommonRecord(base, PATHS.subnet, r), {
        ...tenantLink(base, r),
        network: urlOf(base, PATHS.network, net?.uuid)!,
        network_name: net?.name ?? '',
        network_uuid: net?.uuid ?? '',
        cidr: r.cidr,
        gateway_ip: r.gateway_ip,
        ip_version: r.ip_version,
        allocation_pools: parseJson(r.allocation_pools, []),
        dns_nameservers: parseJson(r.dns_nameservers, []),
        enable_dhcp: toBool(r.enable_dhcp),
      }),
    )
  }
  return out
}

async function toPorts(ctx: AppContext, db: Db, base: string, rows: ExtRow[]): Promise<Port[]> {
  const records = await portRecords(
    ctx,
    db,
    base,
    rows.map((r) => r.id),
  )
  const repo = cloudBRepository(db)
  const floating = await repo.floatingIpsOfPorts(rows.map((r) => r.id))
  const out: Port[] = []
  for (const r of rows) {
    const net = r.network_id ? await repo.resource(r.network_id) : undefined
    out.push(
      Object.assign(toCommonRecord(base, PATHS.port, r), {
        ...records.get(r.id)!,
        ...tenantLink(base, r),
        network: urlOf(base, PATHS.network, net?.uuid),
        network_uuid: net?.uuid ?? null,
        network_name: net?.name ?? null,
        runtime_state: r.runtime_state,
        floating_ips: floating
          .filter((f) => f.port_id === r.id)
          .map((f) => urlOf(base, PATHS.floatingIp, f.uuid)!),
        // The backend has no administratively disabled ports.
        admin_state_up: true,
        status: r.runtime_state,
      }),
    )
  }
  return out
}

async function toFloatingIps(ctx: AppContext, db: Db, base: string, rows: ExtRow[]): Promise<FloatingIp[]> {
  const portIds = rows.map((r) => r.port_id).filter((x): x is number => x != null)
  const ports = await portRecords(ctx, db, base, portIds)
  return rows.map((r) => {
    const port = r.port_id != null ? ports.get(r.port_id) : undefined
    return Object.assign(toCommonRecord(base, PATHS.floatingIp, r), {
      runtime_state: r.runtime_state,
      address: r.address,
      backend_network_id: r.backend_network_id,
      ...tenantLink(base, r),
      port: port?.url ?? null,
      external_address: r.external_address,
      port_fixed_ips: port?.fixed_ips ?? [],
      instance_uuid: null,
      instance_name: null,
      instance_url: null,
    })
  })
}

async function toRouters(ctx: AppContext, db: Db, base: string, rows: ExtRow[]): Promise<Router[]> {
  const links = await cloudBRepository(db).interfacePorts(rows.map((r) => r.id))
  const ports = await portRecords(
    ctx,
    db,
    base,
    links.map((l) => l.port_id),
  )
  const tenantIds = [...new Set(rows.map((r) => r.tenant_id as number))]
  const externals = tenantIds.length
    ? await db
        .selectFrom('cloud_b_tenants')
        .select(['resource_id', 'external_network_id'])
        .where('resource_id', 'in', tenantIds)
        .execute()
    : []
  return rows.map((r) => {
    const own = links.filter((l) => l.router_id === r.id).map((l) => ports.get(l.port_id)!)
    const gateway = parseJson<{ ip_address: string; subnet_id: string }[]>(r.fixed_ips, [])
    const external = externals.find((e) => e.resource_id === r.tenant_id)?.external_network_id || null
    const fixed = [...gateway]
    for (const p of own) fixed.push(...(p.fixed_ips as { ip_address: string; subnet_id: string }[]))
    return Object.assign(toCommonRecord(base, PATHS.router, r), {
      ...tenantLink(base, r),
      routes: parseJson<Route[]>(r.routes, []),
      fixed_ips: fixed,
      ports: own,
      offering_external_ips: gateway.map((f) => f.ip_address),
      has_external_gateway: gateway.length > 0,
      external_fixed_ips: gateway,
      // The provider's external network is not a record here: its backend name, no uuid.
      external_network_uuid: null,
      external_network_name: gateway.length ? external : null,
    })
  })
}

type Renderer<T> = (ctx: AppContext, db: Db, base: string, rows: ExtRow[]) => Promise<T[]>

export interface KindDef<T> {
  type: string
  ext: ExtTable
  render: Renderer<T>
}

export const KINDS = {
  tenant: { type: TYPES.tenant, ext: EXT.tenant, render: toTenants } as KindDef<Tenant>,
  network: { type: TYPES.network, ext: EXT.network, render: toNetworks } as KindDef<Network>,
  subnet: { type: TYPES.subnet, ext: EXT.subnet, render: toSubnets } as KindDef<Subnet>,
  port: { type: TYPES.port, ext: EXT.port, render: toPorts } as KindDef<Port>,
  securityGroup: {
    type: TYPES.securityGroup,
    ext: EXT.securityGroup,
    render: (_c, db, base, rows) => toSecurityGroups(db, base, rows),
  } as KindDef<SecurityGroup>,
  floatingIp: { type: TYPES.floatingIp, ext: EXT.floatingIp, render: toFloatingIps } as KindDef<FloatingIp>,
  router: { type: TYPES.router, ext: EXT.router, render: toRouters } as KindDef<Router>,
}

export async function listKind<T>(
  ctx: AppContext,
  actor: Actor,
  kind: KindDef<T>,
  f: CommonFilters,
  x: ExtFilters,
  order: OrderTerm[],
  base: string,
  page: Page<T>,
): Promise<T[]> {
  const repo = cloudBRepository(ctx.db)
  const q = () => cloudResourcesQuery(ctx.db, kind.type, actor, f)
  return page(
    () => repo.countExt(q(), kind.ext, x),
    async (l, o) => kind.render(ctx, ctx.db, base, await repo.listExt(q(), kind.ext, x, order, l, o)),
  )
}

/** The visible object rendered, or 404 in the reference's wording. */
export async function getKind<T>(
  ctx: AppContext,
  actor: Actor,
  kind: KindDef<T>,
  uuid: string,
  base: string,
): Promise<T> {
  const u = normalizeUuid(uuid)
  const row = u
    ? await cloudBRepository(ctx.db).findExtBy(kind.type, kind.ext, { uuid: u }, resourceVisibility(actor))
    : undefined
  if (!row) throw notFound(`No ${cloudResourceType(kind.type).modelName} matches the given query.`)
  return (await kind.render(ctx, ctx.db, base, [row]))[0]!
}

export async function renderById<T>(ctx: AppContext, kind: KindDef<T>, id: number, base: string): Promise<T> {
  const row = await cloudBRepository(ctx.db).findExtBy(kind.type, kind.ext, { id }, { all: true })
  if (!row) throw notFound(`No ${cloudResourceType(kind.type).modelName} matches the given query.`)
  return (await kind.render(ctx, ctx.db, base, [row]))[0]!
}

/** A tenant URL given as a filter: its uuid, or null (matches nothing) for a URL of another kind. */
export function tenantFilter(
  link: string | undefined,
  byUuid: string | undefined,
): string | null | undefined {
  if (link === undefined) return byUuid
  const u = uuidFromLink(link, PATHS.tenant)
  if (!u || (byUuid && byUuid !== u)) return null
  return u
}

// ---- resolving links in request bodies ----

/** A cloudB object named by a hyperlink: must exist and be visible, else 400 on `field`. */
async function resolveObject(
  ctx: AppContext,
  actor: Actor,
  field: string,
  value: unknown,
  type: string,
  path: string,
): Promise<CommonRow> {
  if (typeof value !== 'string') throw fieldError(field, 'Incorrect type. Expected URL string.')
  const uuid = uuidFromLink(value, path)
  if (!uuid) throw fieldError(field, 'Invalid hyperlink - Incorrect URL match.')
  try {
    return await findVisibleResource(ctx, actor, type, uuid)
  } catch (e) {
    if (e instanceof AppError && e.kind === 'not_found')
      throw fieldError(field, 'Invalid hyperlink - Object does not exist.')
    throw e
  }
}

async function tenantIdOf(ctx: AppContext, table: ExtTable, id: number): Promise<number> {
  return (await ext(ctx.db, table, id)).tenant_id as number
}

function requireManage(actor: Actor, row: CommonRow): void {
  if (!canManage(actor, row)) throw forbidden()
}

// ---- creating tenants and their networking ----

export async function createTenant(
  ctx: AppContext,
  actor: Actor,
  body: {
    name: string
    description?: string
    service_settings: string
    project: string
    limits?: Record<string, number>
  },
  base: string,
): Promise<Tenant> {
  const settings = await resolveSettingsLink(ctx, actor, 'service_settings', body.service_settings, 'cloudB')
  const project = await resolveManagedProject(ctx, actor, 'project', body.project)
  const id = await ctx.db.transaction().execute(async (trx) => {
    const id = await insertResource(ctx, trx, {
      type: TYPES.tenant,
      name: body.name,
      description: body.description ?? '',
      settingsId: settings.id,
      projectId: project.id,
    })
    await cloudBRepository(trx).insertExt('cloud_b_tenants', {
      resource_id: id,
      limits: toJson(body.limits ?? {}),
    })
    return id
  })
  ctx.jobs.wake()
  return renderById(ctx, KINDS.tenant, id, base)
}

/** A child object of a tenant: inserted in CREATION_SCHEDULED with its create step queued. */
async function insertChild(
  ctx: AppContext,
  parent: CommonRow,
  type: string,
  table: ExtTable,
  name: string,
  description: string,
  extValues: Record<string, unknown>,
  after?: (trx: Transaction<DB>, id: number) => Promise<void>,
): Promise<number> {
  const id = await ctx.db.transaction().execute(async (trx) => {
    const id = await insertResource(ctx, trx, {
      type,
      name,
      description,
      settingsId: parent.service_settings_id,
      projectId: parent.project_id,
    })
    await cloudBRepository(trx).insertExt(table, { resource_id: id, ...extValues })
    if (after) await after(trx, id)
    return id
  })
  ctx.jobs.wake()
  return id
}

function requireOk(row: CommonRow, field: string, what: string): void {
  if (row.state !== 'OK') throw fieldError(field, `${what} must be in OK state.`)
}

export async function createNetwork(
  ctx: AppContext,
  actor: Actor,
  body: { tenant: string; name: string; description?: string },
  base: string,
): Promise<Network> {
  const tenant = await resolveObject(ctx, actor, 'tenant', body.tenant, TYPES.tenant, PATHS.tenant)
  requireManage(actor, tenant)
  requireOk(tenant, 'tenant', 'Tenant')
  const id = await insertChild(
    ctx,
    tenant,
    TYPES.network,
    'cloud_b_networks',
    body.name,
    body.description ?? '',
    {
      tenant_id: tenant.id,
    },
  )
  return renderById(ctx, KINDS.network, id, base)
}

export async function createSubnet(
  ctx: AppContext,
  actor: Actor,
  body: {
    network: string
    name: string
    description?: string
    cidr: string
    gateway_ip?: string | null
    dns_nameservers?: string[]
  },
  base: string,
): Promise<Subnet> {
  const network = await resolveObject(ctx, actor, 'network', body.network, TYPES.network, PATHS.network)
  requireManage(actor, network)
  requireOk(network, 'network', 'Network')
  const cidr = parseCidr(body.cidr)
  if (!cidr) throw fieldError('cidr', 'Invalid CIDR format.')
  if (cidr.version === 4 && cidr.prefix > 29) throw fieldError('cidr', 'The subnet is too small.')
  let gateway: string | null | undefined = undefined
  if (body.gateway_ip !== undefined && body.gateway_ip !== null) {
    gateway = normalizeIp(body.gateway_ip)
    if (!gateway) throw fieldError('gateway_ip', 'Enter a valid IPv4 or IPv6 address.')
  } else if (body.gateway_ip === null) gateway = null
  const tenantId = await tenantIdOf(ctx, 'cloud_b_networks', network.id)
  const id = await insertChild(
    ctx,
    network,
    TYPES.subnet,
    'cloud_b_subnets',
    body.name,
    body.description ?? '',
    {
      tenant_id: tenantId,
      network_id: network.id,
      cidr: cidr.text,
      gateway_ip: gateway ?? null,
      ip_version: cidr.version,
      allocation_pools: toJson([]),
      dns_nameservers: toJson(body.dns_nameservers ?? []),
    },
  )
  return renderById(ctx, KINDS.subnet, id, base)
}

export async function createSecurityGroup(
  ctx: AppContext,
  actor: Actor,
  body: { tenant: string; name: string; description?: string; rules?: Record<string, unknown>[] },
  base: string,
): Promise<SecurityGroup> {
  const tenant = await resolveObject(ctx, actor, 'tenant', body.tenant, TYPES.tenant, PATHS.tenant)
  requireManage(actor, tenant)
  requireOk(tenant, 'tenant', 'Tenant')
  const rules = body.rules ?? []
  const errs = rules.map((r) => ruleErrors(r))
  if (errs.some((e) => Object.keys(e).length)) throw new AppError('invalid', { rules: errs })
  const id = await insertChild(
    ctx,
    tenant,
    TYPES.securityGroup,
    'cloud_b_security_groups',
    body.name,
    body.description ?? '',
    { tenant_id: tenant.id },
    async (trx, id) =>
      cloudBRepository(trx).insertRules(
        id,
        rules.map((r) => ({
          ethertype: typeof r.ethertype === 'string' ? r.ethertype : 'IPv4',
          direction: typeof r.direction === 'string' ? r.direction : 'ingress',
          protocol: typeof r.protocol === 'string' ? r.protocol.toLowerCase() : '',
          from_port: typeof r.from_port === 'number' ? r.from_port : null,
          to_port: typeof r.to_port === 'number' ? r.to_port : null,
          cidr: typeof r.cidr === 'string' ? (parseCidr(r.cidr)?.text ?? '') : '',
          description: typeof r.description === 'string' ? r.description : '',
          backend_id: '',
        })),
      ),
  )
  return renderById(ctx, KINDS.securityGroup, id, base)
}

export async function createPort(
  ctx: AppContext,
  actor: Actor,
  body: {
    network: string
    name: string
    description?: string
    subnet?: string
    ip_address?: string
    security_groups?: string[]
    allowed_address_pairs?: { ip_address: string; mac_address?: string }[]
  },
  base: string,
): Promise<Port> {
  const network = await resolveObject(ctx, actor, 'network', body.network, TYPES.network, PATHS.network)
  requireManage(actor, network)
  requireOk(network, 'network', 'Network')
  const tenantId = await tenantIdOf(ctx, 'cloud_b_networks', network.id)
  let subnetId: number | null = null
  let subnetCidr = null
  if (body.subnet !== undefined) {
    const subnet = await resolveObject(ctx, actor, 'subnet', body.subnet, TYPES.subnet, PATHS.subnet)
    const e = await ext(ctx.db, 'cloud_b_subnets', subnet.id)
    if (e.network_id !== network.id) throw fieldError('subnet', 'The subnet must belong to the network.')
    requireOk(subnet, 'subnet', 'Subnet')
    subnetId = subnet.id
    subnetCidr = parseCidr(e.cidr)
  } else {
    subnetId = (await cloudBRepository(ctx.db).subnetIdsOfNetwork(network.id))[0] ?? null
  }
  let fixed: { ip_address: string; subnet_id: string }[] = []
  if (body.ip_address !== undefined) {
    const ip = normalizeIp(body.ip_address)
    if (!ip) throw fieldError('ip_address', 'Enter a valid IPv4 or IPv6 address.')
    if (subnetCidr && !cidrContains(subnetCidr, ip))
      throw fieldError('ip_address', 'The address is not in the subnet.')
    fixed = [{ ip_address: ip, subnet_id: '' }]
  }
  const groupIds: number[] = []
  for (const [i, link] of (body.security_groups ?? []).entries()) {
    const g = await resolveObject(
      ctx,
      actor,
      `security_groups`,
      link,
      TYPES.securityGroup,
      PATHS.securityGroup,
    )
    if ((await tenantIdOf(ctx, 'cloud_b_security_groups', g.id)) !== tenantId)
      throw new AppError('invalid', {
        security_groups: { [String(i)]: ['The security group belongs to another tenant.'] },
      })
    groupIds.push(g.id)
  }
  const id = await insertChild(
    ctx,
    network,
    TYPES.port,
    'cloud_b_ports',
    body.name,
    body.description ?? '',
    {
      tenant_id: tenantId,
      network_id: network.id,
      subnet_id: subnetId,
      fixed_ips: toJson(fixed),
      allowed_address_pairs: toJson(
        (body.allowed_address_pairs ?? []).map((p) => ({
          ip_address: p.ip_address,
          mac_address: p.mac_address ?? '',
        })),
      ),
    },
    async (trx, id) => cloudBRepository(trx).linkSecurityGroups(id, groupIds),
  )
  return renderById(ctx, KINDS.port, id, base)
}

// ---- tenant actions ----

/** POST create_floating_ip: a new floating IP of the tenant, allocated by a create step. 201. */
export async function createFloatingIp(
  ctx: AppContext,
  actor: Actor,
  tenantUuid: string,
  body: { description?: string },
  base: string,
): Promise<FloatingIp> {
  const tenant = await findVisibleResource(ctx, actor, TYPES.tenant, tenantUuid)
  requireManage(actor, tenant)
  if (tenant.state !== 'OK') throw invalidState(['OK'])
  const id = await insertChild(
    ctx,
    tenant,
    TYPES.floatingIp,
    'cloud_b_floating_ips',
    '',
    body.description ?? '',
    {
      tenant_id: tenant.id,
    },
  )
  return renderById(ctx, KINDS.floatingIp, id, base)
}

/** POST pull_floating_ips: a job brings the tenant's floating IPs in line with the backend. 202. */
export async function schedulePullFloatingIps(
  ctx: AppContext,
  actor: Actor,
  tenantUuid: string,
): Promise<void> {
  const tenant = await findVisibleResource(ctx, actor, TYPES.tenant, tenantUuid)
  requireManage(actor, tenant)
  if (!['OK', 'ERRED'].includes(tenant.state)) throw invalidState(['OK', 'ERRED'])
  if (!tenant.backend_id) throw nonFieldError('Resource does not have backend ID.')
  await ctx.jobs.enqueue(ctx.db, PULL_FLOATING_IPS_JOB, { tenantId: tenant.id }, { maxAttempts: 1 })
}

/** Adds floating IPs the backend has and the service lacks, updates known ones, drops vanished ones. */
export async function pullFloatingIps(ctx: AppContext, tenantId: number): Promise<void> {
  const repo = cloudBRepository(ctx.db)
  const tenant = await repo.resource(tenantId)
  if (!tenant?.backend_id) return
  const d = await driverOf(ctx, tenant.service_settings_id)
  const remote = await d.listFloatingIps(tenant.backend_id)
  const known = await repo.backendIds('cloud_b_floating_ips', tenantId)
  const now = ctx.clock().toISOString()
  await ctx.db.transaction().execute(async (trx) => {
    const r = cloudBRepository(trx)
    for (const f of remote) {
      const port = f.port_id
        ? await r.resourceByBackendId(TYPES.port, tenant.service_settings_id, f.port_id)
        : undefined
      const id = known.get(f.backend_id)
      if (id !== undefined) {
        await r.updateResource(id, { runtime_state: f.status, modified: now })
        await r.updateExt('cloud_b_floating_ips', id, {
          address: f.address,
          backend_network_id: f.floating_network_id,
          port_id: port?.id ?? null,
        })
        known.delete(f.backend_id)
        continue
      }
      const newId = await r.insertResource({
        uuid: ctx.newUuid(),
        resource_type: TYPES.floatingIp,
        name: '',
        description: f.description,
        service_settings_id: tenant.service_settings_id,
        project_id: tenant.project_id,
        state: 'OK',
        backend_id: f.backend_id,
        runtime_state: f.status,
        created: now,
        modified: now,
      })
      await r.insertExt('cloud_b_floating_ips', {
        resource_id: newId,
        tenant_id: tenantId,
        address: f.address,
        backend_network_id: f.floating_network_id,
        port_id: port?.id ?? null,
      })
    }
    // What the backend no longer has is gone, unless a step is still under way for it.
    const stale: number[] = []
    for (const id of known.values()) {
      const row = await r.resource(id)
      if (row && ['OK', 'ERRED'].includes(row.state)) stale.push(id)
    }
    await r.deleteResources(stale)
  })
}

// ---- backend actions as jobs ----

export type ActionPayload =
  | { id: number; action: 'attach'; portId: number }
  | { id: number; action: 'detach' }
  | { id: number; action: 'add_interface'; subnetId?: number; portId?: number }
  | { id: number; action: 'remove_interface'; portId: number; subnetId?: number }
  | { id: number; action: 'set_routes' }

/**
 * Moves the resource from one of `from` to UPDATE_SCHEDULED, saves `changes` and queues the
 * backend action, in one transaction. 409 when another caller moved it first.
 */
async function scheduleAction(
  ctx: AppContext,
  row: CommonRow,
  from: readonly string[],
  payload: ActionPayload,
  changes?: (trx: Transaction<DB>) => Promise<void>,
): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const moved = await cloudBRepository(trx).setStateIf(row.id, from, 'UPDATE_SCHEDULED', {
      modified: ctx.clock().toISOString(),
    })
    if (!moved) throw invalidState(from)
    if (changes) await changes(trx)
    await ctx.jobs.enqueue(trx, ACTION_JOB, payload, { maxAttempts: 1 })
  })
}

/** Runs one queued backend action: UPDATE_SCHEDULED → UPDATING → OK, or ERRED on failure. */
export async function runAction(ctx: AppContext, p: ActionPayload): Promise<void> {
  const repo = cloudBRepository(ctx.db)
  const now = () => ctx.clock().toISOString()
  if (!(await repo.setStateIf(p.id, ['UPDATE_SCHEDULED'], 'UPDATING', { modified: now() }))) return
  const row = (await repo.resource(p.id))!
  try {
    const d = await driverOf(ctx, row.service_settings_id)
    await performAction(ctx, d, row, p)
    await repo.setStateIf(p.id, ['UPDATING'], 'OK', {
      error_message: '',
      error_traceback: '',
      modified: now(),
    })
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    const traceback = error instanceof Error ? (error.stack ?? message) : message
    await repo.setStateIf(p.id, ['UPDATING'], 'ERRED', {
      error_message: message.slice(0, 2000),
      error_traceback: traceback.slice(0, 10000),
      modified: now(),
    })
  }
}

async function performAction(
  ctx: AppContext,
  d: CloudBDriver,
  row: { id: number; backend_id: string; service_settings_id: number; project_id: number },
  p: ActionPayload,
): Promise<void> {
  const repo = cloudBRepository(ctx.db)
  switch (p.action) {
    case 'attach': {
      const f = await d.attachFloatingIp(row.backend_id, await backendIdOf(ctx.db, p.portId))
      await ctx.db.transaction().execute(async (trx) => {
        await cloudBRepository(trx).updateExt('cloud_b_floating_ips', row.id, { port_id: p.portId })
        await cloudBRepository(trx).updateResource(row.id, { runtime_state: f.status })
      })
      return
    }
    case 'detach': {
      const f = await d.detachFloatingIp(row.backend_id)
      await ctx.db.transaction().execute(async (trx) => {
        await cloudBRepository(trx).updateExt('cloud_b_floating_ips', row.id, { port_id: null })
        await cloudBRepository(trx).updateResource(row.id, { runtime_state: f.status })
      })
      return
    }
    case 'add_interface': {
      const target =
        p.subnetId !== undefined
          ? { subnet_id: await backendIdOf(ctx.db, p.subnetId) }
          : { port_id: await backendIdOf(ctx.db, p.portId) }
      const port = await d.addRouterInterface(row.backend_id, target)
      const tenantId = (await ext(ctx.db, 'cloud_b_routers', row.id)).tenant_id as number
      await ctx.db.transaction().execute(async (trx) => {
        const r = cloudBRepository(trx)
        let portId = p.portId
        if (portId === undefined) {
          const subnetExt = await ext(trx, 'cloud_b_subnets', p.subnetId!)
          portId = await insertPortRow(
            ctx,
            trx,
            row,
            tenantId,
            port,
            new Map([[port.network_id, subnetExt.network_id as number]]),
            new Map([[target.subnet_id!, p.subnetId!]]),
          )
        } else {
          await r.updateExt('cloud_b_ports', portId, {
            device_id: port.device_id,
            device_owner: port.device_owner,
            fixed_ips: toJson(port.fixed_ips),
          })
          await r.updateResource(portId, { runtime_state: port.status })
        }
        await r.addInterface(row.id, portId)
      })
      return
    }
    case 'remove_interface': {
      const out = await d.removeRouterInterface(row.backend_id, {
        port_id: await backendIdOf(ctx.db, p.portId),
      })
      await ctx.db.transaction().execute((trx) => afterInterfaceRemoved(trx, p.portId, out.deleted))
      return
    }
    case 'set_routes': {
      const routes = parseJson<Route[]>((await ext(ctx.db, 'cloud_b_routers', row.id)).routes, [])
      await d.setRoutes(row.backend_id, routes)
      return
    }
  }
  void repo
}

// ---- floating IP actions ----

/** POST attach_to_port: the port must be OK and of the floating IP's tenant. */
export async function attachToPort(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  portLink: string,
): Promise<void> {
  const fip = await findVisibleResource(ctx, actor, TYPES.floatingIp, uuid)
  requireManage(actor, fip)
  if (fip.state !== 'OK') throw invalidState(['OK'])
  const port = await resolveObject(ctx, actor, 'port', portLink, TYPES.port, PATHS.port)
  if (port.state !== 'OK') {
    throw new AppError(
      'conflict',
      `The port [${port.name || port.uuid}] is expected to have [OK] state, but actual one is [${port.state}]`,
    )
  }
  const fipTenant = await tenantIdOf(ctx, 'cloud_b_floating_ips', fip.id)
  const portTenant = await tenantIdOf(ctx, 'cloud_b_ports', port.id)
  if (fipTenant !== portTenant) {
    const names = async (id: number) => (await cloudBRepository(ctx.db).resource(id))?.name ?? ''
    throw nonFieldError(
      `The port [${port.name || port.uuid}] is expected to belong to the same tenant [${await names(fipTenant)}] , but actual one is [${await names(portTenant)}]`,
    )
  }
  await scheduleAction(ctx, fip, ['OK'], { id: fip.id, action: 'attach', portId: port.id })
  ctx.jobs.wake()
}

/** POST detach_from_port: 400 when the floating IP is not attached. */
export async function detachFromPort(ctx: AppContext, actor: Actor, uuid: string): Promise<void> {
  const fip = await findVisibleResource(ctx, actor, TYPES.floatingIp, uuid)
  requireManage(actor, fip)
  if (fip.state !== 'OK') throw invalidState(['OK'])
  const e = await ext(ctx.db, 'cloud_b_floating_ips', fip.id)
  if (e.port_id == null) {
    throw fieldError('port', `Floating IP [${fip.name || fip.uuid}] is not attached to any port.`)
  }
  await scheduleAction(ctx, fip, ['OK'], { id: fip.id, action: 'detach' })
  ctx.jobs.wake()
}

// ---- routers ----

export async function createRouter(
  ctx: AppContext,
  actor: Actor,
  body: { tenant: string; name: string; description?: string },
  base: string,
) {
  const tenant = await resolveObject(ctx, actor, 'tenant', body.tenant, TYPES.tenant, PATHS.tenant)
  requireOk(tenant, 'tenant', 'Tenant')
  const id = await insertChild(
    ctx,
    tenant,
    TYPES.router,
    'cloud_b_routers',
    body.name,
    body.description ?? '',
    {
      tenant_id: tenant.id,
      routes: toJson([]),
      fixed_ips: toJson([]),
    },
  )
  const row = await cloudBRepository(ctx.db).resource(id)
  const settings = await settingsInfo(ctx, row!.service_settings_id)
  const project = await ctx.db
    .selectFrom('projects')
    .select('uuid')
    .where('id', '=', row!.project_id)
    .executeTakeFirst()
  return {
    url: urlOf(base, PATHS.router, row!.uuid)!,
    uuid: row!.uuid,
    tenant: urlOf(base, PATHS.tenant, tenant.uuid)!,
    name: row!.name,
    project: urlOf(base, 'projects', project!.uuid)!,
    service_settings: urlOf(base, 'service-settings', settings!.uuid)!,
  }
}

/** Exactly one of subnet or port (400 otherwise); returns the resolved object. */
async function interfaceTarget(
  ctx: AppContext,
  actor: Actor,
  body: { subnet?: string; port?: string },
): Promise<{ subnet?: CommonRow; port?: CommonRow }> {
  const hasSubnet = body.subnet !== undefined && body.subnet !== null && body.subnet !== ''
  const hasPort = body.port !== undefined && body.port !== null && body.port !== ''
  if (hasSubnet === hasPort) throw nonFieldError('Either subnet or port must be specified, but not both.')
  if (hasSubnet)
    return { subnet: await resolveObject(ctx, actor, 'subnet', body.subnet, TYPES.subnet, PATHS.subnet) }
  return { port: await resolveObject(ctx, actor, 'port', body.port, TYPES.port, PATHS.port) }
}

/** POST add_router_interface: router OK (409); the subnet or a free port of the router's tenant. */
export async function addRouterInterface(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: { subnet?: string; port?: string },
): Promise<void> {
  const router = await findVisibleResource(ctx, actor, TYPES.router, uuid)
  if (router.state !== 'OK') throw invalidState(['OK'])
  const target = await interfaceTarget(ctx, actor, body)
  const tenantId = await tenantIdOf(ctx, 'cloud_b_routers', router.id)
  const repo = cloudBRepository(ctx.db)
  if (target.subnet) {
    if ((await tenantIdOf(ctx, 'cloud_b_subnets', target.subnet.id)) !== tenantId)
      throw fieldError('subnet', 'The subnet must belong to the tenant of the router.')
    requireOk(target.subnet, 'subnet', 'Subnet')
    for (const i of await repo.interfacePorts([router.id])) {
      const pe = await ext(ctx.db, 'cloud_b_ports', i.port_id)
      if (pe.subnet_id === target.subnet.id)
        throw fieldError('subnet', 'The router already has an interface on this subnet.')
    }
    await scheduleAction(ctx, router, ['OK'], {
      id: router.id,
      action: 'add_interface',
      subnetId: target.subnet.id,
    })
  } else {
    const port = target.port!
    if ((await tenantIdOf(ctx, 'cloud_b_ports', port.id)) !== tenantId)
      throw fieldError('port', 'The port must belong to the tenant of the router.')
    const pe = await ext(ctx.db, 'cloud_b_ports', port.id)
    if (pe.device_owner)
      throw fieldError('port', `Port cannot have an owner. Currently owner is ${pe.device_owner}`)
    if (port.runtime_state !== 'DOWN')
      throw fieldError(
        'port',
        `Port should be in DOWN status for attachment. Current status is ${port.runtime_state}`,
      )
    await scheduleAction(ctx, router, ['OK'], { id: router.id, action: 'add_interface', portId: port.id })
  }
  ctx.jobs.wake()
}

/** POST remove_router_interface: the subnet or port must be one of the router's interfaces. */
export async function removeRouterInterface(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: { subnet?: string; port?: string },
): Promise<void> {
  const router = await findVisibleResource(ctx, actor, TYPES.router, uuid)
  if (router.state !== 'OK') throw invalidState(['OK'])
  const target = await interfaceTarget(ctx, actor, body)
  const links = await cloudBRepository(ctx.db).interfacePorts([router.id])
  let portId: number | undefined
  if (target.port) portId = links.find((l) => l.port_id === target.port!.id)?.port_id
  else {
    for (const l of links) {
      if ((await ext(ctx.db, 'cloud_b_ports', l.port_id)).subnet_id === target.subnet!.id) portId = l.port_id
    }
  }
  if (portId === undefined) {
    const field = target.port ? 'port' : 'subnet'
    throw fieldError(field, `The router has no interface on this ${field}.`)
  }
  await scheduleAction(ctx, router, ['OK'], { id: router.id, action: 'remove_interface', portId })
  ctx.jobs.wake()
}

/** POST set_routes: validated, saved at once, then pushed by a job; answers the saved routes. */
export async function setRoutes(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  routes: unknown,
): Promise<{ routes: Route[] }> {
  const router = await findVisibleResource(ctx, actor, TYPES.router, uuid)
  if (!['OK', 'ERRED'].includes(router.state)) throw invalidState(['OK', 'ERRED'])
  const rendered = await renderById(ctx, KINDS.router, router.id, '')
  const checked = validateRoutes(
    routes,
    rendered.fixed_ips.map((f) => String(f.ip_address)),
  )
  if (!checked.ok) throw new AppError('invalid', checked.errors)
  await scheduleAction(ctx, router, ['OK', 'ERRED'], { id: router.id, action: 'set_routes' }, async (trx) =>
    cloudBRepository(trx).updateExt('cloud_b_routers', router.id, { routes: toJson(checked.value) }),
  )
  ctx.jobs.wake()
  return { routes: checked.value }
}

/** Tenant unlink: the tenant's own objects go with it (no backend calls). */
export async function unlinkTenantChildren(ctx: AppContext, uuid: string): Promise<void> {
  const u = normalizeUuid(uuid)
  const t = u ? await cloudBRepository(ctx.db).resourceByUuid(TYPES.tenant, u) : undefined
  if (t) await cloudBRepository(ctx.db).deleteResources(await cloudBRepository(ctx.db).tenantChildren(t.id))
}

export type { BackendResult }
