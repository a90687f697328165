// Service settings use cases. Staff create, edit and delete them; staff and support read all;
// every logged-in user reads the shared ones; members of a customer read that customer's own.
import type { AppContext } from '../../context.js'
import { parseJson, toBool, toJson } from '../../db/values.js'
import { AppError, conflict, fieldError } from '../../http/errors.js'
import { resolveLink, urlOf } from '../../http/links.js'
import { requireStaff, connectedCustomerIds, seesAll, type Actor } from '../../http/permissions.js'
import type { Listing } from '../../db/listing.js'
import { pageOf, type Pager } from '../../http/resource.js'
import { foundByUuid } from '../../http/uuid.js'
import { CLOUD_KINDS, driverName, driverNames, type CloudKind, type SettingsInfo } from './driver.js'
import { serviceSettingsRepository, type SettingsRow, type SettingsVisibility } from './repository.js'
import { SETTINGS_PATH, type ServiceSettings, type ServiceSettingsWrite } from './schema.js'

export function settingsVisibility(actor: Actor): SettingsVisibility {
  if (seesAll(actor)) return { all: true }
  return { all: false, customerIds: connectedCustomerIds(actor) }
}

export function toServiceSettings(base: string, r: SettingsRow, actor: Actor): ServiceSettings {
  const options = parseJson<Record<string, unknown>>(r.options, {})
  return {
    url: urlOf(base, SETTINGS_PATH, r.uuid)!,
    uuid: r.uuid,
    name: r.name,
    type: r.type as CloudKind,
    shared: toBool(r.shared),
    customer: urlOf(base, 'customers', r.customer_uuid),
    customer_uuid: r.customer_uuid ?? null,
    customer_name: r.customer_name ?? null,
    state: r.state,
    error_message: r.error_message,
    // Options may carry a real backend's credentials: only staff and support read them all.
    options: seesAll(actor) ? options : { driver: driverName(options) },
    created: r.created,
    modified: r.modified,
  }
}

function validateType(v: string): CloudKind {
  if (!(CLOUD_KINDS as readonly string[]).includes(v)) {
    throw fieldError('type', `"${v}" is not a valid choice.`)
  }
  return v as CloudKind
}

const isStringList = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string')

/** The driver must be registered for the kind; the emulator's own options must be well-formed. */
export function validateOptions(kind: CloudKind, options: Record<string, unknown>): Record<string, unknown> {
  const problems: string[] = []
  const name = options.driver === undefined ? undefined : options.driver
  const known = driverNames(kind)
  if (name !== undefined && (typeof name !== 'string' || !known.includes(name))) {
    problems.push(`Unknown driver "${String(name)}" for ${kind}; known drivers: ${known.join(', ')}.`)
  }
  const failNext = options.fail_next
  if (
    failNext !== undefined &&
    !isStringList(failNext) &&
    !(typeof failNext === 'number' && Number.isInteger(failNext) && failNext >= 0)
  ) {
    problems.push('fail_next must be a list of operation names or a non-negative integer.')
  }
  const failAll = options.fail_all
  if (failAll !== undefined && typeof failAll !== 'boolean' && !isStringList(failAll)) {
    problems.push('fail_all must be a boolean or a list of operation names.')
  }
  const slow = options.slow_ms
  if (
    slow !== undefined &&
    !(typeof slow === 'number' && Number.isInteger(slow) && slow >= 0 && slow <= 60000)
  ) {
    problems.push('slow_ms must be an integer from 0 to 60000.')
  }
  if (problems.length) throw new AppError('invalid', { options: problems })
  return { ...options, driver: driverName(options) }
}

export function listServiceSettings(
  ctx: AppContext,
  actor: Actor,
  vis: SettingsVisibility,
  listing: Listing,
  base: string,
  page: Pager<ServiceSettings>,
): Promise<ServiceSettings[]> {
  return pageOf(page, serviceSettingsRepository(ctx.db), vis, listing, (r) =>
    toServiceSettings(base, r, actor),
  )
}

function findVisible(ctx: AppContext, actor: Actor, uuid: string): Promise<SettingsRow> {
  const vis = settingsVisibility(actor)
  return foundByUuid(
    uuid,
    (u) => serviceSettingsRepository(ctx.db).findVisibleByUuid(vis, u),
    'ServiceSettings',
  )
}

export async function getServiceSettings(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  base: string,
): Promise<ServiceSettings> {
  return toServiceSettings(base, await findVisible(ctx, actor, uuid), actor)
}

async function customerId(ctx: AppContext, value: string | null | undefined): Promise<number | null> {
  if (value === null || value === undefined) return null
  return (await resolveLink(ctx.db, 'customer', value, 'customers', 'customers')).id
}

/** POST: staff only. Options default to the emulator driver. */
export async function createServiceSettings(
  ctx: AppContext,
  actor: Actor,
  body: ServiceSettingsWrite,
  base: string,
): Promise<ServiceSettings> {
  requireStaff(actor)
  const type = validateType(body.type!)
  const options = validateOptions(type, body.options ?? {})
  const now = ctx.clock().toISOString()
  const repo = serviceSettingsRepository(ctx.db)
  const id = await repo.insert({
    uuid: ctx.newUuid(),
    name: body.name!,
    type,
    shared: body.shared ? 1 : 0,
    customer_id: await customerId(ctx, body.customer),
    options: toJson(options),
    created: now,
    modified: now,
  })
  return toServiceSettings(base, (await repo.findById(id))!, actor)
}

/** PUT/PATCH: staff only. The type is fixed once resources use the settings. */
export async function updateServiceSettings(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: ServiceSettingsWrite,
  base: string,
): Promise<ServiceSettings> {
  requireStaff(actor)
  const current = await findVisible(ctx, actor, uuid)
  const repo = serviceSettingsRepository(ctx.db)
  const changes: Record<string, unknown> = {}
  let type = current.type as CloudKind
  if (body.type !== undefined && body.type !== current.type) {
    type = validateType(body.type)
    if ((await repo.countResources(current.id)) > 0) {
      throw fieldError('type', 'The type cannot change while resources use these settings.')
    }
    changes.type = type
  }
  if (body.name !== undefined) changes.name = body.name
  if (body.shared !== undefined) changes.shared = body.shared ? 1 : 0
  if (body.customer !== undefined) changes.customer_id = await customerId(ctx, body.customer)
  if (body.options !== undefined) changes.options = toJson(validateOptions(type, body.options))
  else if (changes.type) {
    changes.options = toJson(validateOptions(type, parseJson<Record<string, unknown>>(current.options, {})))
  }
  changes.modified = ctx.clock().toISOString()
  await repo.update(current.id, changes)
  return toServiceSettings(base, (await repo.findById(current.id))!, actor)
}

/** DELETE: staff only; 409 while cloud resources still use the settings. */
export async function deleteServiceSettings(ctx: AppContext, actor: Actor, uuid: string): Promise<void> {
  requireStaff(actor)
  const current = await findVisible(ctx, actor, uuid)
  const repo = serviceSettingsRepository(ctx.db)
  if ((await repo.countResources(current.id)) > 0) {
    throw conflict('Cannot delete service settings with existing resources')
  }
  await repo.delete(current.id)
}

export const serviceSettingsService = {
  get: getServiceSettings,
  create: createServiceSettings,
  update: updateServiceSettings,
  destroy: deleteServiceSettings,
}

// ---- for the cloud areas ----

/** The settings row by id, as drivers see it. */
export async function settingsInfo(ctx: AppContext, id: number): Promise<SettingsInfo | undefined> {
  const r = await serviceSettingsRepository(ctx.db).findById(id)
  if (!r) return undefined
  return {
    id: r.id,
    uuid: r.uuid,
    name: r.name,
    type: r.type,
    options: parseJson<Record<string, unknown>>(r.options, {}),
  }
}

/**
 * The service settings a request's hyperlink names: must be visible to the actor and of the
 * given kind, else 400 on `field`.
 */
export async function resolveSettingsLink(
  ctx: AppContext,
  actor: Actor,
  field: string,
  value: unknown,
  kind: CloudKind,
): Promise<SettingsInfo> {
  const ref = await resolveLink(ctx.db, field, value, SETTINGS_PATH, 'service_settings')
  const row = await serviceSettingsRepository(ctx.db).findVisibleByUuid(settingsVisibility(actor), ref.uuid)
  if (!row) throw fieldError(field, 'Invalid hyperlink - Object does not exist.')
  if (row.type !== kind) throw fieldError(field, `Service settings of kind ${kind} are required.`)
  return (await settingsInfo(ctx, row.id))!
}
