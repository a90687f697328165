// SQL of per-user component limits: the rows a caller sees (the resource's consumer and provider
// sides), each with its offering component (the limit names it by type), and the resource and
// account a write names.
import type { Insertable } from 'kysely'
import type { DB } from '../../db/tables.js'
import { tableRecords } from '../../db/rows.js'
import { joined } from '../../db/joins.js'
import { visibleToResourceSides } from '../../db/relations.js'
import type { Db } from './repository.js'

const L = 'component_user_usage_limits'

export function usageLimitsRepository(db: Db) {
  const base = () =>
    joined(db, L, [
      ['inner', 'resources', `${L}.resource_id`],
      ['inner', 'offerings', 'resources.offering_id'],
      ['inner', 'projects', 'resources.project_id'],
      ['inner', 'offering_users', `${L}.offering_user_id`],
    ]).innerJoin('offering_components as component', (j) =>
      j
        .onRef('component.offering_id', '=', 'resources.offering_id')
        .onRef('component.type', '=', `${L}.component_type`),
    )
  const visible = visibleToResourceSides(base)
  const columns = [
    `${L}.id`,
    `${L}.uuid`,
    `${L}.component_type`,
    'component.uuid as component_uuid',
    `${L}.usage_limit`,
    `${L}.resource_id`,
    `${L}.offering_user_id`,
    'resources.uuid as resource_uuid',
    'resources.project_id',
    'projects.customer_id',
    'offerings.uuid as offering_uuid',
    'offerings.customer_id as offering_customer_id',
    'resources.offering_id',
    'offering_users.username as user_username',
  ] as const
  return {
    ...tableRecords(db, { table: L, base, visible, select: (q) => q.select(columns) }),
    resourceByUuid(uuid: string) {
      return db
        .selectFrom('resources')
        .innerJoin('offerings', 'offerings.id', 'resources.offering_id')
        .innerJoin('projects', 'projects.id', 'resources.project_id')
        .select([
          'resources.id',
          'resources.project_id',
          'resources.offering_id',
          'projects.customer_id',
          'offerings.customer_id as offering_customer_id',
        ])
        .where('resources.uuid', '=', uuid)
        .executeTakeFirst()
    },
    offeringUserByUuid(uuid: string) {
      return db
        .selectFrom('offering_users')
        .select(['id', 'offering_id'])
        .where('uuid', '=', uuid)
        .executeTakeFirst()
    },
    async insertIfAbsent(values: Insertable<DB['component_user_usage_limits']>): Promise<number | undefined> {
      const r = await db
        .insertInto(L)
        .values(values)
        .onConflict((oc) => oc.columns(['resource_id', 'component_type', 'offering_user_id']).doNothing())
        .returning('id')
        .executeTakeFirst()
      return r?.id
    },
    async exists(resourceId: number, componentType: string, offeringUserId: number, except: number | null) {
      let q = db
        .selectFrom(L)
        .select('id')
        .where('resource_id', '=', resourceId)
        .where('component_type', '=', componentType)
        .where('offering_user_id', '=', offeringUserId)
      if (except !== null) q = q.where('id', '<>', except)
      return !!(await q.executeTakeFirst())
    },
  }
}

export type UsageLimitRow = NonNullable<
  Awaited<ReturnType<ReturnType<typeof usageLimitsRepository>['findById']>>
>
