// All SQL of the cloudB area: the extension tables of its cloud resources (joined onto the cloud
// base's common query), security group rules, port/security group links, router interfaces,
// migrations, and the two writes it makes on marketplace rows it owns (the scope of a tenant
// resource, orders waiting on a tenant).
import { sql, type Kysely, type Transaction } from 'kysely'
import type { DB } from '../../db/tables.js'
import type { OrderTerm } from '../../http/query.js'
import { reusable } from '../../db/compiled.js'
import {
  COMMON_COLUMNS,
  oneResource,
  oneResourceParams,
  oneResourceVariant,
  type CloudResourcesQuery,
  type CommonRow,
  type OneResourceWhere,
  type ResourceVisibility,
} from '../cloud/common.js'

type Db = Kysely<DB> | Transaction<DB>

export type ExtTable =
  | 'cloud_b_tenants'
  | 'cloud_b_networks'
  | 'cloud_b_subnets'
  | 'cloud_b_security_groups'
  | 'cloud_b_ports'
  | 'cloud_b_floating_ips'
  | 'cloud_b_routers'

export interface ExtFilters {
  /** null: matches nothing (a tenant URL of another kind). */
  tenant_uuid?: string | null
  /** floating IPs */
  address?: string
  runtime_state?: string
  free?: boolean
  nothing?: boolean
}

/** A common row plus its extension columns (and tenant_uuid / tenant_name when tenant-scoped). */
export type ExtRow = CommonRow & Record<string, any>

function joinExt(q: CloudResourcesQuery, ext: ExtTable, f: ExtFilters): any {
  let out: any = q.innerJoin(`${ext} as x` as any, 'x.resource_id' as any, 'cloud_resources.id')
  if (ext !== 'cloud_b_tenants') {
    out = out.innerJoin('cloud_resources as t', 't.id', 'x.tenant_id')
    if (f.tenant_uuid === null) out = out.where(sql<boolean>`1 = 0`)
    else if (f.tenant_uuid) out = out.where('t.uuid', '=', f.tenant_uuid)
  }
  if (f.nothing) out = out.where(sql<boolean>`1 = 0`)
  if (f.address !== undefined) out = out.where('x.address', '=', f.address)
  if (f.runtime_state !== undefined) out = out.where('cloud_resources.runtime_state', '=', f.runtime_state)
  if (f.free !== undefined) out = out.where('x.port_id', f.free ? 'is' : 'is not', null)
  return out
}

function selectExt(q: any, ext: ExtTable): any {
  let out = q.select(COMMON_COLUMNS).selectAll('x')
  if (ext !== 'cloud_b_tenants') out = out.select(['t.uuid as tenant_uuid', 't.name as tenant_name'])
  return out
}

// One resource of a kind with its extension row, by id or uuid, if visible.
const extBy = reusable((db: Db, ext: ExtTable, by: 'id' | 'uuid', customers: number, projects: number) =>
  selectExt(joinExt(oneResource(db, by, customers, projects), ext, {}), ext),
)

export function cloudBRepository(db: Db) {
  return {
    async findExtBy(
      resourceType: string,
      ext: ExtTable,
      where: OneResourceWhere,
      vis: ResourceVisibility,
    ): Promise<ExtRow | undefined> {
      const { rows } = await extBy(
        db,
        [ext, ...oneResourceVariant(where, vis)] as const,
        oneResourceParams(resourceType, where, vis),
      )
      return rows[0] as ExtRow | undefined
    },
    async countExt(q: CloudResourcesQuery, ext: ExtTable, f: ExtFilters): Promise<number> {
      const r = await joinExt(q, ext, f)
        .select((eb: any) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
      return Number(r.n)
    },
    listExt(
      q: CloudResourcesQuery,
      ext: ExtTable,
      f: ExtFilters,
      order: OrderTerm[],
      limit: number,
      offset: number,
    ): Promise<ExtRow[]> {
      let s = selectExt(joinExt(q, ext, f), ext)
      for (const t of order) s = s.orderBy(t.column, t.desc ? 'desc' : 'asc')
      return s.orderBy('cloud_resources.id', 'asc').limit(limit).offset(offset).execute()
    },
    /** Extension row of one resource, without the common joins. */
    extOf(ext: ExtTable, resourceId: number): Promise<Record<string, any> | undefined> {
      return db
        .selectFrom(ext as any)
        .selectAll()
        .where('resource_id', '=', resourceId)
        .executeTakeFirst()
    },
    async insertExt(ext: ExtTable, values: Record<string, unknown>): Promise<void> {
      await db
        .insertInto(ext as any)
        .values(values as any)
        .execute()
    },
    async updateExt(ext: ExtTable, resourceId: number, values: Record<string, unknown>): Promise<void> {
      if (!Object.keys(values).length) return
      await db
        .updateTable(ext as any)
        .set(values as any)
        .where('resource_id', '=', resourceId)
        .execute()
    },
    /** The plain cloud_resources row. */
    resource(id: number) {
      return db.selectFrom('cloud_resources').selectAll().where('id', '=', id).executeTakeFirst()
    },
    /** A cloud resource of a type by uuid, with no visibility check (links in request bodies). */
    resourceByUuid(type: string, uuid: string) {
      return db
        .selectFrom('cloud_resources')
        .selectAll()
        .where('resource_type', '=', type)
        .where('uuid', '=', uuid)
        .executeTakeFirst()
    },
    /** A cloud resource of a type by its backend id within one service settings. */
    resourceByBackendId(type: string, settingsId: number, backendId: string) {
      return db
        .selectFrom('cloud_resources')
        .selectAll()
        .where('resource_type', '=', type)
        .where('service_settings_id', '=', settingsId)
        .where('backend_id', '=', backendId)
        .executeTakeFirst()
    },
    async insertResource(values: {
      uuid: string
      resource_type: string
      name: string
      description: string
      service_settings_id: number
      project_id: number
      state: string
      backend_id: string
      runtime_state?: string
      created: string
      modified: string
    }): Promise<number> {
      const r = await db
        .insertInto('cloud_resources')
        .values(values)
        .returning('id')
        .executeTakeFirstOrThrow()
      return r.id
    },
    async updateResource(id: number, values: Record<string, unknown>): Promise<void> {
      await db
        .updateTable('cloud_resources')
        .set(values as any)
        .where('id', '=', id)
        .execute()
    },
    async setStateIf(id: number, from: readonly string[], to: string, values: Record<string, unknown> = {}) {
      const r = await db
        .updateTable('cloud_resources')
        .set({ ...(values as any), state: to })
        .where('id', '=', id)
        .where('state', 'in', from as string[])
        .executeTakeFirst()
      return Number(r.numUpdatedRows) > 0
    },
    async deleteResources(ids: number[]): Promise<void> {
      if (ids.length) await db.deleteFrom('cloud_resources').where('id', 'in', ids).execute()
    },
    /** Ids of every object of a tenant (its networks, subnets, ports, groups, IPs and routers). */
    async tenantChildren(tenantId: number): Promise<number[]> {
      const ids: number[] = []
      for (const ext of [
        'cloud_b_networks',
        'cloud_b_subnets',
        'cloud_b_security_groups',
        'cloud_b_ports',
        'cloud_b_floating_ips',
        'cloud_b_routers',
      ] as const) {
        const rows = await db
          .selectFrom(ext)
          .select('resource_id')
          .where('tenant_id', '=', tenantId)
          .execute()
        ids.push(...rows.map((r) => r.resource_id))
      }
      return ids
    },
    /** Backend ids of a tenant's objects of one kind, mapped to their row ids. */
    async backendIds(
      ext: Exclude<ExtTable, 'cloud_b_tenants'>,
      tenantId: number,
    ): Promise<Map<string, number>> {
      const rows = await db
        .selectFrom(ext)
        .innerJoin('cloud_resources', 'cloud_resources.id', `${ext}.resource_id` as any)
        .select(['cloud_resources.id', 'cloud_resources.backend_id'])
        .where(`${ext}.tenant_id` as any, '=', tenantId)
        .execute()
      return new Map(rows.filter((r) => r.backend_id).map((r) => [r.backend_id, r.id]))
    },

    // ---- ports, security groups, rules ----

    /** Port rows (with subnet columns) by id, for rendering. */
    portsByIds(ids: number[]) {
      if (!ids.length) return Promise.resolve([])
      return db
        .selectFrom('cloud_b_ports as p')
        .innerJoin('cloud_resources as r', 'r.id', 'p.resource_id')
        .leftJoin('cloud_resources as s', 's.id', 'p.subnet_id')
        .leftJoin('cloud_b_subnets as sx', 'sx.resource_id', 'p.subnet_id')
        .select([
          'p.resource_id',
          'p.fixed_ips',
          'p.mac_address',
          'p.device_id',
          'p.device_owner',
          'p.allowed_address_pairs',
          'r.uuid',
          's.uuid as subnet_uuid',
          's.name as subnet_name',
          's.description as subnet_description',
          'sx.cidr as subnet_cidr',
        ])
        .where('p.resource_id', 'in', ids)
        .orderBy('p.resource_id')
        .execute()
    },
    securityGroupLinks(portIds: number[]) {
      if (!portIds.length) return Promise.resolve([])
      return db
        .selectFrom('cloud_b_port_security_groups')
        .selectAll()
        .where('port_id', 'in', portIds)
        .orderBy('security_group_id')
        .execute()
    },
    async linkSecurityGroups(portId: number, groupIds: number[]): Promise<void> {
      await db.deleteFrom('cloud_b_port_security_groups').where('port_id', '=', portId).execute()
      if (groupIds.length) {
        await db
          .insertInto('cloud_b_port_security_groups')
          .values(groupIds.map((g) => ({ port_id: portId, security_group_id: g })))
          .execute()
      }
    },
    rulesOf(groupIds: number[]) {
      if (!groupIds.length) return Promise.resolve([])
      return db
        .selectFrom('cloud_b_security_group_rules as r')
        .leftJoin('cloud_resources as g', 'g.id', 'r.remote_group_id')
        .selectAll('r')
        .select(['g.uuid as remote_group_uuid', 'g.name as remote_group_name'])
        .where('r.security_group_id', 'in', groupIds)
        .orderBy('r.id')
        .execute()
    },
    async insertRules(
      groupId: number,
      rules: {
        ethertype: string
        direction: string
        protocol: string
        from_port: number | null
        to_port: number | null
        cidr: string
        description: string
        backend_id: string
      }[],
    ): Promise<void> {
      if (!rules.length) return
      await db
        .insertInto('cloud_b_security_group_rules')
        .values(rules.map((r) => ({ ...r, security_group_id: groupId, remote_group_id: null })))
        .execute()
    },
    async deleteRules(groupId: number): Promise<void> {
      await db.deleteFrom('cloud_b_security_group_rules').where('security_group_id', '=', groupId).execute()
    },
    /** The ports whose ids are given, by the subnet they sit on. */
    async subnetIdsOfNetwork(networkId: number): Promise<number[]> {
      const rows = await db
        .selectFrom('cloud_b_subnets')
        .select('resource_id')
        .where('network_id', '=', networkId)
        .execute()
      return rows.map((r) => r.resource_id)
    },
    /** The floating IPs attached to these ports, oldest first. */
    async floatingIpsOfPorts(portIds: number[]) {
      if (!portIds.length) return []
      return db
        .selectFrom('cloud_b_floating_ips')
        .innerJoin('cloud_resources', 'cloud_resources.id', 'cloud_b_floating_ips.resource_id')
        .select(['cloud_b_floating_ips.port_id', 'cloud_resources.uuid'])
        .where('cloud_b_floating_ips.port_id', 'in', portIds)
        .orderBy('cloud_resources.id')
        .execute()
    },
    /** The number of objects in one extension table per tenant, for these tenants. */
    async countByTenant(table: Exclude<ExtTable, 'cloud_b_tenants'>, tenantIds: number[]) {
      if (!tenantIds.length) return []
      return db
        .selectFrom(table)
        .select(['tenant_id', (eb) => eb.fn.countAll<number | string>().as('n')])
        .where('tenant_id', 'in', tenantIds)
        .groupBy('tenant_id')
        .execute()
    },
    /** The external network of each of these tenants. */
    async externalNetworks(tenantIds: number[]) {
      if (!tenantIds.length) return []
      return db
        .selectFrom('cloud_b_tenants')
        .select(['resource_id', 'external_network_id'])
        .where('resource_id', 'in', tenantIds)
        .execute()
    },
    async subnetsOfNetworks(networkIds: number[]) {
      if (!networkIds.length) return []
      return db
        .selectFrom('cloud_b_subnets')
        .innerJoin('cloud_resources', 'cloud_resources.id', 'cloud_b_subnets.resource_id')
        .select([
          'cloud_b_subnets.network_id',
          'cloud_resources.uuid',
          'cloud_resources.name',
          'cloud_resources.description',
          'cloud_b_subnets.cidr',
          'cloud_b_subnets.gateway_ip',
          'cloud_b_subnets.allocation_pools',
          'cloud_b_subnets.ip_version',
          'cloud_b_subnets.enable_dhcp',
        ])
        .where('cloud_b_subnets.network_id', 'in', networkIds)
        .orderBy('cloud_resources.id')
        .execute()
    },

    // ---- router interfaces ----

    async interfacePorts(routerIds: number[]): Promise<{ router_id: number; port_id: number }[]> {
      if (!routerIds.length) return []
      return db
        .selectFrom('cloud_b_router_interfaces')
        .selectAll()
        .where('router_id', 'in', routerIds)
        .orderBy('port_id')
        .execute()
    },
    async addInterface(routerId: number, portId: number): Promise<void> {
      await db
        .insertInto('cloud_b_router_interfaces')
        .values({ router_id: routerId, port_id: portId })
        .execute()
    },
    async removeInterface(portId: number): Promise<void> {
      await db.deleteFrom('cloud_b_router_interfaces').where('port_id', '=', portId).execute()
    },
    routerOfPort(portId: number) {
      return db
        .selectFrom('cloud_b_router_interfaces')
        .selectAll()
        .where('port_id', '=', portId)
        .executeTakeFirst()
    },

    // ---- marketplace rows this area drives ----

    /** Points a marketplace resource at the tenant provisioned for it. */
    async setResourceScope(resourceId: number, scopeType: string, scopeId: number): Promise<void> {
      await db
        .updateTable('resources')
        .set({ scope_type: scopeType, scope_id: scopeId })
        .where('id', '=', resourceId)
        .execute()
    },
    async setResourceBackendId(scopeType: string, scopeId: number, backendId: string): Promise<void> {
      await db
        .updateTable('resources')
        .set({ backend_id: backendId })
        .where('scope_type', '=', scopeType)
        .where('scope_id', '=', scopeId)
        .execute()
    },
    /** The executing order of a processed offering whose resource's scope is this object. */
    executingOrderFor(scopeType: string, scopeId: number) {
      return db
        .selectFrom('orders')
        .innerJoin('resources', 'resources.id', 'orders.resource_id')
        .select(['orders.id', 'orders.type', 'resources.id as resource_id'])
        .where('resources.scope_type', '=', scopeType)
        .where('resources.scope_id', '=', scopeId)
        .where('orders.state', '=', 'executing')
        .orderBy('orders.id', 'desc')
        .executeTakeFirst()
    },
    marketplaceResource(id: number) {
      return db
        .selectFrom('resources')
        .innerJoin('offerings', 'offerings.id', 'resources.offering_id')
        .select([
          'resources.id',
          'resources.uuid',
          'resources.name',
          'resources.state',
          'resources.project_id',
          'resources.customer_id',
          'resources.limits',
          'resources.scope_type',
          'resources.scope_id',
          'resources.offering_id',
          'offerings.type as offering_type',
        ])
        .where('resources.id', '=', id)
        .executeTakeFirst()
    },
    marketplaceResourcesOf(scopeType: string, scopeId: number) {
      return db
        .selectFrom('resources')
        .select('id')
        .where('scope_type', '=', scopeType)
        .where('scope_id', '=', scopeId)
        .execute()
    },
    projectUuid(id: number) {
      return db.selectFrom('projects').select('uuid').where('id', '=', id).executeTakeFirst()
    },
    marketplaceResourceByUuid(uuid: string) {
      return db.selectFrom('resources').select('id').where('uuid', '=', uuid).executeTakeFirst()
    },
  }
}

// ---- migrations ----

export type MigrationVisibility = { all: true } | { all: false; userId: number }

export interface MigrationFilters {
  src_resource_uuid?: string
  dst_resource_uuid?: string
}

export function migrationsRepository(db: Db) {
  function base() {
    return db
      .selectFrom('cloud_b_migrations as m')
      .innerJoin('resources as src', 'src.id', 'm.src_resource_id')
      .innerJoin('offerings as so', 'so.id', 'src.offering_id')
      .innerJoin('offerings as do', 'do.id', 'm.dst_offering_id')
      .leftJoin('plans as dp', 'dp.id', 'm.dst_plan_id')
      .leftJoin('resources as dst', 'dst.id', 'm.dst_resource_id')
      .leftJoin('users as u', 'u.id', 'm.created_by_id')
  }
  function filtered(vis: MigrationVisibility, f: MigrationFilters) {
    let q = base()
    if (!vis.all) q = q.where('m.created_by_id', '=', vis.userId)
    if (f.src_resource_uuid) q = q.where('src.uuid', '=', f.src_resource_uuid)
    if (f.dst_resource_uuid) q = q.where('dst.uuid', '=', f.dst_resource_uuid)
    return q
  }
  const columns = [
    'm.id',
    'm.uuid',
    'm.name',
    'm.description',
    'm.mappings',
    'm.state',
    'm.error_message',
    'm.error_traceback',
    'm.created',
    'm.modified',
    'm.created_by_id',
    'm.src_resource_id',
    'm.dst_resource_id',
    'm.dst_offering_id',
    'm.dst_plan_id',
    'u.uuid as created_by_uuid',
    'u.full_name as created_by_full_name',
    'src.uuid as src_resource_uuid',
    'src.name as src_resource_name',
    'so.uuid as src_offering_uuid',
    'so.name as src_offering_name',
    'do.uuid as dst_offering_uuid',
    'do.name as dst_offering_name',
    'dp.uuid as dst_plan_uuid',
    'dst.uuid as dst_resource_uuid',
    'dst.name as dst_resource_name',
    'dst.state as dst_resource_state',
  ] as const
  return {
    async count(vis: MigrationVisibility, f: MigrationFilters): Promise<number> {
      const r = await filtered(vis, f)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
      return Number(r.n)
    },
    list(vis: MigrationVisibility, f: MigrationFilters, order: OrderTerm[], limit: number, offset: number) {
      let q = filtered(vis, f).select(columns)
      for (const t of order)
        q = q.orderBy(t.column.replace('cloud_b_migrations.', 'm.') as any, t.desc ? 'desc' : 'asc')
      return q.orderBy('m.id', 'asc').limit(limit).offset(offset).execute()
    },
    findVisibleByUuid(vis: MigrationVisibility, uuid: string) {
      return filtered(vis, {}).select(columns).where('m.uuid', '=', uuid).executeTakeFirst()
    },
    findById(id: number) {
      return base().select(columns).where('m.id', '=', id).executeTakeFirst()
    },
    /** Migrations waiting for this destination resource to be provisioned. */
    waitingOn(dstResourceId: number) {
      return db
        .selectFrom('cloud_b_migrations')
        .select(['id'])
        .where('dst_resource_id', '=', dstResourceId)
        .where('state', '=', 'CREATING')
        .execute()
    },
    async insert(values: {
      uuid: string
      name: string
      description: string
      mappings: string
      created_by_id: number | null
      src_resource_id: number
      dst_offering_id: number
      dst_plan_id: number | null
      created: string
      modified: string
    }): Promise<number> {
      const r = await db
        .insertInto('cloud_b_migrations')
        .values({ ...values, state: 'CREATION_SCHEDULED' })
        .returning('id')
        .executeTakeFirstOrThrow()
      return r.id
    },
    async update(id: number, values: Record<string, unknown>): Promise<void> {
      await db
        .updateTable('cloud_b_migrations')
        .set(values as any)
        .where('id', '=', id)
        .execute()
    },
    async setStateIf(id: number, from: readonly string[], to: string, values: Record<string, unknown> = {}) {
      const r = await db
        .updateTable('cloud_b_migrations')
        .set({ ...(values as any), state: to })
        .where('id', '=', id)
        .where('state', 'in', from as string[])
        .executeTakeFirst()
      return Number(r.numUpdatedRows) > 0
    },
    async delete(id: number): Promise<void> {
      await db.deleteFrom('cloud_b_migrations').where('id', '=', id).execute()
    },
  }
}

export type MigrationRow = NonNullable<
  Awaited<ReturnType<ReturnType<typeof migrationsRepository>['findById']>>
>
