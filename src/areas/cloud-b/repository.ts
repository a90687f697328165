// All SQL of the cloudB area: the extension tables of its cloud resources (joined onto the cloud
// base's common query), security group rules, port/security group links, router interfaces, and
// the writes it makes on marketplace rows it owns (the scope of a tenant
// resource, orders waiting on a tenant). Migrations have theirs in migrations-repository.ts.
import { sql, type Kysely, type Transaction } from 'kysely'
import type { DB } from '../../db/tables.js'
import type { OrderTerm } from '../../http/query.js'
import { perDatabase, reusable } from '../../db/compiled.js'
import { insertRow, updateRow } from '../../db/rows.js'
import { joined } from '../../db/joins.js'
import { OFFERING_OF_RESOURCE } from '../../db/relations.js'
import { networkingRepository } from './networking-repository.js'
import {
  cloudResourcesRepository,
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

/** Built once per database handle or transaction (`perDatabase`). */
export const cloudBRepository = perDatabase((db: Db) => {
  // The statements on the common cloud_resources row are the cloud base's.
  const common = cloudResourcesRepository(db)
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
      order: readonly OrderTerm[],
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
    insertExt(ext: ExtTable, values: Record<string, unknown>): Promise<void> {
      return insertRow(db, ext, values)
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
    resource: (id: number) => common.findById(id),
    /** The uuid and name of each of these resources. */
    async namesByIds(ids: number[]) {
      if (!ids.length) return []
      return db.selectFrom('cloud_resources').select(['id', 'uuid', 'name']).where('id', 'in', ids).execute()
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
    updateResource: (id: number, values: Record<string, unknown>) => common.update(id, values),
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

    ...networkingRepository(db),

    // ---- marketplace rows this area drives ----

    /** Points a marketplace resource at the tenant provisioned for it. */
    setResourceScope(resourceId: number, scopeType: string, scopeId: number): Promise<void> {
      return updateRow(db, 'resources', resourceId, { scope_type: scopeType, scope_id: scopeId })
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
      return joined(db, 'resources', [OFFERING_OF_RESOURCE])
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
    marketplaceResourceByUuid(uuid: string) {
      return db.selectFrom('resources').select('id').where('uuid', '=', uuid).executeTakeFirst()
    },
  }
})
