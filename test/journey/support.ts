import assert from 'node:assert/strict'
import { answer, uuidsOf } from './client.js'
import type { Journey } from './world.js'

export const supportJourneys: Journey[] = [
  {
    name: 'a user who reported an issue rates its resolution with the feedback token, without logging in; support staff read the feedback',
    async run(w) {
      const staff = await w.user({ staff: true })
      const support = await w.user({ support: true })
      const reporter = await w.user({ fullName: 'Rita Reporter' })
      // The issue and its feedback token come from the support desk, outside the contract areas.
      const issue = await w.http<{ uuid: string; key: string }>('POST', '/api/support-issues/', staff, {
        summary: 'VPN drops every hour',
        caller: reporter.url,
      })
      assert.equal(issue.status, 201, JSON.stringify(issue.body))
      const link = await w.http<{ token: string }>(
        'GET',
        `/api/support-issues/${issue.body.uuid}/feedback_token/`,
        support,
      )
      assert.equal(link.status, 200, JSON.stringify(link.body))

      const feedback = await answer(
        201,
        w.api().POST('/api/support-feedbacks/', {
          body: { token: link.body.token, evaluation: 9, comment: 'Fixed within the day' },
        }),
      )
      assert.equal(feedback.evaluation, 9)
      assert.equal(feedback.issue, `${w.baseUrl}/api/support-issues/${issue.body.uuid}/`)

      const desk = w.api(support)
      assert.deepEqual(
        await uuidsOf(
          desk.GET('/api/support-feedbacks/', { params: { query: { issue_uuid: issue.body.uuid } } }),
        ),
        [feedback.uuid],
      )
      const read = await answer(
        200,
        desk.GET('/api/support-feedbacks/{uuid}/', { params: { path: { uuid: feedback.uuid } } }),
      )
      assert.equal(read.comment, 'Fixed within the day')
      assert.equal(read.issue_key, issue.body.key)
      assert.equal(read.user_full_name, 'Rita Reporter')
    },
  },
]
