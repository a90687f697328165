// What every cloud resource shares (spec 2.9, reference §8): the state tokens, the common record
// and marketplace block (schema and rendering), the common list filters, visibility, and the
// generic operations: create/update/delete scheduling, pull and unlink. The cloud areas
// (cloudA, cloudB) build their resource endpoints from these pieces.
import type { FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Kysely, Transaction } from 'kysely'
import type { AppContext } from '../../context.js'
import type { DB } from '../../db/tables.js'
import { parseJson } from '../../db/values.js'
import { AppError, fieldError, forbidden, invalidState, nonFieldError, notFound } from '../../http/errors.js'
import { urlOf } from '../../http/links.js'
import {
  requireStaff,
  can,
  customerIds,
  projectIds,
  scopesWith,
  seesAll,
  type Actor,
} from '../../http/permissions.js'
import { boolFilter, single, uuidFilter, values, type Query } from '../../http/query.js'
import {
  Body,
  DateTime,
  errors,
  FreeObject,
  Nullable,
  StringList,
  Url,
  Uuid,
  UuidParams,
} from '../../http/schemas.js'
import { actorOf } from '../../http/auth.js'
import { normalizeUuid } from '../../http/uuid.js'
import { resolveProjectLink } from '../directory/service.js'
import { BackendError, type DriverCall } from './driver.js'
import {
  CLOUD_STATE_LABELS,
  CLOUD_STATES,
  cloudResourceType,
  enqueueStep,
  type CloudResourceType,
  type CloudState,
} from './lifecycle.js'
import {
  applyCommonFilters,
  applyResourceVisibility,
  cloudResourcesBase,
  inScopes,
  oneResource,
  oneResourceParams,
  oneResourceVariant,
  settingsVisibleTo,
  cloudResourcesRepository,
  COMMON_COLUMNS,
  type CloudResourcesQuery,
  type CommonFilters,
  type CommonRow,
  type ManageScopes,
  type OneResourceWhere,
  type ResourceVisibility,
  type SettingsVisibility,
} from './repository.js'
import { SETTINGS_PATH } from './schema.js'
import { settingsInfo } from './service.js'

export {
  CLOUD_STATES,
  CLOUD_STATE_LABELS,
  registerCloudResourceType,
  type BackendResource,
  type BackendResult,
  type CloudResourceType,
  type CloudState,
  type ResourceOps,
} from './lifecycle.js'
export {
  cloudResourcesBase,
  COMMON_COLUMNS,
  cloudResourceType,
  inScopes,
  oneResource,
  oneResourceParams,
  oneResourceVariant,
  settingsVisibleTo,
  type OneResourceWhere,
  type ResourceVisibility,
  type SettingsVisibility,
  type CloudResourcesQuery,
  type CommonFilters,
  type CommonRow,
}
export { resolveSettingsLink, settingsVisibility } from './service.js'
export { settingsInfo }

/** States from which a resource may be changed (PUT/PATCH and update actions). */
export const UPDATABLE_STATES: readonly CloudState[] = ['OK']
/** States from which a resource may be deleted or pulled. */
export const STABLE_STATES: readonly CloudState[] = ['OK', 'ERRED']

// ---- schema ----

const NullableString = Nullable(Type.String())

/** The common record and marketplace block of spec 2.9, to spread into a resource schema. */
export const CloudResourceProps = {
  url: Url,
  uuid: Uuid,
  name: Type.String(),
  description: Type.String(),
  service_name: Type.String({ description: 'name of the service settings' }),
  service_settings: Url,
  service_settings_uuid: Uuid,
  service_settings_state: Type.String(),
  service_settings_error_message: Type.String(),
  project: Url,
  project_name: Type.String(),
  project_uuid: Uuid,
  customer: Url,
  customer_uuid: Uuid,
  customer_name: Type.String(),
  customer_native_name: Type.String(),
  customer_abbreviation: Type.String(),
  error_message: Type.String(),
  error_traceback: Type.String(),
  resource_type: Type.String(),
  state: Type.Union(CLOUD_STATES.map((s) => Type.Literal(s))),
  created: DateTime,
  modified: DateTime,
  backend_id: Type.String(),
  access_url: NullableString,
  marketplace_offering_uuid: NullableString,
  marketplace_offering_name: NullableString,
  marketplace_offering_type: NullableString,
  marketplace_offering_plugin_options: Nullable(FreeObject),
  marketplace_category_uuid: NullableString,
  marketplace_category_name: NullableString,
  marketplace_resource_uuid: NullableString,
  marketplace_plan_uuid: NullableString,
  marketplace_resource_state: NullableString,
  is_usage_based: Type.Boolean(),
  is_limit_based: Type.Boolean(),
}

/** Query parameters of the common filters (spec 4.8), to spread into a ListQuery. */
export const CommonFilterQuery = {
  backend_id: Type.Optional(Type.String()),
  can_manage: Type.Optional(Type.String({ description: 'true: only resources the caller may manage' })),
  customer: Type.Optional(Type.String({ description: 'customer uuid' })),
  customer_abbreviation: Type.Optional(Type.String()),
  customer_name: Type.Optional(Type.String()),
  customer_native_name: Type.Optional(Type.String()),
  customer_uuid: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
  name_exact: Type.Optional(Type.String()),
  project: Type.Optional(Type.String({ description: 'project uuid' })),
  project_name: Type.Optional(Type.String()),
  project_uuid: Type.Optional(Type.String()),
  service_settings_name: Type.Optional(Type.String()),
  service_settings_uuid: Type.Optional(Type.String()),
  state: Type.Optional(StringList),
  uuid: Type.Optional(Type.String()),
}

/** Orderings every cloud resource list accepts (`o`). */
export const COMMON_ORDERING = {
  name: 'cloud_resources.name',
  created: 'cloud_resources.created',
  modified: 'cloud_resources.modified',
  state: 'cloud_resources.state',
  project_name: 'projects.name',
  customer_name: 'customers.name',
  service_settings_name: 'service_settings.name',
} as const

// ---- rendering ----

export interface CommonRecord {
  url: string
  uuid: string
  name: string
  description: string
  service_name: string
  service_settings: string
  service_settings_uuid: string
  service_settings_state: string
  service_settings_error_message: string
  project: string
  project_name: string
  project_uuid: string
  customer: string
  customer_uuid: string
  customer_name: string
  customer_native_name: string
  customer_abbreviation: string
  error_message: string
  error_traceback: string
  resource_type: string
  state: CloudState
  created: string
  modified: string
  backend_id: string
  access_url: string | null
  marketplace_offering_uuid: string | null
  marketplace_offering_name: string | null
  marketplace_offering_type: string | null
  marketplace_offering_plugin_options: Record<string, unknown> | null
  marketplace_category_uuid: string | null
  marketplace_category_name: string | null
  marketplace_resource_uuid: string | null
  marketplace_plan_uuid: string | null
  marketplace_resource_state: string | null
  is_usage_based: boolean
  is_limit_based: boolean
}

/**
 * The common record and marketplace block of a row selected with COMMON_COLUMNS. Kinds add their
 * fields with `Object.assign(toCommonRecord(…), {…})`, not with a spread: V8 copies a spread object
 * of this size (35 properties) through its slow path, about 40 µs and several KB of garbage per
 * record, against well under 1 µs.
 */
export function toCommonRecord(base: string, path: string, r: CommonRow): CommonRecord {
  return {
    url: urlOf(base, path, r.uuid)!,
    uuid: r.uuid,
    name: r.name,
    description: r.description,
    service_name: r.service_settings_name,
    service_settings: urlOf(base, SETTINGS_PATH, r.service_settings_uuid)!,
    service_settings_uuid: r.service_settings_uuid,
    service_settings_state: r.service_settings_state,
    service_settings_error_message: r.service_settings_error_message,
    project: urlOf(base, 'projects', r.project_uuid)!,
    project_name: r.project_name,
    project_uuid: r.project_uuid,
    customer: urlOf(base, 'customers', r.customer_uuid)!,
    customer_uuid: r.customer_uuid,
    customer_name: r.customer_name,
    customer_native_name: r.customer_native_name,
    customer_abbreviation: r.customer_abbreviation,
    error_message: r.error_message,
    error_traceback: r.error_traceback,
    resource_type: r.resource_type,
    state: r.state as CloudState,
    created: r.created,
    modified: r.modified,
    backend_id: r.backend_id,
    access_url: r.access_url ?? null,
    marketplace_offering_uuid: r.marketplace_offering_uuid ?? null,
    marketplace_offering_name: r.marketplace_offering_name ?? null,
    marketplace_offering_type: r.marketplace_offering_type ?? null,
    marketplace_offering_plugin_options: r.marketplace_offering_uuid
      ? parseJson<Record<string, unknown>>(r.marketplace_offering_plugin_options, {})
      : null,
    marketplace_category_uuid: r.marketplace_category_uuid ?? null,
    marketplace_category_name: r.marketplace_category_name ?? null,
    marketplace_resource_uuid: r.marketplace_resource_uuid ?? null,
    marketplace_plan_uuid: r.marketplace_plan_uuid ?? null,
    marketplace_resource_state: r.marketplace_resource_state ?? null,
    // The catalog has no usage or limit components yet: no offering is usage- or limit-based.
    is_usage_based: false,
    is_limit_based: false,
  }
}

// ---- visibility, permissions and filters ----

export function resourceVisibility(actor: Actor): ResourceVisibility {
  if (seesAll(actor)) return { all: true }
  return { all: false, customerIds: customerIds(actor), projectIds: projectIds(actor) }
}

function manageScopes(actor: Actor): ManageScopes {
  if (actor.isStaff) return { all: true }
  const s = scopesWith(actor, 'RESOURCE.MANAGE')
  return { all: false, customerIds: s.customer, projectIds: s.project }
}

/** May the actor change this resource: staff, customer owner, project admin or manager. */
export function canManage(actor: Actor, r: { customer_id: number; project_id: number }): boolean {
  return can(actor, 'RESOURCE.MANAGE', { customerId: r.customer_id, projectId: r.project_id })
}

/** Accepts the tokens and the older labels ("Creation Scheduled"); unknown → 400 on `state`. */
function stateFilter(q: Query): CloudState[] {
  const out: CloudState[] = []
  for (const v of values(q, 'state')) {
    if (v === '') continue
    const token = (CLOUD_STATES as readonly string[]).includes(v)
      ? (v as CloudState)
      : CLOUD_STATES.find((s) => CLOUD_STATE_LABELS[s].toLowerCase() === v.toLowerCase())
    if (!token) throw fieldError('state', `Select a valid choice. ${v} is not one of the available choices.`)
    out.push(token)
  }
  return out
}

/** Two uuid filters naming the same thing: both must agree, else nothing matches. */
function agree(a: string | undefined, b: string | undefined): string | null | undefined {
  if (a && b && a !== b) return null
  return a ?? b
}

/** Parses the common filters of spec 4.8 from a list query. */
export function parseCommonFilters(q: Query, actor: Actor): CommonFilters {
  return {
    customer_uuid: agree(uuidFilter(q, 'customer'), uuidFilter(q, 'customer_uuid')),
    customer_name: single(q, 'customer_name'),
    customer_native_name: single(q, 'customer_native_name'),
    customer_abbreviation: single(q, 'customer_abbreviation'),
    project_uuid: agree(uuidFilter(q, 'project'), uuidFilter(q, 'project_uuid')),
    project_name: single(q, 'project_name'),
    service_settings_name: single(q, 'service_settings_name'),
    service_settings_uuid: uuidFilter(q, 'service_settings_uuid'),
    name: single(q, 'name'),
    name_exact: single(q, 'name_exact'),
    description: single(q, 'description'),
    backend_id: single(q, 'backend_id'),
    states: stateFilter(q),
    uuid: uuidFilter(q, 'uuid'),
    can_manage: boolFilter(q, 'can_manage') ? manageScopes(actor) : undefined,
  }
}

/** The visible, filtered resources of one type: add the type's joins, then select. */
export function cloudResourcesQuery(
  db: Kysely<DB> | Transaction<DB>,
  type: string,
  actor: Actor,
  f: CommonFilters,
): CloudResourcesQuery {
  return applyCommonFilters(
    applyResourceVisibility(cloudResourcesBase(db, type), resourceVisibility(actor)),
    f,
  )
}

// ---- the generic operations ----

/** The visible resource (common row) or 404 in the reference's wording. */
export async function findVisibleResource(
  ctx: AppContext,
  actor: Actor,
  type: string,
  uuid: string,
): Promise<CommonRow> {
  const def = cloudResourceType(type)
  const u = normalizeUuid(uuid)
  const row = u
    ? await cloudResourcesRepository(ctx.db).findCommon(type, { uuid: u }, resourceVisibility(actor))
    : undefined
  if (!row) throw notFound(`No ${def.modelName} matches the given query.`)
  return row
}

/** 404 when not visible, then 403 when the actor may not manage it. */
export async function findManageableResource(
  ctx: AppContext,
  actor: Actor,
  type: string,
  uuid: string,
): Promise<CommonRow> {
  const row = await findVisibleResource(ctx, actor, type, uuid)
  if (!canManage(actor, row)) throw forbidden()
  return row
}

/**
 * The project a create request names: visible to the actor (else 400 "Invalid hyperlink") and one
 * the actor may manage resources in (else 400 on the field).
 */
export async function resolveManagedProject(
  ctx: AppContext,
  actor: Actor,
  field: string,
  value: unknown,
): Promise<{ id: number; uuid: string; customer_id: number }> {
  const p = await resolveProjectLink(ctx, actor, field, value)
  if (!can(actor, 'RESOURCE.MANAGE', { projectId: p.id, customerId: p.customer_id })) {
    throw fieldError(field, 'You do not have permission to manage resources in this project.')
  }
  return { id: p.id, uuid: p.uuid, customer_id: p.customer_id }
}

/**
 * Inserts a resource in CREATION_SCHEDULED and enqueues its create step, in the caller's
 * transaction (the caller adds its type's own row there too). Returns the new id.
 */
export async function insertResource(
  ctx: AppContext,
  trx: Kysely<DB> | Transaction<DB>,
  v: { type: string; name: string; description: string; settingsId: number; projectId: number },
): Promise<number> {
  const now = ctx.clock().toISOString()
  const id = await cloudResourcesRepository(trx).insert({
    uuid: ctx.newUuid(),
    resource_type: v.type,
    name: v.name,
    description: v.description,
    service_settings_id: v.settingsId,
    project_id: v.projectId,
    state: 'CREATION_SCHEDULED',
    created: now,
    modified: now,
  })
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
    const moved = await cloudResourcesRepository(trx).setStateIf(
      row.id,
      UPDATABLE_STATES,
      'UPDATE_SCHEDULED',
      {
        ...common,
        modified: ctx.clock().toISOString(),
      },
    )
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
    const moved = await cloudResourcesRepository(trx).setStateIf(row.id, [row.state], 'DELETION_SCHEDULED', {
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
  await cloudResourcesRepository(ctx.db).delete(row.id)
}

/** The body of set_erred: the error to record (both optional, default empty). */
export const SetErredBody = Body({
  error_message: Type.Optional(Type.String({ maxLength: 10000 })),
  error_traceback: Type.Optional(Type.String({ maxLength: 100000 })),
})
export const StateDetail = Type.Object({ detail: Type.String() })

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
  await cloudResourcesRepository(ctx.db).update(row.id, {
    state: to,
    error_message: to === 'OK' ? '' : (error.error_message ?? ''),
    error_traceback: to === 'OK' ? '' : (error.error_traceback ?? ''),
    modified: ctx.clock().toISOString(),
  })
  return {
    detail: to === 'OK' ? 'Resource state has been set to OK.' : 'Resource state has been set to ERRED.',
  }
}

/**
 * POST `/api/<path>/{uuid}/set_ok/` and `.../set_erred/` (staff only) for one kind of cloud
 * resource: both answer `{"detail": ...}`; set_erred's body is optional.
 */
export function registerStateActions(
  fastify: FastifyInstance,
  ctx: AppContext,
  kind: { path: string; type: string; tags: string[]; noun: string },
): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const { path, type, tags, noun } = kind
  app.post(
    `/api/${path}/:uuid/set_ok/`,
    {
      schema: {
        tags,
        summary: `Staff only: mark the ${noun} OK and clear its error`,
        params: UuidParams,
        response: { 200: StateDetail, ...errors },
      },
    },
    async (request) => setResourceState(ctx, actorOf(request), type, request.params.uuid, 'OK'),
  )
  app.post(
    `/api/${path}/:uuid/set_erred/`,
    {
      schema: {
        tags,
        summary: `Staff only: mark the ${noun} ERRED with the error given`,
        params: UuidParams,
        body: SetErredBody,
        response: { 200: StateDetail, ...errors },
      },
      preValidation: async (request) => {
        if (request.body === undefined || request.body === null) request.body = {}
      },
    },
    async (request) =>
      setResourceState(ctx, actorOf(request), type, request.params.uuid, 'ERRED', request.body),
  )
}
