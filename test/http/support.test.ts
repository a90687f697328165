import { before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { buildTestApp, sharedTestApp } from '../support/app.js'
import { call, client, pathOf } from '../support/client.js'
import { grant, makeCustomer, makeProject, makeUser, type Ref, type UserRef } from '../support/fixtures.js'

const t = sharedTestApp(async (t) => ({
  staff: await makeUser(t.ctx, { staff: true, fullName: 'Stella Staff' }),
  support: await makeUser(t.ctx, { support: true, fullName: 'Sam Support' }),
}))

const ISSUES = '/api/support-issues/'
const FEEDBACKS = '/api/support-feedbacks/'
const anonymous = () => client(t.app)

async function makeIssue(body: Record<string, unknown> = {}) {
  const r = await client(t.app, t.staff.token).post(ISSUES, { summary: 'Broken VM', ...body })
  assert.equal(r.status, 201, JSON.stringify(r.body))
  return r.body
}

async function tokenFor(issueUuid: string): Promise<string> {
  const r = await client(t.app, t.support.token).get(`${ISSUES}${issueUuid}/feedback_token/`)
  assert.equal(r.status, 200, JSON.stringify(r.body))
  return r.body.token
}

describe('support issues', () => {
  test('staff creates an issue with generated key, caller, reporter, customer and project', async () => {
    const customer = await makeCustomer(t.ctx)
    const project = await makeProject(t.ctx, customer)
    const caller = await makeUser(t.ctx, { fullName: 'Carl Caller' })
    const r = await client(t.app, t.staff.token).post(ISSUES, {
      summary: 'Cannot log in',
      description: 'Since Monday',
      caller: caller.url,
      project: project.url,
    })
    assert.equal(r.status, 201)
    const b = r.body
    assert.match(b.key, /^SUP-\d+$/)
    assert.deepEqual(b, {
      uuid: b.uuid,
      url: `http://localhost:80/api/support-issues/${b.uuid}/`,
      key: b.key,
      summary: 'Cannot log in',
      description: 'Since Monday',
      caller: `http://localhost:80/api/users/${caller.uuid}/`,
      caller_uuid: caller.uuid,
      caller_full_name: 'Carl Caller',
      reporter: `http://localhost:80/api/users/${t.staff.uuid}/`,
      reporter_uuid: t.staff.uuid,
      reporter_full_name: 'Stella Staff',
      customer: `http://localhost:80/api/customers/${customer.uuid}/`,
      customer_uuid: customer.uuid,
      customer_name: customer.name,
      project: `http://localhost:80/api/projects/${project.uuid}/`,
      project_uuid: project.uuid,
      project_name: project.name,
      state: 'new',
      resolved: false,
      created: t.clock.now().toISOString(),
      modified: t.clock.now().toISOString(),
    })
    const second = await makeIssue()
    assert.equal(Number(second.key.slice(4)), Number(b.key.slice(4)) + 1)
  })

  test('a project of another customer is refused; summary is required', async () => {
    const a = await makeCustomer(t.ctx)
    const b = await makeCustomer(t.ctx)
    const project = await makeProject(t.ctx, b)
    const r = await client(t.app, t.staff.token).post(ISSUES, {
      summary: 'x',
      customer: a.url,
      project: project.url,
    })
    assert.equal(r.status, 400)
    assert.deepEqual(r.body, { project: ['Project does not belong to the selected customer.'] })
    const missing = await client(t.app, t.staff.token).post(ISSUES, {})
    assert.equal(missing.status, 400)
    assert.deepEqual(missing.body, { summary: ['This field is required.'] })
    const badCaller = await client(t.app, t.staff.token).post(ISSUES, { summary: 'x', caller: a.url })
    assert.equal(badCaller.status, 400)
    assert.deepEqual(badCaller.body, { caller: ['Invalid hyperlink - Incorrect URL match.'] })
  })

  test('support changes state and resolved; others may not write', async () => {
    const owner = await makeUser(t.ctx)
    const customer = await makeCustomer(t.ctx)
    await grant(t.ctx, owner, 'CUSTOMER.OWNER', { type: 'customer', id: customer.id })
    const issue = await makeIssue({ customer: customer.url })
    const r = await client(t.app, t.support.token).patch(`${ISSUES}${issue.uuid}/`, {
      state: 'In progress',
      resolved: true,
    })
    assert.equal(r.status, 200)
    assert.equal(r.body.state, 'In progress')
    assert.equal(r.body.resolved, true)
    const outsider = await makeUser(t.ctx)
    assert.equal(
      (await client(t.app, owner.token).patch(`${ISSUES}${issue.uuid}/`, { state: 'x' })).status,
      403,
    )
    assert.equal((await client(t.app, owner.token).delete(`${ISSUES}${issue.uuid}/`)).status, 403)
    assert.equal(
      (await client(t.app, outsider.token).patch(`${ISSUES}${issue.uuid}/`, { state: 'x' })).status,
      404,
    )
    assert.equal((await client(t.app, owner.token).post(ISSUES, { summary: 'mine' })).status, 403)
    const put = await client(t.app, t.staff.token).put(`${ISSUES}${issue.uuid}/`, { summary: 'Renamed' })
    assert.equal(put.status, 200)
    assert.equal(put.body.summary, 'Renamed')
    const del = await client(t.app, t.support.token).delete(`${ISSUES}${issue.uuid}/`)
    assert.equal(del.status, 204)
    assert.equal((await client(t.app, t.staff.token).get(`${ISSUES}${issue.uuid}/`)).status, 404)
  })

  test('issues are visible to staff, support, their caller and the customer owners only', async () => {
    const customer = await makeCustomer(t.ctx)
    const owner = await makeUser(t.ctx)
    await grant(t.ctx, owner, 'CUSTOMER.OWNER', { type: 'customer', id: customer.id })
    const project = await makeProject(t.ctx, customer)
    const projectAdmin = await makeUser(t.ctx)
    await grant(t.ctx, projectAdmin, 'PROJECT.ADMIN', { type: 'project', id: project.id })
    const caller = await makeUser(t.ctx)
    const issue = await makeIssue({ caller: caller.url, customer: customer.url })
    for (const u of [t.staff, t.support, caller, owner]) {
      const r = await client(t.app, u.token).get(`${ISSUES}${issue.uuid}/`)
      assert.equal(r.status, 200)
      const list = await client(t.app, u.token).get(`${ISSUES}?customer_uuid=${customer.uuid}`)
      assert.deepEqual(
        list.body.map((i: { uuid: string }) => i.uuid),
        [issue.uuid],
      )
    }
    const outsider = await makeUser(t.ctx)
    for (const u of [projectAdmin, outsider]) {
      const r = await client(t.app, u.token).get(`${ISSUES}${issue.uuid}/`)
      assert.equal(r.status, 404)
      assert.deepEqual(r.body, { detail: 'No Issue matches the given query.' })
      assert.deepEqual((await client(t.app, u.token).get(ISSUES)).body, [])
    }
    assert.equal((await anonymous().get(ISSUES)).status, 401)
  })

  test('issue list filters and ordering', async () => {
    const customer = await makeCustomer(t.ctx)
    const caller = await makeUser(t.ctx)
    const a = await makeIssue({ summary: 'Disk full', customer: customer.url, caller: caller.url })
    t.clock.advance(1000)
    const b = await makeIssue({
      summary: 'Network down',
      customer: customer.url,
      state: 'open',
      resolved: true,
    })
    const as = client(t.app, t.staff.token)
    const uuids = async (qs: string) =>
      (await as.get(`${ISSUES}?customer_uuid=${customer.uuid}&${qs}`)).body.map(
        (i: { uuid: string }) => i.uuid,
      )
    assert.deepEqual(await uuids(''), [b.uuid, a.uuid])
    assert.deepEqual(await uuids('o=created'), [a.uuid, b.uuid])
    assert.deepEqual(await uuids('summary=disk'), [a.uuid])
    assert.deepEqual(await uuids(`key=${b.key}`), [b.uuid])
    assert.deepEqual(await uuids('state=open'), [b.uuid])
    assert.deepEqual(await uuids('resolved=false'), [a.uuid])
    assert.deepEqual(await uuids(`caller_uuid=${caller.uuid}`), [a.uuid])
  })
})

describe('feedback tokens', () => {
  test('staff and support obtain a signed token and its link; others 403', async () => {
    const caller = await makeUser(t.ctx)
    const issue = await makeIssue({ caller: caller.url })
    const r = await client(t.app, t.staff.token).get(`${ISSUES}${issue.uuid}/feedback_token/`)
    assert.equal(r.status, 200)
    const hex = issue.uuid.replace(/-/g, '')
    const ts = Math.floor(t.clock.now().getTime() / 1000)
    const sig = createHmac('sha256', t.ctx.secretKey).update(`${hex}:${ts}`).digest('base64url')
    assert.deepEqual(r.body, {
      token: `${hex}:${ts}:${sig}`,
      url: `http://localhost:80/api/support-feedbacks/?token=${encodeURIComponent(`${hex}:${ts}:${sig}`)}`,
    })
    const byCaller = await client(t.app, caller.token).get(`${ISSUES}${issue.uuid}/feedback_token/`)
    assert.equal(byCaller.status, 403)
    assert.equal((await anonymous().get(`${ISSUES}${issue.uuid}/feedback_token/`)).status, 401)
    assert.equal((await client(t.app, t.staff.token).get(`${ISSUES}nope/feedback_token/`)).status, 404)
  })
})

describe('leaving feedback', () => {
  test('anyone holding a token leaves feedback without logging in: 201 with the create result', async () => {
    const issue = await makeIssue()
    const token = await tokenFor(issue.uuid)
    const r = await anonymous().post(FEEDBACKS, { token, evaluation: 9, comment: 'Quick fix, thanks' })
    assert.equal(r.status, 201)
    assert.deepEqual(r.body, {
      uuid: r.body.uuid,
      issue: `http://localhost:80/api/support-issues/${issue.uuid}/`,
      comment: 'Quick fix, thanks',
      evaluation: 9,
    })
    const got = await client(t.app, t.staff.token).get(`${FEEDBACKS}${r.body.uuid}/`)
    assert.equal(got.status, 200)
    const now = t.clock.now().toISOString()
    assert.deepEqual(got.body, {
      uuid: r.body.uuid,
      created: now,
      modified: now,
      state: 'OK',
      evaluation: 9,
      comment: 'Quick fix, thanks',
      issue_uuid: issue.uuid,
      user_full_name: 'Stella Staff',
      issue_key: issue.key,
      issue_summary: 'Broken VM',
    })
  })

  test('the comment is optional and evaluation may be its string form', async () => {
    const issue = await makeIssue()
    const r = await anonymous().post(FEEDBACKS, { token: await tokenFor(issue.uuid), evaluation: '1' })
    assert.equal(r.status, 201)
    assert.equal(r.body.evaluation, 1)
    assert.equal(r.body.comment, '')
  })

  test('a forged signature is refused with Token is wrong.', async () => {
    const issue = await makeIssue()
    const token = await tokenFor(issue.uuid)
    const [hex, ts] = token.split(':')
    const forged = `${hex}:${ts}:${createHmac('sha256', 'not-the-secret').update(`${hex}:${ts}`).digest('base64url')}`
    const r = await anonymous().post(FEEDBACKS, { token: forged, evaluation: 5 })
    assert.equal(r.status, 400)
    assert.deepEqual(r.body, { token: ['Token is wrong.'] })
    // Re-pointing a genuine signature at another issue fails too.
    const other = await makeIssue()
    const moved = `${other.uuid.replace(/-/g, '')}:${token.split(':').slice(1).join(':')}`
    assert.deepEqual((await anonymous().post(FEEDBACKS, { token: moved, evaluation: 5 })).body, {
      token: ['Token is wrong.'],
    })
  })

  test('garbled tokens are refused with Token is wrong.', async () => {
    for (const token of ['', 'garbage', 'a:b:c', `${'0'.repeat(32)}:1:${'x'.repeat(43)}`, 'x'.repeat(200)]) {
      const r = await anonymous().post(FEEDBACKS, { token, evaluation: 5 })
      assert.equal(r.status, 400, token)
      assert.deepEqual(r.body, { token: ['Token is wrong.'] })
    }
    const notString = await anonymous().post(FEEDBACKS, { token: 42, evaluation: 5 })
    assert.equal(notString.status, 400)
    assert.ok(notString.body.token)
  })

  test('a token older than FEEDBACK_TOKEN_DAYS is expired; one second younger still works', async () => {
    const a = await makeIssue()
    const b = await makeIssue()
    const tokenA = await tokenFor(a.uuid)
    const tokenB = await tokenFor(b.uuid)
    const start = t.clock.now().toISOString()
    try {
      t.clock.advance(t.config.feedbackTokenDays * 86400 * 1000)
      const ok = await anonymous().post(FEEDBACKS, { token: tokenA, evaluation: 7 })
      assert.equal(ok.status, 201)
      t.clock.advance(1000)
      const expired = await anonymous().post(FEEDBACKS, { token: tokenB, evaluation: 7 })
      assert.equal(expired.status, 400)
      assert.deepEqual(expired.body, { token: ['Token is wrong.'] })
    } finally {
      t.clock.set(start)
    }
  })

  test('a token is good for one feedback only: reuse is refused', async () => {
    const issue = await makeIssue()
    const token = await tokenFor(issue.uuid)
    assert.equal((await anonymous().post(FEEDBACKS, { token, evaluation: 3 })).status, 201)
    const again = await anonymous().post(FEEDBACKS, { token, evaluation: 10 })
    assert.equal(again.status, 400)
    assert.deepEqual(again.body, { non_field_errors: ['Feedback for this issue already exists.'] })
    // A freshly issued token for the same issue does not open a second feedback either.
    const fresh = await anonymous().post(FEEDBACKS, { token: await tokenFor(issue.uuid), evaluation: 10 })
    assert.deepEqual(fresh.body, { non_field_errors: ['Feedback for this issue already exists.'] })
  })

  test('two racing submissions for one issue make exactly one feedback', async () => {
    const issue = await makeIssue()
    const token = await tokenFor(issue.uuid)
    const results = await Promise.all(
      [1, 2, 3].map((e) => anonymous().post(FEEDBACKS, { token, evaluation: e })),
    )
    assert.deepEqual(results.map((r) => r.status).sort(), [201, 400, 400])
    const rows = await t.ctx.db
      .selectFrom('support_feedbacks')
      .innerJoin('support_issues', 'support_issues.id', 'support_feedbacks.issue_id')
      .select('support_feedbacks.id')
      .where('support_issues.uuid', '=', issue.uuid)
      .execute()
    assert.equal(rows.length, 1)
  })

  test('a token for an issue that is gone gives the non-field error', async () => {
    const issue = await makeIssue()
    const token = await tokenFor(issue.uuid)
    assert.equal((await client(t.app, t.staff.token).delete(`${ISSUES}${issue.uuid}/`)).status, 204)
    const r = await anonymous().post(FEEDBACKS, { token, evaluation: 5 })
    assert.equal(r.status, 400)
    assert.deepEqual(r.body, { non_field_errors: ['An issue is not found.'] })
  })

  test('evaluation must be 1 to 10', async () => {
    const issue = await makeIssue()
    const token = await tokenFor(issue.uuid)
    for (const [value, text] of [
      [11, '11'],
      [0, '0'],
      ['abc', 'abc'],
      [5.5, '5.5'],
    ] as const) {
      const r = await anonymous().post(FEEDBACKS, { token, evaluation: value })
      assert.equal(r.status, 400)
      assert.deepEqual(r.body, { evaluation: [`"${text}" is not a valid choice.`] })
    }
    const nullish = await anonymous().post(FEEDBACKS, { token, evaluation: null })
    assert.deepEqual(nullish.body, { evaluation: ['This field may not be null.'] })
    const missing = await anonymous().post(FEEDBACKS, { token })
    assert.deepEqual(missing.body, { evaluation: ['This field is required.'] })
    const both = await anonymous().post(FEEDBACKS, { token: 'bad', evaluation: 11 })
    assert.deepEqual(both.body, { evaluation: ['"11" is not a valid choice.'], token: ['Token is wrong.'] })
  })

  test('an invalid Authorization header is still 401 on the anonymous endpoint', async () => {
    const r = await client(t.app, 'not-a-token').post(FEEDBACKS, { token: 'x', evaluation: 1 })
    assert.equal(r.status, 401)
  })
})

describe('reading feedback', () => {
  let issues: { uuid: string; key: string }[]
  let feedbacks: string[]
  let callerA: UserRef
  let callerB: UserRef
  let customer: Ref
  before(async () => {
    customer = await makeCustomer(t.ctx)
    callerA = await makeUser(t.ctx, { fullName: 'Alice Anders' })
    callerB = await makeUser(t.ctx, { fullName: 'Bob Berg' })
    issues = [
      await makeIssue({ caller: callerA.url, customer: customer.url, summary: 'First' }),
      await makeIssue({ caller: callerB.url, customer: customer.url, summary: 'Second' }),
      await makeIssue({ caller: callerA.url, customer: customer.url, summary: 'Third' }),
    ]
    feedbacks = []
    t.clock.set('2026-03-01T00:00:00.000Z')
    for (const [i, issue] of issues.entries()) {
      const token = await tokenFor(issue.uuid)
      const r = await anonymous().post(FEEDBACKS, { token, evaluation: [2, 8, 10][i], comment: `c${i}` })
      assert.equal(r.status, 201)
      feedbacks.push(r.body.uuid)
      t.clock.advanceHours(24)
    }
  })
  const mine = (body: { uuid: string }[]) => body.map((f) => f.uuid).filter((u) => feedbacks.includes(u))

  test('only staff and support list or retrieve; others 403, anonymous 401', async () => {
    for (const u of [t.staff, t.support]) {
      const r = await client(t.app, u.token).get(`${FEEDBACKS}?page_size=300`)
      assert.equal(r.status, 200)
      assert.deepEqual(mine(r.body), feedbacks)
    }
    const owner = await makeUser(t.ctx)
    await grant(t.ctx, owner, 'CUSTOMER.OWNER', { type: 'customer', id: customer.id })
    for (const u of [callerA, owner]) {
      const list = await client(t.app, u.token).get(FEEDBACKS)
      assert.equal(list.status, 403)
      assert.deepEqual(list.body, { detail: 'You do not have permission to perform this action.' })
      assert.equal((await client(t.app, u.token).get(`${FEEDBACKS}${feedbacks[0]}/`)).status, 403)
    }
    assert.equal((await anonymous().get(FEEDBACKS)).status, 401)
    assert.equal((await anonymous().get(`${FEEDBACKS}${feedbacks[0]}/`)).status, 401)
    const missing = await client(t.app, t.staff.token).get(
      `${FEEDBACKS}00000000-0000-4000-8000-000000000000/`,
    )
    assert.equal(missing.status, 404)
    assert.deepEqual(missing.body, { detail: 'No Feedback matches the given query.' })
  })

  test('PUT, PATCH and DELETE are not allowed', async () => {
    const as = client(t.app, t.staff.token)
    for (const r of [
      await as.put(`${FEEDBACKS}${feedbacks[0]}/`, { evaluation: 1 }),
      await as.patch(`${FEEDBACKS}${feedbacks[0]}/`, { evaluation: 1 }),
      await as.delete(`${FEEDBACKS}${feedbacks[0]}/`),
    ]) {
      assert.equal(r.status, 405)
    }
    const put = await call(t.app, 'PUT', `${FEEDBACKS}${feedbacks[0]}/`, { token: t.staff.token, body: {} })
    assert.deepEqual(put.body, { detail: 'Method "PUT" not allowed.' })
  })

  const list = async (qs: string) => {
    const r = await client(t.app, t.support.token).get(`${FEEDBACKS}?page_size=300&${qs}`)
    assert.equal(r.status, 200, JSON.stringify(r.body))
    return mine(r.body)
  }

  test('created_after (inclusive) and created_before (inclusive)', async () => {
    assert.deepEqual(await list('created_after=2026-03-02T00:00:00Z'), [feedbacks[1], feedbacks[2]])
    assert.deepEqual(await list('created_before=2026-03-02T00:00:00Z'), [feedbacks[0], feedbacks[1]])
    assert.deepEqual(await list('created_after=2026-03-02&created_before=2026-03-02T00:00:00Z'), [
      feedbacks[1],
    ])
    const bad = await client(t.app, t.support.token).get(`${FEEDBACKS}?created_after=yesterday`)
    assert.equal(bad.status, 400)
    assert.deepEqual(bad.body, { created_after: ['Enter a valid date/time.'] })
  })

  test('evaluation is repeatable and limited to 1..10', async () => {
    assert.deepEqual(await list('evaluation=8'), [feedbacks[1]])
    assert.deepEqual(await list('evaluation=2&evaluation=10'), [feedbacks[0], feedbacks[2]])
    const bad = await client(t.app, t.support.token).get(`${FEEDBACKS}?evaluation=11`)
    assert.equal(bad.status, 400)
    assert.deepEqual(bad.body, {
      evaluation: ['Select a valid choice. 11 is not one of the available choices.'],
    })
  })

  test('issue (URL), issue_uuid and issue_key', async () => {
    const url = `http://localhost:80/api/support-issues/${issues[1]!.uuid}/`
    assert.deepEqual(await list(`issue=${encodeURIComponent(url)}`), [feedbacks[1]])
    assert.deepEqual(await list(`issue=${encodeURIComponent(pathOf(url))}`), [feedbacks[1]])
    assert.deepEqual(
      await list(`issue=${encodeURIComponent(`http://localhost/api/users/${issues[1]!.uuid}/`)}`),
      [],
    )
    assert.deepEqual(await list(`issue_uuid=${issues[2]!.uuid}`), [feedbacks[2]])
    assert.deepEqual(await list(`issue_key=${issues[0]!.key}`), [feedbacks[0]])
    const bad = await client(t.app, t.support.token).get(`${FEEDBACKS}?issue_uuid=zzz`)
    assert.deepEqual(bad.body, { issue_uuid: ['Enter a valid UUID.'] })
  })

  test('user (URL), user_uuid and user_full_name match the issue caller', async () => {
    assert.deepEqual(await list(`user=${encodeURIComponent(callerA.url)}`), [feedbacks[0], feedbacks[2]])
    assert.deepEqual(await list(`user=${encodeURIComponent(customer.url)}`), [])
    assert.deepEqual(await list(`user_uuid=${callerB.uuid}`), [feedbacks[1]])
    assert.deepEqual(await list('user_full_name=ALICE'), [feedbacks[0], feedbacks[2]])
    assert.deepEqual(await list('user_full_name=berg'), [feedbacks[1]])
  })

  test('field limits the keys', async () => {
    const r = await client(t.app, t.staff.token).get(
      `${FEEDBACKS}${feedbacks[1]}/?field=evaluation&field=issue_key`,
    )
    assert.deepEqual(r.body, { evaluation: 8, issue_key: issues[1]!.key })
  })
})

describe('the signing key without SECRET_KEY', () => {
  test('each install makes its own, kept in its database; a token signed with a known key is refused', async () => {
    assert.equal(t.config.secretKey, null)
    assert.ok(t.ctx.secretKey.length >= 40)
    const other = await buildTestApp()
    try {
      assert.notEqual(other.ctx.secretKey, t.ctx.secretKey, 'two databases, two secrets')
      const again = await buildTestApp({}, other.clock, other)
      try {
        assert.equal(again.ctx.secretKey, other.ctx.secretKey, 'one database, one secret')
      } finally {
        await again.close()
      }
    } finally {
      await other.close()
    }
    // A forged token, signed with the key every install used to share by default.
    const issue = await makeIssue()
    const hex = issue.uuid.replace(/-/g, '')
    const ts = Math.floor(t.clock.now().getTime() / 1000)
    const forged = createHmac('sha256', 'insecure-development-secret-change-me')
      .update(`${hex}:${ts}`)
      .digest('base64url')
    const r = await anonymous().post(FEEDBACKS, { token: `${hex}:${ts}:${forged}`, evaluation: 1 })
    assert.equal(r.status, 400, JSON.stringify(r.body))
    const set = await buildTestApp({ secretKey: 'configured-secret-value' }, other.clock, t)
    try {
      assert.equal(set.ctx.secretKey, 'configured-secret-value')
    } finally {
      await set.close()
    }
  })
})
