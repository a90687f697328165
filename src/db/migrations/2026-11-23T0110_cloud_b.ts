// cloudB objects. Tenants, networks, subnets, ports, security groups, floating IPs and routers are
// cloud resources: their common record is a cloud_resources row (resource_type cloudB.*), and
// each kind keeps its own columns in an extension table keyed by resource_id. Migrations between
// tenants have a table of their own.
import type { ColumnDefinitionBuilder, CreateTableBuilder, Kysely } from 'kysely'
import { clearedWith, errorTexts, ownedBy, timestamps } from './_columns.js'
import { createLinkTable, createRecordTable, dropTables, jsonType, withId } from './_helpers.js'

const resourceKey = (c: ColumnDefinitionBuilder) =>
  c.primaryKey().references('cloud_resources.id').onDelete('cascade')
const tenantRef = (c: ColumnDefinitionBuilder) =>
  c.notNull().references('cloud_resources.id').onDelete('cascade')

async function index(db: Kysely<any>, table: string, column: string): Promise<void> {
  await db.schema.createIndex(`${table}_${column}_idx`).on(table).column(column).execute()
}

type TenantObjectTable = CreateTableBuilder<string, 'resource_id' | 'tenant_id'>

/**
 * The extension table of a kind of a tenant's objects: keyed by the object's cloud_resources row,
 * with its tenant (indexed), then the kind's own `columns`.
 */
async function createTenantObjectTable(
  db: Kysely<any>,
  name: string,
  columns: (t: TenantObjectTable) => CreateTableBuilder<string, string> = (t) => t,
): Promise<void> {
  const t = db.schema
    .createTable(name)
    .addColumn('resource_id', 'integer', resourceKey)
    .addColumn('tenant_id', 'integer', tenantRef)
  await columns(t).execute()
  await index(db, name, 'tenant_id')
}

export async function up(db: Kysely<any>): Promise<void> {
  const json = jsonType(db)

  await db.schema
    .createTable('cloud_b_tenants')
    .addColumn('resource_id', 'integer', resourceKey)
    .addColumn('limits', json, (c) => c.notNull())
    .addColumn('external_network_id', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .addColumn('internal_network_id', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .execute()

  await createTenantObjectTable(db, 'cloud_b_networks', (t) =>
    t
      .addColumn('is_external', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('type', 'varchar(50)', (c) => c.notNull().defaultTo(''))
      .addColumn('segmentation_id', 'integer')
      .addColumn('mtu', 'integer'),
  )

  await createTenantObjectTable(db, 'cloud_b_subnets', (t) =>
    t
      .addColumn('network_id', 'integer', ownedBy('cloud_resources'))
      .addColumn('cidr', 'varchar(64)', (c) => c.notNull())
      .addColumn('gateway_ip', 'varchar(64)')
      .addColumn('ip_version', 'integer', (c) => c.notNull().defaultTo(4))
      .addColumn('allocation_pools', json, (c) => c.notNull())
      .addColumn('dns_nameservers', json, (c) => c.notNull())
      .addColumn('enable_dhcp', 'integer', (c) => c.notNull().defaultTo(1)),
  )
  await index(db, 'cloud_b_subnets', 'network_id')

  await createTenantObjectTable(db, 'cloud_b_security_groups')

  await withId(db, db.schema.createTable('cloud_b_security_group_rules'))
    .addColumn('security_group_id', 'integer', ownedBy('cloud_resources'))
    .addColumn('ethertype', 'varchar(8)', (c) => c.notNull().defaultTo('IPv4'))
    .addColumn('direction', 'varchar(8)', (c) => c.notNull().defaultTo('ingress'))
    .addColumn('protocol', 'varchar(8)', (c) => c.notNull().defaultTo(''))
    // 1-65535 where given (the spec's limit); null means any port (ICMP, any protocol).
    .addColumn('from_port', 'integer')
    .addColumn('to_port', 'integer')
    .addColumn('cidr', 'varchar(64)', (c) => c.notNull().defaultTo(''))
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('remote_group_id', 'integer', clearedWith('cloud_resources'))
    .addColumn('backend_id', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .execute()
  await index(db, 'cloud_b_security_group_rules', 'security_group_id')

  await createTenantObjectTable(db, 'cloud_b_ports', (t) =>
    t
      .addColumn('network_id', 'integer', clearedWith('cloud_resources'))
      .addColumn('subnet_id', 'integer', clearedWith('cloud_resources'))
      .addColumn('fixed_ips', json, (c) => c.notNull())
      .addColumn('mac_address', 'varchar(32)', (c) => c.notNull().defaultTo(''))
      .addColumn('device_id', 'varchar(255)', (c) => c.notNull().defaultTo(''))
      .addColumn('device_owner', 'varchar(100)', (c) => c.notNull().defaultTo(''))
      .addColumn('allowed_address_pairs', json, (c) => c.notNull()),
  )
  await index(db, 'cloud_b_ports', 'subnet_id')

  await createLinkTable(db, 'cloud_b_port_security_groups', {
    port_id: 'cloud_resources',
    security_group_id: 'cloud_resources',
  }).execute()

  await createTenantObjectTable(db, 'cloud_b_floating_ips', (t) =>
    t
      .addColumn('address', 'varchar(64)')
      .addColumn('backend_network_id', 'varchar(255)', (c) => c.notNull().defaultTo(''))
      .addColumn('port_id', 'integer', clearedWith('cloud_resources'))
      .addColumn('external_address', 'varchar(64)'),
  )
  await index(db, 'cloud_b_floating_ips', 'port_id')
  await index(db, 'cloud_b_floating_ips', 'address')

  await createTenantObjectTable(db, 'cloud_b_routers', (t) =>
    t.addColumn('routes', json, (c) => c.notNull()).addColumn('fixed_ips', json, (c) => c.notNull()),
  )

  // A router interface is a port of the router; a port serves at most one router.
  await db.schema
    .createTable('cloud_b_router_interfaces')
    .addColumn('router_id', 'integer', ownedBy('cloud_resources'))
    .addColumn('port_id', 'integer', (c) =>
      c.notNull().unique().references('cloud_resources.id').onDelete('cascade'),
    )
    .addPrimaryKeyConstraint('cloud_b_router_interfaces_pk', ['router_id', 'port_id'])
    .execute()

  await createRecordTable(db, 'cloud_b_migrations')
    .addColumn('name', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('mappings', json, (c) => c.notNull())
    .addColumn('created_by_id', 'integer', clearedWith('users'))
    .addColumn('src_resource_id', 'integer', ownedBy('resources'))
    .addColumn('dst_offering_id', 'integer', ownedBy('offerings'))
    .addColumn('dst_plan_id', 'integer', clearedWith('plans'))
    .addColumn('dst_resource_id', 'integer', clearedWith('resources'))
    .addColumn('state', 'varchar(32)', (c) => c.notNull().defaultTo('CREATION_SCHEDULED'))
    .$call(errorTexts)
    .$call(timestamps)
    .execute()
  for (const col of ['src_resource_id', 'dst_resource_id', 'created_by_id', 'created']) {
    await index(db, 'cloud_b_migrations', col)
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await dropTables(db, [
    'cloud_b_migrations',
    'cloud_b_router_interfaces',
    'cloud_b_routers',
    'cloud_b_floating_ips',
    'cloud_b_port_security_groups',
    'cloud_b_ports',
    'cloud_b_security_group_rules',
    'cloud_b_security_groups',
    'cloud_b_subnets',
    'cloud_b_networks',
    'cloud_b_tenants',
  ])
}
