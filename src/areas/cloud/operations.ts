// The generic operations of every cloud resource: create, update and delete scheduled as
// lifecycle steps, pull, unlink, and the staff's set_ok / set_erred.
import type { Kysely, Transaction } from 'kysely'
import type { AppContext } from '../../context.js'
import type { DB } from '../../db/tables.js'
import { AppError, invalidState, nonFieldError } from '../../http/errors.js'
import { requireStaff, type Actor } from '../../http/permissions.js'
import { findManageableResource, findVisibleResource } from './access.js'
import { BackendError, type DriverCall } from './driver.js'
import { cloudResourceType, enqueueStep, type CloudResourceType, type CloudState } from './lifecycle.js'
import type { CommonRow } from './repository.js'
import { settingsInfo } from './service.js'
import { insertCloudResource, moveCloudResource, removeCloudResources } from './states.js'

/** States from which a resource may be changed (PUT/PATCH and update actions). */
export const UPDATABLE_STATES: readonly CloudState[] = ['OK']
/** States from which a resource may be deleted or pulled. */
export const STABLE_STATES: readonly CloudState[] = ['OK', 'ERRED']

/**
 * Inserts a resource in CREATION_SCHEDULED and enqueues its create step, in the caller's
 * transaction (the caller adds its type's own row there too). `parentId`: the resource it belongs
 * to (a tenant's objects: their tenant); `linked`: see `insertCloudResource`. Returns the new id.
 */
export async function insertResource(
  ctx: AppContext,
  trx: Kysely<DB> | Transaction<DB>,
  v: {
    type: string
    name: string
    description: string
    settingsId: number
    projectId: number
    parentId?: number | null
  },
  linked?: Parameters<typeof insertCloudResource>[3],
): Promise<number> {
  const now = ctx.clock().toISOString()
  const id = await insertCloudResource(
    ctx,
    trx,
    {
      uuid: ctx.newUuid(),
      resource_type: v.type,
      name: v.name,
      description: v.description,
      service_settings_id: v.settingsId,
      project_id: v.projectId,
      parent_id: v.parentId ?? null,
      state: 'CREATION_SCHEDULED',
      created: now,
      modified: now,
    },
    linked,
  )
  await enqueueStep(ctx, trx, { id, op: 'create' })
  return id
}

/**
 * PUT/PATCH and update actions: 404 → 403 → 409 (only from OK) → `prepare` (the body's checks,
 * 400) → one transaction moving OK → UPDATE_SCHEDULED, saving the changes (`apply`) and enqueuing
 * the update step. Returns the row's id.
 */
export async function scheduleUpdate<T>(
  ctx: AppContext,
  actor: Actor,
  type: string,
  uuid: string,
  prepare: (row: CommonRow) => Promise<T>,
  apply: (trx: Transaction<DB>, row: CommonRow, prepared: T) => Promise<Record<string, unknown>>,
): Promise<number> {
  const row = await findManageableResource(ctx, actor, type, uuid)
  if (!UPDATABLE_STATES.includes(row.state as CloudState)) throw invalidState(UPDATABLE_STATES)
  const prepared = await prepare(row)
  await ctx.db.transaction().execute(async (trx) => {
    const common = await apply(trx, row, prepared)
    const moved = await moveCloudResource(ctx, trx, row.id, UPDATABLE_STATES, 'UPDATE_SCHEDULED', {
      ...common,
      modified: ctx.clock().toISOString(),
    })
    if (!moved) throw invalidState(UPDATABLE_STATES)
    await enqueueStep(ctx, trx, { id: row.id, op: 'update' })
  })
  return row.id
}

/** DELETE: 404 → 403 → 409 unless OK or ERRED; then DELETION_SCHEDULED and the delete step. */
export async function scheduleDeletion(
  ctx: AppContext,
  actor: Actor,
  type: string,
  uuid: string,
): Promise<void> {
  const row = await findManageableResource(ctx, actor, type, uuid)
  if (!STABLE_STATES.includes(row.state as CloudState)) throw invalidState(STABLE_STATES)
  await ctx.db.transaction().execute(async (trx) => {
    const moved = await moveCloudResource(ctx, trx, row.id, [row.state], 'DELETION_SCHEDULED', {
      modified: ctx.clock().toISOString(),
    })
    if (!moved) throw invalidState(STABLE_STATES)
    await enqueueStep(ctx, trx, { id: row.id, op: 'delete', wasErred: row.state === 'ERRED' })
  })
}

/** Does the driver these settings select implement pull for this type? */
function driverPulls(def: CloudResourceType, call: DriverCall): boolean {
  try {
    return typeof def.ops(call).pull === 'function'
  } catch (e) {
    if (e instanceof BackendError) return false
    throw e
  }
}

/**
 * POST pull: 404 → 403 → 409 unless OK or ERRED → 400 without a backend id → 409 with no body when
 * the driver has no pull → the pull step is enqueued (202, no body).
 */
export async function schedulePull(ctx: AppContext, actor: Actor, type: string, uuid: string): Promise<void> {
  const def = cloudResourceType(type)
  const row = await findManageableResource(ctx, actor, type, uuid)
  if (!STABLE_STATES.includes(row.state as CloudState)) throw invalidState(STABLE_STATES)
  if (!row.backend_id) throw nonFieldError('Resource does not have backend ID.')
  const settings = await settingsInfo(ctx, row.service_settings_id)
  if (!settings || !driverPulls(def, { ctx, settings })) throw new AppError('conflict', null)
  await enqueueStep(ctx, ctx.db, { id: row.id, op: 'pull' })
}

/**
 * POST unlink: staff only (403 before the lookup, as a view-level check), then the record is
 * removed without any backend call and whatever its state.
 */
export async function unlinkResource(
  ctx: AppContext,
  actor: Actor,
  type: string,
  uuid: string,
): Promise<void> {
  requireStaff(actor)
  const row = await findVisibleResource(ctx, actor, type, uuid)
  await removeCloudResources(ctx, ctx.db, [row.id])
}

/**
 * POST set_ok / set_erred: staff only (403 before the lookup, as unlink), for a resource stuck in
 * a transitional state. set_ok moves it to OK and clears the error fields; set_erred moves it to
 * ERRED with the error given (empty when none). Whatever its state; no backend call.
 */
export async function setResourceState(
  ctx: AppContext,
  actor: Actor,
  type: string,
  uuid: string,
  to: 'OK' | 'ERRED',
  error: { error_message?: string; error_traceback?: string } = {},
): Promise<{ detail: string }> {
  requireStaff(actor)
  const row = await findVisibleResource(ctx, actor, type, uuid)
  await moveCloudResource(ctx, ctx.db, row.id, null, to, {
    error_message: to === 'OK' ? '' : (error.error_message ?? ''),
    error_traceback: to === 'OK' ? '' : (error.error_traceback ?? ''),
    modified: ctx.clock().toISOString(),
  })
  return {
    detail: to === 'OK' ? 'Resource state has been set to OK.' : 'Resource state has been set to ERRED.',
  }
}
