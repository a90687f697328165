// All SQL of cloudA: locations, resource groups and the public IPs' own columns.
import type { Kysely, Transaction } from 'kysely'
import type { DB } from '../../db/tables.js'
import { countRows, scopedList } from '../../db/listing.js'
import { tableRecords } from '../../db/rows.js'
import { joined, projectAndCustomer, unlessAll, withJoins } from '../../db/joins.js'
import {
  COMMON_COLUMNS,
  inScopes,
  type CloudResourcesQuery,
  type CommonFilters,
  type ResourceVisibility,
  visibleResources,
  visibleWithSettings,
} from '../cloud/common.js'
import { PUBLIC_IP_TYPE } from './schema.js'

type Db = Kysely<DB> | Transaction<DB>

/** How many rows of `table` have `column` = `id` (the records using the row `id`). */
async function rowsWith(db: Db, table: keyof DB, column: string, id: number): Promise<number> {
  return countRows(db.selectFrom(table).where(column as any, '=', id))
}

export function locationsRepository(db: Db) {
  const base = () =>
    joined(db, 'cloud_a_locations', [['inner', 'service_settings', 'cloud_a_locations.service_settings_id']])
  /** Locations are visible with their service settings. */
  const visible = visibleWithSettings(base)
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
    ...tableRecords(db, { table: 'cloud_a_locations', base, visible, select: (q) => q.select(columns) }),
    /** Resource groups and public IPs in this location. */
    async usage(id: number): Promise<number> {
      return (
        (await rowsWith(db, 'cloud_a_resource_groups', 'location_id', id)) +
        (await rowsWith(db, 'cloud_a_public_ips', 'location_id', id))
      )
    },
  }
}

export type LocationRow = NonNullable<Awaited<ReturnType<ReturnType<typeof locationsRepository>['findById']>>>

export function resourceGroupsRepository(db: Db) {
  const base = () =>
    joined(db, 'cloud_a_resource_groups', [
      ['inner', 'cloud_a_locations', 'cloud_a_resource_groups.location_id'],
      ['inner', 'service_settings', 'cloud_a_resource_groups.service_settings_id'],
      ...projectAndCustomer('cloud_a_resource_groups'),
    ])
  /** Resource groups are visible like resources. */
  const visible = unlessAll(base, (q, vis: Extract<ResourceVisibility, { all: false }>) =>
    q.where((eb) => inScopes(eb, vis, 'cloud_a_resource_groups.project_id')),
  )
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
    ...tableRecords(db, {
      table: 'cloud_a_resource_groups',
      base,
      visible,
      select: (q) => q.select(columns),
    }),
    /** Public IPs in this resource group. */
    usage(id: number): Promise<number> {
      return rowsWith(db, 'cloud_a_public_ips', 'resource_group_id', id)
    },
  }
}

export type ResourceGroupRow = NonNullable<
  Awaited<ReturnType<ReturnType<typeof resourceGroupsRepository>['findById']>>
>

/** A public IP's location and resource group (a query joining `cloud_a_public_ips`). */
const LOCATION_AND_GROUP = [
  ['inner', 'cloud_a_locations', 'cloud_a_public_ips.location_id'],
  ['inner', 'cloud_a_resource_groups', 'cloud_a_public_ips.resource_group_id'],
] as const

/** The public IP's own tables, joined onto the common record query. */
function withPublicIpTables(q: CloudResourcesQuery) {
  return withJoins(q, [
    ['inner', 'cloud_a_public_ips', 'cloud_resources.id', 'resource_id'],
    ...LOCATION_AND_GROUP,
  ])
}

/** What a public IP list sees: the caller's visibility and the common filters' values. */
export interface PublicIpScope {
  vis: ResourceVisibility
  common: CommonFilters
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
  const visible = (scope: PublicIpScope) =>
    withPublicIpTables(visibleResources(db, PUBLIC_IP_TYPE, scope.vis, scope.common))
  const { count, list } = scopedList(visible, (q) => q.select(PUBLIC_IP_COLUMNS), 'cloud_resources.id')
  return {
    count,
    list,
    findVisibleByUuid(vis: ResourceVisibility, uuid: string) {
      return visible({ vis, common: { uuid } }).select(PUBLIC_IP_COLUMNS).executeTakeFirst()
    },
    /** Reads after a write: no visibility check. */
    findById(id: number) {
      return visible({ vis: { all: true }, common: {} })
        .select(PUBLIC_IP_COLUMNS)
        .where('cloud_resources.id', '=', id)
        .executeTakeFirst()
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
      return joined(db, 'cloud_a_public_ips', [
        ['inner', 'cloud_resources', 'cloud_a_public_ips.resource_id'],
        ...LOCATION_AND_GROUP,
      ])
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

export type PublicIpRow = NonNullable<Awaited<ReturnType<ReturnType<typeof publicIpsRepository>['findById']>>>
