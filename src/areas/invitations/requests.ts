// Permission request use cases (reference §5): a user asks for an invitation's role; the scope's
// managers approve or reject (or the invitation approves on its own); approval grants the role on
// the scope, or with auto_create_project finds or creates the requester's project and grants
// project_role there. State changes are conditional UPDATEs.
import type { AppContext } from '../../context.js'
import type { Listing } from '../../db/listing.js'
import { toBool } from '../../db/values.js'
import { forbidden, invalidState, nonFieldError, notFound } from '../../http/errors.js'
import { recordRenderer } from '../../http/links.js'
import { seesAll, type Actor } from '../../http/permissions.js'
import { pageOf, type Pager } from '../../http/resource.js'
import { foundByUuid } from '../../http/uuid.js'
import { createProjectWithFreeName, grantRole, hasActiveGrant } from '../directory/service.js'
import { emitEvent } from '../events/service.js'
import { renderProjectName, userMatches } from './matching.js'
import * as repo from './repository.js'
import type { InvRow, ReqRow, RequestScope } from './repository.js'
import { PATH, REQUEST_PATH, type PermissionRequest } from './schema.js'
import {
  canManage,
  factsOf,
  findInvitation,
  managedScopes,
  restrictionsOf,
  scopeOf,
  stateOf,
  tellInvitation,
} from './service.js'

/** The model a 404 names. */
const REQUEST_MODEL = 'PermissionRequest'
const REQUEST_NOT_FOUND = `No ${REQUEST_MODEL} matches the given query.`

/** Own requests, requests on scopes the actor manages; staff and support see all. */
export function requestVisibility(actor: Actor): RequestScope {
  return seesAll(actor) ? null : { userId: actor.id, managed: managedScopes(actor) }
}

// ---- events ----

/**
 * Tells a permission request's new state (`user_permission_request.created` or
 * `.state_changed`), in the transaction that changed it.
 */
async function tellRequest(ctx: AppContext, trx: repo.Db, uuid: string, from: string | null): Promise<void> {
  const r = await repo.visibleRequest(trx, null, uuid)
  if (!r) return
  await emitEvent(ctx, trx, {
    type: `user_permission_request.${from === null ? 'created' : 'state_changed'}`,
    objectType: 'permission_request',
    objectUuid: r.uuid,
    path: `/api/${REQUEST_PATH}/${r.uuid}/`,
    projectUuid: r.scope_type === 'project' ? (r.project_uuid ?? null) : null,
    customerUuid: r.customer_uuid,
    data: {
      state_before: from,
      state_after: r.state,
      user_uuid: r.user_uuid,
      invitation_uuid: r.invitation_uuid,
      scope_type: r.scope_type,
      role_name: r.role_name,
    },
  })
}

// ---- approval effects ----

async function applyApproval(
  ctx: AppContext,
  trx: repo.Db,
  inv: InvRow,
  requestUuid: string,
  userId: number,
  approverId: number,
) {
  const state = stateOf(inv)
  await tellInvitation(
    ctx,
    trx,
    inv,
    'accepted',
    { before: state, after: state },
    {
      permission_request_uuid: requestUuid,
    },
  )
  if (toBool(inv.auto_create_project)) {
    const user = await repo.userNames(trx, userId)
    const name = renderProjectName(inv.project_name_template, {
      username: user.username,
      email: user.email,
      fullName: user.full_name,
    })
    // Only a project this invitation created for this user is reused; any other project of the
    // rendered name (a user picks its own full name) is left alone and a new one gets a free name.
    let projectId = await repo.projectCreatedFor(trx, inv.id, userId, inv.customer_id)
    if (projectId === undefined) {
      projectId = await createProjectWithFreeName(ctx, trx, name, inv.customer_id)
      await repo.recordProjectCreated(trx, {
        invitation_id: inv.id,
        user_id: userId,
        project_id: projectId,
        created: ctx.clock().toISOString(),
      })
    }
    await grantRole(ctx, trx, {
      userId,
      roleId: inv.project_role_id ?? inv.role_id,
      scope: { type: 'project', id: projectId },
      createdById: approverId,
      expiration: null,
    })
    return
  }
  await grantRole(ctx, trx, {
    userId,
    roleId: inv.role_id,
    scope: { type: inv.scope_type as 'customer' | 'project', id: inv.scope_id },
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
    // One open request per user and scope: the check and the insert are one step.
    await repo.lockRequestsOf(trx, actor.id, inv.scope_type, inv.scope_id)
    if (await repo.hasOpenRequest(trx, actor.id, inv.scope_type, inv.scope_id)) {
      throw nonFieldError('Permission request already exists for this scope.')
    }
    const now = ctx.clock().toISOString()
    await repo.insertRequest(trx, {
      uuid: requestUuid,
      invitation_id: inv.id,
      created_by_id: actor.id,
      state: autoApprove ? 'approved' : 'pending',
      reviewed_by_id: autoApprove ? actor.id : null,
      reviewed_at: autoApprove ? now : null,
      created: now,
    })
    await tellRequest(ctx, trx, requestUuid, null)
    if (autoApprove) await applyApproval(ctx, trx, inv, requestUuid, actor.id, actor.id)
  })
  const scope = scopeOf(inv)
  return { uuid: requestUuid, scope_name: scope.name, scope_uuid: scope.uuid, auto_approved: autoApprove }
}

// ---- permission requests ----

/** A request's scope: its project when the invitation is a project's, else its customer. */
const ofProject = (r: ReqRow) => r.scope_type === 'project'

const toRequest = recordRenderer<ReqRow, PermissionRequest>({
  uuid: 'copy',
  url: { link: REQUEST_PATH, from: 'uuid' },
  invitation: { link: PATH },
  invitation_uuid: 'copy',
  state: 'copy',
  created_by: { link: 'users', from: 'user_uuid' },
  created_by_username: (r) => r.user_username,
  created_by_full_name: (r) => r.user_full_name,
  created_by_email: (r) => r.user_email,
  scope_uuid: (r) => (ofProject(r) ? r.project_uuid! : r.customer_uuid),
  scope_name: (r) => (ofProject(r) ? (r.project_name ?? '') : r.customer_name),
  scope_type: 'copy',
  role_name: 'copy',
  reviewed_by_username: (r) => r.reviewer_username ?? null,
  reviewed_at: 'copy',
  review_comment: 'copy',
  created: 'copy',
  modified: 'copy',
  reviewed_by_full_name: (r) => r.reviewer_full_name ?? null,
  customer_uuid: 'copy',
  customer_name: 'copy',
  role_description: 'copy',
  project_name_template: 'copy',
})

export function listRequests(
  ctx: AppContext,
  scope: RequestScope,
  listing: Listing,
  b: string,
  page: Pager<PermissionRequest>,
) {
  return pageOf(page, repo.requestList(ctx.db), scope, listing, (r) => toRequest(b, r))
}

function visibleRequest(ctx: AppContext, scope: RequestScope, uuid: string): Promise<ReqRow> {
  return foundByUuid(uuid, (u) => repo.visibleRequest(ctx.db, scope, u), REQUEST_MODEL)
}

export async function getRequest(ctx: AppContext, scope: RequestScope, uuid: string, b: string) {
  return toRequest(b, await visibleRequest(ctx, scope, uuid))
}

/** approve / reject: scope managers only (others 404); pending only (409); one winner. */
export async function review(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  decision: 'approved' | 'rejected',
  comment: string | null | undefined,
) {
  const row = await visibleRequest(ctx, requestVisibility(actor), uuid)
  if (!canManage(actor, row)) throw notFound(REQUEST_NOT_FOUND)
  await ctx.db.transaction().execute(async (trx) => {
    const now = ctx.clock().toISOString()
    const moved = await repo.leavePending(trx, row.id, {
      state: decision,
      reviewed_by_id: actor.id,
      reviewed_at: now,
      review_comment: comment ?? null,
      modified: now,
    })
    if (!moved) throw invalidState(['pending'])
    await tellRequest(ctx, trx, row.uuid, 'pending')
    if (decision === 'approved') {
      const inv = (await repo.invitationById(trx, row.invitation_id))!
      await applyApproval(ctx, trx, inv, row.uuid, row.created_by_id, actor.id)
    }
  })
}

/** cancel_request: the requester or staff; pending only. */
export async function cancelRequest(ctx: AppContext, actor: Actor, uuid: string) {
  const row = await visibleRequest(ctx, requestVisibility(actor), uuid)
  if (row.created_by_id !== actor.id && !actor.isStaff) throw forbidden()
  await ctx.db.transaction().execute(async (trx) => {
    const moved = await repo.leavePending(trx, row.id, {
      state: 'canceled',
      modified: ctx.clock().toISOString(),
    })
    if (!moved) throw invalidState(['pending'])
    await tellRequest(ctx, trx, row.uuid, 'pending')
  })
  const rec = toRequest('', row)
  return { uuid: rec.uuid, scope_name: rec.scope_name, scope_uuid: rec.scope_uuid }
}
