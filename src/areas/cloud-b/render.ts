// Rendering cloudB objects as their records (tenants with quotas, networks with subnets, ports
// with security groups, floating IPs with their port, routers with interfaces), and the list and
// retrieve of each kind.
import type { AppContext } from '../../context.js'
import { parseJson, toBool } from '../../db/values.js'
import { copied, recordRenderer, uuidFromLink, urlOf } from '../../http/links.js'
import type { Actor } from '../../http/permissions.js'
import type { OrderTerm } from '../../http/query.js'
import type { Pager } from '../../http/resource.js'
import { foundById, foundByUuid } from '../../http/uuid.js'
import {
  cloudResourcesQuery,
  cloudResourceType,
  resourceVisibility,
  toCommonRecord,
  type CommonFilters,
} from '../cloud/common.js'
import { EXT, SYSTEM, type Db } from './objects.js'
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
import type { Route } from './validators.js'

/** The ids of the rows being rendered, to read what they show in one query per kind. */
const idsOf = (rows: readonly ExtRow[]) => rows.map((r) => r.id)

function tenantLink(base: string, r: ExtRow) {
  return {
    tenant: urlOf(base, PATHS.tenant, r.tenant_uuid)!,
    tenant_name: r.tenant_name,
    tenant_uuid: r.tenant_uuid,
  }
}

type RuleRow = Awaited<ReturnType<ReturnType<typeof cloudBRepository>['rulesOf']>>[number]

const toRule = recordRenderer<RuleRow, SecurityGroup['rules'][number]>({
  ...copied(
    'id',
    'ethertype',
    'direction',
    'protocol',
    'from_port',
    'to_port',
    'cidr',
    'description',
    'remote_group_name',
    'remote_group_uuid',
  ),
  remote_group: { link: PATHS.securityGroup },
})

async function rulesByGroup(db: Db, base: string, ids: number[]) {
  const out = new Map<number, SecurityGroup['rules']>()
  for (const r of await cloudBRepository(db).rulesOf(ids)) {
    const list = out.get(r.security_group_id) ?? []
    list.push(toRule(base, r))
    out.set(r.security_group_id, list)
  }
  return out
}

async function toSecurityGroups(db: Db, base: string, rows: ExtRow[]): Promise<SecurityGroup[]> {
  const rules = await rulesByGroup(db, base, idsOf(rows))
  return rows.map((r) =>
    Object.assign(toCommonRecord(base, PATHS.securityGroup, r), {
      ...tenantLink(base, r),
      rules: rules.get(r.id) ?? [],
    }),
  )
}

/** Port records of spec 2.12, with their security groups, by port id. */
async function portRecords(db: Db, base: string, ids: number[]): Promise<Map<number, PortRecord>> {
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
    // The records come in the order of their rows.
    const records = await toSecurityGroups(db, base, rows)
    rows.forEach((r, i) => groups.set(r.id, records[i]!))
  }
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
  const ids = idsOf(rows)
  const usage = new Map<string, number>()
  if (ids.length) {
    for (const [name, table] of COUNTED_QUOTAS) {
      for (const c of await cloudBRepository(db).countByTenant(table, ids))
        usage.set(`${c.tenant_id}/${name}`, Number(c.n))
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

async function toTenants(db: Db, base: string, rows: ExtRow[]): Promise<Tenant[]> {
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

async function toNetworks(db: Db, base: string, rows: ExtRow[]): Promise<Network[]> {
  const subnets = await cloudBRepository(db).subnetsOfNetworks(idsOf(rows))
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

/** The networks these rows name in `network_id`, by id, read in one query. */
async function networksOf(db: Db, rows: ExtRow[]) {
  const ids = [...new Set(rows.map((r) => r.network_id as number | null).filter((x) => x != null))]
  return new Map((await cloudBRepository(db).namesByIds(ids)).map((n) => [n.id, n]))
}

async function toSubnets(db: Db, base: string, rows: ExtRow[]): Promise<Subnet[]> {
  const networks = await networksOf(db, rows)
  const out: Subnet[] = []
  for (const r of rows) {
    const net = networks.get(r.network_id)
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

async function toPorts(db: Db, base: string, rows: ExtRow[]): Promise<Port[]> {
  const records = await portRecords(db, base, idsOf(rows))
  const repo = cloudBRepository(db)
  const floating = await repo.floatingIpsOfPorts(idsOf(rows))
  const networks = await networksOf(db, rows)
  const out: Port[] = []
  for (const r of rows) {
    const net = r.network_id ? networks.get(r.network_id) : undefined
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

async function toFloatingIps(db: Db, base: string, rows: ExtRow[]): Promise<FloatingIp[]> {
  const portIds = rows.map((r) => r.port_id).filter((x): x is number => x != null)
  const ports = await portRecords(db, base, portIds)
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

async function toRouters(db: Db, base: string, rows: ExtRow[]): Promise<Router[]> {
  const links = await cloudBRepository(db).interfacePorts(idsOf(rows))
  const ports = await portRecords(
    db,
    base,
    links.map((l) => l.port_id),
  )
  const tenantIds = [...new Set(rows.map((r) => r.tenant_id as number))]
  const externals = await cloudBRepository(db).externalNetworks(tenantIds)
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

type Renderer<T> = (db: Db, base: string, rows: ExtRow[]) => Promise<T[]>

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
    render: toSecurityGroups,
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
  order: readonly OrderTerm[],
  base: string,
  page: Pager<T>,
): Promise<T[]> {
  const repo = cloudBRepository(ctx.db)
  const q = () => cloudResourcesQuery(ctx.db, kind.type, actor, f)
  return page(
    () => repo.countExt(q(), kind.ext, x),
    async (l, o) => kind.render(ctx.db, base, await repo.listExt(q(), kind.ext, x, order, l, o)),
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
  const row = await foundByUuid(
    uuid,
    (u) => cloudBRepository(ctx.db).findExtBy(kind.type, kind.ext, { uuid: u }, resourceVisibility(actor)),
    cloudResourceType(kind.type).modelName,
  )
  return (await kind.render(ctx.db, base, [row]))[0]!
}

export async function renderById<T>(ctx: AppContext, kind: KindDef<T>, id: number, base: string): Promise<T> {
  const row = await foundById(
    id,
    (i) => cloudBRepository(ctx.db).findExtBy(kind.type, kind.ext, { id: i }, { all: true }),
    cloudResourceType(kind.type).modelName,
  )
  return (await kind.render(ctx.db, base, [row]))[0]!
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
