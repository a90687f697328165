// The one path of every cloud resource's state: a new resource, a move from state to state, and
// its removal each write the row and tell the change (`<kind>.<object>.created`,
// `.state_changed`, `.deleted`) in the same transaction. Nothing else writes `state` or deletes
// a cloud resource.
import type { Kysely, Transaction } from 'kysely'
import type { AppContext } from '../../context.js'
import type { DB } from '../../db/tables.js'
import { emitEvent, inTransaction } from '../events/service.js'
import { cloudResourceType } from './lifecycle.js'
import { cloudResourcesRepository, type CloudEventRow } from './repository.js'

type Db = Kysely<DB> | Transaction<DB>

/** Tells one change of a cloud resource. */
async function tell(
  ctx: AppContext,
  db: Db,
  change: 'created' | 'state_changed' | 'deleted',
  r: CloudEventRow,
  before: string | null,
  after: string | null,
): Promise<void> {
  const def = cloudResourceType(r.resource_type)
  await emitEvent(ctx, db, {
    type: `${def.kind}.${def.eventObject}.${change}`,
    objectType: def.eventObject,
    objectUuid: r.uuid,
    path: `/api/${def.path}/${r.uuid}/`,
    offeringUuid: r.offering_uuid,
    projectUuid: r.project_uuid,
    customerUuid: r.customer_uuid,
    data: { resource_type: r.resource_type, state_before: before, state_after: after },
  })
}

/**
 * Inserts a cloud resource (in `values.state`) and tells its creation; its id. `linked` writes,
 * before the creation is told, what the new row comes with that its event names (the marketplace
 * resource whose scope it becomes).
 */
export function insertCloudResource(
  ctx: AppContext,
  db: Db,
  values: Parameters<ReturnType<typeof cloudResourcesRepository>['insert']>[0],
  linked?: (trx: Db, id: number) => Promise<void>,
): Promise<number> {
  return inTransaction(ctx, db, async (trx) => {
    const repo = cloudResourcesRepository(trx)
    const id = await repo.insert(values)
    if (linked) await linked(trx, id)
    await tell(ctx, trx, 'created', (await repo.told(id))!, null, values.state)
    return id
  })
}

/**
 * Moves the cloud resource `id` to `to` with `values` if its state is one of `from` (any state
 * when null), and tells the change when the state is another; false when it was elsewhere.
 */
export function moveCloudResource(
  ctx: AppContext,
  db: Db,
  id: number,
  from: readonly string[] | null,
  to: string,
  values: Record<string, unknown> = {},
): Promise<boolean> {
  return inTransaction(ctx, db, async (trx) => {
    const moved = await cloudResourcesRepository(trx).moveState(id, from, to, values)
    if (moved && moved.before !== to) await tell(ctx, trx, 'state_changed', moved.after, moved.before, to)
    return !!moved
  })
}

/** Removes cloud resources (deleted, unlinked, gone from the backend) and tells each removal. */
export function removeCloudResources(ctx: AppContext, db: Db, ids: readonly number[]): Promise<void> {
  if (!ids.length) return Promise.resolve()
  return inTransaction(ctx, db, async (trx) => {
    for (const r of await cloudResourcesRepository(trx).deleteTold(ids)) {
      await tell(ctx, trx, 'deleted', r, r.state, null)
    }
  })
}
