// All SQL of support issues and feedbacks.
import type { Insertable, Kysely, Transaction } from 'kysely'
import type { DB } from '../../db/tables.js'
import { scopedList } from '../../db/listing.js'
import { firstWhere, insertRow, tableRecords, updateRow } from '../../db/rows.js'
import { joined, unlessAll } from '../../db/joins.js'
import { inAnyOf } from '../../db/sql.js'

type Db = Kysely<DB> | Transaction<DB>

/** Staff and support see every issue; others the issues they are the caller of or whose customer they own. */
export type IssueVisibility = { all: true } | { all: false; userId: number; ownedCustomerIds: number[] }

/** The user who called in an issue (a query joining `support_issues`). */
const CALLER_OF_ISSUE = ['left', 'users as caller', 'support_issues.caller_id'] as const

export function issuesRepository(db: Db) {
  const base = () =>
    joined(db, 'support_issues', [
      CALLER_OF_ISSUE,
      ['left', 'users as reporter', 'support_issues.reporter_id'],
      ['left', 'customers', 'support_issues.customer_id'],
      ['left', 'projects', 'support_issues.project_id'],
    ])
  const visible = unlessAll(base, (q, vis: Extract<IssueVisibility, { all: false }>) =>
    q.where((eb) =>
      inAnyOf(eb, [
        ['support_issues.caller_id', [vis.userId]],
        ['support_issues.customer_id', vis.ownedCustomerIds],
      ]),
    ),
  )
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
  const records = tableRecords(db, {
    table: 'support_issues',
    base,
    visible,
    select: (q) => q.select(columns),
  })
  return {
    ...records,
    findByUuid(uuid: string) {
      return db
        .selectFrom('support_issues')
        .select(['id', 'uuid'])
        .where('uuid', '=', uuid)
        .executeTakeFirst()
    },
    /** Inserts an issue and gives it the key `SUP-<id>`. */
    async insert(values: Omit<Insertable<DB['support_issues']>, 'key'>): Promise<number> {
      const id = await records.insert({ ...values, key: `pending-${values.uuid}` })
      await updateRow(db, 'support_issues', id, { key: `SUP-${id}` })
      return id
    },
  }
}

export type IssueRow = NonNullable<Awaited<ReturnType<ReturnType<typeof issuesRepository>['findById']>>>

export function feedbacksRepository(db: Db) {
  const base = () =>
    joined(db, 'support_feedbacks', [
      ['inner', 'support_issues', 'support_feedbacks.issue_id'],
      CALLER_OF_ISSUE,
    ])
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
    /** Every feedback (the support desk sees them all). */
    ...scopedList(
      (_all: void) => base(),
      (q) => q.select(columns),
      'support_feedbacks.id',
    ),
    findByUuid(uuid: string) {
      return base().select(columns).where('support_feedbacks.uuid', '=', uuid).executeTakeFirst()
    },
    async existsForIssue(issueId: number): Promise<boolean> {
      return !!(await firstWhere(db.selectFrom('support_feedbacks').select('id'), 'issue_id', issueId))
    },
    async insert(values: Insertable<DB['support_feedbacks']>): Promise<void> {
      await insertRow(db, 'support_feedbacks', values)
    },
  }
}

export type FeedbackRow = NonNullable<
  Awaited<ReturnType<ReturnType<typeof feedbacksRepository>['findByUuid']>>
>

export { isUniqueViolation } from '../../db/sql.js'
