// All SQL of cloudA: locations, resource groups and the public IPs' own columns.
import { sql, type Kysely, type Transaction } from 'kysely'
import type { DB } from '../../db/tables.js'
import { icontains } from '../../db/sql.js'
import type { OrderTerm } from '../../http/query.js'
import {
  COMMON_COLUMNS,
  inScopes,
  settingsVisibleTo,
  type CloudResourcesQuery,
  type ResourceVisibility,
  type SettingsVisibility,
} from '../cloud/common.js'

type Db = Kysely<DB> | Transaction<DB>

export interface LocationFilters {
  name?: string
  name_exact?: string
  service_settings_uuid?: string
  uuid?: string
}

export function locationsRepository(db: Db) {
  function base() {
    return db
      .selectFrom('cloud_a_locations')
      .innerJoin('service_settings', 'service_settings.id', 'cloud_a_locations.service_settings_id')
  }
  function filtered(vis: SettingsVisibility, f: LocationFilters) {
    let q = base()
    // Locations are visible with their service settings.
    if (!vis.all) q = q.where((eb) => settingsVisibleTo(eb, vis.customerIds))
    if (f.name) q = q.where(icontains('cloud_a_locations.name', f.name))
    if (f.name_exact !== undefined) q = q.where('cloud_a_locations.name', '=', f.name_exact)
    if (f.service_settings_uuid) q = q.where('service_settings.uuid', '=', f.service_settings_uuid)
    if (f.uuid) q = q.where('cloud_a_locations.uuid', '=', f.uuid)
    return q
  }
  const columns = [
    'cloud_a_locations.id',
    'cloud_a_locations.uuid',
    'cloud_a_locations.name',
    'cloud_a_locations.backend_id',
    'cloud_a_locations.service_settings_id',
    'cloud_a_locations.created',
    'cloud_a_locations.modified',
    'service_settings.uuid as service_settings_uuid',
    'service_settings.name as service_settings_name',
  ] as const
  return {
    async count(vis: SettingsVisibility, f: LocationFilters): Promise<number> {
      const r = await filtered(vis, f)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
      return Number(r.n)
    },
    list(vis: SettingsVisibility, f: LocationFilters, order: OrderTerm[], limit: number, offset: number) {
      let q = filtered(vis, f).select(columns)
      for (const t of order) q = q.orderBy(t.column as any, t.desc ? 'desc' : 'asc')
      return q.orderBy('cloud_a_locations.id', 'asc').limit(limit).offset(offset).execute()
    },
    findVisibleByUuid(vis: SettingsVisibility, uuid: string) {
      return filtered(vis, {}).select(columns).where('cloud_a_locations.uuid', '=', uuid).executeTakeFirst()
    },
    findById(id: number) {
      return base().select(columns).where('cloud_a_locations.id', '=', id).executeTakeFirst()
    },
    findByUuid(uuid: string) {
      return base().select(columns).where('cloud_a_locations.uuid', '=', uuid).executeTakeFirst()
    },
    async insert(values: {
      uuid: string
      name: string
      service_settings_id: number
      backend_id: string
      created: string
      modified: string
    }): Promise<number> {
      const r = await db
        .insertInto('cloud_a_locations')
        .values(values)
        .returning('id')
        .executeTakeFirstOrThrow()
      return r.id
    },
    async update(id: number, values: Record<string, unknown>): Promise<void> {
      await db
        .updateTable('cloud_a_locations')
        .set(values as any)
        .where('id', '=', id)
        .execute()
    },
    async delete(id: number): Promise<void> {
      await db.deleteFrom('cloud_a_locations').where('id', '=', id).execute()
    },
    /** Resource groups and public IPs in this location. */
    async usage(id: number): Promise<number> {
      const a = await db
        .selectFrom('cloud_a_resource_groups')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('location_id', '=', id)
        .executeTakeFirstOrThrow()
      const b = await db
        .selectFrom('cloud_a_public_ips')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('location_id', '=', id)
        .executeTakeFirstOrThrow()
      return Number(a.n) + Number(b.n)
    },
  }
}

export type LocationRow = NonNullable<Awaited<ReturnType<ReturnType<typeof locationsRepository>['findById']>>>

export interface ResourceGroupFilters {
  name?: string
  name_exact?: string
  location_uuid?: string
  service_settings_uuid?: string
  project_uuid?: string
  customer_uuid?: string
  uuid?: string
}

export function resourceGroupsRepository(db: Db) {
  function base() {
    return db
      .selectFrom('cloud_a_resource_groups')
      .innerJoin('cloud_a_locations', 'cloud_a_locations.id', 'cloud_a_resource_groups.location_id')
      .innerJoin('service_settings', 'service_settings.id', 'cloud_a_resource_groups.service_settings_id')
      .innerJoin('projects', 'projects.id', 'cloud_a_resource_groups.project_id')
      .innerJoin('customers', 'customers.id', 'projects.customer_id')
  }
  function filtered(vis: ResourceVisibility, f: ResourceGroupFilters) {
    let q = base()
    // Resource groups are visible like resources.
    if (!vis.all) q = q.where((eb) => inScopes(eb, vis, 'cloud_a_resource_groups.project_id'))
    if (f.name) q = q.where(icontains('cloud_a_resource_groups.name', f.name))
    if (f.name_exact !== undefined) q = q.where('cloud_a_resource_groups.name', '=', f.name_exact)
    if (f.location_uuid) q = q.where('cloud_a_locations.uuid', '=', f.location_uuid)
    if (f.service_settings_uuid) q = q.where('service_settings.uuid', '=', f.service_settings_uuid)
    if (f.project_uuid) q = q.where('projects.uuid', '=', f.project_uuid)
    if (f.customer_uuid) q = q.where('customers.uuid', '=', f.customer_uuid)
    if (f.uuid) q = q.where('cloud_a_resource_groups.uuid', '=', f.uuid)
    return q
  }
  const columns = [
    'cloud_a_resource_groups.id',
    'cloud_a_resource_groups.uuid',
    'cloud_a_resource_groups.name',
    'cloud_a_resource_groups.service_settings_id',
    'cloud_a_resource_groups.project_id',
    'cloud_a_resource_groups.location_id',
    'cloud_a_resource_groups.created',
    'cloud_a_resource_groups.modified',
    'cloud_a_locations.uuid as location_uuid',
    'cloud_a_locations.name as location_name',
    'service_settings.uuid as service_settings_uuid',
    'service_settings.name as service_settings_name',
    'projects.uuid as project_uuid',
    'projects.name as project_name',
    'projects.customer_id',
    'customers.uuid as customer_uuid',
  ] as const
  return {
    async count(vis: ResourceVisibility, f: ResourceGroupFilters): Promise<number> {
      const r = await filtered(vis, f)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
      return Number(r.n)
    },
    list(
      vis: ResourceVisibility,
      f: ResourceGroupFilters,
      order: OrderTerm[],
      limit: number,
      offset: number,
    ) {
      let q = filtered(vis, f).select(columns)
      for (const t of order) q = q.orderBy(t.column as any, t.desc ? 'desc' : 'asc')
      return q.orderBy('cloud_a_resource_groups.id', 'asc').limit(limit).offset(offset).execute()
    },
    findVisibleByUuid(vis: ResourceVisibility, uuid: string) {
      return filtered(vis, {})
        .select(columns)
        .where('cloud_a_resource_groups.uuid', '=', uuid)
        .executeTakeFirst()
    },
    findById(id: number) {
      return base().select(columns).where('cloud_a_resource_groups.id', '=', id).executeTakeFirst()
    },
    findByUuid(uuid: string) {
      return base().select(columns).where('cloud_a_resource_groups.uuid', '=', uuid).executeTakeFirst()
    },
    async insert(values: {
      uuid: string
      name: string
      location_id: number
      service_settings_id: number
      project_id: number
      created: string
      modified: string
    }): Promise<number> {
      const r = await db
        .insertInto('cloud_a_resource_groups')
        .values(values)
        .returning('id')
        .executeTakeFirstOrThrow()
      return r.id
    },
    async update(id: number, values: Record<string, unknown>): Promise<void> {
      await db
        .updateTable('cloud_a_resource_groups')
        .set(values as any)
        .where('id', '=', id)
        .execute()
    },
    async delete(id: number): Promise<void> {
      await db.deleteFrom('cloud_a_resource_groups').where('id', '=', id).execute()
    },
    async publicIpCount(id: number): Promise<number> {
      const r = await db
        .selectFrom('cloud_a_public_ips')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('resource_group_id', '=', id)
        .executeTakeFirstOrThrow()
      return Number(r.n)
    },
  }
}

export type ResourceGroupRow = NonNullable<
  Awaited<ReturnType<ReturnType<typeof resourceGroupsRepository>['findById']>>
>

export interface PublicIpFilters {
  external_ip?: string
  /** null: matches nothing (a URL of another kind). */
  resource_group_uuid?: string | null
}

/** The public IP's own columns, joined onto the common record query. */
export function withPublicIpColumns(q: CloudResourcesQuery, f: PublicIpFilters = {}) {
  let r = q
    .innerJoin('cloud_a_public_ips', 'cloud_a_public_ips.resource_id', 'cloud_resources.id')
    .innerJoin('cloud_a_locations', 'cloud_a_locations.id', 'cloud_a_public_ips.location_id')
    .innerJoin(
      'cloud_a_resource_groups',
      'cloud_a_resource_groups.id',
      'cloud_a_public_ips.resource_group_id',
    )
  if (f.resource_group_uuid === null) r = r.where(sql<boolean>`1 = 0`)
  else if (f.resource_group_uuid) r = r.where('cloud_a_resource_groups.uuid', '=', f.resource_group_uuid)
  if (f.external_ip !== undefined) r = r.where('cloud_a_public_ips.ip_address', '=', f.external_ip)
  return r
}

export const PUBLIC_IP_COLUMNS = [
  ...COMMON_COLUMNS,
  'cloud_a_public_ips.location_id',
  'cloud_a_public_ips.resource_group_id',
  'cloud_a_public_ips.ip_address',
  'cloud_a_locations.uuid as location_uuid',
  'cloud_a_locations.name as location_name',
  'cloud_a_locations.backend_id as location_backend_id',
  'cloud_a_resource_groups.uuid as resource_group_uuid',
  'cloud_a_resource_groups.name as resource_group_name',
] as const

export function publicIpsRepository(db: Db) {
  return {
    async count(q: ReturnType<typeof withPublicIpColumns>): Promise<number> {
      const r = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
      return Number(r.n)
    },
    list(q: ReturnType<typeof withPublicIpColumns>, order: OrderTerm[], limit: number, offset: number) {
      let s = q.select(PUBLIC_IP_COLUMNS)
      for (const t of order) s = s.orderBy(t.column as any, t.desc ? 'desc' : 'asc')
      return s.orderBy('cloud_resources.id', 'asc').limit(limit).offset(offset).execute()
    },
    findOne(q: ReturnType<typeof withPublicIpColumns>) {
      return q.select(PUBLIC_IP_COLUMNS).executeTakeFirst()
    },
    async insert(values: { resource_id: number; location_id: number; resource_group_id: number }) {
      await db.insertInto('cloud_a_public_ips').values(values).execute()
    },
    async update(resourceId: number, values: Record<string, unknown>): Promise<void> {
      if (!Object.keys(values).length) return
      await db
        .updateTable('cloud_a_public_ips')
        .set(values as any)
        .where('resource_id', '=', resourceId)
        .execute()
    },
    /** What the backend needs to create or change a public IP. */
    backendSpec(resourceId: number) {
      return db
        .selectFrom('cloud_a_public_ips')
        .innerJoin('cloud_resources', 'cloud_resources.id', 'cloud_a_public_ips.resource_id')
        .innerJoin('cloud_a_locations', 'cloud_a_locations.id', 'cloud_a_public_ips.location_id')
        .innerJoin(
          'cloud_a_resource_groups',
          'cloud_a_resource_groups.id',
          'cloud_a_public_ips.resource_group_id',
        )
        .select([
          'cloud_resources.name',
          'cloud_resources.description',
          'cloud_a_locations.name as location_name',
          'cloud_a_locations.backend_id as location_backend_id',
          'cloud_a_resource_groups.name as resource_group_name',
        ])
        .where('cloud_a_public_ips.resource_id', '=', resourceId)
        .executeTakeFirst()
    },
  }
}

export type PublicIpRow = NonNullable<Awaited<ReturnType<ReturnType<typeof publicIpsRepository>['findOne']>>>
