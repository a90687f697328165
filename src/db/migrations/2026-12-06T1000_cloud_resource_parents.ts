import { sql, type Kysely } from 'kysely'
import { clearedWith } from './_columns.js'

// The cloud resource a cloud resource belongs to: a cloudB tenant's networks, subnets, ports,
// security groups, floating IPs and routers belong to their tenant, and so to the marketplace
// resource (and offering) whose scope the tenant is. Their events name that offering, read with
// the row without knowing each kind's own table. Existing objects get their tenant from their
// kind's table.
const TENANT_OBJECT_TABLES = [
  'cloud_b_networks',
  'cloud_b_subnets',
  'cloud_b_ports',
  'cloud_b_security_groups',
  'cloud_b_floating_ips',
  'cloud_b_routers',
]

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('cloud_resources')
    .addColumn('parent_id', 'integer', clearedWith('cloud_resources'))
    .execute()
  for (const table of TENANT_OBJECT_TABLES) {
    await sql`update cloud_resources set parent_id =
        (select o.tenant_id from ${sql.table(table)} o where o.resource_id = cloud_resources.id)
      where id in (select resource_id from ${sql.table(table)})`.execute(db)
  }
}
