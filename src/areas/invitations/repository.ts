// All SQL of invitations and permission requests: the rows with their scope (customer or
// project), role and people; who sees which; the state changes as conditional UPDATEs.
import {
  sql,
  type Expression,
  type ExpressionBuilder,
  type Insertable,
  type Kysely,
  type SqlBool,
  type Transaction,
} from 'kysely'
import { countRows, pageRows, scopedList } from '../../db/listing.js'
import { firstWhere, insertRow, onlyWhere } from '../../db/rows.js'
import { joined } from '../../db/joins.js'
import { insertReturningId } from '../../db/compiled.js'
import { isPostgres } from '../../db/sql.js'
import type { DB } from '../../db/tables.js'

export type Db = Kysely<DB> | Transaction<DB>

/** The scopes whose invitations (and requests) a caller manages, by their ids. */
export interface ManagedScopes {
  /** Customers where the caller may grant customer roles. */
  customers: readonly number[]
  /** Customers where the caller may grant project roles (on any of their projects). */
  projectCustomers: readonly number[]
  /** Projects where the caller may grant project roles. */
  projects: readonly number[]
}

/** Invitations a caller sees: all; the public active ones; or those and the managed ones. */
export type InvitationScope = 'all' | 'public' | ManagedScopes
/** Requests a caller sees: all (null); else its own and those on the scopes it manages. */
export type RequestScope = null | { userId: number; managed: ManagedScopes }

/** The conditions "in a managed scope", on an invitation table named `t`. */
function inManaged(eb: any, t: string, m: ManagedScopes): any[] {
  const ors = []
  if (m.customers.length)
    ors.push(eb.and([eb(`${t}.scope_type`, '=', 'customer'), eb(`${t}.customer_id`, 'in', m.customers)]))
  if (m.projectCustomers.length)
    ors.push(
      eb.and([eb(`${t}.scope_type`, '=', 'project'), eb(`${t}.customer_id`, 'in', m.projectCustomers)]),
    )
  if (m.projects.length)
    ors.push(eb.and([eb(`${t}.scope_type`, '=', 'project'), eb(`${t}.scope_id`, 'in', m.projects)]))
  return ors
}

// ---- invitations ----

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

/** An invitation's customer, role and (for a project invitation) project; `inv` names its table or alias. */
function scopeOf<T extends string>(inv: T) {
  return [
    ['inner', 'customers as c', `${inv}.customer_id`],
    ['inner', 'roles as r', `${inv}.role_id`],
    ['left', 'projects as p', `${inv}.scope_id`, 'id', [`${inv}.scope_type`, 'project']],
  ] as const
}

/** A permission request's invitation. */
const INVITATION_OF_REQUEST = [
  'inner',
  'user_group_invitations as i',
  'user_permission_requests.invitation_id',
] as const

function invitations(db: Db) {
  return joined(db, 'user_group_invitations', [
    ...scopeOf('user_group_invitations'),
    ['left', 'roles as pr', 'user_group_invitations.project_role_id'],
    ['left', 'users as u', 'user_group_invitations.created_by_id'],
  ])
}

const publicActive = (eb: any) =>
  eb.and([eb('user_group_invitations.is_public', '=', 1), eb('user_group_invitations.is_active', '=', 1)])

function visibleInvitations(db: Db, scope: InvitationScope) {
  const q = invitations(db)
  if (scope === 'all') return q
  if (scope === 'public') return q.where(publicActive)
  return q.where((eb: any) => eb.or([publicActive(eb), ...inManaged(eb, 'user_group_invitations', scope)]))
}

export type InvRow = NonNullable<Awaited<ReturnType<typeof invitationById>>>
export function invitationById(db: Db, id: number) {
  return firstWhere(invitations(db).select(invColumns), 'user_group_invitations.id', id)
}

/** By uuid, among every invitation or only the public active ones. */
export function invitationByUuid(db: Db, uuid: string, publicOnly: boolean) {
  let q = invitations(db).select(invColumns)
  if (publicOnly) q = q.where(publicActive)
  return firstWhere(q, 'user_group_invitations.uuid', uuid)
}

/** The invitations a scope sees, for the kit's listing; the newest id first among equals. */
export function invitationList(db: Db) {
  return scopedList(
    (scope: InvitationScope) => visibleInvitations(db, scope),
    (q) => q.select(invColumns),
    { column: 'user_group_invitations.id', desc: true },
  )
}

/** The projects of a customer, by creation. */
export function customerProjects(db: Db, customerId: number) {
  const projects = () => db.selectFrom('projects').where('customer_id', '=', customerId)
  return {
    count: () => countRows(projects()),
    list: (limit: number, offset: number) =>
      pageRows(projects().select('uuid'), [], 'projects.id', limit, offset),
  }
}

export function customerByUuid(db: Db, uuid: string) {
  return db.selectFrom('customers').select(['id', 'uuid', 'name']).where('uuid', '=', uuid).executeTakeFirst()
}

export function projectByUuid(db: Db, uuid: string) {
  return db
    .selectFrom('projects')
    .select(['id', 'uuid', 'name', 'customer_id'])
    .where('uuid', '=', uuid)
    .executeTakeFirst()
}

export function insertInvitation(db: Db, values: Insertable<DB['user_group_invitations']>): Promise<number> {
  return insertReturningId(db, 'user_group_invitations', values)
}

/** Deactivates an active invitation; false when it was not active. */
export async function deactivateInvitation(db: Db, id: number, now: string): Promise<boolean> {
  const r = await db
    .updateTable('user_group_invitations')
    .set({ is_active: 0, modified: now })
    .where('id', '=', id)
    .where('is_active', '=', 1)
    .executeTakeFirst()
  return Number(r.numUpdatedRows) > 0
}

/** Deletes an inactive invitation; false when it was active. */
export async function deleteInactiveInvitation(db: Db, id: number): Promise<boolean> {
  const r = await db
    .deleteFrom('user_group_invitations')
    .where('id', '=', id)
    .where('is_active', '=', 0)
    .executeTakeFirst()
  return Number(r.numDeletedRows) > 0
}

// ---- approval ----

export function userNames(trx: Db, id: number) {
  return onlyWhere(trx.selectFrom('users').select(['username', 'email', 'full_name']), 'id', id)
}

/** The newest project this invitation created for this user in this customer, if any. */
export async function projectCreatedFor(trx: Db, invitationId: number, userId: number, customerId: number) {
  const r = await trx
    .selectFrom('invitation_projects')
    .innerJoin('projects', 'projects.id', 'invitation_projects.project_id')
    .select('projects.id')
    .where('invitation_projects.invitation_id', '=', invitationId)
    .where('invitation_projects.user_id', '=', userId)
    .where('projects.customer_id', '=', customerId)
    .orderBy('invitation_projects.id', 'desc')
    .executeTakeFirst()
  return r?.id
}

export function recordProjectCreated(
  trx: Db,
  values: { invitation_id: number; user_id: number; project_id: number; created: string },
) {
  return insertRow(trx, 'invitation_projects', values)
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
  return joined(db, 'user_permission_requests', [
    INVITATION_OF_REQUEST,
    ['inner', 'users as ru', 'user_permission_requests.created_by_id'],
    ['left', 'users as rv', 'user_permission_requests.reviewed_by_id'],
    ...scopeOf('i'),
  ])
}

function visibleRequests(db: Db, scope: RequestScope) {
  const q = requests(db)
  if (!scope) return q
  return q.where((eb: any) =>
    eb.or([
      eb('user_permission_requests.created_by_id', '=', scope.userId),
      ...inManaged(eb, 'i', scope.managed),
    ]),
  )
}

export type ReqRow = NonNullable<Awaited<ReturnType<typeof visibleRequest>>>
export function visibleRequest(db: Db, scope: RequestScope, uuid: string) {
  return firstWhere(visibleRequests(db, scope).select(reqColumns), 'user_permission_requests.uuid', uuid)
}

/** A customer or a project, as a `scope` filter names it. */
export interface InvitationScopeRef {
  type: 'customer' | 'project'
  uuid: string
}

/** The requests whose invitation is for exactly that customer or project. */
export function requestsOfScope(
  eb: ExpressionBuilder<any, any>,
  scope: InvitationScopeRef,
): Expression<SqlBool> {
  return eb.and([
    eb('i.scope_type', '=', scope.type),
    eb(scope.type === 'customer' ? 'c.uuid' : 'p.uuid', '=', scope.uuid),
  ])
}

/** The requests a scope sees, for the kit's listing; the newest id first among equals. */
export function requestList(db: Db) {
  return scopedList(
    (scope: RequestScope) => visibleRequests(db, scope),
    (q) => q.select(reqColumns),
    { column: 'user_permission_requests.id', desc: true },
  )
}

/**
 * Makes the check for an open request and the insert one step: SQLite write transactions are
 * serialized (BEGIN IMMEDIATE); on PostgreSQL this takes a lock on the user and scope.
 */
export async function lockRequestsOf(trx: Db, userId: number, scopeType: string, scopeId: number) {
  if (isPostgres(trx)) {
    const key = `permission-request:${userId}:${scopeType}:${scopeId}`
    await sql`select pg_advisory_xact_lock(hashtext(${key}))`.execute(trx)
  }
}

/** Has the user a pending or approved request on this scope? */
export async function hasOpenRequest(trx: Db, userId: number, scopeType: string, scopeId: number) {
  const existing = await joined(trx, 'user_permission_requests', [INVITATION_OF_REQUEST])
    .select('user_permission_requests.id')
    .where('user_permission_requests.created_by_id', '=', userId)
    .where('user_permission_requests.state', 'in', ['pending', 'approved'])
    .where('i.scope_type', '=', scopeType)
    .where('i.scope_id', '=', scopeId)
    .executeTakeFirst()
  return existing !== undefined
}

export async function insertRequest(
  trx: Db,
  values: {
    uuid: string
    invitation_id: number
    created_by_id: number
    state: string
    reviewed_by_id: number | null
    reviewed_at: string | null
    created: string
  },
) {
  await trx
    .insertInto('user_permission_requests')
    .values({ ...values, review_comment: null, modified: values.created })
    .execute()
}

/** Moves a pending request to another state; false when it was no longer pending. */
export async function leavePending(trx: Db, id: number, set: Record<string, unknown>): Promise<boolean> {
  const r = await trx
    .updateTable('user_permission_requests')
    .set(set)
    .where('id', '=', id)
    .where('state', '=', 'pending')
    .executeTakeFirst()
  return Number(r.numUpdatedRows) > 0
}
