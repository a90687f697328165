// Payment profile use cases. Writes are staff-only (reference §6); organization owners read the
// active profile of their organizations. Activating a profile deactivates the organization's
// others in the same transaction, under a per-organization lock, and a partial unique index
// guarantees at most one active profile per organization.
import type { AppContext } from '../../context.js'
import { parseJson, toBool, toJson } from '../../db/values.js'
import { AppError } from '../../http/errors.js'
import { resolveLink, urlOf } from '../../http/links.js'
import { requireStaff, customerIds, seesAll, type Actor } from '../../http/permissions.js'
import { eachRow, visibleRecords } from '../../http/visible-records.js'
import { paymentProfilesRepository, type ProfileRow, type ProfileVisibility } from './repository.js'
import {
  PATH,
  PAYMENT_TYPE_LABELS,
  PAYMENT_TYPES,
  type Attributes,
  type PaymentProfile,
  type PaymentProfileWrite,
  type PaymentType,
} from './schema.js'

/** Staff and support see every profile; organization owners the active ones of their organizations. */
export function visibility(actor: Actor): ProfileVisibility {
  if (seesAll(actor)) return { all: true }
  return { all: false, customerIds: customerIds(actor, ['CUSTOMER.OWNER']) }
}

export function toPaymentProfile(base: string, r: ProfileRow): PaymentProfile {
  const type = r.payment_type as PaymentType
  return {
    uuid: r.uuid,
    url: urlOf(base, PATH, r.uuid)!,
    name: r.name,
    organization_uuid: r.organization_uuid,
    organization: urlOf(base, 'customers', r.organization_uuid)!,
    attributes: parseJson<Attributes>(r.attributes, {}),
    payment_type: type,
    payment_type_display: PAYMENT_TYPE_LABELS[type] ?? r.payment_type,
    is_active: toBool(r.is_active),
  }
}

/** The profiles' list and record, and the visible profile a path names. */
const profiles = visibleRecords({
  rows: paymentProfilesRepository,
  visibility,
  model: 'PaymentProfile',
  render: eachRow(toPaymentProfile),
})
export const listPaymentProfiles = profiles.list

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/

function validDate(v: string): boolean {
  const m = DATE_RE.exec(v)
  if (!m) return false
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])))
  return (
    d.getUTCFullYear() === Number(m[1]) &&
    d.getUTCMonth() === Number(m[2]) - 1 &&
    d.getUTCDate() === Number(m[3])
  )
}

/**
 * Checks the documented attribute keys and normalizes them: end_date a YYYY-MM-DD date,
 * agreement_number a string (numbers are turned into strings, as a DRF CharField does),
 * contract_sum an integer (an integer-valued string such as "1000" is accepted, as the newer
 * reference schema types it as string). Other keys are kept as given. Errors nest under attributes.
 */
export function validateAttributes(input: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...input }
  const errors: Record<string, string[]> = {}
  const endDate = input.end_date
  // The contract's end is read for alerts and invoicing: a key given without a date is refused.
  if (endDate === null) errors.end_date = ['This field may not be null.']
  else if (endDate !== undefined) {
    if (typeof endDate !== 'string' || !validDate(endDate)) {
      errors.end_date = ['Date has wrong format. Use one of these formats instead: YYYY-MM-DD.']
    }
  }
  const agreement = input.agreement_number
  if (agreement !== undefined && agreement !== null) {
    if (typeof agreement === 'number' && Number.isFinite(agreement)) out.agreement_number = String(agreement)
    else if (typeof agreement !== 'string') errors.agreement_number = ['Not a valid string.']
    else if (agreement.length > 255)
      errors.agreement_number = ['Ensure this field has no more than 255 characters.']
  }
  const sum = input.contract_sum
  if (sum !== undefined && sum !== null) {
    if (typeof sum === 'number' && Number.isSafeInteger(sum)) out.contract_sum = sum
    else if (typeof sum === 'string' && /^\s*-?\d{1,15}\s*$/.test(sum)) out.contract_sum = Number(sum)
    else errors.contract_sum = ['A valid integer is required.']
  }
  if (Object.keys(errors).length) throw new AppError('invalid', { attributes: errors })
  return out
}

function validatePaymentType(v: string): PaymentType {
  if (!(PAYMENT_TYPES as readonly string[]).includes(v)) {
    throw new AppError('invalid', { payment_type: [`"${v}" is not a valid choice.`] })
  }
  return v as PaymentType
}

/** POST: staff only; saving with is_active true deactivates the organization's other profiles. */
export async function createPaymentProfile(
  ctx: AppContext,
  actor: Actor,
  body: PaymentProfileWrite,
  base: string,
): Promise<PaymentProfile> {
  requireStaff(actor)
  const paymentType = validatePaymentType(body.payment_type!)
  const attributes = validateAttributes(body.attributes ?? {})
  const id = await ctx.db.transaction().execute(async (trx) => {
    const org = await resolveLink(trx, 'organization', body.organization, 'customers', 'customers')
    const repo = paymentProfilesRepository(trx)
    if (body.is_active) await repo.lockOrganization(ctx.dialect, org.id)
    const now = ctx.clock().toISOString()
    const id = await repo.insert({
      uuid: ctx.newUuid(),
      name: body.name!,
      organization_id: org.id,
      attributes: toJson(attributes),
      payment_type: paymentType,
      is_active: 0,
      created: now,
      modified: now,
    })
    if (body.is_active) await repo.activateOnly(org.id, id, now)
    return id
  })
  return profiles.record(ctx, id, base)
}

/** PUT/PATCH: staff only. Missing keys keep their stored values. */
export async function updatePaymentProfile(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: PaymentProfileWrite,
  base: string,
): Promise<PaymentProfile> {
  requireStaff(actor)
  const current = await profiles.find(ctx, actor, uuid)
  const changes: Record<string, unknown> = {}
  if (body.name !== undefined) changes.name = body.name
  if (body.payment_type !== undefined) changes.payment_type = validatePaymentType(body.payment_type)
  if (body.attributes !== undefined) changes.attributes = toJson(validateAttributes(body.attributes))
  await ctx.db.transaction().execute(async (trx) => {
    const repo = paymentProfilesRepository(trx)
    let orgId = current.organization_id
    if (body.organization !== undefined) {
      orgId = (await resolveLink(trx, 'organization', body.organization, 'customers', 'customers')).id
      changes.organization_id = orgId
    }
    // Organization locks first, in id order, so activations never wait on each other in a cycle.
    for (const id of [...new Set([current.organization_id, orgId])].sort((a, b) => a - b)) {
      await repo.lockOrganization(ctx.dialect, id)
    }
    const now = ctx.clock().toISOString()
    const active = body.is_active ?? toBool(current.is_active)
    // Deactivating first keeps the one-active index satisfied at every step.
    await repo.update(current.id, { ...changes, is_active: 0, modified: now })
    if (active) await repo.activateOnly(orgId, current.id, now)
  })
  return profiles.record(ctx, current.id, base)
}

export async function deletePaymentProfile(ctx: AppContext, actor: Actor, uuid: string): Promise<void> {
  requireStaff(actor)
  const current = await profiles.find(ctx, actor, uuid)
  await paymentProfilesRepository(ctx.db).delete(current.id)
}

/** Retrieve, create, update and delete, for the kit. */
export const paymentProfileService = {
  get: profiles.get,
  create: createPaymentProfile,
  update: updatePaymentProfile,
  destroy: deletePaymentProfile,
}

/** POST enable: this profile active, every other profile of its organization inactive, atomically. */
export async function enablePaymentProfile(ctx: AppContext, actor: Actor, uuid: string): Promise<void> {
  requireStaff(actor)
  const current = await profiles.find(ctx, actor, uuid)
  await ctx.db.transaction().execute(async (trx) => {
    const repo = paymentProfilesRepository(trx)
    await repo.lockOrganization(ctx.dialect, current.organization_id)
    await repo.activateOnly(current.organization_id, current.id, ctx.clock().toISOString())
  })
}
