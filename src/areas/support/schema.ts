// Support issues (the records feedback refers to) and support feedbacks (spec 2.8 / 4.7, reference §7).
import { Type, type Static, type TUnsafe } from '@sinclair/typebox'
import { Body, DateTime, Nullable, Url, Uuid } from '../../http/schemas.js'

export const ISSUES_PATH = 'support-issues'
export const FEEDBACKS_PATH = 'support-feedbacks'

// ---- issues ----

/**
 * An issue's optional links to a user, customer or project: each field, the path (and table) its
 * URLs name, and the suffix of its name field. Each link shows as its URL (`<field>`), its uuid
 * (`<field>_uuid`) and its name (`<field>_<suffix>`), all null without one.
 */
export const ISSUE_LINKS = [
  ['caller', 'users', 'full_name'],
  ['reporter', 'users', 'full_name'],
  ['customer', 'customers', 'name'],
  ['project', 'projects', 'name'],
] as const
type IssueLink = (typeof ISSUE_LINKS)[number]
/** The URL fields of the links. */
export type IssueLinkUrl = IssueLink[0]
/** The uuid and name fields of the links. */
export type IssueLinkCopy = IssueLink extends infer E
  ? E extends readonly [infer N extends string, string, infer L extends string]
    ? `${N}_uuid` | `${N}_${L}`
    : never
  : never

const issueLinkFields = Object.fromEntries(
  ISSUE_LINKS.flatMap(([name, , label]) => [
    [name, Nullable(Url)],
    [`${name}_uuid`, Nullable(Uuid)],
    [`${name}_${label}`, Nullable(Type.String())],
  ]),
) as Record<IssueLinkUrl | IssueLinkCopy, TUnsafe<string | null>>

export const IssueSchema = Type.Object({
  uuid: Uuid,
  url: Url,
  key: Type.String(),
  summary: Type.String(),
  description: Type.String(),
  ...issueLinkFields,
  state: Type.String(),
  resolved: Type.Boolean(),
  created: DateTime,
  modified: DateTime,
})
export type Issue = Static<typeof IssueSchema>

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
/** PATCH: any of the create body's fields. */
export const IssuePatchBody = Type.Partial(IssueCreateBody)
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

/** A feedback's evaluation: a choice of 1 to 10. */
export const EVALUATIONS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] as const
