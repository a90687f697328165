// What the provider side does to the resources of its offerings (what its site agent calls): set
// their backend identifiers, limits, metadata, endpoints, state and end date, report that it
// synced them and how far their members are synced, and read their project's team. Every call
// finds the resource among those the caller sees as provider (404), checks the caller's
// permission on the offering (403), then the resource's state (409), then the values (400).
import type { AppContext } from '../../context.js'
import { isUniqueViolation } from '../../db/sql.js'
import { parseJson, toBool, toJson } from '../../db/values.js'
import { AppError, conflict, fieldError, forbidden, type FieldErrors } from '../../http/errors.js'
import { urlOf } from '../../http/links.js'
import { canAsProvider, type Actor, type Permission } from '../../http/permissions.js'
import { normalizeUuid } from '../../http/uuid.js'
import {
  resourcePeopleRepository,
  resourcesWriteRepository,
  type ResourceRow,
} from './repository-resources.js'
import { PATHS, type ProjectUser } from './schema.js'
import {
  changeResource,
  findProviderResource,
  moveResourceOr409,
  offeringUsersOf,
} from './service-resources.js'
import { checkLimits } from './service-components.js'
import { usersByOfferingUsername } from '../offering-users/provisioning.js'
import { resourceTransition } from './state-machine.js'
import { scheduleCostPolicyEvaluation } from '../cost-policies/service.js'

type Status = { status: string }

/** The resource of the path's uuid, when the caller sees it as provider and holds `permission`. */
async function providerResource(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  permission: Permission,
): Promise<ResourceRow> {
  const r = await findProviderResource(ctx, actor, uuid)
  if (!canAsProvider(actor, permission, { id: r.offering_id, customer_id: r.provider_id })) throw forbidden()
  return r
}

/** Sets columns of the resource (and its `modified`, when it changes what the record shows). */
async function update(ctx: AppContext, id: number, values: Record<string, unknown>, touch = true) {
  await changeResource(ctx, ctx.db, id, touch ? { ...values, modified: ctx.clock().toISOString() } : values)
}

/** `<field> has been changed.` or `<field> is not changed.`, as the reference answers. */
function changed(what: string, yes: boolean): Status {
  return { status: `Resource ${what} ${yes ? 'has been changed.' : 'is not changed.'}` }
}

// ---- identifiers ----

export async function setBackendId(ctx: AppContext, actor: Actor, uuid: string, backendId: string) {
  const r = await providerResource(ctx, actor, uuid, 'RESOURCE.SET_BACKEND_ID')
  if (backendId === r.backend_id) return changed('backend_id', false)
  if (backendId && (await resourcesWriteRepository(ctx.db).backendIdTaken(r.offering_id, backendId, r.id))) {
    throw fieldError('backend_id', 'A resource of this offering already has this backend_id.')
  }
  await update(ctx, r.id, { backend_id: backendId })
  return changed('backend_id', true)
}

export async function setEffectiveId(ctx: AppContext, actor: Actor, uuid: string, effectiveId: string) {
  const r = await providerResource(ctx, actor, uuid, 'RESOURCE.SET_BACKEND_ID')
  if (effectiveId === r.effective_id) return changed('effective_id', false)
  await update(ctx, r.id, { effective_id: effectiveId })
  return changed('effective_id', true)
}

/** Staff only (the route checks it): the slug is unique. */
export async function setSlug(ctx: AppContext, actor: Actor, uuid: string, slug: string) {
  const r = await findProviderResource(ctx, actor, uuid)
  if (slug === r.slug) return changed('slug', false)
  const taken = () => fieldError('slug', 'A resource with this slug already exists.')
  if (await resourcesWriteRepository(ctx.db).slugTaken(slug, r.id)) throw taken()
  try {
    await update(ctx, r.id, { slug })
  } catch (e) {
    if (isUniqueViolation(e)) throw taken()
    throw e
  }
  return changed('slug', true)
}

// ---- flags: staff only (the route checks it) ----

export type ResourceFlag = 'paused' | 'downscaled' | 'restrict_member_access'

export async function setFlag(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  flag: ResourceFlag,
  value: boolean,
) {
  const r = await findProviderResource(ctx, actor, uuid)
  const yes = toBool(r[flag]) !== value
  if (yes) await update(ctx, r.id, { [flag]: value ? 1 : 0 })
  return changed(`${flag} flag`, yes)
}

// ---- limits, metadata, endpoints, report ----

const MAX_LIMIT = Number.MAX_SAFE_INTEGER

/**
 * The limits a provider's backend reports it holds for a resource, checked: an object of whole
 * numbers not below 0 (a numeric string is read as its number), each named by the type of one of
 * the offering's components (whatever its billing type: the backend reports what it enforces).
 * 400 naming each bad entry under `limits`, or `{"limits": ["Invalid types: …"]}`.
 */
export async function checkResourceLimits(
  ctx: AppContext,
  resource: ResourceRow,
  limits: Record<string, unknown>,
): Promise<Record<string, number>> {
  const out: Record<string, number> = {}
  const errors: FieldErrors = {}
  for (const [type, raw] of Object.entries(limits)) {
    const n = typeof raw === 'string' && /^\s*\d+(\.0*)?\s*$/.test(raw) ? Number(raw) : raw
    if (typeof n !== 'number' || !Number.isInteger(n)) errors[type] = ['A valid integer is required.']
    else if (n < 0) errors[type] = ['Ensure this value is greater than or equal to 0.']
    else if (n > MAX_LIMIT) errors[type] = [`Ensure this value is less than or equal to ${MAX_LIMIT}.`]
    else out[type] = n
  }
  if (Object.keys(errors).length) throw new AppError('invalid', { limits: errors })
  await checkLimits(ctx, resource.offering_id, out, { resourceId: resource.id, reported: true })
  return out
}

export async function setLimits(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  limits: Record<string, unknown>,
) {
  const r = await providerResource(ctx, actor, uuid, 'RESOURCE.SET_STATE')
  const checked = await checkResourceLimits(ctx, r, limits)
  await ctx.db.transaction().execute(async (trx) => {
    await resourcesWriteRepository(trx).update(r.id, {
      limits: toJson(checked),
      modified: ctx.clock().toISOString(),
    })
    // Limits are priced: the offering's estimated cost changes with them.
    await scheduleCostPolicyEvaluation(ctx, trx, r.offering_id)
  })
  return { status: 'The resource limits are updated' }
}

export async function setBackendMetadata(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  metadata: Record<string, unknown>,
) {
  const r = await providerResource(ctx, actor, uuid, 'RESOURCE.SET_BACKEND_METADATA')
  await update(ctx, r.id, { backend_metadata: toJson(metadata) })
  return { status: 'The backend metadata is updated' }
}

export async function setEndpoints(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  endpoints: { name: string; url: string }[],
) {
  const r = await providerResource(ctx, actor, uuid, 'RESOURCE.SET_BACKEND_METADATA')
  const now = ctx.clock().toISOString()
  await ctx.db.transaction().execute(async (trx) => {
    const writes = resourcesWriteRepository(trx)
    await writes.replaceEndpoints(
      r.id,
      endpoints.map((e) => ({ uuid: ctx.newUuid(), name: e.name, url: e.url })),
      now,
    )
    await writes.update(r.id, { modified: now })
  })
  return { status: 'Resource endpoints have been set.' }
}

export async function submitReport(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  report: { header: string; body: string }[],
) {
  const r = await providerResource(ctx, actor, uuid, 'RESOURCE.SET_BACKEND_METADATA')
  await update(ctx, r.id, { report: toJson(report) })
  return { status: 'Report is submitted' }
}

// ---- state and sync ----

/** OK from a state in progress or Erred, clearing the error texts; already OK: nothing changes. */
export async function setAsOk(ctx: AppContext, actor: Actor, uuid: string): Promise<void> {
  const r = await providerResource(ctx, actor, uuid, 'RESOURCE.SET_STATE')
  if (r.state === 'OK') return
  const t = resourceTransition(r.state, 'set_as_ok')
  await moveResourceOr409(ctx, ctx.db, r.id, t.to, {
    from: t.from,
    values: { error_message: '', error_traceback: '' },
    now: ctx.clock().toISOString(),
  })
}

/** OK from a state in progress or Erred (the error texts stay). */
export async function setStateOk(ctx: AppContext, actor: Actor, uuid: string): Promise<Status> {
  const r = await providerResource(ctx, actor, uuid, 'RESOURCE.SET_STATE')
  const t = resourceTransition(r.state, 'set_state_ok')
  await moveResourceOr409(ctx, ctx.db, r.id, t.to, { from: t.from, now: ctx.clock().toISOString() })
  return { status: 'Resource state has been set to OK.' }
}

/** Erred from any state, with the error texts given (an empty or missing one keeps the last). */
export async function setAsErred(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: { error_message?: string; error_traceback?: string },
): Promise<void> {
  const r = await providerResource(ctx, actor, uuid, 'RESOURCE.SET_STATE')
  const t = resourceTransition(r.state, 'set_as_erred')
  const values: Record<string, unknown> = {}
  if (body.error_message) values.error_message = body.error_message
  if (body.error_traceback) values.error_traceback = body.error_traceback
  await moveResourceOr409(ctx, ctx.db, r.id, t.to, { from: t.from, values, now: ctx.clock().toISOString() })
}

/** The provider's agent has just synced the resource: `last_sync` is now (`modified` stays). */
export async function refreshLastSync(ctx: AppContext, actor: Actor, uuid: string): Promise<void> {
  const r = await providerResource(ctx, actor, uuid, 'RESOURCE.SET_STATE')
  await update(ctx, r.id, { last_sync: ctx.clock().toISOString() }, false)
}

/** The plugin option by which an offering takes its agent's membership sync reports. */
const MEMBERSHIP_SYNC_OPTION = 'enable_membership_sync_status'

interface MemberSyncEntry {
  scope_type: string
  role_name: string
  state: string
  username?: string
  user_uuid?: string
  resource_project_uuid?: string
  message?: string
}

/**
 * The users a report names by a username: their offering user's username on the offering's
 * backend, else their username here.
 */
async function usersByReportedName(
  ctx: AppContext,
  offeringId: number,
  names: readonly string[],
): Promise<Map<string, number>> {
  const onBackend = await usersByOfferingUsername(ctx.db, offeringId, names)
  const rest = names.filter((n) => !onBackend.has(n))
  const here = await resourcePeopleRepository(ctx.db).usersByUsername(rest)
  return new Map([...here, ...onBackend])
}

/**
 * Replaces every membership sync status of the resource with the report's. An entry whose user
 * is not found (by `user_uuid`, else by `username`) is skipped and named in `skipped`. 409 when
 * the offering has not opted in (its plugin option `enable_membership_sync_status`).
 */
export async function setMembershipSyncStatuses(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  statuses: MemberSyncEntry[],
): Promise<{ stored: number; skipped: string[] }> {
  const r = await providerResource(ctx, actor, uuid, 'RESOURCE.SET_STATE')
  const options = parseJson<Record<string, unknown>>(r.offering_plugin_options, {})
  if (!options[MEMBERSHIP_SYNC_OPTION]) {
    throw conflict('Membership sync status reporting is not enabled for this offering.')
  }
  const people = resourcePeopleRepository(ctx.db)
  const uuids = statuses.map((s) => normalizeUuid(s.user_uuid)).filter((u): u is string => !!u)
  const byUuid = await people.usersByUuid(uuids)
  const names = statuses.filter((s) => !s.user_uuid && s.username).map((s) => s.username!)
  const byName = await usersByReportedName(ctx, r.offering_id, names)
  const projectUuids = statuses
    .map((s) => normalizeUuid(s.resource_project_uuid))
    .filter((u): u is string => !!u)
  const projects = await people.projectsByUuid(projectUuids)
  const now = ctx.clock().toISOString()
  const rows: Parameters<
    ReturnType<typeof resourcesWriteRepository>['replaceMemberSyncStatuses']
  >[1][number][] = []
  const skipped: string[] = []
  for (const s of statuses) {
    const userId = s.user_uuid
      ? byUuid.get(normalizeUuid(s.user_uuid)!)
      : s.username
        ? byName.get(s.username)
        : undefined
    if (userId === undefined) {
      skipped.push(s.username || s.user_uuid || '')
      continue
    }
    const projectUuid = normalizeUuid(s.resource_project_uuid)
    rows.push({
      uuid: ctx.newUuid(),
      user_id: userId,
      scope_type: s.scope_type,
      resource_project_id: projectUuid ? (projects.get(projectUuid) ?? null) : null,
      role_name: s.role_name,
      state: s.state,
      message: s.message ?? '',
      created: now,
      modified: now,
    })
  }
  await ctx.db
    .transaction()
    .execute((trx) => resourcesWriteRepository(trx).replaceMemberSyncStatuses(r.id, rows))
  return { stored: rows.length, skipped }
}

// ---- end date ----

/** How far ahead a provider must set an end date, in days. */
const END_DATE_NOTICE_DAYS = 7

/**
 * The provider sets (or clears, with null) the date the resource ends; it must be at least 7
 * days ahead. Global support may do it too, as in the reference.
 */
export async function setEndDateByProvider(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  endDate: string | null | undefined,
): Promise<void> {
  const r = await findProviderResource(ctx, actor, uuid)
  if (
    !actor.isSupport &&
    !canAsProvider(actor, 'RESOURCE.SET_END_DATE', { id: r.offering_id, customer_id: r.provider_id })
  )
    throw forbidden()
  if (endDate === undefined) return
  if (endDate !== null) {
    const earliest = new Date(ctx.clock().getTime() + END_DATE_NOTICE_DAYS * 86_400_000)
      .toISOString()
      .slice(0, 10)
    if (endDate < earliest)
      throw fieldError('end_date', `Please set at least ${END_DATE_NOTICE_DAYS} days in advance.`)
  }
  const now = ctx.clock().toISOString()
  await update(ctx, r.id, {
    end_date: endDate,
    end_date_requested_by_id: actor.id,
    ...(endDate !== r.end_date ? { end_date_updated_at: now } : {}),
  })
}

// ---- the team ----

/**
 * The users of the resource's project with their project role (the first they were granted),
 * by username; their account on the offering's backend as the offering's users record it.
 */
export async function resourceTeam(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  base: string,
): Promise<ProjectUser[]> {
  const r = await findProviderResource(ctx, actor, uuid)
  const rows = await resourcePeopleRepository(ctx.db).projectTeam(r.project_id, ctx.clock().toISOString())
  const seen = new Set<number>()
  const members = rows.filter((m) => !seen.has(m.id) && seen.add(m.id))
  const accounts = await offeringUsersOf(
    ctx,
    r.offering_id,
    members.map((m) => m.id),
  )
  return members.map((m) => ({
    url: urlOf(base, PATHS.users, m.uuid)!,
    uuid: m.uuid,
    username: m.username,
    full_name: m.full_name,
    email: m.email,
    role: m.role,
    expiration_time: m.expiration_time,
    offering_user_username: accounts.get(m.id)?.username ?? null,
    offering_user_state: accounts.get(m.id)?.state ?? null,
  }))
}
