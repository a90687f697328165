// The SQL of how cloudB objects hang together: ports with their subnets and security groups,
// security group rules, subnets of networks, floating IPs of ports, router interfaces, and the
// objects of a tenant by kind. Part of the area's repository (repository.ts).
import type { Kysely, Transaction } from 'kysely'
import type { DB } from '../../db/tables.js'
import type { BackendRule } from './driver.js'
import type { ExtTable } from './repository.js'
import { columnWhere } from '../../db/rows.js'

type Db = Kysely<DB> | Transaction<DB>

export function networkingRepository(db: Db) {
  return {
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
    /** The backend ids of a port's security groups, in the order of their ids: one query. */
    async securityGroupBackendIds(portId: number): Promise<string[]> {
      const rows = await db
        .selectFrom('cloud_b_port_security_groups as l')
        .innerJoin('cloud_resources as g', 'g.id', 'l.security_group_id')
        .select('g.backend_id')
        .where('l.port_id', '=', portId)
        .orderBy('l.security_group_id')
        .execute()
      return rows.map((r) => r.backend_id)
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
    async insertRules(groupId: number, rules: BackendRule[]): Promise<void> {
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
    subnetIdsOfNetwork: (networkId: number): Promise<number[]> =>
      columnWhere(db, 'cloud_b_subnets', 'resource_id', 'network_id', networkId),
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

    /** The interfaces of these routers, each with its port's subnet and backend id. */
    async interfacePorts(routerIds: number[]) {
      if (!routerIds.length) return []
      return db
        .selectFrom('cloud_b_router_interfaces as i')
        .innerJoin('cloud_b_ports as p', 'p.resource_id', 'i.port_id')
        .innerJoin('cloud_resources as r', 'r.id', 'i.port_id')
        .select(['i.router_id', 'i.port_id', 'p.subnet_id', 'r.backend_id as port_backend_id'])
        .where('i.router_id', 'in', routerIds)
        .orderBy('i.port_id')
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
  }
}
