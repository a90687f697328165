// Invitation use cases (reference §5). Managing an invitation (create, cancel, delete, review its
// requests) needs staff or the scope's "create permission" permission (CUSTOMER.CREATE_PERMISSION
// on a customer; PROJECT.CREATE_PERMISSION on a project or its customer). Requests and their
// approval are in `requests.ts`.
import type { AppContext } from '../../context.js'
import type { Listing } from '../../db/listing.js'
import { fromBool, parseJson, toBool, toJson } from '../../db/values.js'
import { AppError, fieldError, forbidden, nonFieldError, notFound } from '../../http/errors.js'
import { invalidHyperlink, urlOf, uuidFromLink } from '../../http/links.js'
import { can, scopesWith, seesAll, type Actor } from '../../http/permissions.js'
import { pageOf, type Pager } from '../../http/resource.js'
import { foundByUuid } from '../../http/uuid.js'
import { resolveRole } from '../directory/service.js'
import { emitEvent } from '../events/service.js'
import { badPlaceholders, patternErrors, userMatches } from './matching.js'
import * as repo from './repository.js'
import type { InvitationScope, InvRow, ManagedScopes } from './repository.js'
import { PATH, type CreateInput, type Invitation } from './schema.js'

/** The model a 404 names. */
const MODEL = 'UserGroupInvitation'
export const NOT_FOUND = `No ${MODEL} matches the given query.`

// ---- visibility and permission ----

/** The scopes whose invitations and requests the actor manages. */
export function managedScopes(actor: Actor): ManagedScopes {
  const proj = scopesWith(actor, 'PROJECT.CREATE_PERMISSION')
  return {
    customers: scopesWith(actor, 'CUSTOMER.CREATE_PERMISSION').customer,
    projectCustomers: proj.customer,
    projects: proj.project,
  }
}

/** List visibility (reference §5.2): anonymous → public active; staff/support → all; others → managed scopes + public active. */
export function visibility(actor: Actor | null): InvitationScope {
  if (!actor) return 'public'
  if (seesAll(actor)) return 'all'
  return managedScopes(actor)
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

// ---- reading invitations ----

export function scopeOf(r: InvRow) {
  return r.scope_type === 'project'
    ? {
        uuid: r.project_uuid!,
        name: r.project_name ?? '',
        description: r.project_description ?? '',
        image: null,
      }
    : { uuid: r.customer_uuid, name: r.customer_name, description: '', image: r.customer_image }
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

export function listInvitations(
  ctx: AppContext,
  actor: Actor | null,
  listing: Listing,
  b: string,
  page: Pager<Invitation>,
) {
  return pageOf(page, repo.invitationList(ctx.db), visibility(actor), listing, (r) =>
    toInvitation(b, actor, r),
  )
}

/** By uuid: anonymous callers find only public active ones (see readableInvitation for reading). */
export async function findInvitation(ctx: AppContext, actor: Actor | null, uuid: string): Promise<InvRow> {
  return foundByUuid(uuid, (u) => repo.invitationByUuid(ctx.db, u, !actor), MODEL)
}

export function restrictionsOf(r: InvRow) {
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

export function factsOf(actor: Actor) {
  return { email: actor.email, affiliations: actor.affiliations, identitySource: actor.identitySource }
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

export async function getInvitation(ctx: AppContext, actor: Actor | null, uuid: string, b: string) {
  return toInvitation(b, actor, await readableInvitation(ctx, actor, uuid))
}

/** GET {uuid}/projects/: the projects of the invitation's customer, by creation, a page at a time. */
export async function invitationProjects(
  ctx: AppContext,
  actor: Actor | null,
  uuid: string,
  b: string,
  page: Pager<{ uuid: string; url: string }>,
) {
  const row = await readableInvitation(ctx, actor, uuid)
  if (row.scope_type !== 'customer') throw new AppError('not_found', null)
  const projects = repo.customerProjects(ctx.db, row.customer_id)
  return page(projects.count, async (limit, offset) =>
    (await projects.list(limit, offset)).map((p) => ({ uuid: p.uuid, url: urlOf(b, 'projects', p.uuid)! })),
  )
}

// ---- events ----

/** An invitation's state: `pending` while active, `canceled` once canceled (null: none, gone). */
export type InvitationState = 'pending' | 'canceled' | null
export const stateOf = (r: InvRow): InvitationState => (toBool(r.is_active) ? 'pending' : 'canceled')

/**
 * The one place an invitation's changes are told, in the transaction of the change:
 * `user_group_invitation.created`, `.state_changed` (canceled), `.deleted`, and `.accepted` when
 * a permission request of it is approved (its state stays; the request's own events name the user).
 */
export async function tellInvitation(
  ctx: AppContext,
  db: repo.Db,
  r: InvRow,
  change: 'created' | 'state_changed' | 'deleted' | 'accepted',
  states: { before: InvitationState; after: InvitationState },
  facts: Record<string, unknown> = {},
): Promise<void> {
  const scope = scopeOf(r)
  await emitEvent(ctx, db, {
    type: `user_group_invitation.${change}`,
    objectType: 'invitation',
    objectUuid: r.uuid,
    path: `/api/${PATH}/${r.uuid}/`,
    projectUuid: r.scope_type === 'project' ? scope.uuid : null,
    customerUuid: r.customer_uuid,
    data: {
      state_before: states.before,
      state_after: states.after,
      scope_type: r.scope_type,
      scope_uuid: scope.uuid,
      role_name: r.role_name,
      is_public: toBool(r.is_public),
      ...facts,
    },
  })
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
    const c = await repo.customerByUuid(ctx.db, customerUuid)
    if (!c) throw invalidHyperlink('scope')
    return { type: 'customer' as const, id: c.id, uuid: c.uuid, name: c.name, customerId: c.id }
  }
  const projectUuid = uuidFromLink(value, 'projects')
  if (projectUuid) {
    const p = await repo.projectByUuid(ctx.db, projectUuid)
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
  const row = await ctx.db.transaction().execute(async (trx) => {
    const id = await repo.insertInvitation(trx, {
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
    const row = (await repo.invitationById(trx, id))!
    await tellInvitation(ctx, trx, row, 'created', { before: null, after: 'pending' })
    return row
  })
  return toInvitation(b, actor, row)
}

/** Cancel/delete: managers only; others get 404 (reference §5.3 hides the invitation). */
async function managedInvitation(ctx: AppContext, actor: Actor, uuid: string) {
  const row = await findInvitation(ctx, actor, uuid)
  if (!canManage(actor, row)) throw notFound(NOT_FOUND)
  return row
}

export async function cancelInvitation(ctx: AppContext, actor: Actor, uuid: string) {
  const row = await managedInvitation(ctx, actor, uuid)
  await ctx.db.transaction().execute(async (trx) => {
    if (!(await repo.deactivateInvitation(trx, row.id, ctx.clock().toISOString()))) {
      throw nonFieldError('Only pending invitation can be canceled.')
    }
    await tellInvitation(ctx, trx, row, 'state_changed', { before: 'pending', after: 'canceled' })
  })
}

export async function deleteInvitation(ctx: AppContext, actor: Actor, uuid: string) {
  const row = await managedInvitation(ctx, actor, uuid)
  await ctx.db.transaction().execute(async (trx) => {
    if (!(await repo.deleteInactiveInvitation(trx, row.id))) {
      throw nonFieldError('Only canceled invitation can be deleted.')
    }
    await tellInvitation(ctx, trx, row, 'deleted', { before: 'canceled', after: null })
  })
}

/** The invitation as the REST API lets the actor read it (404 otherwise): the events' rule. */
export function findReadableInvitation(ctx: AppContext, actor: Actor, uuid: string): Promise<InvRow> {
  return readableInvitation(ctx, actor, uuid)
}
