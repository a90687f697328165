// Offering users made and ended by what happens elsewhere, in the transaction of that change: a
// user granted a role on a project, and a project's resource coming to life (its Create order
// reaching the provider, executing, or done), give the project's members an account on the
// resource's offering; a project role revoked asks for the user's accounts that no longer have a
// resource behind them to be deleted, where the offering wants that. Other areas call these
// functions; `offeringUsersFor` answers the accounts of an offering's users (the provider's team
// view shows them).
import type { AppContext } from '../../context.js'
import { parseJson, toBool } from '../../db/values.js'
import { offeringUsersRepository, provisioningRepository, type Db } from './repository.js'
import { CREATION_STATES, DELETION_STATES } from './state-machine.js'
import { insertOfferingUser, moveOfferingUser } from './states.js'
import type { OfferingUserState } from './schema.js'

/** The offering types whose offerings keep user accounts on their backend. */
export const ACCOUNT_OFFERING_TYPES = ['Marketplace.Basic', 'Marketplace.Slurm'] as const

/** How an offering names its users' accounts (`plugin_options.username_generation_policy`). */
export const USERNAME_POLICIES = [
  'service_provider',
  'anonymized',
  'full_name',
  'waldur_username',
  'freeipa',
  'identity_claim',
] as const

const ANONYMIZED_DIGITS = 5
const FULL_NAME_DIGITS = 2

type PluginOptions = Record<string, unknown>
interface Offering {
  id: number
  plugin_options: unknown
}
interface Member {
  id: number
  username: string
  full_name: string
}

function options(o: { plugin_options: unknown }): PluginOptions {
  return parseJson<PluginOptions>(o.plugin_options, {})
}

/** The offering option that lets its provider have user accounts made for it. */
const KEEPS_ACCOUNTS_OPTION = 'service_provider_can_create_offering_user'

/** The offering lets its provider have user accounts made for it. */
export function offeringKeepsAccounts(o: { plugin_options: unknown }): boolean {
  return options(o)[KEEPS_ACCOUNTS_OPTION] === true
}

/**
 * A resource of the offering gives the project's members accounts on it: the offering's type is
 * one of `ACCOUNT_OFFERING_TYPES` and it keeps accounts (`offeringKeepsAccounts`).
 */
export function offeringGivesAccounts(o: { type: string; plugin_options: unknown }): boolean {
  return (ACCOUNT_OFFERING_TYPES as readonly string[]).includes(o.type) && offeringKeepsAccounts(o)
}

/**
 * `offeringGivesAccounts` as SQL (PostgreSQL), on the expressions of an offering's type and its
 * `plugin_options` (jsonb); `param` gives a value its placeholder.
 */
export function offeringGivesAccountsSql(
  type: string,
  pluginOptions: string,
  param: (value: unknown) => string,
): string {
  return `(${type} = any(${param(ACCOUNT_OFFERING_TYPES)}::text[]) and coalesce(${pluginOptions} -> ${param(KEEPS_ACCOUNTS_OPTION)}::text = 'true'::jsonb, false))`
}

/** The first word of a full name, and the rest. */
export function splitName(fullName: string): { first: string; last: string } {
  const trimmed = fullName.trim()
  const at = trimmed.search(/\s/)
  if (at < 0) return { first: trimmed, last: '' }
  return { first: trimmed.slice(0, at), last: trimmed.slice(at).trim() }
}

/** Lowercase ASCII letters, digits and `_`: spaces become `_`, accents are dropped. */
function sanitize(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/\s+/g, '_')
    .replace(/[^a-z0-9_]/g, '')
}

/** `<prefix><number>`, the number one past the highest already given with that prefix. */
async function nextNumbered(db: Db, offeringId: number, prefix: string, digits: number): Promise<string> {
  const taken = await offeringUsersRepository(db).usernamesStartingWith(offeringId, prefix)
  let highest = -1
  for (const name of taken) {
    const n = Number(name.slice(-digits))
    if (Number.isInteger(n) && n > highest) highest = n
  }
  return `${prefix}${String(highest + 1).padStart(digits, '0')}`
}

/**
 * The username a new account gets by the offering's policy: none under `service_provider` (the
 * provider's agent sets it), the user's own under `waldur_username`, `<prefix>NNNNN` under
 * `anonymized`, `first_last_NN` under `full_name`. The `freeipa` and `identity_claim` policies read
 * profiles this server does not keep: none.
 */
export async function generateUsername(db: Db, offering: Offering, user: Member): Promise<string | null> {
  const opts = options(offering)
  const policy =
    typeof opts.username_generation_policy === 'string' ? opts.username_generation_policy : 'service_provider'
  switch (policy) {
    case 'waldur_username':
      return user.username
    case 'anonymized': {
      const prefix =
        typeof opts.username_anonymized_prefix === 'string' && opts.username_anonymized_prefix
          ? opts.username_anonymized_prefix
          : 'walduruser_'
      return nextNumbered(db, offering.id, prefix, ANONYMIZED_DIGITS)
    }
    case 'full_name': {
      const { first, last } = splitName(user.full_name)
      return nextNumbered(db, offering.id, `${sanitize(first)}_${sanitize(last)}_`, FULL_NAME_DIGITS)
    }
    default:
      return null
  }
}

/**
 * Inserts the user's account on the offering unless it has one (its id when inserted, else null):
 * with `username` when given, else the one the offering's policy generates; OK with a username,
 * Requested (for the provider to name it) without.
 */
export async function insertAccount(
  ctx: AppContext,
  db: Db,
  offering: Offering,
  user: Member,
  username?: string | null,
): Promise<number | null> {
  const name = username === undefined ? await generateUsername(db, offering, user) : username
  const now = ctx.clock().toISOString()
  return insertOfferingUser(ctx, db, {
    uuid: ctx.newUuid(),
    offering_id: offering.id,
    user_id: user.id,
    username: name,
    state: name ? 'OK' : 'Requested',
    created: now,
    modified: now,
  })
}

/**
 * Gives the user an account on the offering, or brings back one on its way out: an account being
 * deleted whose username is known is OK again, one without a username (or already Deleted) is
 * requested anew. An account in any other state is left as it is.
 */
async function createOrRestore(ctx: AppContext, db: Db, offering: Offering, user: Member): Promise<void> {
  const repo = offeringUsersRepository(db)
  const now = ctx.clock().toISOString()
  const existing = await repo.findByOfferingAndUser(offering.id, user.id)
  if (existing) {
    const state = existing.state as OfferingUserState
    if (DELETION_STATES.includes(state)) {
      await moveOfferingUser(ctx, db, existing.id, DELETION_STATES, {
        state: existing.username ? 'OK' : 'Requested',
        modified: now,
      })
    } else if (state === 'Deleted') {
      await moveOfferingUser(ctx, db, existing.id, ['Deleted'], { state: 'Requested', modified: now })
    }
    return
  }
  await insertAccount(ctx, db, offering, user)
}

async function eligibleOfferings(db: Db, projectId: number): Promise<Offering[]> {
  const rows = await provisioningRepository(db).eligibleOfferings(projectId, ACCOUNT_OFFERING_TYPES)
  return rows.filter(offeringKeepsAccounts)
}

/**
 * Every member of the project gets an account on the offering of a resource just brought to life,
 * if it gives accounts (`offeringGivesAccounts`). The project's other offerings are not looked at:
 * their accounts were given when their resources came to life or the member joined, so the work
 * does not grow with the project's resources. The offering is the one read with the order, so an
 * offering that keeps no accounts costs no statement. Call it in the transaction that brought the
 * resource to life.
 */
export async function ensureOfferingUsersForResource(
  ctx: AppContext,
  db: Db,
  projectId: number,
  offering: Offering & { type: string },
): Promise<void> {
  if (!offeringGivesAccounts(offering)) return
  const members = await provisioningRepository(db).projectMembers(projectId, ctx.clock().toISOString())
  for (const member of members) await createOrRestore(ctx, db, offering, member)
}

/** The user, just given a role on the project, gets an account on each of its eligible offerings. */
export async function ensureOfferingUsersForMember(
  ctx: AppContext,
  db: Db,
  userId: number,
  projectId: number,
): Promise<void> {
  const offerings = await eligibleOfferings(db, projectId)
  if (!offerings.length) return
  const user = await provisioningRepository(db).userById(userId)
  if (!user) return
  for (const offering of offerings) await createOrRestore(ctx, db, offering, user)
}

/**
 * After the user lost a project role: each of the user's accounts on an offering whose plugin
 * options set `offering_user_auto_deletion`, with no resource of the offering (not Terminated)
 * left in a project the user reaches, is asked to be deleted (`Requested deletion`); one never
 * created on the backend (still `Requested`) is simply `Deleted`.
 */
export async function releaseOfferingUsersOf(ctx: AppContext, db: Db, userId: number): Promise<void> {
  const now = ctx.clock().toISOString()
  const states: OfferingUserState[] = ['OK', ...CREATION_STATES]
  const accounts = await provisioningRepository(db).accountsOf(userId, states, now)
  for (const a of accounts) {
    if (options(a).offering_user_auto_deletion !== true || toBool(a.has_access)) continue
    if (a.state === 'Requested')
      await moveOfferingUser(ctx, db, a.id, ['Requested'], { state: 'Deleted', modified: now })
    else await moveOfferingUser(ctx, db, a.id, [a.state], { state: 'Requested deletion', modified: now })
  }
}

export interface AccountOfUser {
  uuid: string
  username: string | null
  state: OfferingUserState
}

/** The accounts of these users on the offering, by user id (users without one are absent). */
export async function offeringUsersFor(
  db: Db,
  offeringId: number,
  userIds: readonly number[],
): Promise<Map<number, AccountOfUser>> {
  const rows = await offeringUsersRepository(db).ofUsers(offeringId, userIds)
  return new Map(
    rows.map((r) => [r.user_id, { uuid: r.uuid, username: r.username, state: r.state as OfferingUserState }]),
  )
}

/** The users (by id) whose account on an offering has each of these usernames. */
export async function usersByOfferingUsername(
  db: Db,
  offeringId: number,
  usernames: readonly string[],
): Promise<Map<string, number>> {
  const rows = await offeringUsersRepository(db).usersWithUsernames(offeringId, usernames)
  return new Map(rows.map((r) => [r.username ?? '', r.user_id]))
}
