// Users: logging in, tokens, the user records, e-mail confirmation and passwords.
import { timingSafeEqual } from 'node:crypto'
import type { AppContext } from '../../context.js'
import type { Listing } from '../../db/listing.js'
import { fromBool, parseJson, toBool, toJson } from '../../db/values.js'
import { fieldError, forbidden, nonFieldError } from '../../http/errors.js'
import { generateTokenKey, hashPassword, hashToken, verifyPassword } from '../../http/auth.js'
import { ownLink, recordRenderer } from '../../http/links.js'
import { requireStaff, type Actor } from '../../http/permissions.js'
import { pageOf, type Pager } from '../../http/resource.js'
import { foundById, foundByUuid } from '../../http/uuid.js'
import { visibilityOf } from './access.js'
import { usersRepository, type Db, type Visibility } from './repository.js'
import { PATHS, type User, type UserCreate, type UserUpdate } from './schema.js'

type UserRow = NonNullable<Awaited<ReturnType<ReturnType<typeof usersRepository>['findById']>>>
export const toUser = recordRenderer<UserRow, User>({
  ...ownLink(PATHS.users),
  username: 'copy',
  email: 'copy',
  full_name: 'copy',
  civil_number: 'copy',
  is_staff: 'flag',
  is_support: 'flag',
  is_active: 'flag',
  affiliations: (r) => parseJson<string[]>(r.affiliations, []),
  identity_source: 'copy',
  image: 'copy',
  pending_email: 'copy',
  created: 'copy',
  modified: 'copy',
})

// ---- authentication ----

/** POST /api-auth/password/: a new token for valid credentials. */
export async function obtainToken(ctx: AppContext, username: string, password: string): Promise<string> {
  const user = await usersRepository(ctx.db).findByUsername(username)
  const ok = await verifyPassword(password, user?.password_hash ?? null)
  if (!user || !ok || !toBool(user.is_active)) {
    throw nonFieldError('Unable to log in with provided credentials.')
  }
  return issueToken(ctx, user.id)
}

export async function issueToken(ctx: AppContext, userId: number, key = generateTokenKey()): Promise<string> {
  await usersRepository(ctx.db).insertToken(userId, hashToken(key), ctx.clock().toISOString())
  return key
}

/** BOOTSTRAP_STAFF_TOKEN: a staff user `admin` whose token is `key` (idempotent). */
export async function ensureBootstrapStaff(ctx: AppContext, key: string): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const users = usersRepository(trx)
    const now = ctx.clock().toISOString()
    let admin = await users.findByUsername('admin')
    if (!admin) {
      await users.insert({
        uuid: ctx.newUuid(),
        username: 'admin',
        full_name: 'Administrator',
        is_staff: 1,
        is_active: 1,
        affiliations: '[]',
        created: now,
        modified: now,
      })
      admin = await users.findByUsername('admin')
    } else if (!toBool(admin.is_staff) || !toBool(admin.is_active)) {
      await users.update(admin.id, { is_staff: 1, is_active: 1, modified: now })
    }
    if (!(await users.hasToken(hashToken(key)))) await users.insertToken(admin!.id, hashToken(key), now)
  })
  ctx.actorsChanged()
}

// ---- users ----

export function listUsers(
  ctx: AppContext,
  vis: Visibility,
  listing: Listing,
  base: string,
  page: Pager<User>,
): Promise<User[]> {
  return pageOf(page, usersRepository(ctx.db), vis, listing, (r) => toUser(base, r))
}

function findVisibleUser(ctx: AppContext, actor: Actor, uuid: string): Promise<UserRow> {
  const repo = usersRepository(ctx.db)
  return foundByUuid(uuid, (id) => repo.findVisibleByUuid(visibilityOf(actor), id), 'User')
}

export async function getUser(ctx: AppContext, actor: Actor, uuid: string, base: string): Promise<User> {
  return toUser(base, await findVisibleUser(ctx, actor, uuid))
}

export async function getMe(ctx: AppContext, actor: Actor, base: string): Promise<User> {
  return toUser(base, await foundById(actor.id, usersRepository(ctx.db).findById, 'User'))
}

export async function createUser(
  ctx: AppContext,
  actor: Actor | null,
  body: UserCreate,
  base: string,
): Promise<User> {
  if (actor && !actor.isStaff) throw forbidden()
  const repo = usersRepository(ctx.db)
  if (await repo.findByUsername(body.username))
    throw fieldError('username', 'A user with that username already exists.')
  const now = ctx.clock().toISOString()
  const id = await repo.insert({
    uuid: ctx.newUuid(),
    username: body.username,
    email: body.email ?? '',
    full_name: body.full_name ?? '',
    civil_number: body.civil_number ?? null,
    is_staff: fromBool(body.is_staff),
    is_support: fromBool(body.is_support),
    is_active: fromBool(body.is_active ?? true),
    affiliations: toJson(body.affiliations ?? []),
    identity_source: body.identity_source ?? '',
    image: body.image ?? null,
    password_hash: body.password ? await hashPassword(body.password) : null,
    created: now,
    modified: now,
  })
  return toUser(base, (await repo.findById(id))!)
}

const SELF_EDITABLE = new Set(['email', 'full_name', 'image', 'civil_number'])

export async function updateUser(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: UserUpdate,
  base: string,
): Promise<User> {
  const row = await findVisibleUser(ctx, actor, uuid)
  if (!actor.isStaff) {
    if (row.id !== actor.id) throw forbidden()
    const denied = Object.keys(body).filter((k) => !SELF_EDITABLE.has(k))
    if (denied.length) throw fieldError(denied[0]!, 'Only staff can change this field.')
  }
  const repo = usersRepository(ctx.db)
  if (body.username && body.username !== row.username && (await repo.findByUsername(body.username))) {
    throw fieldError('username', 'A user with that username already exists.')
  }
  const now = ctx.clock().toISOString()
  const values: Record<string, unknown> = { modified: now }
  for (const k of ['username', 'email', 'full_name', 'civil_number', 'identity_source', 'image'] as const) {
    if (body[k] !== undefined) values[k] = body[k]
  }
  let confirmation: string | null = null
  if (body.email !== undefined) {
    // Staff set an address outright; a user's own new address waits for confirmation (clearing
    // it, or going back to the current one, needs none).
    const pendingCleared = { pending_email: null, email_token_hash: null, email_token_expires: null }
    if (actor.isStaff || body.email === '' || body.email === row.email) {
      Object.assign(values, pendingCleared)
    } else {
      delete values.email
      confirmation = generateTokenKey()
      Object.assign(values, {
        pending_email: body.email,
        email_token_hash: hashToken(confirmation),
        email_token_expires: new Date(ctx.clock().getTime() + EMAIL_TOKEN_TTL_MS).toISOString(),
      })
    }
  }
  for (const k of ['is_staff', 'is_support', 'is_active'] as const) {
    if (body[k] !== undefined) values[k] = fromBool(body[k])
  }
  if (body.affiliations !== undefined) values.affiliations = toJson(body.affiliations)
  await ctx.db.transaction().execute(async (trx) => {
    await usersRepository(trx).update(row.id, values)
    if (confirmation) await recordEmailConfirmation(ctx, trx, row, String(values.pending_email), confirmation)
  })
  ctx.actorsChanged()
  return toUser(base, (await repo.findById(row.id))!)
}

/** How long an e-mail confirmation token is accepted. */
export const EMAIL_TOKEN_TTL_MS = 48 * 3600 * 1000

/**
 * The server sends no mail: the confirmation to deliver to the new address is written as an
 * event (`users.email_confirmation`, no recipient, the token in its context) for a mail relay or
 * an operator to pass on. The user's own API never shows it.
 */
async function recordEmailConfirmation(ctx: AppContext, db: Db, user: UserRow, email: string, token: string) {
  await usersRepository(db).insertEvent({
    uuid: ctx.newUuid(),
    event_type: EMAIL_CONFIRMATION_EVENT,
    message: `Confirm the e-mail address ${email} of user ${user.username}.`,
    context: toJson({ user_uuid: user.uuid, email, token }),
    created: ctx.clock().toISOString(),
  })
}

export const EMAIL_CONFIRMATION_EVENT = 'users.email_confirmation'

/**
 * POST /api/users/{uuid}/confirm_email/: the user with the token it was sent, or staff without
 * one, makes the pending address the user's e-mail.
 */
export async function confirmEmail(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  token: string | undefined,
  base: string,
): Promise<User> {
  const row = await findVisibleUser(ctx, actor, uuid)
  if (!actor.isStaff && row.id !== actor.id) throw forbidden()
  if (!row.pending_email) throw nonFieldError('There is no e-mail address waiting for confirmation.')
  if (!actor.isStaff || token !== undefined) {
    if (!token) throw fieldError('token', 'This field is required.')
    const now = ctx.clock().toISOString()
    const valid =
      row.email_token_hash !== null &&
      safeEqual(hashToken(token), row.email_token_hash) &&
      !!row.email_token_expires &&
      row.email_token_expires > now
    if (!valid) throw fieldError('token', 'Invalid or expired token.')
  }
  // Conditional on the pending address the token was issued for: a change in between wins.
  const repo = usersRepository(ctx.db)
  if (!(await repo.confirmPendingEmail(row.id, row.pending_email, ctx.clock().toISOString())))
    throw nonFieldError('There is no e-mail address waiting for confirmation.')
  ctx.actorsChanged()
  return toUser(base, (await repo.findById(row.id))!)
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

export async function deleteUser(ctx: AppContext, actor: Actor, uuid: string): Promise<void> {
  const row = await findVisibleUser(ctx, actor, uuid)
  requireStaff(actor)
  if (row.id === actor.id) throw nonFieldError('You cannot delete yourself.')
  await usersRepository(ctx.db).delete(row.id)
  ctx.actorsChanged()
}

export async function setPassword(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  password: string,
): Promise<{ detail: string }> {
  const row = await findVisibleUser(ctx, actor, uuid)
  if (!actor.isStaff && row.id !== actor.id) throw forbidden()
  await usersRepository(ctx.db).update(row.id, {
    password_hash: await hashPassword(password),
    modified: ctx.clock().toISOString(),
  })
  return { detail: 'Password has been successfully updated.' }
}
