// The lifecycle of cloud resources: the resource types the cloud areas register, and the jobs
// that drive each backend step (create, update, delete, pull) through the durable queue.
//
//   create: CREATION_SCHEDULED → CREATING → OK            (failure → ERRED)
//   update: UPDATE_SCHEDULED   → UPDATING → OK            (failure → ERRED)
//   delete: DELETION_SCHEDULED → DELETING → row removed   (failure → ERRED, unless the resource
//           was ERRED when deletion was asked: then it is removed anyway, as the reference does)
//   pull:   the state stays; a successful pull of an ERRED resource makes it OK again
//
// A backend failure is recorded on the resource (error_message, error_traceback) and ends the
// job: backend steps are not retried, so a failure shows at once and the caller decides.
import type { Kysely, Transaction } from 'kysely'
import type { AppContext } from '../../context.js'
import type { DB } from '../../db/tables.js'
import { type CloudKind, type DriverCall, type SettingsInfo } from './driver.js'
import { cloudResourcesRepository } from './repository.js'
import { settingsInfo } from './service.js'
import { moveCloudResource, removeCloudResources } from './states.js'

export const CLOUD_STATES = [
  'CREATION_SCHEDULED',
  'CREATING',
  'OK',
  'UPDATE_SCHEDULED',
  'UPDATING',
  'DELETION_SCHEDULED',
  'DELETING',
  'ERRED',
] as const
export type CloudState = (typeof CLOUD_STATES)[number]

/** The labels older reference versions render; the `state` filter accepts them too. */
export const CLOUD_STATE_LABELS: Record<CloudState, string> = {
  CREATION_SCHEDULED: 'Creation Scheduled',
  CREATING: 'Creating',
  OK: 'OK',
  UPDATE_SCHEDULED: 'Update Scheduled',
  UPDATING: 'Updating',
  DELETION_SCHEDULED: 'Deletion Scheduled',
  DELETING: 'Deleting',
  ERRED: 'Erred',
}

export type LifecycleOp = 'create' | 'update' | 'delete' | 'pull'

/** What a step hands to the backend: the common fields of the resource and its settings. */
export interface BackendResource {
  id: number
  uuid: string
  name: string
  description: string
  backend_id: string
  runtime_state: string
  settings: SettingsInfo
}

/** What a backend step reports back; `extra` goes to the type's `saveExtra`. */
export interface BackendResult {
  backend_id?: string
  name?: string
  description?: string
  runtime_state?: string
  access_url?: string | null
  extra?: Record<string, unknown>
}

export interface ResourceOps {
  create(r: BackendResource): Promise<BackendResult>
  /** Without it an update only moves the state (nothing to push). */
  update?(r: BackendResource): Promise<BackendResult | void>
  delete(r: BackendResource): Promise<void>
  /** Without it the `pull` endpoint answers 409. `null`: the object is gone on the backend. */
  pull?(r: BackendResource): Promise<BackendResult | null>
}

export interface CloudResourceType {
  /** Stored in cloud_resources.resource_type, rendered as resource_type, used as scope_type. */
  type: string
  kind: CloudKind
  /** The API path segment, e.g. cloudA-public-ips. */
  path: string
  /** For "No <model> matches the given query." */
  modelName: string
  /** Its events' object type, e.g. `floating_ip`: they are `<kind>.<eventObject>.<change>`. */
  eventObject: string
  /** The backend operations, from the driver the settings select. */
  ops(call: DriverCall): ResourceOps
  /** Persists the type's own columns from a step's `extra`. */
  saveExtra?(
    db: Kysely<DB> | Transaction<DB>,
    resourceId: number,
    extra: Record<string, unknown>,
  ): Promise<void>
  /** Called after a step settled (e.g. to complete an order); errors are logged, not raised. */
  onSettled?(
    ctx: AppContext,
    resourceId: number,
    op: LifecycleOp,
    outcome: 'OK' | 'ERRED' | 'DELETED',
  ): Promise<void>
}

const types = new Map<string, CloudResourceType>()

/** Registers a cloud resource type (once, at module load of the area that owns it). */
export function registerCloudResourceType(def: CloudResourceType): void {
  types.set(def.type, def)
}

/** The registered type whose events name this object type, if any. */
export function cloudTypeOfEventObject(objectType: string): CloudResourceType | undefined {
  for (const def of types.values()) if (def.eventObject === objectType) return def
  return undefined
}

/** The object types of the registered types' events. */
export function cloudEventObjects(): string[] {
  return [...types.values()].map((d) => d.eventObject)
}

export function cloudResourceType(type: string): CloudResourceType {
  const def = types.get(type)
  if (!def) throw new Error(`unknown cloud resource type ${type}`)
  return def
}

export const LIFECYCLE_JOB = 'cloud.resource.step'

export interface StepPayload {
  id: number
  op: LifecycleOp
  /** delete only: the resource was ERRED when deletion was asked. */
  wasErred?: boolean
}

/** Enqueues a step in the transaction of the change that needs it. */
export async function enqueueStep(
  ctx: AppContext,
  trx: Kysely<DB> | Transaction<DB>,
  payload: StepPayload,
): Promise<void> {
  await ctx.jobs.enqueue(trx, LIFECYCLE_JOB, payload, { maxAttempts: 1 })
}

const STEP_STATES: Record<Exclude<LifecycleOp, 'pull'>, { from: CloudState; during: CloudState }> = {
  create: { from: 'CREATION_SCHEDULED', during: 'CREATING' },
  update: { from: 'UPDATE_SCHEDULED', during: 'UPDATING' },
  delete: { from: 'DELETION_SCHEDULED', during: 'DELETING' },
}

const PULLABLE: readonly string[] = ['OK', 'ERRED']

function failure(error: unknown): { error_message: string; error_traceback: string } {
  const message = error instanceof Error ? error.message : String(error)
  const traceback = error instanceof Error ? (error.stack ?? message) : message
  return { error_message: message.slice(0, 2000), error_traceback: traceback.slice(0, 10000) }
}

function resultValues(r: BackendResult | void | null): Record<string, unknown> {
  const v: Record<string, unknown> = {}
  if (!r) return v
  if (r.backend_id !== undefined) v.backend_id = r.backend_id
  if (r.name !== undefined) v.name = r.name
  if (r.description !== undefined) v.description = r.description
  if (r.runtime_state !== undefined) v.runtime_state = r.runtime_state
  if (r.access_url !== undefined) v.access_url = r.access_url
  return v
}

/** Runs one lifecycle step. Exported for the job definition and for tests. */
export async function runStep(ctx: AppContext, p: StepPayload): Promise<void> {
  const repo = cloudResourcesRepository(ctx.db)
  const row = await repo.findById(p.id)
  if (!row) return // unlinked or deleted meanwhile
  const def = cloudResourceType(row.resource_type)
  const now = () => ctx.clock().toISOString()
  // The states the row must still be in when the step's outcome is written.
  const current: readonly string[] = p.op === 'pull' ? PULLABLE : [STEP_STATES[p.op].during]
  if (p.op === 'pull') {
    if (!PULLABLE.includes(row.state)) return
  } else {
    const s = STEP_STATES[p.op]
    // Only the worker that moves the row runs the step; anything else means it was unlinked,
    // re-scheduled or already run.
    if (!(await moveCloudResource(ctx, ctx.db, row.id, [s.from], s.during, { modified: now() }))) return
  }
  const settled = async (outcome: 'OK' | 'ERRED' | 'DELETED') => {
    if (!def.onSettled) return
    try {
      await def.onSettled(ctx, row.id, p.op, outcome)
    } catch (e) {
      ctx.log.error({ err: e, resource: row.uuid }, 'cloud resource settle hook failed')
    }
  }
  let result: BackendResult | void | null
  try {
    const settings = await settingsInfo(ctx, row.service_settings_id)
    if (!settings) throw new Error('The service settings of this resource no longer exist.')
    const ops = def.ops({ ctx, settings })
    const resource: BackendResource = {
      id: row.id,
      uuid: row.uuid,
      name: row.name,
      description: row.description,
      backend_id: row.backend_id,
      runtime_state: row.runtime_state,
      settings,
    }
    switch (p.op) {
      case 'create':
        result = await ops.create(resource)
        break
      case 'update':
        result = ops.update ? await ops.update(resource) : undefined
        break
      case 'delete':
        await ops.delete(resource)
        result = undefined
        break
      case 'pull':
        if (!ops.pull) throw new Error('Pull operation is not implemented.')
        result = await ops.pull(resource)
        if (result === null) throw new Error('The resource does not exist on the backend.')
        break
    }
  } catch (error) {
    if (p.op === 'delete' && p.wasErred) {
      await removeCloudResources(ctx, ctx.db, [row.id])
      await settled('DELETED')
      return
    }
    // Written only while the row is still where this step left it (not unlinked or re-scheduled).
    if (
      await moveCloudResource(ctx, ctx.db, row.id, current, 'ERRED', { ...failure(error), modified: now() })
    ) {
      await settled('ERRED')
    }
    return
  }
  if (p.op === 'delete') {
    await removeCloudResources(ctx, ctx.db, [row.id])
    await settled('DELETED')
    return
  }
  const applied = await ctx.db.transaction().execute(async (trx) => {
    const moved = await moveCloudResource(ctx, trx, row.id, current, 'OK', {
      ...resultValues(result),
      error_message: '',
      error_traceback: '',
      modified: now(),
    })
    if (moved && result?.extra && def.saveExtra) await def.saveExtra(trx, row.id, result.extra)
    return moved
  })
  if (applied) await settled('OK')
}

/** Defines the lifecycle job on an app's queue (once per app, by the cloud base plugin). */
export function defineLifecycleJobs(ctx: AppContext): void {
  ctx.jobs.define<StepPayload>(LIFECYCLE_JOB, {
    maxAttempts: 1,
    run: (payload) => runStep(ctx, payload),
  })
}
