// Invitation and permission request use cases (reference §5). Managing an invitation (create,
// cancel, delete, review its requests) needs staff or the scope's "create permission" permission
// (CUSTOMER.CREATE_PERMISSION on a customer; PROJECT.CREATE_PERMISSION on a project or its
// customer). Approval grants the role on the scope, or with auto_create_project finds or creates
// the requester's project and grants project_role there. State changes are conditional UPDATEs.
import { sql, type Kysely, type Transaction } from 'kysely'
import type { AppContext } from '../../context.js'
import { countRows, pageRows } from '../../db/listing.js'
import type { DB } from '../../db/tables.js'
import { fromBool, parseJson, toBool, toJson } from '../../db/values.js'
import { isPostgres } from '../../db/sql.js'
import { AppError, fieldError, forbidden, invalidState, nonFieldError, notFound } from '../../http/errors.js'
import { invalidHyperlink, urlOf, uuidFromLink } from '../../http/links.js'
import { can, scopesWith, seesAll, type Actor } from '../../http/permissions.js'
import type { OrderTerm } from '../../http/query.js'
import { normalizeUuid } from '../../http/uuid.js'
import { createProjectWithFreeName, grantRole, hasActiveGrant, resolveRole } from '../directory/service.js'
import { badPlaceholders, patternErrors, renderProjectName, userMatches } from './matching.js'
import { PATH, REQUEST_PATH, type CreateInput, type Invitation, type PermissionRequest } from './schema.js'

type Db = Kysely<DB> | Transaction<DB>
type Page<T> = (
  count: () => Promise<number>,
  fetch: (limit: number, offset: number) => Promise<T[]>,
) => Promise<T[]>

const NOT_FOUND = 'No UserGroupInvitation matches the given query.'
const REQUEST_NOT_FOUND = 'No PermissionRequest matches the given query.'

// ---- reading invitations ----

const invColumns = [
  'user_group_invitations.id',
  'user_group_invitations.uuid',
  'user_group_invitations.scope_type',
  'user_group_invitations.scope_id',
  'user_group_invitations.customer_id',
  'user_group_invitations.role_id',
  'user_group_invitations.project_role_id',
  'user_group_invitations.created_by_id',
  'user_group_invitations.is_active',
  'user_group_invitations.is_public',
  'user_group_invitations.auto_create_project',
  'user_group_invitations.auto_approve',
  'user_group_invitations.project_name_template',
  'user_group_invitations.user_affiliations',
  'user_group_invitations.user_email_patterns',
  'user_group_invitations.user_identity_sources',
  'user_group_invitations.created',
  'c.uuid as customer_uuid',
  'c.name as customer_name',
  'c.image as customer_image',
  'p.uuid as project_uuid',
  'p.name as project_name',
  'p.description as project_description',
  'r.uuid as role_uuid',
  'r.name as role_name',
  'r.description as role_description',
  'pr.uuid as project_role_uuid',
  'u.full_name as created_by_full_name',
  'u.username as created_by_username',
  'u.image as created_by_image',
] as const

function invitations(db: Db) {
  return db
    .selectFrom('user_group_invitations')
    .innerJoin('customers as c', 'c.id', 'user_group_invitations.customer_id')
    .innerJoin('roles as r', 'r.id', 'user_group_invitations.role_id')
    .leftJoin('projects as p', (j) =>
      j
        .onRef('p.id', '=', 'user_group_invitations.scope_id')
        .on('user_group_invitations.scope_type', '=', 'project'),
    )
    .leftJoin('roles as pr', 'pr.id', 'user_group_invitations.project_role_id')
    .leftJoin('users as u', 'u.id', 'user_group_invitations.created_by_id')
}

type InvRow = NonNullable<Awaited<ReturnType<typeof invById>>>
function invById(db: Db, id: number) {
  return invitations(db).select(invColumns).where('user_group_invitations.id', '=', id).executeTakeFirst()
}

function scopeOf(r: InvRow) {
  return r.scope_type === 'project'
    ? {
        uuid: r.project_uuid!,
        name: r.project_name ?? '',
        description: r.project_description ?? '',
        image: null,
      }
    : { uuid: r.customer_uuid, name: r.customer_name, description: '', image: r.customer_image }
}

/** May the actor manage invitations (and review requests) of this scope? */
export function canManage(
  actor: Actor | null,
  r: { scope_type: string; scope_id: number; customer_id: number },
) {
  if (!actor) return false
  if (r.scope_type === 'customer')
    return can(actor, 'CUSTOMER.CREATE_PERMISSION', { customerId: r.customer_id })
  return can(actor, 'PROJECT.CREATE_PERMISSION', { customerId: r.customer_id, projectId: r.scope_id })
}

function toInvitation(b: string, actor: Actor | null, r: InvRow): Invitation {
  const scope = scopeOf(r)
  const showCreator = !toBool(r.is_public) || seesAll(actor) || canManage(actor, r)
  return {
    scope_uuid: scope.uuid,
    scope_name: scope.name,
    scope_description: scope.description,
    scope_type: r.scope_type,
    scope_image: scope.image,
    customer_uuid: r.customer_uuid,
    customer_name: r.customer_name,
    role_name: r.role_name,
    role_description: r.role_description,
    created_by_full_name: showCreator ? (r.created_by_full_name ?? null) : null,
    created_by_username: showCreator ? (r.created_by_username ?? null) : null,
    created_by_image: showCreator ? (r.created_by_image ?? null) : null,
    url: urlOf(b, PATH, r.uuid)!,
    uuid: r.uuid,
    role: r.role_uuid,
    created: r.created,
    is_active: toBool(r.is_active),
    is_public: toBool(r.is_public),
    auto_create_project: toBool(r.auto_create_project),
    auto_approve: toBool(r.auto_approve),
    project_name_template: r.project_name_template,
    project_role: r.project_role_uuid ?? null,
    user_affiliations: parseJson(r.user_affiliations, []),
    user_email_patterns: parseJson(r.user_email_patterns, []),
    user_identity_sources: parseJson(r.user_identity_sources, []),
  }
}

const publicActive = (eb: any) =>
  eb.and([eb('user_group_invitations.is_public', '=', 1), eb('user_group_invitations.is_active', '=', 1)])

/** List visibility (reference §5.2): anonymous → public active; staff/support → all; others → managed scopes + public active. */
function restrictList<Q extends { where: any }>(q: Q, actor: Actor | null): Q {
  if (!actor) return q.where(publicActive)
  if (seesAll(actor)) return q
  const cust = scopesWith(actor, 'CUSTOMER.CREATE_PERMISSION').customer
  const proj = scopesWith(actor, 'PROJECT.CREATE_PERMISSION')
  return q.where((eb: any) => {
    const ors = [publicActive(eb)]
    if (cust.length)
      ors.push(
        eb.and([
          eb('user_group_invitations.scope_type', '=', 'customer'),
          eb('user_group_invitations.customer_id', 'in', cust),
        ]),
      )
    if (proj.customer.length)
      ors.push(
        eb.and([
          eb('user_group_invitations.scope_type', '=', 'project'),
          eb('user_group_invitations.customer_id', 'in', proj.customer),
        ]),
      )
    if (proj.project.length)
      ors.push(
        eb.and([
          eb('user_group_invitations.scope_type', '=', 'project'),
          eb('user_group_invitations.scope_id', 'in', proj.project),
        ]),
      )
    return eb.or(ors)
  })
}

export interface InvitationFilters {
  customer_uuid?: string
  is_active?: boolean
  is_public?: boolean
  role_name?: string
  role_uuid?: string
  scope_type?: string
}

export async function listInvitations(
  ctx: AppContext,
  actor: Actor | null,
  f: InvitationFilters,
  order: OrderTerm[],
  b: string,
  page: Page<Invitation>,
) {
  const filtered = () => {
    let q = restrictList(invitations(ctx.db), actor)
    if (f.customer_uuid) q = q.where('c.uuid', '=', f.customer_uuid)
    if (f.is_active !== undefined) q = q.where('user_group_invitations.is_active', '=', fromBool(f.is_active))
    if (f.is_public !== undefined) q = q.where('user_group_invitations.is_public', '=', fromBool(f.is_public))
    if (f.role_name !== undefined) q = q.where('r.name', '=', f.role_name)
    if (f.role_uuid) q = q.where('r.uuid', '=', f.role_uuid)
    if (f.scope_type === 'customer' || f.scope_type === 'project')
      q = q.where('user_group_invitations.scope_type', '=', f.scope_type)
    return q
  }
  return page(
    async () =>
      Number(
        (
          await filtered()
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      ),
    async (limit, offset) => {
      let q = filtered().select(invColumns)
      for (const t of order) q = q.orderBy(t.column as any, t.desc ? 'desc' : 'asc')
      const rows = await q.orderBy('user_group_invitations.id', 'desc').limit(limit).offset(offset).execute()
      return rows.map((r) => toInvitation(b, actor, r))
    },
  )
}

/** By uuid: anonymous callers find only public active ones (see readableInvitation for reading). */
async function findInvitation(ctx: AppContext, actor: Actor | null, uuid: string): Promise<InvRow> {
  const u = normalizeUuid(uuid)
  let q = invitations(ctx.db).select(invColumns)
  if (!actor) q = q.where(publicActive)
  const row = u ? await q.where('user_group_invitations.uuid', '=', u).executeTakeFirst() : undefined
  if (!row) throw notFound(NOT_FOUND)
  return row
}

function restrictionsOf(r: InvRow) {
  return {
    emailPatterns: parseJson<string[]>(r.user_email_patterns, []),
    affiliations: parseJson<string[]>(r.user_affiliations, []),
    identitySources: parseJson<string[]>(r.user_identity_sources, []),
  }
}

/** Does the actor hold any role in the invitation's scope (its customer, or its project)? */
function hasRoleInScope(actor: Actor, r: InvRow): boolean {
  return actor.grants.some((g) =>
    r.scope_type === 'customer'
      ? (g.scopeType === 'customer' && g.scopeId === r.customer_id) ||
        (g.scopeType === 'project' && g.customerId === r.customer_id)
      : (g.scopeType === 'project' && g.scopeId === r.scope_id) ||
        (g.scopeType === 'customer' && g.scopeId === r.customer_id),
  )
}

/**
 * Reading an invitation (retrieve, `projects/`): staff and global support; whoever may manage
 * its scope or holds a role in it; anyone for a public active one; and a caller an active
 * invitation with restrictions is addressed to (its confirmed e-mail, an affiliation or its
 * identity source matches). Anyone else gets 404, as for an unknown uuid.
 */
async function readableInvitation(ctx: AppContext, actor: Actor | null, uuid: string): Promise<InvRow> {
  const row = await findInvitation(ctx, actor, uuid)
  if (!actor || seesAll(actor) || canManage(actor, row) || hasRoleInScope(actor, row)) return row
  const active = toBool(row.is_active)
  if (active && toBool(row.is_public)) return row
  const r = restrictionsOf(row)
  const restricted = r.emailPatterns.length + r.affiliations.length + r.identitySources.length > 0
  if (active && restricted && userMatches(r, factsOf(actor))) return row
  throw notFound(NOT_FOUND)
}

function factsOf(actor: Actor) {
  return { email: actor.email, affiliations: actor.affiliations, identitySource: actor.identitySource }
}

export async function getInvitation(ctx: AppContext, actor: Actor | null, uuid: string, b: string) {
  return toInvitation(b, actor, await readableInvitation(ctx, actor, uuid))
}

/** GET {uuid}/projects/: the projects of the invitation's customer, by creation, a page at a time. */
export async function invitationProjects(
  ctx: AppContext,
  actor: Actor | null,
  uuid: string,
  b: string,
  page: (
    count: () => Promise<number>,
    fetch: (limit: number, offset: number) => Promise<{ uuid: string; url: string }[]>,
  ) => Promise<{ uuid: string; url: string }[]>,
) {
  const row = await readableInvitation(ctx, actor, uuid)
  if (row.scope_type !== 'customer') throw new AppError('not_found', null)
  const projects = () => ctx.db.selectFrom('projects').where('customer_id', '=', row.customer_id)
  return page(
    () => countRows(projects()),
    async (limit, offset) =>
      (await pageRows(projects().select('uuid'), [], 'projects.id', limit, offset)).map((p) => ({
        uuid: p.uuid,
        url: urlOf(b, 'projects', p.uuid)!,
      })),
  )
}

// ---- writing invitations ----

function stringList(field: string, v: unknown): string[] {
  if (v === undefined || v === null) return []
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) {
    throw fieldError(field, 'Expected a list of strings.')
  }
  return v as string[]
}

async function resolveScope(ctx: AppContext, value: string) {
  const customerUuid = uuidFromLink(value, 'customers')
  if (customerUuid) {
    const c = await ctx.db
      .selectFrom('customers')
      .select(['id', 'uuid', 'name'])
      .where('uuid', '=', customerUuid)
      .executeTakeFirst()
    if (!c) throw invalidHyperlink('scope')
    return { type: 'customer' as const, id: c.id, uuid: c.uuid, name: c.name, customerId: c.id }
  }
  const projectUuid = uuidFromLink(value, 'projects')
  if (projectUuid) {
    const p = await ctx.db
      .selectFrom('projects')
      .select(['id', 'uuid', 'name', 'customer_id'])
      .where('uuid', '=', projectUuid)
      .executeTakeFirst()
    if (!p) throw invalidHyperlink('scope')
    return { type: 'project' as const, id: p.id, uuid: p.uuid, name: p.name, customerId: p.customer_id }
  }
  throw fieldError('scope', 'Invalid hyperlink - Incorrect URL match.')
}

export async function createInvitation(ctx: AppContext, actor: Actor, body: CreateInput, b: string) {
  const role = await resolveRole(ctx, 'role', body.role)
  const scope = await resolveScope(ctx, body.scope)
  if (!canManage(actor, { scope_type: scope.type, scope_id: scope.id, customer_id: scope.customerId })) {
    throw forbidden()
  }
  const isPublic = body.is_public ?? false
  const autoCreate = body.auto_create_project ?? false
  const isProjectRole = (r: { content_type: string }) => r.content_type === 'project'
  if (isPublic && !actor.isStaff)
    throw fieldError('is_public', 'Only staff users can create public invitations.')
  if (isPublic && !autoCreate) {
    throw fieldError('auto_create_project', 'Public invitations must have auto_create_project enabled.')
  }
  if (isPublic && !isProjectRole(role))
    throw fieldError('role', 'Public invitations must use a project-level role.')
  const crossAllowed = autoCreate && isProjectRole(role) && scope.type === 'customer'
  if (role.content_type !== scope.type && !crossAllowed) {
    throw nonFieldError('Role and scope should belong to the same content type.')
  }
  let projectRoleId: number | null = null
  if (body.project_role !== undefined && body.project_role !== null && body.project_role !== '') {
    const pr = await resolveRole(ctx, 'project_role', body.project_role)
    if (autoCreate && !isProjectRole(pr))
      throw fieldError('project_role', 'project_role must be a project-level role')
    projectRoleId = pr.id
  }
  if (autoCreate && projectRoleId === null && !isProjectRole(role)) {
    throw fieldError(
      'project_role',
      'This field is required when auto_create_project is enabled and role is not a project-level role.',
    )
  }
  const template = body.project_name_template ?? ''
  const bad = badPlaceholders(template)
  if (bad.length) {
    throw fieldError(
      'project_name_template',
      `Unknown placeholders: ${bad.map((x) => `{${x}}`).join(', ')}. Allowed: {username}, {email}, {full_name}.`,
    )
  }
  const patterns = stringList('user_email_patterns', body.user_email_patterns)
  const patternProblems = patternErrors(patterns)
  if (patternProblems.length) throw new AppError('invalid', { user_email_patterns: patternProblems })
  const affiliations = stringList('user_affiliations', body.user_affiliations)
  const sources = stringList('user_identity_sources', body.user_identity_sources)
  const now = ctx.clock().toISOString()
  const r = await ctx.db
    .insertInto('user_group_invitations')
    .values({
      uuid: ctx.newUuid(),
      role_id: role.id,
      scope_type: scope.type,
      scope_id: scope.id,
      customer_id: scope.customerId,
      created_by_id: actor.id,
      is_active: 1,
      is_public: fromBool(isPublic),
      auto_create_project: fromBool(autoCreate),
      auto_approve: fromBool(body.auto_approve ?? false),
      project_name_template: template,
      project_role_id: projectRoleId,
      user_affiliations: toJson(affiliations),
      user_email_patterns: toJson(patterns),
      user_identity_sources: toJson(sources),
      created: now,
      modified: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  return toInvitation(b, actor, (await invById(ctx.db, r.id))!)
}

/** Cancel/delete: managers only; others get 404 (reference §5.3 hides the invitation). */
async function managedInvitation(ctx: AppContext, actor: Actor, uuid: string) {
  const row = await findInvitation(ctx, actor, uuid)
  if (!canManage(actor, row)) throw notFound(NOT_FOUND)
  return row
}

export async function cancelInvitation(ctx: AppContext, actor: Actor, uuid: string) {
  const row = await managedInvitation(ctx, actor, uuid)
  const r = await ctx.db
    .updateTable('user_group_invitations')
    .set({ is_active: 0, modified: ctx.clock().toISOString() })
    .where('id', '=', row.id)
    .where('is_active', '=', 1)
    .executeTakeFirst()
  if (Number(r.numUpdatedRows) === 0) throw nonFieldError('Only pending invitation can be canceled.')
}

export async function deleteInvitation(ctx: AppContext, actor: Actor, uuid: string) {
  const row = await managedInvitation(ctx, actor, uuid)
  const r = await ctx.db
    .deleteFrom('user_group_invitations')
    .where('id', '=', row.id)
    .where('is_active', '=', 0)
    .executeTakeFirst()
  if (Number(r.numDeletedRows) === 0) throw nonFieldError('Only canceled invitation can be deleted.')
}

// ---- approval effects ----

async function applyApproval(ctx: AppContext, trx: Db, inv: InvRow, userId: number, approverId: number) {
  if (toBool(inv.auto_create_project)) {
    const user = await trx
      .selectFrom('users')
      .select(['username', 'email', 'full_name'])
      .where('id', '=', userId)
      .executeTakeFirstOrThrow()
    const name = renderProjectName(inv.project_name_template, {
      username: user.username,
      email: user.email,
      fullName: user.full_name,
    })
    // Only a project this invitation created for this user is reused; any other project of the
    // rendered name (a user picks its own full name) is left alone and a new one gets a free name.
    const created = await trx
      .selectFrom('invitation_projects')
      .innerJoin('projects', 'projects.id', 'invitation_projects.project_id')
      .select('projects.id')
      .where('invitation_projects.invitation_id', '=', inv.id)
      .where('invitation_projects.user_id', '=', userId)
      .where('projects.customer_id', '=', inv.customer_id)
      .orderBy('invitation_projects.id', 'desc')
      .executeTakeFirst()
    let projectId = created?.id
    if (projectId === undefined) {
      projectId = await createProjectWithFreeName(ctx, trx, name, inv.customer_id)
      await trx
        .insertInto('invitation_projects')
        .values({
          invitation_id: inv.id,
          user_id: userId,
          project_id: projectId,
          created: ctx.clock().toISOString(),
        })
        .execute()
    }
    const p = await trx
      .selectFrom('projects')
      .select(['uuid', 'name'])
      .where('id', '=', projectId)
      .executeTakeFirstOrThrow()
    await grantRole(ctx, trx, {
      userId,
      roleId: inv.project_role_id ?? inv.role_id,
      scope: { type: 'project', id: projectId, uuid: p.uuid, name: p.name },
      createdById: approverId,
      expiration: null,
    })
    return
  }
  const scope = scopeOf(inv)
  await grantRole(ctx, trx, {
    userId,
    roleId: inv.role_id,
    scope: {
      type: inv.scope_type as 'customer' | 'project',
      id: inv.scope_id,
      uuid: scope.uuid,
      name: scope.name,
    },
    createdById: approverId,
    expiration: null,
  })
}

// ---- submit_request ----

export async function submitRequest(ctx: AppContext, actor: Actor, uuid: string) {
  const inv = await findInvitation(ctx, actor, uuid)
  if (!toBool(inv.is_active)) throw nonFieldError('Only pending invitation can be requested.')
  if (
    await hasActiveGrant(ctx, actor.id, inv.role_id, inv.scope_type as 'customer' | 'project', inv.scope_id)
  ) {
    throw nonFieldError('User already has this role in the scope.')
  }
  // `actor.email` is the confirmed address: a changed one waits in pending_email until confirmed.
  const matches = userMatches(restrictionsOf(inv), factsOf(actor))
  if (!matches) {
    throw nonFieldError(
      'You are not allowed to accept this invitation. Your email or organization must match the invitation restrictions.',
    )
  }
  const autoApprove = toBool(inv.auto_approve)
  const requestUuid = ctx.newUuid()
  await ctx.db.transaction().execute(async (trx) => {
    // One open request per user and scope. The check and the insert are one step: SQLite write
    // transactions are serialized (BEGIN IMMEDIATE); PostgreSQL takes a lock on the pair.
    if (isPostgres(trx)) {
      const key = `permission-request:${actor.id}:${inv.scope_type}:${inv.scope_id}`
      await sql`select pg_advisory_xact_lock(hashtext(${key}))`.execute(trx)
    }
    const existing = await trx
      .selectFrom('user_permission_requests')
      .innerJoin('user_group_invitations as i', 'i.id', 'user_permission_requests.invitation_id')
      .select('user_permission_requests.id')
      .where('user_permission_requests.created_by_id', '=', actor.id)
      .where('user_permission_requests.state', 'in', ['pending', 'approved'])
      .where('i.scope_type', '=', inv.scope_type)
      .where('i.scope_id', '=', inv.scope_id)
      .executeTakeFirst()
    if (existing) throw nonFieldError('Permission request already exists for this scope.')
    const now = ctx.clock().toISOString()
    await trx
      .insertInto('user_permission_requests')
      .values({
        uuid: requestUuid,
        invitation_id: inv.id,
        created_by_id: actor.id,
        state: autoApprove ? 'approved' : 'pending',
        reviewed_by_id: autoApprove ? actor.id : null,
        reviewed_at: autoApprove ? now : null,
        review_comment: null,
        created: now,
        modified: now,
      })
      .execute()
    if (autoApprove) await applyApproval(ctx, trx, inv, actor.id, actor.id)
  })
  const scope = scopeOf(inv)
  return { uuid: requestUuid, scope_name: scope.name, scope_uuid: scope.uuid, auto_approved: autoApprove }
}

// ---- permission requests ----

const reqColumns = [
  'user_permission_requests.id',
  'user_permission_requests.uuid',
  'user_permission_requests.state',
  'user_permission_requests.invitation_id',
  'user_permission_requests.created_by_id',
  'user_permission_requests.reviewed_at',
  'user_permission_requests.review_comment',
  'user_permission_requests.created',
  'user_permission_requests.modified',
  'i.uuid as invitation_uuid',
  'i.scope_type',
  'i.scope_id',
  'i.customer_id',
  'ru.uuid as user_uuid',
  'ru.username as user_username',
  'ru.full_name as user_full_name',
  'ru.email as user_email',
  'rv.username as reviewer_username',
  'rv.full_name as reviewer_full_name',
  'i.project_name_template',
  'r.description as role_description',
  'c.uuid as customer_uuid',
  'c.name as customer_name',
  'p.uuid as project_uuid',
  'p.name as project_name',
  'r.name as role_name',
] as const

function requests(db: Db) {
  return db
    .selectFrom('user_permission_requests')
    .innerJoin('user_group_invitations as i', 'i.id', 'user_permission_requests.invitation_id')
    .innerJoin('users as ru', 'ru.id', 'user_permission_requests.created_by_id')
    .leftJoin('users as rv', 'rv.id', 'user_permission_requests.reviewed_by_id')
    .innerJoin('customers as c', 'c.id', 'i.customer_id')
    .innerJoin('roles as r', 'r.id', 'i.role_id')
    .leftJoin('projects as p', (j) => j.onRef('p.id', '=', 'i.scope_id').on('i.scope_type', '=', 'project'))
}

type ReqRow = NonNullable<Awaited<ReturnType<typeof _reqRowShape>>>
// Only its return type is used: the row shape of a permission request.
function _reqRowShape(db: Db, uuid: string) {
  return requests(db).select(reqColumns).where('user_permission_requests.uuid', '=', uuid).executeTakeFirst()
}

function toRequest(b: string, r: ReqRow): PermissionRequest {
  const project = r.scope_type === 'project'
  return {
    uuid: r.uuid,
    url: urlOf(b, REQUEST_PATH, r.uuid)!,
    invitation: urlOf(b, PATH, r.invitation_uuid)!,
    invitation_uuid: r.invitation_uuid,
    state: r.state,
    created_by: urlOf(b, 'users', r.user_uuid)!,
    created_by_username: r.user_username,
    created_by_full_name: r.user_full_name,
    created_by_email: r.user_email,
    scope_uuid: project ? r.project_uuid! : r.customer_uuid,
    scope_name: project ? (r.project_name ?? '') : r.customer_name,
    scope_type: r.scope_type,
    role_name: r.role_name,
    reviewed_by_username: r.reviewer_username ?? null,
    reviewed_at: r.reviewed_at,
    review_comment: r.review_comment,
    created: r.created,
    modified: r.modified,
    reviewed_by_full_name: r.reviewer_full_name ?? null,
    customer_uuid: r.customer_uuid,
    customer_name: r.customer_name,
    role_description: r.role_description,
    project_name_template: r.project_name_template,
  }
}

/** Own requests, requests on scopes the actor manages; staff and support see all. */
function restrictRequests<Q extends { where: any }>(q: Q, actor: Actor): Q {
  if (seesAll(actor)) return q
  const cust = scopesWith(actor, 'CUSTOMER.CREATE_PERMISSION').customer
  const proj = scopesWith(actor, 'PROJECT.CREATE_PERMISSION')
  return q.where((eb: any) => {
    const ors = [eb('user_permission_requests.created_by_id', '=', actor.id)]
    if (cust.length) ors.push(eb.and([eb('i.scope_type', '=', 'customer'), eb('i.customer_id', 'in', cust)]))
    if (proj.customer.length)
      ors.push(eb.and([eb('i.scope_type', '=', 'project'), eb('i.customer_id', 'in', proj.customer)]))
    if (proj.project.length)
      ors.push(eb.and([eb('i.scope_type', '=', 'project'), eb('i.scope_id', 'in', proj.project)]))
    return eb.or(ors)
  })
}

export async function listRequests(
  ctx: AppContext,
  actor: Actor,
  f: { states: string[]; invitation_uuid?: string },
  b: string,
  page: Page<PermissionRequest>,
) {
  const filtered = () => {
    let q = restrictRequests(requests(ctx.db), actor)
    if (f.states.length) q = q.where('user_permission_requests.state', 'in', f.states)
    if (f.invitation_uuid) q = q.where('i.uuid', '=', f.invitation_uuid)
    return q
  }
  return page(
    async () =>
      Number(
        (
          await filtered()
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      ),
    async (limit, offset) =>
      (
        await filtered()
          .select(reqColumns)
          .orderBy('user_permission_requests.created', 'desc')
          .orderBy('user_permission_requests.id', 'desc')
          .limit(limit)
          .offset(offset)
          .execute()
      ).map((r) => toRequest(b, r)),
  )
}

async function visibleRequest(ctx: AppContext, actor: Actor, uuid: string): Promise<ReqRow> {
  const u = normalizeUuid(uuid)
  const row = u
    ? await restrictRequests(requests(ctx.db).select(reqColumns), actor)
        .where('user_permission_requests.uuid', '=', u)
        .executeTakeFirst()
    : undefined
  if (!row) throw notFound(REQUEST_NOT_FOUND)
  return row
}

export async function getRequest(ctx: AppContext, actor: Actor, uuid: string, b: string) {
  return toRequest(b, await visibleRequest(ctx, actor, uuid))
}

/** approve / reject: scope managers only (others 404); pending only (409); one winner. */
export async function review(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  decision: 'approved' | 'rejected',
  comment: string | null | undefined,
) {
  const row = await visibleRequest(ctx, actor, uuid)
  if (!canManage(actor, row)) throw notFound(REQUEST_NOT_FOUND)
  await ctx.db.transaction().execute(async (trx) => {
    const now = ctx.clock().toISOString()
    const r = await trx
      .updateTable('user_permission_requests')
      .set({
        state: decision,
        reviewed_by_id: actor.id,
        reviewed_at: now,
        review_comment: comment ?? null,
        modified: now,
      })
      .where('id', '=', row.id)
      .where('state', '=', 'pending')
      .executeTakeFirst()
    if (Number(r.numUpdatedRows) === 0) throw invalidState(['pending'])
    if (decision === 'approved') {
      const inv = (await invById(trx, row.invitation_id))!
      await applyApproval(ctx, trx, inv, row.created_by_id, actor.id)
    }
  })
}

/** cancel_request: the requester or staff; pending only. */
export async function cancelRequest(ctx: AppContext, actor: Actor, uuid: string) {
  const row = await visibleRequest(ctx, actor, uuid)
  if (row.created_by_id !== actor.id && !actor.isStaff) throw forbidden()
  const r = await ctx.db
    .updateTable('user_permission_requests')
    .set({ state: 'canceled', modified: ctx.clock().toISOString() })
    .where('id', '=', row.id)
    .where('state', '=', 'pending')
    .executeTakeFirst()
  if (Number(r.numUpdatedRows) === 0) throw invalidState(['pending'])
  const rec = toRequest('', row)
  return { uuid: rec.uuid, scope_name: rec.scope_name, scope_uuid: rec.scope_uuid }
}
