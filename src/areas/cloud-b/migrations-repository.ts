// The SQL of cloudB migrations: the migration rows with their source and destination resources,
// offerings and plan, who may see them, and their writes.
import type { ExpressionBuilder, Kysely, Transaction } from 'kysely'
import type { DB } from '../../db/tables.js'
import { tableRecords } from '../../db/rows.js'
import { joined, unlessAll } from '../../db/joins.js'
import { isPostgres } from '../../db/sql.js'

type Db = Kysely<DB> | Transaction<DB>

/** What a migration's events tell of it: its uuid, state, and its source's project and organization and its destination offering. */
export interface MigrationEventRow {
  uuid: string
  state: string
  project_uuid: string
  customer_uuid: string
  offering_uuid: string
}

function told(eb: ExpressionBuilder<DB, 'cloud_b_migrations'>) {
  const src = () =>
    eb
      .selectFrom('resources')
      .innerJoin('projects', 'projects.id', 'resources.project_id')
      .whereRef('resources.id', '=', 'cloud_b_migrations.src_resource_id')
  return [
    'cloud_b_migrations.uuid',
    'cloud_b_migrations.state',
    src().select('projects.uuid').$asScalar().$notNull().as('project_uuid'),
    src()
      .innerJoin('customers', 'customers.id', 'projects.customer_id')
      .select('customers.uuid')
      .$asScalar()
      .$notNull()
      .as('customer_uuid'),
    eb
      .selectFrom('offerings')
      .select('offerings.uuid')
      .whereRef('offerings.id', '=', 'cloud_b_migrations.dst_offering_id')
      .$asScalar()
      .$notNull()
      .as('offering_uuid'),
  ] as const
}

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
    /**
     * Moves the migration to `to` with `values` if its state is one of `from`; its state before
     * and its told values after, or undefined when it was elsewhere (one statement on
     * PostgreSQL, as a cloud resource's move).
     */
    async moveState(
      id: number,
      from: readonly string[],
      to: string,
      values: Record<string, unknown> = {},
    ): Promise<{ before: string; after: MigrationEventRow } | undefined> {
      const set = { ...(values as any), state: to }
      if (isPostgres(db)) {
        const old = db
          .selectFrom('cloud_b_migrations')
          .select(['id', 'state'])
          .where('id', '=', id)
          .forUpdate()
        const r = await db
          .updateTable('cloud_b_migrations')
          .set(set)
          .from(old.as('old'))
          .whereRef('cloud_b_migrations.id', '=', 'old.id')
          .where('cloud_b_migrations.state', 'in', [...from])
          .returning((eb) => [...told(eb), 'old.state as before'])
          .executeTakeFirst()
        return r && { before: r.before, after: r }
      }
      const was = await db
        .selectFrom('cloud_b_migrations')
        .select('state')
        .where('id', '=', id)
        .executeTakeFirst()
      if (!was || !from.includes(was.state)) return undefined
      const after = await db
        .updateTable('cloud_b_migrations')
        .set(set)
        .where('id', '=', id)
        .returning((eb) => told(eb))
        .executeTakeFirst()
      return after && { before: was.state, after }
    },
    told(id: number): Promise<MigrationEventRow | undefined> {
      return db
        .selectFrom('cloud_b_migrations')
        .select((eb) => told(eb))
        .where('id', '=', id)
        .executeTakeFirst()
    },
    /** Deletes the migration; its told values as they were. */
    deleteTold(id: number): Promise<MigrationEventRow | undefined> {
      return db
        .deleteFrom('cloud_b_migrations')
        .where('id', '=', id)
        .returning((eb) => told(eb))
        .executeTakeFirst()
    },
  }
}

export type MigrationRow = NonNullable<
  Awaited<ReturnType<ReturnType<typeof migrationsRepository>['findById']>>
>
