// cloudB backend objects (tenants, networks, subnets, ports, security groups, floating IPs,
// routers) and migrations between tenants.
import type { Kysely } from 'kysely'
import { jsonType, withId } from './_helpers.js'

/** The columns every cloudB backend object carries (the common record of the spec's 2.9). */
function common(db: Kysely<any>, table: string) {
  return withId(db, db.schema.createTable(table))
    .addColumn('uuid', 'varchar(36)', (c) => c.notNull().unique())
    .addColumn('name', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('service_settings_id', 'integer', (c) =>
      c.notNull().references('service_settings.id').onDelete('cascade'),
    )
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('state', 'varchar(32)', (c) => c.notNull().defaultTo('CREATION_SCHEDULED'))
    .addColumn('error_message', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('error_traceback', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('backend_id', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .addColumn('created', 'varchar(32)', (c) => c.notNull())
    .addColumn('modified', 'varchar(32)', (c) => c.notNull())
}

async function indexes(db: Kysely<any>, table: string, columns: string[]): Promise<void> {
  for (const col of columns) {
    await db.schema.createIndex(`${table}_${col}_idx`).on(table).column(col).execute()
  }
}

export async function up(db: Kysely<any>): Promise<void> {
  const json = jsonType(db)

  await common(db, 'cloudb_tenants')
    .addColumn('limits', json, (c) => c.notNull())
    .addColumn('external_network_id', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .addColumn('internal_network_id', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .execute()
  await indexes(db, 'cloudb_tenants', ['service_settings_id', 'project_id', 'name'])

  const tenantRef = (c: any) => c.notNull().references('cloudb_tenants.id').onDelete('cascade')

  await common(db, 'cloudb_networks')
    .addColumn('tenant_id', 'integer', tenantRef)
    .addColumn('is_external', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('type', 'varchar(50)', (c) => c.notNull().defaultTo(''))
    .addColumn('segmentation_id', 'integer')
    .addColumn('mtu', 'integer')
    .execute()
  await indexes(db, 'cloudb_networks', ['tenant_id'])

  await common(db, 'cloudb_subnets')
    .addColumn('tenant_id', 'integer', tenantRef)
    .addColumn('network_id', 'integer', (c) =>
      c.notNull().references('cloudb_networks.id').onDelete('cascade'),
    )
    .addColumn('cidr', 'varchar(64)', (c) => c.notNull())
    .addColumn('gateway_ip', 'varchar(64)')
    .addColumn('ip_version', 'integer', (c) => c.notNull().defaultTo(4))
    .addColumn('allocation_pools', json, (c) => c.notNull())
    .addColumn('dns_nameservers', json, (c) => c.notNull())
    .addColumn('enable_dhcp', 'integer', (c) => c.notNull().defaultTo(1))
    .execute()
  await indexes(db, 'cloudb_subnets', ['tenant_id', 'network_id'])

  await common(db, 'cloudb_security_groups').addColumn('tenant_id', 'integer', tenantRef).execute()
  await indexes(db, 'cloudb_security_groups', ['tenant_id'])

  await withId(db, db.schema.createTable('cloudb_security_group_rules'))
    .addColumn('security_group_id', 'integer', (c) =>
      c.notNull().references('cloudb_security_groups.id').onDelete('cascade'),
    )
    .addColumn('ethertype', 'varchar(8)', (c) => c.notNull().defaultTo('IPv4'))
    .addColumn('direction', 'varchar(8)', (c) => c.notNull().defaultTo('ingress'))
    .addColumn('protocol', 'varchar(8)', (c) => c.notNull().defaultTo(''))
    // 1-65535 where given (the spec's limit); null for "any port" (ICMP, any protocol).
    .addColumn('from_port', 'integer')
    .addColumn('to_port', 'integer')
    .addColumn('cidr', 'varchar(64)', (c) => c.notNull().defaultTo(''))
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('remote_group_id', 'integer', (c) =>
      c.references('cloudb_security_groups.id').onDelete('set null'),
    )
    .addColumn('backend_id', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .execute()
  await indexes(db, 'cloudb_security_group_rules', ['security_group_id'])

  await common(db, 'cloudb_ports')
    .addColumn('tenant_id', 'integer', tenantRef)
    .addColumn('network_id', 'integer', (c) => c.references('cloudb_networks.id').onDelete('set null'))
    .addColumn('subnet_id', 'integer', (c) => c.references('cloudb_subnets.id').onDelete('set null'))
    .addColumn('fixed_ips', json, (c) => c.notNull())
    .addColumn('mac_address', 'varchar(32)', (c) => c.notNull().defaultTo(''))
    .addColumn('device_id', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .addColumn('device_owner', 'varchar(100)', (c) => c.notNull().defaultTo(''))
    .addColumn('allowed_address_pairs', json, (c) => c.notNull())
    /** The backend's port status (DOWN, ACTIVE). */
    .addColumn('runtime_state', 'varchar(32)', (c) => c.notNull().defaultTo('DOWN'))
    .execute()
  await indexes(db, 'cloudb_ports', ['tenant_id', 'subnet_id'])

  await db.schema
    .createTable('cloudb_port_security_groups')
    .addColumn('port_id', 'integer', (c) => c.notNull().references('cloudb_ports.id').onDelete('cascade'))
    .addColumn('security_group_id', 'integer', (c) =>
      c.notNull().references('cloudb_security_groups.id').onDelete('cascade'),
    )
    .addPrimaryKeyConstraint('cloudb_port_security_groups_pk', ['port_id', 'security_group_id'])
    .execute()

  await common(db, 'cloudb_floating_ips')
    .addColumn('tenant_id', 'integer', tenantRef)
    .addColumn('runtime_state', 'varchar(32)', (c) => c.notNull().defaultTo(''))
    .addColumn('address', 'varchar(64)')
    .addColumn('backend_network_id', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .addColumn('port_id', 'integer', (c) => c.references('cloudb_ports.id').onDelete('set null'))
    .addColumn('external_address', 'varchar(64)')
    .execute()
  await indexes(db, 'cloudb_floating_ips', ['tenant_id', 'port_id', 'address', 'project_id'])

  await common(db, 'cloudb_routers')
    .addColumn('tenant_id', 'integer', tenantRef)
    .addColumn('routes', json, (c) => c.notNull())
    .addColumn('fixed_ips', json, (c) => c.notNull())
    .execute()
  await indexes(db, 'cloudb_routers', ['tenant_id'])

  await db.schema
    .createTable('cloudb_router_interfaces')
    .addColumn('router_id', 'integer', (c) => c.notNull().references('cloudb_routers.id').onDelete('cascade'))
    .addColumn('port_id', 'integer', (c) =>
      c.notNull().unique().references('cloudb_ports.id').onDelete('cascade'),
    )
    .addPrimaryKeyConstraint('cloudb_router_interfaces_pk', ['router_id', 'port_id'])
    .execute()

  await withId(db, db.schema.createTable('cloudb_migrations'))
    .addColumn('uuid', 'varchar(36)', (c) => c.notNull().unique())
    .addColumn('name', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('mappings', json, (c) => c.notNull())
    .addColumn('created_by_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('src_resource_id', 'integer', (c) =>
      c.notNull().references('resources.id').onDelete('cascade'),
    )
    .addColumn('dst_offering_id', 'integer', (c) =>
      c.notNull().references('offerings.id').onDelete('cascade'),
    )
    .addColumn('dst_plan_id', 'integer', (c) => c.references('plans.id').onDelete('set null'))
    .addColumn('dst_resource_id', 'integer', (c) => c.references('resources.id').onDelete('set null'))
    .addColumn('state', 'varchar(32)', (c) => c.notNull().defaultTo('CREATION_SCHEDULED'))
    .addColumn('error_message', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('error_traceback', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created', 'varchar(32)', (c) => c.notNull())
    .addColumn('modified', 'varchar(32)', (c) => c.notNull())
    .execute()
  await indexes(db, 'cloudb_migrations', ['src_resource_id', 'dst_resource_id', 'created_by_id', 'created'])
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of [
    'cloudb_migrations',
    'cloudb_router_interfaces',
    'cloudb_routers',
    'cloudb_floating_ips',
    'cloudb_port_security_groups',
    'cloudb_ports',
    'cloudb_security_group_rules',
    'cloudb_security_groups',
    'cloudb_subnets',
    'cloudb_networks',
    'cloudb_tenants',
  ]) {
    await db.schema.dropTable(t).execute()
  }
}
