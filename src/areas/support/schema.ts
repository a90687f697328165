// Support issues (the records feedback refers to) and support feedbacks (spec 2.8 / 4.7, reference §7).
import { Type, type Static } from '@sinclair/typebox'
import { Body, DateTime, ListQuery, Nullable, StringList, Url, Uuid } from '../../http/schemas.js'

export const ISSUES_PATH = 'support-issues'
export const FEEDBACKS_PATH = 'support-feedbacks'

// ---- issues ----
export const IssueSchema = Type.Object({
  uuid: Uuid,
  url: Url,
  key: Type.String(),
  summary: Type.String(),
  description: Type.String(),
  caller: Nullable(Url),
  caller_uuid: Nullable(Uuid),
  caller_full_name: Nullable(Type.String()),
  reporter: Nullable(Url),
  reporter_uuid: Nullable(Uuid),
  reporter_full_name: Nullable(Type.String()),
  customer: Nullable(Url),
  customer_uuid: Nullable(Uuid),
  customer_name: Nullable(Type.String()),
  project: Nullable(Url),
  project_uuid: Nullable(Uuid),
  project_name: Nullable(Type.String()),
  state: Type.String(),
  resolved: Type.Boolean(),
  created: DateTime,
  modified: DateTime,
})
export type Issue = Static<typeof IssueSchema>
export const ISSUE_FIELDS = Object.keys(IssueSchema.properties)

const issueWritable = {
  summary: Type.String({ minLength: 1, maxLength: 255 }),
  description: Type.String({ maxLength: 100000 }),
  caller: Nullable(Type.String({ description: 'user URL; defaults to the requesting user' })),
  reporter: Nullable(Type.String({ description: 'user URL; defaults to the requesting user' })),
  customer: Nullable(Type.String({ description: 'customer URL; defaults to the project customer' })),
  project: Nullable(Type.String({ description: 'project URL' })),
  state: Type.String({ minLength: 1, maxLength: 100 }),
  resolved: Type.Boolean(),
}
export const IssueCreateBody = Body({
  summary: issueWritable.summary,
  description: Type.Optional(issueWritable.description),
  caller: Type.Optional(issueWritable.caller),
  reporter: Type.Optional(issueWritable.reporter),
  customer: Type.Optional(issueWritable.customer),
  project: Type.Optional(issueWritable.project),
  state: Type.Optional(issueWritable.state),
  resolved: Type.Optional(issueWritable.resolved),
})
export const IssuePatchBody = Body({
  summary: Type.Optional(issueWritable.summary),
  description: Type.Optional(issueWritable.description),
  caller: Type.Optional(issueWritable.caller),
  reporter: Type.Optional(issueWritable.reporter),
  customer: Type.Optional(issueWritable.customer),
  project: Type.Optional(issueWritable.project),
  state: Type.Optional(issueWritable.state),
  resolved: Type.Optional(issueWritable.resolved),
})
export interface IssueWrite {
  summary?: string
  description?: string
  caller?: string | null
  reporter?: string | null
  customer?: string | null
  project?: string | null
  state?: string
  resolved?: boolean
}

export const IssueListQuery = ListQuery({
  key: Type.Optional(Type.String()),
  summary: Type.Optional(Type.String({ description: 'contains' })),
  state: Type.Optional(Type.String()),
  resolved: Type.Optional(Type.String()),
  caller_uuid: Type.Optional(Type.String()),
  customer_uuid: Type.Optional(Type.String()),
  project_uuid: Type.Optional(Type.String()),
})
export const ISSUE_ORDERING = {
  created: 'support_issues.created',
  modified: 'support_issues.modified',
  key: 'support_issues.id',
  summary: 'support_issues.summary',
  state: 'support_issues.state',
} as const

export const FeedbackTokenResponse = Type.Object({
  token: Type.String(),
  url: Url,
})

// ---- feedbacks ----
export const FEEDBACK_STATES = [
  'CREATION_SCHEDULED',
  'CREATING',
  'UPDATE_SCHEDULED',
  'UPDATING',
  'DELETION_SCHEDULED',
  'DELETING',
  'OK',
  'ERRED',
] as const

export const FeedbackSchema = Type.Object({
  uuid: Uuid,
  created: DateTime,
  modified: DateTime,
  state: Type.String({ description: FEEDBACK_STATES.join(', ') }),
  evaluation: Type.Integer({ minimum: 1, maximum: 10 }),
  comment: Type.String(),
  issue_uuid: Uuid,
  user_full_name: Nullable(Type.String()),
  issue_key: Type.String(),
  issue_summary: Type.String(),
})
export type Feedback = Static<typeof FeedbackSchema>
export const FEEDBACK_FIELDS = Object.keys(FeedbackSchema.properties)

export const FeedbackCreateBody = Body({
  token: Type.String({ maxLength: 200 }),
  evaluation: Type.Unknown({ description: 'integer 1-10' }),
  comment: Type.Optional(Nullable(Type.String({ maxLength: 100000 }))),
})
export const FeedbackCreateResult = Type.Object({
  uuid: Uuid,
  issue: Url,
  comment: Type.String(),
  evaluation: Type.Integer(),
})

export const EVALUATIONS = ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10'] as const

export const FeedbackListQuery = ListQuery({
  created_after: Type.Optional(Type.String({ description: 'created at or after (date-time)' })),
  created_before: Type.Optional(Type.String({ description: 'created at or before (date-time)' })),
  evaluation: Type.Optional(StringList),
  issue: Type.Optional(Type.String({ description: 'issue URL' })),
  issue_key: Type.Optional(Type.String()),
  issue_uuid: Type.Optional(Type.String()),
  user: Type.Optional(Type.String({ description: 'URL of the issue caller' })),
  user_full_name: Type.Optional(Type.String({ description: 'contains' })),
  user_uuid: Type.Optional(Type.String({ description: 'uuid of the issue caller' })),
})
