// All SQL of support issues and feedbacks.
import { sql, type Kysely, type Transaction } from 'kysely'
import type { DB } from '../../db/tables.js'
import { icontains } from '../../db/sql.js'
import type { OrderTerm } from '../../http/query.js'

type Db = Kysely<DB> | Transaction<DB>

/** Staff and support see every issue; others the issues they are the caller of or whose customer they own. */
export type IssueVisibility = { all: true } | { all: false; userId: number; ownedCustomerIds: number[] }

export interface IssueFilters {
  key?: string
  summary?: string
  state?: string
  resolved?: boolean
  caller_uuid?: string
  customer_uuid?: string
  project_uuid?: string
}

export function issuesRepository(db: Db) {
  function base() {
    return db
      .selectFrom('support_issues')
      .leftJoin('users as caller', 'caller.id', 'support_issues.caller_id')
      .leftJoin('users as reporter', 'reporter.id', 'support_issues.reporter_id')
      .leftJoin('customers', 'customers.id', 'support_issues.customer_id')
      .leftJoin('projects', 'projects.id', 'support_issues.project_id')
  }
  function filtered(vis: IssueVisibility, f: IssueFilters) {
    let q = base()
    if (!vis.all) {
      const owned = vis.ownedCustomerIds
      q = q.where((eb) =>
        eb.or([
          eb('support_issues.caller_id', '=', vis.userId),
          ...(owned.length ? [eb('support_issues.customer_id', 'in', owned)] : []),
        ]),
      )
    }
    if (f.key) q = q.where('support_issues.key', '=', f.key)
    if (f.summary) q = q.where(icontains('support_issues.summary', f.summary))
    if (f.state) q = q.where('support_issues.state', '=', f.state)
    if (f.resolved !== undefined) q = q.where('support_issues.resolved', '=', f.resolved ? 1 : 0)
    if (f.caller_uuid) q = q.where('caller.uuid', '=', f.caller_uuid)
    if (f.customer_uuid) q = q.where('customers.uuid', '=', f.customer_uuid)
    if (f.project_uuid) q = q.where('projects.uuid', '=', f.project_uuid)
    return q
  }
  const columns = [
    'support_issues.id',
    'support_issues.uuid',
    'support_issues.key',
    'support_issues.summary',
    'support_issues.description',
    'support_issues.caller_id',
    'support_issues.customer_id',
    'support_issues.project_id',
    'support_issues.state',
    'support_issues.resolved',
    'support_issues.created',
    'support_issues.modified',
    'caller.uuid as caller_uuid',
    'caller.full_name as caller_full_name',
    'reporter.uuid as reporter_uuid',
    'reporter.full_name as reporter_full_name',
    'customers.uuid as customer_uuid',
    'customers.name as customer_name',
    'projects.uuid as project_uuid',
    'projects.name as project_name',
  ] as const
  return {
    async count(vis: IssueVisibility, f: IssueFilters): Promise<number> {
      const r = await filtered(vis, f)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
      return Number(r.n)
    },
    list(vis: IssueVisibility, f: IssueFilters, order: OrderTerm[], limit: number, offset: number) {
      let q = filtered(vis, f).select(columns)
      for (const t of order) q = q.orderBy(t.column as any, t.desc ? 'desc' : 'asc')
      return q.orderBy('support_issues.id', 'asc').limit(limit).offset(offset).execute()
    },
    findVisibleByUuid(vis: IssueVisibility, uuid: string) {
      return filtered(vis, {}).select(columns).where('support_issues.uuid', '=', uuid).executeTakeFirst()
    },
    findById(id: number) {
      return base().select(columns).where('support_issues.id', '=', id).executeTakeFirstOrThrow()
    },
    findByUuid(uuid: string) {
      return db
        .selectFrom('support_issues')
        .select(['id', 'uuid'])
        .where('uuid', '=', uuid)
        .executeTakeFirst()
    },
    /** Inserts an issue and gives it the key `SUP-<id>`. */
    async insert(values: {
      uuid: string
      summary: string
      description: string
      caller_id: number | null
      reporter_id: number | null
      customer_id: number | null
      project_id: number | null
      state: string
      resolved: number
      created: string
      modified: string
    }): Promise<number> {
      const r = await db
        .insertInto('support_issues')
        .values({ ...values, key: `pending-${values.uuid}` })
        .returning('id')
        .executeTakeFirstOrThrow()
      await db
        .updateTable('support_issues')
        .set({ key: `SUP-${r.id}` })
        .where('id', '=', r.id)
        .execute()
      return r.id
    },
    async update(id: number, values: Record<string, unknown>): Promise<void> {
      await db
        .updateTable('support_issues')
        .set(values as any)
        .where('id', '=', id)
        .execute()
    },
    async delete(id: number): Promise<void> {
      await db.deleteFrom('support_issues').where('id', '=', id).execute()
    },
  }
}

export type IssueRow = Awaited<ReturnType<ReturnType<typeof issuesRepository>['findById']>>

export interface FeedbackFilters {
  created_after?: string
  created_before?: string
  evaluations?: number[]
  /** null: matches nothing (a URL of another kind was given). */
  issue_uuid?: string | null
  issue_key?: string
  user_uuid?: string | null
  user_full_name?: string
}

export function feedbacksRepository(db: Db) {
  function filtered(f: FeedbackFilters) {
    let q = db
      .selectFrom('support_feedbacks')
      .innerJoin('support_issues', 'support_issues.id', 'support_feedbacks.issue_id')
      .leftJoin('users as caller', 'caller.id', 'support_issues.caller_id')
    if (f.created_after) q = q.where('support_feedbacks.created', '>=', f.created_after)
    if (f.created_before) q = q.where('support_feedbacks.created', '<=', f.created_before)
    if (f.evaluations?.length) q = q.where('support_feedbacks.evaluation', 'in', f.evaluations)
    if (f.issue_uuid === null || f.user_uuid === null) q = q.where(sql<boolean>`1 = 0`)
    if (f.issue_uuid) q = q.where('support_issues.uuid', '=', f.issue_uuid)
    if (f.issue_key) q = q.where('support_issues.key', '=', f.issue_key)
    if (f.user_uuid) q = q.where('caller.uuid', '=', f.user_uuid)
    if (f.user_full_name) q = q.where(icontains('caller.full_name', f.user_full_name))
    return q
  }
  const columns = [
    'support_feedbacks.id',
    'support_feedbacks.uuid',
    'support_feedbacks.created',
    'support_feedbacks.modified',
    'support_feedbacks.state',
    'support_feedbacks.evaluation',
    'support_feedbacks.comment',
    'support_issues.uuid as issue_uuid',
    'support_issues.key as issue_key',
    'support_issues.summary as issue_summary',
    'caller.full_name as user_full_name',
  ] as const
  return {
    async count(f: FeedbackFilters): Promise<number> {
      const r = await filtered(f)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
      return Number(r.n)
    },
    list(f: FeedbackFilters, order: OrderTerm[], limit: number, offset: number) {
      let q = filtered(f).select(columns)
      for (const t of order) q = q.orderBy(t.column as any, t.desc ? 'desc' : 'asc')
      return q.orderBy('support_feedbacks.id', 'asc').limit(limit).offset(offset).execute()
    },
    findByUuid(uuid: string) {
      return filtered({}).select(columns).where('support_feedbacks.uuid', '=', uuid).executeTakeFirst()
    },
    async existsForIssue(issueId: number): Promise<boolean> {
      const r = await db
        .selectFrom('support_feedbacks')
        .select('id')
        .where('issue_id', '=', issueId)
        .executeTakeFirst()
      return !!r
    },
    async insert(values: {
      uuid: string
      issue_id: number
      evaluation: number
      comment: string
      state: string
      created: string
      modified: string
    }): Promise<void> {
      await db.insertInto('support_feedbacks').values(values).execute()
    },
  }
}

export type FeedbackRow = NonNullable<
  Awaited<ReturnType<ReturnType<typeof feedbacksRepository>['findByUuid']>>
>

/** A unique index refused the row (SQLite and PostgreSQL error shapes). */
export function isUniqueViolation(e: unknown): boolean {
  const err = e as { code?: unknown }
  return err?.code === '23505' || err?.code === 'SQLITE_CONSTRAINT_UNIQUE'
}
