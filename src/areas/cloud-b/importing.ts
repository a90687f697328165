// Importing what the backend has: a tenant's networks, subnets, security groups and ports (after
// its creation and each pull), and its floating IPs (the pull_floating_ips job).
import type { AppContext } from '../../context.js'
import { toJson } from '../../db/values.js'
import { invalidState, nonFieldError } from '../../http/errors.js'
import type { Actor } from '../../http/permissions.js'
import { findVisibleResource } from '../cloud/common.js'
import { insertCloudResource, removeCloudResources } from '../cloud/states.js'
import type { BackendPort } from './driver.js'
import { driverOf, requireManage, type Db } from './objects.js'
import { cloudBRepository } from './repository.js'
import { TYPES } from './schema.js'

export const PULL_FLOATING_IPS_JOB = 'cloudB.tenant.pull-floating-ips'

/** Where an imported object lives: its tenant's service settings and project. */
interface Owner {
  service_settings_id: number
  project_id: number
}

/**
 * Inserts the common row of an object the backend already has (state OK), in `owner`'s place and
 * belonging to the tenant `tenantId`; answers its id.
 */
function insertBackendObject(
  ctx: AppContext,
  db: Db,
  owner: Owner,
  tenantId: number,
  type: string,
  o: { name: string; description: string; backend_id: string; runtime_state?: string },
  now = ctx.clock().toISOString(),
): Promise<number> {
  return insertCloudResource(ctx, db, {
    uuid: ctx.newUuid(),
    resource_type: type,
    ...o,
    service_settings_id: owner.service_settings_id,
    project_id: owner.project_id,
    parent_id: tenantId,
    state: 'OK',
    created: now,
    modified: now,
  })
}

/** Makes the rows of a tenant's backend networks, subnets, security groups and ports exist. */
export async function importTenantObjects(ctx: AppContext, tenantId: number): Promise<void> {
  const repo = cloudBRepository(ctx.db)
  const tenant = await repo.resource(tenantId)
  if (!tenant?.backend_id) return
  const d = await driverOf(ctx, tenant.service_settings_id)
  const now = ctx.clock().toISOString()
  const insert = (type: string, name: string, description: string, backend_id: string) =>
    insertBackendObject(ctx, ctx.db, tenant, tenantId, type, { name, description, backend_id }, now)
  const nets = await repo.backendIds('cloud_b_networks', tenantId)
  for (const n of await d.listNetworks(tenant.backend_id)) {
    if (nets.has(n.backend_id)) continue
    const id = await insert(TYPES.network, n.name, '', n.backend_id)
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
    const id = await insert(TYPES.subnet, s.name, '', s.backend_id)
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
    const id = await insert(TYPES.securityGroup, g.name, g.description, g.backend_id)
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

/** The rows of a backend port; its network and subnet found by their backend ids. */
export async function insertPortRow(
  ctx: AppContext,
  db: Db,
  owner: Owner,
  tenantId: number,
  p: BackendPort,
  nets: Map<string, number>,
  subnets: Map<string, number>,
): Promise<number> {
  const id = await insertBackendObject(ctx, db, owner, tenantId, TYPES.port, {
    name: p.name,
    description: '',
    backend_id: p.backend_id,
    runtime_state: p.status,
  })
  await cloudBRepository(db).insertExt('cloud_b_ports', {
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
      const values = {
        address: f.address,
        backend_network_id: f.floating_network_id,
        port_id: port?.id ?? null,
      }
      const id = known.get(f.backend_id)
      if (id !== undefined) {
        await r.updateResource(id, { runtime_state: f.status, modified: now })
        await r.updateExt('cloud_b_floating_ips', id, values)
        known.delete(f.backend_id)
        continue
      }
      const newId = await insertBackendObject(
        ctx,
        trx,
        tenant,
        tenantId,
        TYPES.floatingIp,
        {
          name: '',
          description: f.description,
          backend_id: f.backend_id,
          runtime_state: f.status,
        },
        now,
      )
      await r.insertExt('cloud_b_floating_ips', { resource_id: newId, tenant_id: tenantId, ...values })
    }
    // What the backend no longer has is gone, unless a step is still under way for it.
    const stale: number[] = []
    for (const id of known.values()) {
      const row = await r.resource(id)
      if (row && ['OK', 'ERRED'].includes(row.state)) stale.push(id)
    }
    await removeCloudResources(ctx, trx, stale)
  })
}
