// Roles, and their grants to users on customers, projects and offerings.
import type { AppContext } from '../../context.js'
import type { Listing } from '../../db/listing.js'
import { toBool } from '../../db/values.js'
import { fieldError, forbidden, nonFieldError } from '../../http/errors.js'
import { foundByUuid } from '../../http/uuid.js'
import { ownLink, recordRenderer } from '../../http/links.js'
import {
  can,
  requireStaff,
  ROLE_NAMES,
  ROLE_SCOPE,
  type Actor,
  type RoleName,
  type ScopeType,
} from '../../http/permissions.js'
import { parseDateTime } from '../../http/query.js'
import { pageOf, type Pager } from '../../http/resource.js'
import { normalizeUuid } from '../../http/uuid.js'
import { ensureOfferingUsersForMember, releaseOfferingUsersOf } from '../offering-users/provisioning.js'
import { findVisibleCustomer } from './customer-service.js'
import { findVisibleProject } from './project-service.js'
import { emitEvent } from '../events/service.js'
import {
  grantsRepository,
  rolesRepository,
  usersRepository,
  type Db,
  type GrantFilters,
} from './repository.js'
import { PATHS, type GrantRecord, type Role } from './schema.js'

type RoleRow = NonNullable<Awaited<ReturnType<ReturnType<typeof rolesRepository>['findById']>>>
export const toRole = recordRenderer<RoleRow, Role>({
  ...ownLink(PATHS.roles),
  name: 'copy',
  description: 'copy',
  content_type: 'copy',
  is_active: 'flag',
})

// ---- roles ----

/** Every role, for any authenticated caller. */
export function listRoles(ctx: AppContext, listing: Listing, base: string, page: Pager<Role>) {
  return pageOf(page, rolesRepository(ctx.db), undefined, listing, (r) => toRole(base, r))
}

function findRole(ctx: AppContext, uuid: string) {
  return foundByUuid(uuid, (id) => rolesRepository(ctx.db).findByUuid(id), 'Role')
}

export async function getRole(ctx: AppContext, uuid: string, base: string) {
  return toRole(base, await findRole(ctx, uuid))
}

export async function updateRole(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: { description?: string },
  base: string,
) {
  const row = await findRole(ctx, uuid)
  requireStaff(actor)
  const repo = rolesRepository(ctx.db)
  if (body.description !== undefined) await repo.update(row.id, { description: body.description })
  return toRole(base, (await repo.findById(row.id))!)
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

/** The path of a grant's scope, by its type. */
const SCOPE_PATHS: Record<ScopeType, string> = {
  customer: PATHS.customers,
  project: PATHS.projects,
  offering: 'marketplace-provider-offerings',
}

/**
 * Tells that grants were made or ended (`role.granted`, `role.revoked`), in the transaction that
 * made or ended them, with what they concern read in one query. Its subject is its scope (the
 * grants are listed under it). `expiration_time` is the grant's, but null on a revocation by
 * `delete_user` (`withExpiration` false).
 */
async function tellGrantChanges(
  ctx: AppContext,
  db: Db,
  change: 'granted' | 'revoked',
  uuids: readonly string[],
  withExpiration: boolean,
): Promise<void> {
  for (const f of await grantsRepository(db).eventFacts(uuids)) {
    const type = f.scope_type as ScopeType
    await emitEvent(ctx, db, {
      type: `role.${change}`,
      objectType: 'role_grant',
      objectUuid: f.uuid,
      path: `/api/${SCOPE_PATHS[type]}/${f.scope_uuid}/`,
      offeringUuid: f.offering_uuid,
      projectUuid: f.project_uuid,
      customerUuid: f.customer_uuid,
      data: {
        user_uuid: f.user_uuid,
        role_name: f.role_name,
        scope_type: type,
        scope_uuid: f.scope_uuid,
        expiration_time: withExpiration ? f.expiration_time : null,
      },
    })
  }
}

/** Grants `roleName` on a scope (idempotent for an active identical grant); used by invitations too. */
export async function grantRole(
  ctx: AppContext,
  db: Db,
  g: {
    userId: number
    roleId: number
    scope: { type: ScopeType; id: number }
    createdById: number | null
    expiration: string | null
  },
): Promise<boolean> {
  const repo = grantsRepository(db)
  const existing = await repo.findActive({
    userId: g.userId,
    roleId: g.roleId,
    scopeType: g.scope.type,
    scopeId: g.scope.id,
  })
  if (existing) return false
  const uuid = ctx.newUuid()
  const inserted = await repo.insert({
    uuid,
    user_id: g.userId,
    role_id: g.roleId,
    scope_type: g.scope.type,
    scope_id: g.scope.id,
    expiration_time: g.expiration,
    created_by_id: g.createdById,
    created: ctx.clock().toISOString(),
  })
  if (inserted) {
    await tellGrantChanges(ctx, db, 'granted', [uuid], true)
    // The grant ends by the expiry job, due when it expires.
    if (g.expiration) await ctx.jobs.enqueue(db, EXPIRE_GRANTS_JOB, {}, { runAt: new Date(g.expiration) })
    // A project's member gets an account on the offerings of the project's live resources.
    if (g.scope.type === 'project') await ensureOfferingUsersForMember(ctx, db, g.userId, g.scope.id)
    ctx.actorsChanged()
  }
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
  return !!(await grantsRepository(ctx.db).findActive({ userId, roleId, scopeType, scopeId }))
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
  // The grant and what it brings (offering accounts) in one transaction.
  const granted = await ctx.db.transaction().execute((trx) =>
    grantRole(ctx, trx, {
      userId: user.id,
      roleId: role.id,
      scope,
      createdById: actor.id,
      expiration,
    }),
  )
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
  // Every active grant of the triple ends (rows from before the one-grant rule included); the
  // user's offering accounts that no resource needs any more are asked to go, in one transaction.
  const ended = await ctx.db.transaction().execute(async (trx) => {
    const ended = await grantsRepository(trx).deactivateAll({
      userId: user.id,
      roleId: role.id,
      scopeType: scope.type,
      scopeId: scope.id,
    })
    await tellGrantChanges(ctx, trx, 'revoked', ended, false)
    if (ended.length && scope.type === 'project') await releaseOfferingUsersOf(ctx, trx, user.id)
    return ended.length
  })
  if (!ended) throw nonFieldError('User does not have this role in this scope.')
  ctx.actorsChanged()
}

/** The job that ends the grants whose expiration time has come. */
export const EXPIRE_GRANTS_JOB = 'directory.expire-grants'

/**
 * Ends every grant whose expiration time has come, as `delete_user` would (`role.revoked`, the
 * user's offering accounts no project needs any more asked to go), in one transaction; then
 * makes sure a run is queued for the next grant to expire. The reads already ignore an expired
 * grant (`grantUnexpired`): this makes its end a change of its own, told and final.
 */
export async function expireGrants(ctx: AppContext): Promise<number> {
  const now = ctx.clock().toISOString()
  const ended = await ctx.db.transaction().execute(async (trx) => {
    const repo = grantsRepository(trx)
    const ended = await repo.expireDue(now)
    await tellGrantChanges(
      ctx,
      trx,
      'revoked',
      ended.map((g) => g.uuid),
      true,
    )
    for (const userId of new Set(ended.filter((g) => g.scope_type === 'project').map((g) => g.user_id)))
      await releaseOfferingUsersOf(ctx, trx, userId)
    const next = await repo.nextExpiration(now)
    if (next && !(await repo.expiryQueuedBy(next)))
      await ctx.jobs.enqueue(trx, EXPIRE_GRANTS_JOB, {}, { runAt: new Date(next) })
    return ended.length
  })
  if (ended) ctx.actorsChanged()
  return ended
}

/** Queues a run of the expiry job now, unless one is due already. */
export async function scheduleGrantExpiry(ctx: AppContext): Promise<void> {
  const now = ctx.clock().toISOString()
  if (!(await grantsRepository(ctx.db).expiryQueuedBy(now)))
    await ctx.jobs.enqueue(ctx.db, EXPIRE_GRANTS_JOB, {})
}

type GrantRow = Awaited<ReturnType<ReturnType<typeof grantsRepository>['list']>>[number]
const grantRenderer = recordRenderer<GrantRow & { scope: GrantScope }, GrantRecord>({
  uuid: 'copy',
  user_uuid: 'copy',
  user_username: 'copy',
  user_full_name: 'copy',
  user_email: 'copy',
  role_name: 'copy',
  role_uuid: 'copy',
  scope_type: (r) => r.scope.type,
  scope_uuid: (r) => r.scope.uuid,
  scope_name: (r) => r.scope.name,
  expiration_time: 'copy',
  created: 'copy',
  created_by_full_name: 'copy',
})
function toGrant(r: GrantRow, scope: GrantScope, base: string): GrantRecord {
  return grantRenderer(base, { ...r, scope })
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
