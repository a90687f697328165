// Support use cases. Issues are written by staff and support; they are seen by staff, support,
// their caller and the owners of their customer. Feedback is left without a login, by presenting
// a signed token that staff or support obtained for the issue; one feedback per issue.
import type { AppContext } from '../../context.js'
import { foundByUuid } from '../../http/uuid.js'
import { fromBool } from '../../db/values.js'
import { AppError, fieldError, forbidden, nonFieldError } from '../../http/errors.js'
import { recordRenderer, resolveLink, urlOf } from '../../http/links.js'
import { customerIds, seesAll, type Actor } from '../../http/permissions.js'
import type { Listing } from '../../db/listing.js'
import { pageOf, type Pager } from '../../http/resource.js'
import { eachRow, visibleRecords } from '../../http/visible-records.js'
import { findProjectById } from '../directory/service.js'
import { signFeedbackToken, verifyFeedbackToken } from './feedback-token.js'
import {
  feedbacksRepository,
  isUniqueViolation,
  issuesRepository,
  type FeedbackRow,
  type IssueRow,
  type IssueVisibility,
} from './repository.js'
import {
  FEEDBACKS_PATH,
  ISSUE_LINKS,
  ISSUES_PATH,
  type Feedback,
  type Issue,
  type IssueLinkCopy,
  type IssueLinkUrl,
  type IssueWrite,
} from './schema.js'

const TOKEN_WRONG = 'Token is wrong.'

/** Staff and support see every issue; others the issues they are the caller of or whose customer they own. */
export function issueVisibility(actor: Actor): IssueVisibility {
  if (seesAll(actor)) return { all: true }
  return { all: false, userId: actor.id, ownedCustomerIds: customerIds(actor, ['CUSTOMER.OWNER']) }
}

/** Staff and global support run the support desk. */
function requireSupportDesk(actor: Actor): void {
  if (!seesAll(actor)) throw forbidden()
}

/** The renderer's rules of the links' fields: the URL from `<field>_uuid`, the uuid and name copied. */
const issueLinkRules = Object.fromEntries(
  ISSUE_LINKS.flatMap(([name, path, label]) => [
    [name, { link: path }],
    [`${name}_uuid`, 'copy'],
    [`${name}_${label}`, 'copy'],
  ]),
) as Record<IssueLinkUrl, { link: string }> & Record<IssueLinkCopy, 'copy'>

export const toIssue = recordRenderer<IssueRow, Issue>({
  uuid: 'copy',
  url: { link: ISSUES_PATH, from: 'uuid' },
  key: 'copy',
  summary: 'copy',
  description: 'copy',
  ...issueLinkRules,
  state: 'copy',
  resolved: 'flag',
  created: 'copy',
  modified: 'copy',
})

function toFeedback(r: FeedbackRow): Feedback {
  return {
    uuid: r.uuid,
    created: r.created,
    modified: r.modified,
    state: r.state,
    evaluation: Number(r.evaluation),
    comment: r.comment,
    issue_uuid: r.issue_uuid,
    user_full_name: r.user_full_name,
    issue_key: r.issue_key,
    issue_summary: r.issue_summary,
  }
}

// ---- issues ----

/** The issues' list and record, and the visible issue a path names. */
const issues = visibleRecords({
  rows: issuesRepository,
  visibility: issueVisibility,
  model: 'Issue',
  render: eachRow(toIssue),
})
export const listIssues = issues.list

/** The visible issue a path names (404 otherwise). */
export const getIssue = issues.get

/**
 * Resolves the links of an issue body. The customer defaults to the project's customer; a
 * project of another customer is refused.
 */
async function resolveIssueLinks(
  ctx: AppContext,
  body: IssueWrite,
  current: { caller_id: number | null; customer_id: number | null; project_id: number | null } | null,
) {
  const out: Record<string, number | null> = {}
  for (const [field, table] of ISSUE_LINKS) {
    const value = body[field]
    if (value === undefined) continue
    out[`${field}_id`] = value === null ? null : (await resolveLink(ctx.db, field, value, table, table)).id
  }
  const projectId = out.project_id !== undefined ? out.project_id : (current?.project_id ?? null)
  if (projectId !== null) {
    const project = await findProjectById(ctx, projectId)
    const customerId = out.customer_id !== undefined ? out.customer_id : (current?.customer_id ?? null)
    if (customerId === null) out.customer_id = project!.customer_id
    else if (customerId !== project!.customer_id) {
      throw fieldError('project', 'Project does not belong to the selected customer.')
    }
  }
  return out
}

export async function createIssue(
  ctx: AppContext,
  actor: Actor,
  body: IssueWrite,
  base: string,
): Promise<Issue> {
  requireSupportDesk(actor)
  const links = await resolveIssueLinks(ctx, body, null)
  const now = ctx.clock().toISOString()
  const id = await ctx.db.transaction().execute((trx) =>
    issuesRepository(trx).insert({
      uuid: ctx.newUuid(),
      summary: body.summary!,
      description: body.description ?? '',
      caller_id: links.caller_id !== undefined ? links.caller_id : actor.id,
      reporter_id: links.reporter_id !== undefined ? links.reporter_id : actor.id,
      customer_id: links.customer_id ?? null,
      project_id: links.project_id ?? null,
      state: body.state ?? 'new',
      resolved: fromBool(body.resolved ?? false),
      created: now,
      modified: now,
    }),
  )
  return issues.record(ctx, id, base)
}

export async function updateIssue(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: IssueWrite,
  base: string,
): Promise<Issue> {
  const current = await issues.find(ctx, actor, uuid)
  requireSupportDesk(actor)
  const changes: Record<string, unknown> = await resolveIssueLinks(ctx, body, current)
  if (body.summary !== undefined) changes.summary = body.summary
  if (body.description !== undefined) changes.description = body.description
  if (body.state !== undefined) changes.state = body.state
  if (body.resolved !== undefined) changes.resolved = fromBool(body.resolved)
  changes.modified = ctx.clock().toISOString()
  await issuesRepository(ctx.db).update(current.id, changes)
  return issues.record(ctx, current.id, base)
}

export async function deleteIssue(ctx: AppContext, actor: Actor, uuid: string): Promise<void> {
  const current = await issues.find(ctx, actor, uuid)
  requireSupportDesk(actor)
  await issuesRepository(ctx.db).delete(current.id)
}

/** GET feedback_token: a signed token (valid FEEDBACK_TOKEN_DAYS) and the link it travels in. */
export async function feedbackToken(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  base: string,
): Promise<{ token: string; url: string }> {
  requireSupportDesk(actor)
  const issue = await issues.find(ctx, actor, uuid)
  const token = signFeedbackToken(ctx.secretKey, issue.uuid, ctx.clock())
  return { token, url: `${base}/api/${FEEDBACKS_PATH}/?token=${encodeURIComponent(token)}` }
}

// ---- feedbacks ----

/** Evaluation is a choice of 1..10; integers and their strings are accepted (a DRF choice field). */
function parseEvaluation(v: unknown): number | string {
  if (v === null) return 'This field may not be null.'
  const text = typeof v === 'string' ? v : JSON.stringify(v)
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d{1,2}$/.test(v) ? Number(v) : NaN
  if (Number.isInteger(n) && n >= 1 && n <= 10) return n
  return `"${text}" is not a valid choice.`
}

/**
 * POST support-feedbacks (no login needed): field checks first (evaluation, token), then the issue
 * must still exist and have no feedback yet. A racing second submission is stopped by the unique
 * index on the issue and answers the same 400.
 */
export async function createFeedback(
  ctx: AppContext,
  body: { token: string; evaluation: unknown; comment?: string | null },
  base: string,
): Promise<{ uuid: string; issue: string; comment: string; evaluation: number }> {
  const errors: Record<string, string[]> = {}
  const evaluation = parseEvaluation(body.evaluation)
  if (typeof evaluation === 'string') errors.evaluation = [evaluation]
  const check = verifyFeedbackToken(
    ctx.secretKey,
    body.token,
    ctx.clock(),
    ctx.config.feedbackTokenDays * 86400,
  )
  if (!check.ok) errors.token = [TOKEN_WRONG]
  if (Object.keys(errors).length || !check.ok || typeof evaluation === 'string') {
    throw new AppError('invalid', errors)
  }
  const issue = await issuesRepository(ctx.db).findByUuid(check.issueUuid)
  if (!issue) throw nonFieldError('An issue is not found.')
  const repo = feedbacksRepository(ctx.db)
  const duplicate = nonFieldError('Feedback for this issue already exists.')
  if (await repo.existsForIssue(issue.id)) throw duplicate
  const now = ctx.clock().toISOString()
  const uuid = ctx.newUuid()
  const comment = body.comment ?? ''
  try {
    // No support backend to push to: the feedback is recorded and settled (state OK) at once.
    await repo.insert({
      uuid,
      issue_id: issue.id,
      evaluation,
      comment,
      state: 'OK',
      created: now,
      modified: now,
    })
  } catch (e) {
    if (isUniqueViolation(e)) throw duplicate
    throw e
  }
  return { uuid, issue: urlOf(base, ISSUES_PATH, issue.uuid)!, comment, evaluation }
}

export async function listFeedbacks(
  ctx: AppContext,
  actor: Actor,
  listing: Listing,
  page: Pager<Feedback>,
): Promise<Feedback[]> {
  requireSupportDesk(actor)
  return pageOf(page, feedbacksRepository(ctx.db), undefined, listing, toFeedback)
}

export async function getFeedback(ctx: AppContext, actor: Actor, uuid: string): Promise<Feedback> {
  requireSupportDesk(actor)
  const find = (u: string) => feedbacksRepository(ctx.db).findByUuid(u)
  return toFeedback(await foundByUuid(uuid, find, 'Feedback'))
}
