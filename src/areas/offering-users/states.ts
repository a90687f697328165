// The one path of an offering user's life: its creation, every write of its state or username, and
// its deletion each write the row and tell the change (`marketplace.offering_user.created`,
// `.state_changed`, `.username_changed`, `.deleted`) in the same transaction. Nothing else inserts
// an offering user, writes its `state` or `username`, or deletes it.
import type { AppContext } from '../../context.js'
import { emitEvent, inTransaction } from '../events/service.js'
import { offeringUsersRepository, type Db, type OfferingUserTold } from './repository.js'
import { PATHS } from './schema.js'

/** Tells one change of an offering user: its user, username and state, and the change's facts. */
async function tell(
  ctx: AppContext,
  db: Db,
  change: 'created' | 'state_changed' | 'username_changed' | 'deleted',
  r: OfferingUserTold,
  facts: Record<string, unknown>,
): Promise<void> {
  await emitEvent(ctx, db, {
    type: `marketplace.offering_user.${change}`,
    objectType: 'offering_user',
    objectUuid: r.uuid,
    path: `/api/${PATHS.offeringUsers}/${r.uuid}/`,
    offeringUuid: r.offering_uuid,
    customerUuid: r.customer_uuid,
    data: { user_uuid: r.user_uuid, username: r.username, state: r.state, ...facts },
  })
}

/**
 * Inserts the account unless the user has one on the offering already, and tells its creation;
 * its id, or null when there was one.
 */
export function insertOfferingUser(
  ctx: AppContext,
  db: Db,
  values: Parameters<ReturnType<typeof offeringUsersRepository>['insertTold']>[0],
): Promise<number | null> {
  return inTransaction(ctx, db, async (trx) => {
    const r = await offeringUsersRepository(trx).insertTold(values)
    if (!r) return null
    await tell(ctx, trx, 'created', r, { state_before: null, state_after: r.state })
    return r.id
  })
}

/**
 * Writes `set` (its state, its username, ...) when the account is in one of the `from` states, and
 * tells what changed: the username, then the state. False when its state did not allow it.
 */
export function moveOfferingUser(
  ctx: AppContext,
  db: Db,
  id: number,
  from: readonly string[],
  set: Record<string, unknown>,
): Promise<boolean> {
  return inTransaction(ctx, db, async (trx) => {
    const moved = await offeringUsersRepository(trx).moveTold(id, from, set)
    if (!moved) return false
    const { before, after } = moved
    if ((before.username ?? '') !== (after.username ?? '')) {
      await tell(ctx, trx, 'username_changed', after, {
        username_before: before.username,
        username_after: after.username,
      })
    }
    if (before.state !== after.state) {
      await tell(ctx, trx, 'state_changed', after, { state_before: before.state, state_after: after.state })
    }
    return true
  })
}

/** Deletes the account and tells it; false when it was gone already. */
export function removeOfferingUser(ctx: AppContext, db: Db, id: number): Promise<boolean> {
  return inTransaction(ctx, db, async (trx) => {
    const r = await offeringUsersRepository(trx).deleteTold(id)
    if (!r) return false
    await tell(ctx, trx, 'deleted', r, { state_before: r.state, state_after: null })
    return true
  })
}
