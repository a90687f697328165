// Directory use cases. Other areas call the exported helpers here (resolving a project link the
// caller may see, granting a role, creating a project) instead of touching these tables.
import { timingSafeEqual } from 'node:crypto'
import type { Kysely, Transaction } from 'kysely'
import type { AppContext } from '../../context.js'
import type { DB } from '../../db/tables.js'
import { fromBool, parseJson, toBool, toJson } from '../../db/values.js'
import { AppError, fieldError, forbidden, nonFieldError, notFound } from '../../http/errors.js'
import { generateTokenKey, hashPassword, hashToken, verifyPassword } from '../../http/auth.js'
import { urlOf, uuidFromLink, invalidHyperlink } from '../../http/links.js'
import {
  requireStaff,
  can,
  connectedCustomerIds,
  customerIds,
  projectIds,
  ROLE_NAMES,
  ROLE_SCOPE,
  seesAll,
  type Actor,
  type RoleName,
  type ScopeType,
} from '../../http/permissions.js'
import { normalizeUuid } from '../../http/uuid.js'
import { parseDateTime, type OrderTerm } from '../../http/query.js'
import {
  customersRepository,
  grantsRepository,
  organizationGroupsRepository,
  projectsRepository,
  rolesRepository,
  usersRepository,
  type CustomerFilters,
  type GrantFilters,
  type ProjectFilters,
  type UserFilters,
  type Visibility,
} from './repository.js'
import {
  PATHS,
  type Customer,
  type CustomerWrite,
  type GrantRecord,
  type OrganizationGroup,
  type Project,
  type ProjectWrite,
  type Role,
  type User,
  type UserCreate,
  type UserUpdate,
} from './schema.js'
import { slugify } from '../../http/slug.js'

type Db = Kysely<DB> | Transaction<DB>

export function visibilityOf(actor: Actor): Visibility {
  if (seesAll(actor)) return { all: true }
  return { all: false, userId: actor.id, customerIds: customerIds(actor), projectIds: projectIds(actor) }
}

// ---- mappers ----

type UserRow = NonNullable<Awaited<ReturnType<ReturnType<typeof usersRepository>['findById']>>>
export function toUser(base: string, r: UserRow): User {
  return {
    url: urlOf(base, PATHS.users, r.uuid)!,
    uuid: r.uuid,
    username: r.username,
    email: r.email,
    full_name: r.full_name,
    civil_number: r.civil_number,
    is_staff: toBool(r.is_staff),
    is_support: toBool(r.is_support),
    is_active: toBool(r.is_active),
    affiliations: parseJson<string[]>(r.affiliations, []),
    identity_source: r.identity_source,
    image: r.image,
    pending_email: r.pending_email ?? null,
    created: r.created,
    modified: r.modified,
  }
}

type CustomerRow = NonNullable<Awaited<ReturnType<ReturnType<typeof customersRepository>['findById']>>>
function toCustomer(base: string, r: CustomerRow & { projects_count?: unknown }, groups: string[]): Customer {
  return {
    url: urlOf(base, PATHS.customers, r.uuid)!,
    uuid: r.uuid,
    name: r.name,
    abbreviation: r.abbreviation,
    native_name: r.native_name,
    slug: r.slug,
    email: r.email,
    image: r.image,
    blocked: toBool(r.blocked),
    archived: toBool(r.archived),
    organization_groups: groups.map((g) => urlOf(base, PATHS.organizationGroups, g)!),
    projects_count: Number(r.projects_count ?? 0),
    created: r.created,
    modified: r.modified,
  }
}

type ProjectRow = NonNullable<Awaited<ReturnType<ReturnType<typeof projectsRepository>['findById']>>>
export function toProject(base: string, r: ProjectRow): Project {
  return {
    url: urlOf(base, PATHS.projects, r.uuid)!,
    uuid: r.uuid,
    name: r.name,
    customer: urlOf(base, PATHS.customers, r.customer_uuid)!,
    customer_uuid: r.customer_uuid,
    customer_name: r.customer_name,
    customer_abbreviation: r.customer_abbreviation,
    customer_native_name: r.customer_native_name,
    description: r.description,
    slug: r.slug,
    start_date: r.start_date,
    end_date: r.end_date,
    created: r.created,
    modified: r.modified,
  }
}

type RoleRow = NonNullable<Awaited<ReturnType<ReturnType<typeof rolesRepository>['findById']>>>
export function toRole(base: string, r: RoleRow): Role {
  return {
    url: urlOf(base, PATHS.roles, r.uuid)!,
    uuid: r.uuid,
    name: r.name,
    description: r.description,
    content_type: r.content_type,
    is_active: toBool(r.is_active),
  }
}

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

export async function listUsers(
  ctx: AppContext,
  actor: Actor,
  f: UserFilters,
  order: OrderTerm[],
  base: string,
  page: (count: () => Promise<number>, fetch: (l: number, o: number) => Promise<User[]>) => Promise<User[]>,
): Promise<User[]> {
  const repo = usersRepository(ctx.db)
  const vis = visibilityOf(actor)
  return page(
    () => repo.count(vis, f),
    async (l, o) => (await repo.list(vis, f, order, l, o)).map((r) => toUser(base, r)),
  )
}

async function findVisibleUser(ctx: AppContext, actor: Actor, uuid: string): Promise<UserRow> {
  const id = normalizeUuid(uuid)
  const row = id ? await usersRepository(ctx.db).findByUuid(id) : undefined
  if (!row || (!seesAll(actor) && row.id !== actor.id)) throw notFound('No User matches the given query.')
  return row
}

export async function getUser(ctx: AppContext, actor: Actor, uuid: string, base: string): Promise<User> {
  return toUser(base, await findVisibleUser(ctx, actor, uuid))
}

export async function getMe(ctx: AppContext, actor: Actor, base: string): Promise<User> {
  const row = await usersRepository(ctx.db).findById(actor.id)
  if (!row) throw notFound('No User matches the given query.')
  return toUser(base, row)
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
  await db
    .insertInto('events')
    .values({
      uuid: ctx.newUuid(),
      event_type: EMAIL_CONFIRMATION_EVENT,
      message: `Confirm the e-mail address ${email} of user ${user.username}.`,
      recipient_user_id: null,
      context: toJson({ user_uuid: user.uuid, email, token }),
      created: ctx.clock().toISOString(),
    })
    .execute()
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
  const r = await ctx.db
    .updateTable('users')
    .set({
      email: row.pending_email,
      pending_email: null,
      email_token_hash: null,
      email_token_expires: null,
      modified: ctx.clock().toISOString(),
    })
    .where('id', '=', row.id)
    .where('pending_email', '=', row.pending_email)
    .executeTakeFirst()
  if (Number(r.numUpdatedRows) === 0)
    throw nonFieldError('There is no e-mail address waiting for confirmation.')
  ctx.actorsChanged()
  return toUser(base, (await usersRepository(ctx.db).findById(row.id))!)
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
): Promise<void> {
  const row = await findVisibleUser(ctx, actor, uuid)
  if (!actor.isStaff && row.id !== actor.id) throw forbidden()
  await usersRepository(ctx.db).update(row.id, {
    password_hash: await hashPassword(password),
    modified: ctx.clock().toISOString(),
  })
}

// ---- organization groups ----

type GroupRow = NonNullable<
  Awaited<ReturnType<ReturnType<typeof organizationGroupsRepository>['findByUuid']>>
>
function toGroup(base: string, r: GroupRow): OrganizationGroup {
  return {
    url: urlOf(base, PATHS.organizationGroups, r.uuid)!,
    uuid: r.uuid,
    name: r.name,
    parent: urlOf(base, PATHS.organizationGroups, r.parent_uuid),
    parent_uuid: r.parent_uuid ?? null,
    parent_name: r.parent_name ?? null,
    customers_count: Number(r.customers_count ?? 0),
    created: r.created,
  }
}

export async function listOrganizationGroups(
  ctx: AppContext,
  f: { name?: string; parent_uuid?: string },
  order: OrderTerm[],
  base: string,
  page: (
    count: () => Promise<number>,
    fetch: (l: number, o: number) => Promise<OrganizationGroup[]>,
  ) => Promise<OrganizationGroup[]>,
) {
  const repo = organizationGroupsRepository(ctx.db)
  return page(
    () => repo.count(f),
    async (l, o) => (await repo.list(f, order, l, o)).map((r) => toGroup(base, r)),
  )
}

async function findGroup(ctx: AppContext, uuid: string): Promise<GroupRow> {
  const id = normalizeUuid(uuid)
  const row = id ? await organizationGroupsRepository(ctx.db).findByUuid(id) : undefined
  if (!row) throw notFound('No OrganizationGroup matches the given query.')
  return row
}

export async function getOrganizationGroup(ctx: AppContext, uuid: string, base: string) {
  return toGroup(base, await findGroup(ctx, uuid))
}

async function resolveGroupLink(ctx: AppContext, field: string, value: unknown): Promise<number> {
  const uuid = uuidFromLink(value, PATHS.organizationGroups)
  if (!uuid) throw fieldError(field, 'Invalid hyperlink - Incorrect URL match.')
  const row = await organizationGroupsRepository(ctx.db).findByUuid(uuid)
  if (!row) throw invalidHyperlink(field)
  return row.id
}

/** Resolves organization group links (used by customers and cost policies). */
export async function resolveOrganizationGroups(
  ctx: AppContext,
  field: string,
  links: unknown[],
): Promise<number[]> {
  const ids: number[] = []
  for (const l of links) ids.push(await resolveGroupLink(ctx, field, l))
  return ids
}

export async function createOrganizationGroup(
  ctx: AppContext,
  actor: Actor,
  body: { name: string; parent?: string | null },
  base: string,
) {
  requireStaff(actor)
  const repo = organizationGroupsRepository(ctx.db)
  const parentId = body.parent ? await resolveGroupLink(ctx, 'parent', body.parent) : null
  const now = ctx.clock().toISOString()
  const uuid = ctx.newUuid()
  await repo.insert({ uuid, name: body.name, parent_id: parentId, created: now, modified: now })
  return toGroup(base, (await repo.findByUuid(uuid))!)
}

export async function updateOrganizationGroup(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: { name?: string; parent?: string | null },
  base: string,
) {
  const row = await findGroup(ctx, uuid)
  requireStaff(actor)
  const repo = organizationGroupsRepository(ctx.db)
  const values: Record<string, unknown> = { modified: ctx.clock().toISOString() }
  if (body.name !== undefined) values.name = body.name
  if (body.parent !== undefined) {
    const parentId = body.parent ? await resolveGroupLink(ctx, 'parent', body.parent) : null
    if (parentId !== null && (parentId === row.id || (await repo.ancestorIds(parentId)).includes(row.id))) {
      throw fieldError('parent', 'A group cannot be its own ancestor.')
    }
    values.parent_id = parentId
  }
  await repo.update(row.id, values)
  return toGroup(base, (await repo.findByUuid(row.uuid))!)
}

export async function deleteOrganizationGroup(ctx: AppContext, actor: Actor, uuid: string) {
  const row = await findGroup(ctx, uuid)
  requireStaff(actor)
  await organizationGroupsRepository(ctx.db).delete(row.id)
}

// ---- customers ----

export async function listCustomers(
  ctx: AppContext,
  actor: Actor,
  f: CustomerFilters,
  order: OrderTerm[],
  base: string,
  page: (
    count: () => Promise<number>,
    fetch: (l: number, o: number) => Promise<Customer[]>,
  ) => Promise<Customer[]>,
) {
  const repo = customersRepository(ctx.db)
  const vis = visibilityOf(actor)
  return page(
    () => repo.count(vis, f),
    async (l, o) => {
      const rows = await repo.list(vis, f, order, l, o)
      const groups = await repo.groupUuids(rows.map((r) => r.id))
      return rows.map((r) => toCustomer(base, r as unknown as CustomerRow, groups.get(r.id) ?? []))
    },
  )
}

async function findVisibleCustomer(ctx: AppContext, actor: Actor, uuid: string) {
  const id = normalizeUuid(uuid)
  const row = id ? await customersRepository(ctx.db).findVisibleByUuid(visibilityOf(actor), id) : undefined
  if (!row) throw notFound('No Customer matches the given query.')
  return row
}

async function customerRecord(ctx: AppContext, id: number, base: string): Promise<Customer> {
  const repo = customersRepository(ctx.db)
  const row = await repo.findVisibleByUuid({ all: true }, (await repo.findById(id))!.uuid)
  const groups = await repo.groupUuids([id])
  return toCustomer(base, row, groups.get(id) ?? [])
}

export async function getCustomer(ctx: AppContext, actor: Actor, uuid: string, base: string) {
  const row = await findVisibleCustomer(ctx, actor, uuid)
  return customerRecord(ctx, row.id, base)
}

export async function createCustomer(
  ctx: AppContext,
  actor: Actor,
  body: CustomerWrite & { name: string },
  base: string,
) {
  requireStaff(actor)
  const groupIds = body.organization_groups
    ? await resolveOrganizationGroups(ctx, 'organization_groups', body.organization_groups)
    : []
  const now = ctx.clock().toISOString()
  const id = await ctx.db.transaction().execute(async (trx) => {
    const repo = customersRepository(trx)
    const newId = await repo.insert({
      uuid: ctx.newUuid(),
      name: body.name,
      abbreviation: body.abbreviation ?? '',
      native_name: body.native_name ?? '',
      slug: body.slug || slugify(body.name, 'item'),
      email: body.email ?? '',
      image: body.image ?? null,
      blocked: fromBool(body.blocked),
      archived: fromBool(body.archived),
      created: now,
      modified: now,
    })
    await repo.setGroups(newId, groupIds)
    return newId
  })
  return customerRecord(ctx, id, base)
}

export async function updateCustomer(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: CustomerWrite,
  base: string,
) {
  const row = await findVisibleCustomer(ctx, actor, uuid)
  if (!can(actor, 'CUSTOMER.UPDATE', { customerId: row.id })) throw forbidden()
  for (const staffOnly of ['blocked', 'archived', 'organization_groups'] as const) {
    if (body[staffOnly] !== undefined && !actor.isStaff)
      throw fieldError(staffOnly, 'Only staff can change this field.')
  }
  const groupIds =
    body.organization_groups !== undefined
      ? await resolveOrganizationGroups(ctx, 'organization_groups', body.organization_groups)
      : null
  await ctx.db.transaction().execute(async (trx) => {
    const repo = customersRepository(trx)
    const values: Record<string, unknown> = { modified: ctx.clock().toISOString() }
    for (const k of ['name', 'abbreviation', 'native_name', 'slug', 'email', 'image'] as const) {
      if (body[k] !== undefined) values[k] = body[k]
    }
    if (body.blocked !== undefined) values.blocked = fromBool(body.blocked)
    if (body.archived !== undefined) values.archived = fromBool(body.archived)
    await repo.update(row.id, values)
    if (groupIds) await repo.setGroups(row.id, groupIds)
  })
  return customerRecord(ctx, row.id, base)
}

export async function deleteCustomer(ctx: AppContext, actor: Actor, uuid: string) {
  const row = await findVisibleCustomer(ctx, actor, uuid)
  requireStaff(actor)
  if (Number(row.projects_count ?? 0) > 0) {
    throw new AppError('conflict', 'Cannot delete organization with existing projects')
  }
  await customersRepository(ctx.db).delete(row.id)
  ctx.actorsChanged()
}

/** The customer row behind a link, or 400 on `field` when unknown or not visible to the actor. */
export async function resolveCustomerLink(
  ctx: AppContext,
  actor: Actor | null,
  field: string,
  value: unknown,
) {
  const uuid = uuidFromLink(value, PATHS.customers)
  if (typeof value !== 'string') throw fieldError(field, 'Incorrect type. Expected URL string.')
  if (!uuid) throw fieldError(field, 'Invalid hyperlink - Incorrect URL match.')
  const repo = customersRepository(ctx.db)
  const row = actor ? await repo.findVisibleByUuid(visibilityOf(actor), uuid) : await repo.findByUuid(uuid)
  if (!row) throw invalidHyperlink(field)
  return row
}

export async function findCustomerById(ctx: AppContext, id: number) {
  return customersRepository(ctx.db).findById(id)
}

export async function findCustomerByUuid(ctx: AppContext, uuid: string) {
  return customersRepository(ctx.db).findByUuid(uuid)
}

// ---- projects ----

export async function listProjects(
  ctx: AppContext,
  actor: Actor,
  f: ProjectFilters,
  order: OrderTerm[],
  base: string,
  page: (
    count: () => Promise<number>,
    fetch: (l: number, o: number) => Promise<Project[]>,
  ) => Promise<Project[]>,
) {
  const repo = projectsRepository(ctx.db)
  const vis = visibilityOf(actor)
  return page(
    () => repo.count(vis, f),
    async (l, o) => (await repo.list(vis, f, order, l, o)).map((r) => toProject(base, r)),
  )
}

async function findVisibleProject(ctx: AppContext, actor: Actor, uuid: string) {
  const id = normalizeUuid(uuid)
  const row = id ? await projectsRepository(ctx.db).findVisibleByUuid(visibilityOf(actor), id) : undefined
  if (!row) throw notFound('No Project matches the given query.')
  return row
}

export async function getProject(ctx: AppContext, actor: Actor, uuid: string, base: string) {
  return toProject(base, await findVisibleProject(ctx, actor, uuid))
}

function checkDates(start: string | null | undefined, end: string | null | undefined) {
  if (start && end && end < start)
    throw fieldError('end_date', 'End date must not be earlier than start date.')
}

export async function createProject(
  ctx: AppContext,
  actor: Actor,
  body: ProjectWrite & { name: string; customer: string },
  base: string,
) {
  const customer = await resolveCustomerLink(ctx, actor, 'customer', body.customer)
  if (!can(actor, 'PROJECT.CREATE', { customerId: customer.id })) throw forbidden()
  checkDates(body.start_date, body.end_date)
  const id = await insertProject(ctx, ctx.db, {
    name: body.name,
    customerId: customer.id,
    description: body.description,
    slug: body.slug,
    start_date: body.start_date ?? null,
    end_date: body.end_date ?? null,
  })
  return toProject(base, (await projectsRepository(ctx.db).findById(id))!)
}

/** Inserts a project (also used when an invitation auto-creates one). */
export async function insertProject(
  ctx: AppContext,
  db: Db,
  p: {
    name: string
    customerId: number
    description?: string
    slug?: string
    start_date?: string | null
    end_date?: string | null
  },
): Promise<number> {
  const now = ctx.clock().toISOString()
  return projectsRepository(db).insert({
    uuid: ctx.newUuid(),
    name: p.name,
    customer_id: p.customerId,
    description: p.description ?? '',
    slug: p.slug || slugify(p.name, 'item'),
    start_date: p.start_date ?? null,
    end_date: p.end_date ?? null,
    created: now,
    modified: now,
  })
}

/** Longest name given to a new project before a number is added to make it unique. */
const MAX_BASE_NAME = 480

/**
 * A new project in the customer, named `name` or, when a project of that name exists,
 * `name 2`, `name 3`… (the first free one). Never an existing project.
 */
export async function createProjectWithFreeName(
  ctx: AppContext,
  db: Db,
  name: string,
  customerId: number,
): Promise<number> {
  const base = name.slice(0, MAX_BASE_NAME)
  const taken = new Set(await projectsRepository(db).namesStartingWith(base, customerId))
  let free = base
  for (let n = 2; taken.has(free); n++) free = `${base} ${n}`
  return insertProject(ctx, db, { name: free, customerId })
}

export async function updateProject(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: ProjectWrite,
  base: string,
) {
  const row = await findVisibleProject(ctx, actor, uuid)
  if (!can(actor, 'PROJECT.UPDATE', { customerId: row.customer_id, projectId: row.id })) throw forbidden()
  const values: Record<string, unknown> = { modified: ctx.clock().toISOString() }
  if (body.customer !== undefined) {
    const customer = await resolveCustomerLink(ctx, actor, 'customer', body.customer)
    if (customer.id !== row.customer_id) {
      if (!actor.isStaff)
        throw fieldError('customer', 'Only staff can move a project to another organization.')
      values.customer_id = customer.id
    }
  }
  for (const k of ['name', 'description', 'slug', 'start_date', 'end_date'] as const) {
    if (body[k] !== undefined) values[k] = body[k]
  }
  checkDates(
    body.start_date !== undefined ? body.start_date : row.start_date,
    body.end_date !== undefined ? body.end_date : row.end_date,
  )
  await projectsRepository(ctx.db).update(row.id, values)
  ctx.actorsChanged()
  return toProject(base, (await projectsRepository(ctx.db).findById(row.id))!)
}

export async function deleteProject(ctx: AppContext, actor: Actor, uuid: string) {
  const row = await findVisibleProject(ctx, actor, uuid)
  if (!can(actor, 'PROJECT.DELETE', { customerId: row.customer_id })) throw forbidden()
  await projectsRepository(ctx.db).delete(row.id)
  ctx.actorsChanged()
}

/** The project behind a link if the actor may see it; else 400 "Invalid hyperlink" on `field`. */
export async function resolveProjectLink(ctx: AppContext, actor: Actor, field: string, value: unknown) {
  if (typeof value !== 'string') throw fieldError(field, 'Incorrect type. Expected URL string.')
  const uuid = uuidFromLink(value, PATHS.projects)
  if (!uuid) throw fieldError(field, 'Invalid hyperlink - Incorrect URL match.')
  const row = await projectsRepository(ctx.db).findVisibleByUuid(visibilityOf(actor), uuid)
  if (!row) throw invalidHyperlink(field)
  return row
}

export async function findProjectById(ctx: AppContext, id: number) {
  return projectsRepository(ctx.db).findById(id)
}

export async function findProjectByUuid(ctx: AppContext, uuid: string) {
  return projectsRepository(ctx.db).findByUuid(uuid)
}

/** Every project of a customer (invitation `projects/`). */
export async function projectsOfCustomer(ctx: AppContext, customerId: number) {
  return ctx.db
    .selectFrom('projects')
    .select(['uuid'])
    .where('customer_id', '=', customerId)
    .orderBy('id')
    .execute()
}

// ---- roles ----

export async function listRoles(
  ctx: AppContext,
  f: { name?: string; content_type?: string },
  base: string,
  page: (count: () => Promise<number>, fetch: (l: number, o: number) => Promise<Role[]>) => Promise<Role[]>,
) {
  const repo = rolesRepository(ctx.db)
  return page(
    () => repo.count(f),
    async (l, o) => (await repo.list(f, l, o)).map((r) => toRole(base, r)),
  )
}

export async function getRole(ctx: AppContext, uuid: string, base: string) {
  const id = normalizeUuid(uuid)
  const row = id ? await rolesRepository(ctx.db).findByUuid(id) : undefined
  if (!row) throw notFound('No Role matches the given query.')
  return toRole(base, row)
}

export async function updateRole(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: { description?: string },
  base: string,
) {
  const role = await getRole(ctx, uuid, base)
  requireStaff(actor)
  const row = (await rolesRepository(ctx.db).findByUuid(role.uuid))!
  if (body.description !== undefined)
    await rolesRepository(ctx.db).update(row.id, { description: body.description })
  return toRole(base, (await rolesRepository(ctx.db).findByUuid(role.uuid))!)
}

/** A role by name or uuid, or 400 on `field`. */
export async function resolveRole(ctx: AppContext, field: string, value: string) {
  const repo = rolesRepository(ctx.db)
  const uuid = normalizeUuid(value)
  const row = uuid ? await repo.findByUuid(uuid) : await repo.findByName(value)
  if (!row || !toBool(row.is_active)) throw fieldError(field, `Role "${value}" does not exist.`)
  return row
}

export async function findRoleById(ctx: AppContext, id: number) {
  return rolesRepository(ctx.db).findById(id)
}

// ---- role grants ----

export interface GrantScope {
  type: ScopeType
  id: number
  uuid: string
  name: string
}

/** Grants `roleName` on a scope (idempotent for an active identical grant); used by invitations too. */
export async function grantRole(
  ctx: AppContext,
  db: Db,
  g: {
    userId: number
    roleId: number
    scope: GrantScope
    createdById: number | null
    expiration: string | null
  },
): Promise<boolean> {
  const repo = grantsRepository(db)
  const existing = await repo.findActive(g.userId, g.roleId, g.scope.type, g.scope.id)
  if (existing) return false
  const inserted = await repo.insert({
    uuid: ctx.newUuid(),
    user_id: g.userId,
    role_id: g.roleId,
    scope_type: g.scope.type,
    scope_id: g.scope.id,
    expiration_time: g.expiration,
    created_by_id: g.createdById,
    created: ctx.clock().toISOString(),
  })
  if (inserted) ctx.actorsChanged()
  return inserted
}

/** Does the user already hold this role on this scope? */
export async function hasActiveGrant(
  ctx: AppContext,
  userId: number,
  roleId: number,
  scopeType: ScopeType,
  scopeId: number,
) {
  return !!(await grantsRepository(ctx.db).findActive(userId, roleId, scopeType, scopeId))
}

/** Users holding one of these roles on a scope (e.g. a customer's owners, to notify them). */
export async function userIdsWithRole(
  ctx: AppContext,
  scopeType: ScopeType,
  scopeId: number,
  roles: RoleName[],
) {
  return grantsRepository(ctx.db).userIdsWithRole(scopeType, scopeId, roles, ctx.clock().toISOString())
}

async function grantTarget(ctx: AppContext, body: { user: string; role: string }, scope: GrantScope) {
  const userUuid = normalizeUuid(body.user)
  const user = userUuid ? await usersRepository(ctx.db).findByUuid(userUuid) : undefined
  if (!user) throw fieldError('user', 'User does not exist.')
  const role = await resolveRole(ctx, 'role', body.role)
  if (
    !(ROLE_NAMES as readonly string[]).includes(role.name) ||
    ROLE_SCOPE[role.name as RoleName] !== scope.type
  ) {
    throw fieldError('role', `Role ${role.name} cannot be granted on a ${scope.type}.`)
  }
  return { user, role }
}

function parseExpiration(ctx: AppContext, v: string | null | undefined): string | null {
  if (v === null || v === undefined) return null
  const parsed = parseDateTime(v)
  if (!parsed) throw fieldError('expiration_time', 'Enter a valid date/time.')
  if (parsed <= ctx.clock().toISOString())
    throw fieldError('expiration_time', 'Expiration time should be in the future.')
  return parsed
}

/** `add_user` on a customer, project or offering: 201 with the grant. */
export async function addUser(
  ctx: AppContext,
  actor: Actor,
  scope: GrantScope,
  body: { user: string; role: string; expiration_time?: string | null },
  base: string,
): Promise<GrantRecord> {
  const { user, role } = await grantTarget(ctx, body, scope)
  const expiration = parseExpiration(ctx, body.expiration_time)
  const repo = grantsRepository(ctx.db)
  const granted = await grantRole(ctx, ctx.db, {
    userId: user.id,
    roleId: role.id,
    scope,
    createdById: actor.id,
    expiration,
  })
  // Also the answer for every loser of a race: the database keeps one active grant per triple.
  if (!granted) throw nonFieldError('User already has this role in this scope.')
  const rows = await repo.list(scope.type, scope.id, { roleId: role.id, user_uuid: user.uuid }, 1, 0)
  return toGrant(rows[0]!, scope, base)
}

/** `delete_user`: revokes an active grant (404-free: 400 when there is none). */
export async function deleteUserGrant(
  ctx: AppContext,
  scope: GrantScope,
  body: { user: string; role: string },
) {
  const { user, role } = await grantTarget(ctx, body, scope)
  const repo = grantsRepository(ctx.db)
  // Every active grant of the triple ends (rows from before the one-grant rule included).
  const ended = await repo.deactivateAll(user.id, role.id, scope.type, scope.id)
  if (!ended) throw nonFieldError('User does not have this role in this scope.')
  ctx.actorsChanged()
}

type GrantRow = Awaited<ReturnType<ReturnType<typeof grantsRepository>['list']>>[number]
function toGrant(r: GrantRow, scope: GrantScope, _base: string): GrantRecord {
  return {
    uuid: r.uuid,
    user_uuid: r.user_uuid,
    user_username: r.user_username,
    user_full_name: r.user_full_name,
    user_email: r.user_email,
    role_name: r.role_name,
    role_uuid: r.role_uuid,
    scope_type: scope.type,
    scope_uuid: scope.uuid,
    scope_name: scope.name,
    expiration_time: r.expiration_time,
    created: r.created,
    created_by_full_name: r.created_by_full_name ?? null,
  }
}

export async function listGrants(
  ctx: AppContext,
  scope: GrantScope,
  f: { role?: string; user_uuid?: string; user_username?: string },
  base: string,
  page: (
    count: () => Promise<number>,
    fetch: (l: number, o: number) => Promise<GrantRecord[]>,
  ) => Promise<GrantRecord[]>,
) {
  const filters: GrantFilters = { user_uuid: f.user_uuid, user_username: f.user_username }
  if (f.role) filters.roleId = (await resolveRole(ctx, 'role', f.role)).id
  const repo = grantsRepository(ctx.db)
  return page(
    () => repo.count(scope.type, scope.id, filters),
    async (l, o) =>
      (await repo.list(scope.type, scope.id, filters, l, o)).map((r) => toGrant(r, scope, base)),
  )
}

/** The customer or project a grant call is made on, with the permission check of its owners. */
export async function grantScopeFor(
  ctx: AppContext,
  actor: Actor,
  kind: 'customer' | 'project',
  uuid: string,
  write: boolean,
): Promise<GrantScope> {
  if (kind === 'customer') {
    const c = await findVisibleCustomer(ctx, actor, uuid)
    if (write && !can(actor, 'CUSTOMER.CREATE_PERMISSION', { customerId: c.id })) throw forbidden()
    return { type: 'customer', id: c.id, uuid: c.uuid, name: c.name }
  }
  const p = await findVisibleProject(ctx, actor, uuid)
  if (write && !can(actor, 'PROJECT.CREATE_PERMISSION', { customerId: p.customer_id, projectId: p.id }))
    throw forbidden()
  return { type: 'project', id: p.id, uuid: p.uuid, name: p.name }
}

/** Customers connected to the actor (customer role or a project role in them). */
export function connectedCustomers(actor: Actor): number[] {
  return connectedCustomerIds(actor)
}
