// The SQL of cloudB migrations: the migration rows with their source and destination resources,
// offerings and plan, who may see them, and their writes.
import type { Kysely, Transaction } from 'kysely'
import type { DB } from '../../db/tables.js'
import type { OrderTerm } from '../../http/query.js'
import { setStateIf } from './repository.js'

type Db = Kysely<DB> | Transaction<DB>

export type MigrationVisibility = { all: true } | { all: false; userId: number }

export interface MigrationFilters {
  src_resource_uuid?: string | null
  dst_resource_uuid?: string | null
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
    list(
      vis: MigrationVisibility,
      f: MigrationFilters,
      order: readonly OrderTerm[],
      limit: number,
      offset: number,
    ) {
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
    setStateIf(id: number, from: readonly string[], to: string, values: Record<string, unknown> = {}) {
      return setStateIf(db, 'cloud_b_migrations', id, from, to, values)
    },
    async delete(id: number): Promise<void> {
      await db.deleteFrom('cloud_b_migrations').where('id', '=', id).execute()
    },
  }
}

export type MigrationRow = NonNullable<
  Awaited<ReturnType<ReturnType<typeof migrationsRepository>['findById']>>
>
