// The SQL of cloudB migrations: the migration rows with their source and destination resources,
// offerings and plan, who may see them, and their writes.
import type { Kysely, Transaction } from 'kysely'
import type { DB } from '../../db/tables.js'
import { tableRecords } from '../../db/rows.js'
import { joined, unlessAll } from '../../db/joins.js'
import { setStateIf } from '../cloud/common.js'

type Db = Kysely<DB> | Transaction<DB>

export type MigrationVisibility = { all: true } | { all: false; userId: number }

export function migrationsRepository(db: Db) {
  const base = () =>
    joined(db, 'cloud_b_migrations', [
      ['inner', 'resources as src', 'cloud_b_migrations.src_resource_id'],
      ['inner', 'offerings as so', 'src.offering_id'],
      ['inner', 'offerings as do', 'cloud_b_migrations.dst_offering_id'],
      ['left', 'plans as dp', 'cloud_b_migrations.dst_plan_id'],
      ['left', 'resources as dst', 'cloud_b_migrations.dst_resource_id'],
      ['left', 'users as u', 'cloud_b_migrations.created_by_id'],
    ])
  /** A migration is visible to its creator (and to whoever sees everything). */
  const visible = unlessAll(base, (q, vis: { userId: number }) =>
    q.where('cloud_b_migrations.created_by_id', '=', vis.userId),
  )
  const columns = [
    'cloud_b_migrations.id',
    'cloud_b_migrations.uuid',
    'cloud_b_migrations.name',
    'cloud_b_migrations.description',
    'cloud_b_migrations.mappings',
    'cloud_b_migrations.state',
    'cloud_b_migrations.error_message',
    'cloud_b_migrations.error_traceback',
    'cloud_b_migrations.created',
    'cloud_b_migrations.modified',
    'cloud_b_migrations.created_by_id',
    'cloud_b_migrations.src_resource_id',
    'cloud_b_migrations.dst_resource_id',
    'cloud_b_migrations.dst_offering_id',
    'cloud_b_migrations.dst_plan_id',
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
  const records = tableRecords(db, {
    table: 'cloud_b_migrations',
    base,
    visible,
    select: (q) => q.select(columns),
  })
  return {
    ...records,
    /** Migrations waiting for this destination resource to be provisioned. */
    waitingOn(dstResourceId: number) {
      return db
        .selectFrom('cloud_b_migrations')
        .select(['id'])
        .where('dst_resource_id', '=', dstResourceId)
        .where('state', '=', 'CREATING')
        .execute()
    },
    /** A new migration starts CREATION_SCHEDULED. */
    insert(values: {
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
      return records.insert({ ...values, state: 'CREATION_SCHEDULED' })
    },
    setStateIf(id: number, from: readonly string[], to: string, values: Record<string, unknown> = {}) {
      return setStateIf(db, 'cloud_b_migrations', id, from, to, values)
    },
  }
}

export type MigrationRow = NonNullable<
  Awaited<ReturnType<ReturnType<typeof migrationsRepository>['findById']>>
>
