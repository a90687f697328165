// All SQL of backend resource requests.
import type { Kysely, Transaction } from 'kysely'
import type { DB } from '../../db/tables.js'
import { firstWhere, tableRecords } from '../../db/rows.js'
import { joined } from '../../db/joins.js'
import { visibleToProvider } from '../../db/relations.js'

type Db = Kysely<DB> | Transaction<DB>

export function backendRequestsRepository(db: Db) {
  const base = () =>
    joined(db, 'backend_resource_requests', [['inner', 'offerings', 'backend_resource_requests.offering_id']])
  const visible = visibleToProvider(base)
  const columns = [
    'backend_resource_requests.id',
    'backend_resource_requests.uuid',
    'backend_resource_requests.state',
    'backend_resource_requests.started',
    'backend_resource_requests.finished',
    'backend_resource_requests.error_message',
    'backend_resource_requests.error_traceback',
    'backend_resource_requests.created',
    'backend_resource_requests.modified',
    'backend_resource_requests.offering_id',
    'offerings.uuid as offering_uuid',
    'offerings.name as offering_name',
    'offerings.customer_id as offering_customer_id',
  ] as const
  return {
    ...tableRecords(db, {
      table: 'backend_resource_requests',
      base,
      visible,
      select: (q) => q.select(columns),
    }),
    /** Whoever may see it: the status actions find every request and then check the permission. */
    findByUuid(uuid: string) {
      return firstWhere(base().select(columns), 'backend_resource_requests.uuid', uuid)
    },
    async findOfferingId(uuid: string): Promise<number | undefined> {
      const r = await db.selectFrom('offerings').select('id').where('uuid', '=', uuid).executeTakeFirst()
      return r?.id
    },
    /**
     * Moves the request on when it is in one of the `from` states: a conditional UPDATE, so of two
     * racing requests exactly one wins. False when the state did not allow it.
     */
    async moveIfIn(id: number, from: readonly string[], set: Record<string, unknown>): Promise<boolean> {
      const r = await db
        .updateTable('backend_resource_requests')
        .set(set)
        .where('id', '=', id)
        .where('state', 'in', from as string[])
        .executeTakeFirst()
      return Number(r.numUpdatedRows) > 0
    },
  }
}

export type RequestRow = NonNullable<
  Awaited<ReturnType<ReturnType<typeof backendRequestsRepository>['findByUuid']>>
>
