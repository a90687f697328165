// HTTP for /api/support-issues/ and /api/support-feedbacks/.
import { filter } from '../../http/filters.js'
import {
  defineResource,
  namedService,
  recordOperations,
  resourceRoutes,
  orderedBy,
} from '../../http/resource.js'
import { errors } from '../../http/schemas.js'
import * as svc from './service.js'
import * as s from './schema.js'

export const supportIssues = defineResource({
  path: s.ISSUES_PATH,
  noun: 'support issue',
  record: s.IssueSchema,
  visibility: svc.issueVisibility,
  list: {
    filters: {
      key: filter.exact('support_issues.key'),
      summary: filter.contains('support_issues.summary', { description: 'contains' }),
      state: filter.exact('support_issues.state'),
      resolved: filter.boolean('support_issues.resolved'),
      caller_uuid: filter.uuid('caller.uuid'),
      customer_uuid: filter.uuid('customers.uuid'),
      project_uuid: filter.uuid('projects.uuid'),
    },
    ordering: orderedBy(
      {
        created: 'support_issues.created',
        modified: 'support_issues.modified',
        key: 'support_issues.id',
        summary: 'support_issues.summary',
        state: 'support_issues.state',
      },
      '-created',
    ),
    run: (c) => svc.listIssues(c.ctx, c.scope, c.listing, c.base, c.page),
  },
  ...recordOperations(namedService(svc, 'Issue'), { create: s.IssueCreateBody, patch: s.IssuePatchBody }),
  actions: [
    {
      name: 'feedback_token',
      method: 'GET',
      summary: 'A signed token with which anyone holding it may leave feedback on the issue (staff, support)',
      response: s.FeedbackTokenResponse,
      run: (c) => svc.feedbackToken(c.ctx, c.actor, c.uuid, c.base),
    },
  ],
})

export const supportFeedbacks = defineResource({
  path: s.FEEDBACKS_PATH,
  noun: 'support feedback',
  record: s.FeedbackSchema,
  list: {
    filters: {
      created_after: filter.after('support_feedbacks.created', {
        description: 'created at or after (date-time)',
      }),
      created_before: filter.before('support_feedbacks.created', {
        description: 'created at or before (date-time)',
      }),
      evaluation: filter.choice(s.EVALUATIONS, 'support_feedbacks.evaluation'),
      issue: filter.link(s.ISSUES_PATH, 'support_issues.uuid', { description: 'issue URL' }),
      issue_key: filter.exact('support_issues.key'),
      issue_uuid: filter.uuid('support_issues.uuid'),
      user: filter.link('users', 'caller.uuid', { description: 'URL of the issue caller' }),
      user_full_name: filter.contains('caller.full_name', { description: 'contains' }),
      user_uuid: filter.uuid('caller.uuid', { description: 'uuid of the issue caller' }),
    },
    // Oldest first, always (the reference offers no ordering here).
    ordering: { default: [{ column: 'support_feedbacks.created', desc: false }] },
    run: (c) => svc.listFeedbacks(c.ctx, c.actor, c.listing, c.page),
  },
  retrieve: { run: (c) => svc.getFeedback(c.ctx, c.actor, c.uuid) },
  create: {
    summary: 'Leave feedback on a support issue with a feedback token (no login needed)',
    public: true,
    body: s.FeedbackCreateBody,
    response: s.FeedbackCreateResult,
    errors: { 400: errors[400], 401: errors[401] },
    run: (c) => svc.createFeedback(c.ctx, c.body, c.base),
  },
})

export const supportRoutes = resourceRoutes([supportIssues, supportFeedbacks])
