// Offering users: a user's account on an offering, as the provider's backend keeps it. Listed and
// read by the user (its own), the offering's provider side and staff/support; created, renamed,
// moved through its states and deleted by the provider side (owners, service provider managers,
// offering managers) and staff.
import type { AppContext } from '../../context.js'
import { parseJson } from '../../db/values.js'
import { fieldError, forbidden, invalidState, nonFieldError } from '../../http/errors.js'
import { linkedUuid, recordRenderer } from '../../http/links.js'
import {
  canAsProvider,
  customerIds,
  offeringIds,
  seesAll,
  type Actor,
  type Permission,
} from '../../http/permissions.js'
import { normalizeUuid } from '../../http/uuid.js'
import { visibleRecords } from '../../http/visible-records.js'
import { pageOfRows, type Pager } from '../../http/resource-calls.js'
import type { Listing } from '../../db/listing.js'
import { insertAccount, offeringKeepsAccounts, splitName } from './provisioning.js'
import {
  offeringUsersRepository,
  provisioningRepository,
  type OfferingUserRow,
  type OfferingUserVisibility,
} from './repository.js'
import {
  DEFAULT_EXPOSED,
  PATHS,
  type OfferingUser,
  type OfferingUserCreate,
  type OfferingUserState,
  type OfferingUserUpdate,
  type RuntimeState,
  type UserAttribute,
} from './schema.js'
import { stateAfterUsername, TRANSITIONS, type OfferingUserAction } from './state-machine.js'
import { moveOfferingUser, removeOfferingUser } from './states.js'

const MODEL = 'OfferingUser'

/** Staff and support see every account; others their own and their offerings' (provider side). */
export function visibility(actor: Actor): OfferingUserVisibility {
  if (seesAll(actor)) return { all: true }
  return { all: false, userId: actor.id, customerIds: customerIds(actor), offeringIds: offeringIds(actor) }
}

/** Whether the user's profile holds the attribute (one the server does not keep: never). */
function holds(row: OfferingUserRow, attribute: UserAttribute): boolean {
  switch (attribute) {
    case 'username':
      return !!row.user_username
    case 'full_name':
      return !!row.user_full_name.trim()
    case 'email':
      return !!row.user_email
    case 'civil_number':
      return !!row.user_civil_number
    case 'affiliations':
      return parseJson<unknown[]>(row.user_affiliations, []).length > 0
    case 'identity_source':
    case 'registration_method':
      return !!row.user_identity_source
    default:
      return false
  }
}

/** The attributes the offering exposes to its provider (its config, or the default set). */
export function exposedOf(configExposed: unknown): UserAttribute[] {
  if (configExposed === null || configExposed === undefined) return [...DEFAULT_EXPOSED]
  return parseJson<UserAttribute[]>(configExposed, [...DEFAULT_EXPOSED])
}

const missingAttributes = (r: OfferingUserRow) => exposedOf(r.config_exposed).filter((a) => !holds(r, a))

const toRecord = recordRenderer<OfferingUserRow, OfferingUser>({
  url: { link: PATHS.offeringUsers, from: 'uuid' },
  uuid: 'copy',
  user: { link: PATHS.users, from: 'user_uuid' },
  offering: { link: PATHS.offerings, from: 'offering_uuid' },
  username: (r) => r.username || null,
  offering_uuid: 'copy',
  offering_name: 'copy',
  user_uuid: 'copy',
  user_username: 'copy',
  user_full_name: 'copy',
  user_first_name: (r) => splitName(r.user_full_name).first,
  user_last_name: (r) => splitName(r.user_full_name).last,
  user_email: 'copy',
  // Profile attributes this server does not keep: blank, as an unset attribute reads.
  user_phone_number: () => '',
  user_organization: () => '',
  user_job_title: () => '',
  user_affiliations: (r) => parseJson<string[]>(r.user_affiliations, []),
  user_gender: () => null,
  user_personal_title: () => '',
  user_place_of_birth: () => '',
  user_address: () => '',
  user_country_of_residence: () => '',
  user_nationality: () => '',
  user_nationalities: () => [],
  user_organization_country: () => '',
  user_organization_type: () => '',
  user_organization_registry_code: () => '',
  user_organization_vat_code: () => '',
  user_organization_address: () => '',
  user_eduperson_assurance: () => [],
  user_civil_number: 'copy',
  user_birth_date: () => null,
  user_identity_source: 'copy',
  user_uid_number: () => null,
  user_primary_gid: () => null,
  user_active_isds: () => [],
  created: 'copy',
  modified: 'copy',
  customer_uuid: 'copy',
  customer_name: 'copy',
  is_restricted: 'flag',
  state: (r) => r.state,
  runtime_state: (r) => r.runtime_state,
  service_provider_comment: 'copy',
  service_provider_comment_url: 'copy',
  // No consent is recorded for an offering's terms of service, and no compliance checklist.
  has_consent: () => false,
  requires_reconsent: () => false,
  offering_has_active_tos: (r) => !!r.offering_terms_of_service,
  has_compliance_checklist: () => false,
  consent_data: () => null,
  is_profile_complete: (r) => missingAttributes(r).length === 0,
  missing_profile_attributes: (r) => missingAttributes(r),
  // No POSIX identities are allocated for accounts.
  uidnumber: () => null,
  primarygroup: () => null,
  login_shell: () => null,
  home_directory: () => null,
})

/** The record fields of each exposable attribute the server keeps, and their blank values. */
const ATTRIBUTE_FIELDS: Partial<Record<UserAttribute, Partial<OfferingUser>>> = {
  username: { user_username: '' },
  full_name: { user_full_name: '', user_first_name: '', user_last_name: '' },
  email: { user_email: '' },
  civil_number: { user_civil_number: null },
  affiliations: { user_affiliations: [] },
  identity_source: { user_identity_source: '' },
}

/**
 * The record as the caller may read it: the provider side sees only the profile attributes the
 * offering exposes (the others blank); the user itself, staff and support see every one.
 */
function toVisibleRecord(base: string, row: OfferingUserRow, scope: OfferingUserVisibility): OfferingUser {
  const record = toRecord(base, row)
  if (scope.all || row.user_id === scope.userId) return record
  const exposed = new Set(exposedOf(row.config_exposed))
  for (const [attribute, blank] of Object.entries(ATTRIBUTE_FIELDS)) {
    if (!exposed.has(attribute as UserAttribute)) Object.assign(record, blank)
  }
  return record
}

const accounts = visibleRecords({
  rows: offeringUsersRepository,
  visibility,
  model: MODEL,
  render: (_ctx, base, rows: OfferingUserRow[]) => rows.map((r) => toRecord(base, r)),
})

export function listOfferingUsers(
  ctx: AppContext,
  scope: OfferingUserVisibility,
  listing: Listing,
  base: string,
  page: Pager<OfferingUser>,
): Promise<OfferingUser[]> {
  return pageOfRows(page, offeringUsersRepository(ctx.db), scope, listing, (rows) =>
    rows.map((r) => toVisibleRecord(base, r, scope)),
  )
}

export async function getOfferingUser(ctx: AppContext, actor: Actor, uuid: string, base: string) {
  return toVisibleRecord(base, await accounts.find(ctx, actor, uuid), visibility(actor))
}

/** A record just written, as its writer reads it. */
async function written(ctx: AppContext, actor: Actor, id: number, base: string): Promise<OfferingUser> {
  const row = (await offeringUsersRepository(ctx.db).findById(id))!
  return toVisibleRecord(base, row, visibility(actor))
}

/** The visible account of a path's uuid (404), on which the caller must hold `permission` (403). */
async function permitted(ctx: AppContext, actor: Actor, uuid: string, permission: Permission) {
  const row = await accounts.find(ctx, actor, uuid)
  if (!canAsProvider(actor, permission, { id: row.offering_id, customer_id: row.offering_customer_id }))
    throw forbidden()
  return row
}

/** A body's reference given as a URL or as a uuid, exactly one of them. */
function eitherRef(
  field: string,
  link: string | undefined,
  uuidField: string,
  uuid: string | undefined,
  path: string,
): string {
  if (link !== undefined && uuid !== undefined)
    throw nonFieldError(`Provide either ${field} or ${uuidField}, not both.`)
  if (link !== undefined) return linkedUuid(field, link, path)
  if (uuid !== undefined) {
    const u = normalizeUuid(uuid)
    if (!u) throw fieldError(uuidField, 'Must be a valid UUID.')
    return u
  }
  throw fieldError(field, `Either ${field} or ${uuidField} is required.`)
}

export async function createOfferingUser(
  ctx: AppContext,
  actor: Actor,
  body: OfferingUserCreate,
  base: string,
): Promise<OfferingUser> {
  const prov = provisioningRepository(ctx.db)
  const offeringUuid = eitherRef(
    'offering',
    body.offering,
    'offering_uuid',
    body.offering_uuid,
    PATHS.offerings,
  )
  const offering = await prov.offeringByUuid(offeringUuid)
  if (!offering)
    throw fieldError(body.offering !== undefined ? 'offering' : 'offering_uuid', 'Object does not exist.')
  if (!canAsProvider(actor, 'OFFERING.CREATE_USER', offering)) throw forbidden()
  const userUuid = eitherRef('user', body.user, 'user_uuid', body.user_uuid, PATHS.users)
  const user = await prov.userByUuid(userUuid)
  if (!user) throw fieldError(body.user !== undefined ? 'user' : 'user_uuid', 'Object does not exist.')
  if (!offeringKeepsAccounts(offering))
    throw nonFieldError('It is not allowed to create users for current offering.')
  const id = await ctx.db.transaction().execute(async (trx) => {
    const username = body.username === undefined ? undefined : body.username || null
    const inserted = await insertAccount(ctx, trx, offering, user, username)
    if (inserted === null) throw nonFieldError('The fields offering, user must make a unique set.')
    return inserted
  })
  return written(ctx, actor, id, base)
}

/** PUT and PATCH: the username (the user and the offering stay). A new username finishes a creation. */
export async function updateOfferingUser(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: OfferingUserUpdate,
  base: string,
): Promise<OfferingUser> {
  const row = await permitted(ctx, actor, uuid, 'OFFERING.UPDATE_USER')
  if (body.username !== undefined) {
    const username = body.username || null
    const state = stateAfterUsername(row.state as OfferingUserState, row.username, username)
    const now = ctx.clock().toISOString()
    const moved = await moveOfferingUser(ctx, ctx.db, row.id, [row.state], {
      username,
      state,
      modified: now,
    })
    // Another change moved the account meanwhile: answer as if that change came first.
    if (!moved) throw invalidState([row.state])
  }
  return written(ctx, actor, row.id, base)
}

export async function deleteOfferingUser(ctx: AppContext, actor: Actor, uuid: string): Promise<void> {
  const row = await permitted(ctx, actor, uuid, 'OFFERING.DELETE_USER')
  await removeOfferingUser(ctx, ctx.db, row.id)
}

/** A state action: 404 → 403 → 409, then one conditional UPDATE. */
export async function transition(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  action: OfferingUserAction,
  body: { comment?: string; comment_url?: string } = {},
): Promise<void> {
  const row = await permitted(ctx, actor, uuid, 'OFFERING.UPDATE_USER')
  const t = TRANSITIONS[action]
  if (!t.from.includes(row.state as OfferingUserState)) throw invalidState(t.from)
  const set: Record<string, unknown> = { state: t.to, modified: ctx.clock().toISOString() }
  if (action === 'set_pending_account_linking' || action === 'set_pending_additional_validation') {
    if (body.comment !== undefined) set.service_provider_comment = body.comment
    if (body.comment_url !== undefined) set.service_provider_comment_url = body.comment_url
  }
  if (action === 'set_validation_complete') {
    set.service_provider_comment = ''
    set.service_provider_comment_url = ''
  }
  if (!(await moveOfferingUser(ctx, ctx.db, row.id, t.from, set))) throw invalidState(t.from)
}

export async function updateRestricted(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: { is_restricted: boolean },
): Promise<void> {
  const row = await permitted(ctx, actor, uuid, 'OFFERINGUSER.UPDATE_RESTRICTION')
  await offeringUsersRepository(ctx.db).write(row.id, {
    is_restricted: body.is_restricted ? 1 : 0,
    modified: ctx.clock().toISOString(),
  })
}

export async function updateComments(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: { service_provider_comment?: string; service_provider_comment_url?: string },
): Promise<{ service_provider_comment: string; service_provider_comment_url: string }> {
  const row = await permitted(ctx, actor, uuid, 'OFFERING.UPDATE_USER')
  const next = {
    service_provider_comment: body.service_provider_comment ?? row.service_provider_comment,
    service_provider_comment_url: body.service_provider_comment_url ?? row.service_provider_comment_url,
  }
  await offeringUsersRepository(ctx.db).write(row.id, { ...next, modified: ctx.clock().toISOString() })
  return next
}

export async function updateRuntimeState(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: {
    runtime_state: RuntimeState
    service_provider_comment?: string
    service_provider_comment_url?: string
  },
): Promise<void> {
  const row = await permitted(ctx, actor, uuid, 'OFFERING.UPDATE_USER')
  const set: Record<string, unknown> = {
    runtime_state: body.runtime_state,
    modified: ctx.clock().toISOString(),
  }
  if (body.service_provider_comment !== undefined)
    set.service_provider_comment = body.service_provider_comment
  if (body.service_provider_comment_url !== undefined)
    set.service_provider_comment_url = body.service_provider_comment_url
  await offeringUsersRepository(ctx.db).write(row.id, set)
}
