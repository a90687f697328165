// All SQL of support issues and feedbacks.
import { type Kysely, type Transaction } from 'kysely'
import type { DB } from '../../db/tables.js'
import { applyConditions, countRows, pageRows, scopedList, type Listing } from '../../db/listing.js'

type Db = Kysely<DB> | Transaction<DB>

/** Staff and support see every issue; others the issues they are the caller of or whose customer they own. */
export type IssueVisibility = { all: true } | { all: false; userId: number; ownedCustomerIds: number[] }

export function issuesRepository(db: Db) {
  function base() {
    return db
      .selectFrom('support_issues')
      .leftJoin('users as caller', 'caller.id', 'support_issues.caller_id')
      .leftJoin('users as reporter', 'reporter.id', 'support_issues.reporter_id')
      .leftJoin('customers', 'customers.id', 'support_issues.customer_id')
      .leftJoin('projects', 'projects.id', 'support_issues.project_id')
  }
  function visible(vis: IssueVisibility) {
    const q = base()
    if (vis.all) return q
    const owned = vis.ownedCustomerIds
    return q.where((eb) =>
      eb.or([
        eb('support_issues.caller_id', '=', vis.userId),
        ...(owned.length ? [eb('support_issues.customer_id', 'in', owned)] : []),
      ]),
    )
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
  const { count, list } = scopedList(visible, (q) => q.select(columns), 'support_issues.id')
  return {
    count,
    list,
    findVisibleByUuid(vis: IssueVisibility, uuid: string) {
      return visible(vis).select(columns).where('support_issues.uuid', '=', uuid).executeTakeFirst()
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

export function feedbacksRepository(db: Db) {
  function base() {
    return db
      .selectFrom('support_feedbacks')
      .innerJoin('support_issues', 'support_issues.id', 'support_feedbacks.issue_id')
      .leftJoin('users as caller', 'caller.id', 'support_issues.caller_id')
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
    count(l: Listing): Promise<number> {
      return countRows(applyConditions(base(), l.where))
    },
    list(l: Listing, limit: number, offset: number) {
      const q = applyConditions(base(), l.where).select(columns)
      return pageRows(q, l.order, 'support_feedbacks.id', limit, offset)
    },
    findByUuid(uuid: string) {
      return base().select(columns).where('support_feedbacks.uuid', '=', uuid).executeTakeFirst()
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
