// Creating cloudB objects: tenants (the order path aside), and in a tenant its networks, subnets,
// security groups, ports, floating IPs and routers. Each is inserted in CREATION_SCHEDULED with
// its create step queued; the answer is the new record.
import type { Static, TSchema } from '@sinclair/typebox'
import type { Transaction } from 'kysely'
import type { AppContext } from '../../context.js'
import type { DB } from '../../db/tables.js'
import { toJson } from '../../db/values.js'
import { AppError, fieldError, invalidState } from '../../http/errors.js'
import { urlOf } from '../../http/links.js'
import type { Actor } from '../../http/permissions.js'
import {
  findVisibleResource,
  insertResource,
  resolveManagedProject,
  resolveSettingsLink,
  type CommonRow,
} from '../cloud/common.js'
import { EXT, ext, requireManage, requireOk, resolveObject, tenantIdOf } from './objects.js'
import { KINDS, renderById, type KindDef } from './render.js'
import { cloudBRepository } from './repository.js'
import {
  NetworkCreateBody,
  PATHS,
  PortCreateBody,
  RouterCreateBody,
  RouterCreateResult,
  SecurityGroupCreateBody,
  SubnetCreateBody,
  TenantCreateBody,
  TYPES,
  type FloatingIp,
  type Network,
  type Port,
  type SecurityGroup,
  type Subnet,
  type Tenant,
} from './schema.js'
import { cidrContains, normalizeIp, parseCidr, ruleErrors } from './validators.js'

/** A create use case: the caller's body in, the new record (with links from `base`) out. */
type Create<B extends TSchema, R> = (
  ctx: AppContext,
  actor: Actor,
  body: Static<B>,
  base: string,
) => Promise<R>

type Kind = keyof typeof TYPES
type RecordOf<K extends Kind> = (typeof KINDS)[K] extends KindDef<infer T> ? T : never

export const createTenant: Create<typeof TenantCreateBody, Tenant> = async (ctx, actor, body, base) => {
  const settings = await resolveSettingsLink(ctx, actor, 'service_settings', body.service_settings, 'cloudB')
  const project = await resolveManagedProject(ctx, actor, 'project', body.project)
  const place = { service_settings_id: settings.id, project_id: project.id }
  return createObject(ctx, base, place, 'tenant', body, { limits: toJson(body.limits ?? {}) })
}

/**
 * What a new object is: the settings and project of `place` (a tenant's children: their tenant's
 * or network's), its kind, name and description, its own table's values, and what else goes in
 * the same transaction.
 */
type NewObject<K extends Kind> = [
  place: Pick<CommonRow, 'service_settings_id' | 'project_id'>,
  kind: K,
  body: { name: string; description?: string },
  extValues: Record<string, unknown>,
  after?: (trx: Transaction<DB>, id: number) => Promise<void>,
]

/** An object inserted in CREATION_SCHEDULED with its create step queued; its id. */
async function insertObject<K extends Kind>(
  ctx: AppContext,
  ...[place, kind, body, extValues, after]: NewObject<K>
): Promise<number> {
  const id = await ctx.db.transaction().execute(async (trx) => {
    const id = await insertResource(ctx, trx, {
      type: TYPES[kind],
      name: body.name,
      description: body.description ?? '',
      settingsId: place.service_settings_id,
      projectId: place.project_id,
      // A tenant's object belongs to its tenant.
      parentId: typeof extValues.tenant_id === 'number' ? extValues.tenant_id : null,
    })
    await cloudBRepository(trx).insertExt(EXT[kind], { resource_id: id, ...extValues })
    if (after) await after(trx, id)
    return id
  })
  ctx.jobs.wake()
  return id
}

/** An object inserted (as `insertObject` does), answered as its record. */
async function createObject<K extends Kind>(
  ctx: AppContext,
  base: string,
  ...object: NewObject<K>
): Promise<RecordOf<K>> {
  const id = await insertObject(ctx, ...object)
  return renderById(ctx, KINDS[object[1]] as KindDef<RecordOf<K>>, id, base)
}

/** The tenant or network a new object goes in: visible (400), manageable (403) and OK (400). */
async function okParent(
  ctx: AppContext,
  actor: Actor,
  kind: 'tenant' | 'network',
  link: string,
): Promise<CommonRow> {
  const parent = await resolveObject(ctx, actor, kind, link, kind)
  requireManage(actor, parent)
  requireOk(parent, kind, kind === 'tenant' ? 'Tenant' : 'Network')
  return parent
}

export const createNetwork: Create<typeof NetworkCreateBody, Network> = async (ctx, actor, body, base) => {
  const tenant = await okParent(ctx, actor, 'tenant', body.tenant)
  return createObject(ctx, base, tenant, 'network', body, {
    tenant_id: tenant.id,
  })
}

export const createSubnet: Create<typeof SubnetCreateBody, Subnet> = async (ctx, actor, body, base) => {
  const network = await okParent(ctx, actor, 'network', body.network)
  const cidr = parseCidr(body.cidr)
  if (!cidr) throw fieldError('cidr', 'Invalid CIDR format.')
  if (cidr.version === 4 && cidr.prefix > 29) throw fieldError('cidr', 'The subnet is too small.')
  let gateway: string | null | undefined = undefined
  if (body.gateway_ip !== undefined && body.gateway_ip !== null) {
    gateway = normalizeIp(body.gateway_ip)
    if (!gateway) throw fieldError('gateway_ip', 'Enter a valid IPv4 or IPv6 address.')
  } else if (body.gateway_ip === null) gateway = null
  const tenantId = await tenantIdOf(ctx, 'cloud_b_networks', network.id)
  return createObject(ctx, base, network, 'subnet', body, {
    tenant_id: tenantId,
    network_id: network.id,
    cidr: cidr.text,
    gateway_ip: gateway ?? null,
    ip_version: cidr.version,
    allocation_pools: toJson([]),
    dns_nameservers: toJson(body.dns_nameservers ?? []),
  })
}

export const createSecurityGroup: Create<typeof SecurityGroupCreateBody, SecurityGroup> = async (
  ctx,
  actor,
  body,
  base,
) => {
  const tenant = await okParent(ctx, actor, 'tenant', body.tenant)
  const rules = body.rules ?? []
  const errs = rules.map((r) => ruleErrors(r))
  if (errs.some((e) => Object.keys(e).length)) throw new AppError('invalid', { rules: errs })
  return createObject(ctx, base, tenant, 'securityGroup', body, { tenant_id: tenant.id }, async (trx, id) =>
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
}

export const createPort: Create<typeof PortCreateBody, Port> = async (ctx, actor, body, base) => {
  const network = await okParent(ctx, actor, 'network', body.network)
  const tenantId = await tenantIdOf(ctx, 'cloud_b_networks', network.id)
  let subnetId: number | null = null
  let subnetCidr = null
  if (body.subnet !== undefined) {
    const subnet = await resolveObject(ctx, actor, 'subnet', body.subnet, 'subnet')
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
    const g = await resolveObject(ctx, actor, 'security_groups', link, 'securityGroup')
    if ((await tenantIdOf(ctx, 'cloud_b_security_groups', g.id)) !== tenantId)
      throw new AppError('invalid', {
        security_groups: { [String(i)]: ['The security group belongs to another tenant.'] },
      })
    groupIds.push(g.id)
  }
  return createObject(
    ctx,
    base,
    network,
    'port',
    body,
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
}

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
  return createObject(
    ctx,
    base,
    tenant,
    'floatingIp',
    { name: '', description: body.description },
    {
      tenant_id: tenant.id,
    },
  )
}

export const createRouter: Create<typeof RouterCreateBody, Static<typeof RouterCreateResult>> = async (
  ctx,
  actor,
  body,
  base,
) => {
  const tenant = await resolveObject(ctx, actor, 'tenant', body.tenant, 'tenant')
  requireOk(tenant, 'tenant', 'Tenant')
  const id = await insertObject(ctx, tenant, 'router', body, {
    tenant_id: tenant.id,
    routes: toJson([]),
    fixed_ips: toJson([]),
  })
  // The common columns name the project and the settings: one read, as a retrieve makes.
  const row = (await cloudBRepository(ctx.db).findExtBy(TYPES.router, EXT.router, { id }, { all: true }))!
  return {
    url: urlOf(base, PATHS.router, row.uuid)!,
    uuid: row.uuid,
    tenant: urlOf(base, PATHS.tenant, tenant.uuid)!,
    name: row.name,
    project: urlOf(base, 'projects', row.project_uuid)!,
    service_settings: urlOf(base, 'service-settings', row.service_settings_uuid)!,
  }
}
