// The fields the newest clients read, asserted one by one with their types and real values.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { sharedTestApp } from '../support/app.js'
import { client } from '../support/client.js'
import { grant, makeCustomer, makeProject, makeUser, roleUuid, type UserRef } from '../support/fixtures.js'
import { makeOffering, makePlan, makeServiceProvider } from '../support/catalog-fixtures.js'

const R = '/api/marketplace-orders'

describe('order records', () => {
  const t = sharedTestApp(async (t) => {
    const consumer = await makeCustomer(t.ctx)
    const provider = await makeCustomer(t.ctx)
    const project = await makeProject(t.ctx, consumer)
    const owner = await makeUser(t.ctx, { email: 'owner@example.org' })
    const member = await makeUser(t.ctx, { email: '' })
    const providerOwner = await makeUser(t.ctx)
    await grant(t.ctx, owner, 'CUSTOMER.OWNER', { type: 'customer', id: consumer.id })
    await grant(t.ctx, member, 'PROJECT.MEMBER', { type: 'project', id: project.id })
    await grant(t.ctx, providerOwner, 'CUSTOMER.OWNER', { type: 'customer', id: provider.id })
    const sp = await makeServiceProvider(t.ctx, provider)
    await t.ctx.db
      .updateTable('service_providers')
      .set({ description: 'We run clusters.' })
      .where('id', '=', sp.id)
      .execute()
    const offering = await makeOffering(t.ctx, provider, { type: 'Marketplace.Basic' })
    const plan = await makePlan(t.ctx, offering, { unitPrice: '3' })
    return { owner, member, providerOwner, project, offering, plan }
  })

  const place = async (user: UserRef, name: string) => {
    const r = await client(t.app, user.token).post(`${R}/`, {
      offering: t.offering.url,
      plan: t.plan.url,
      project: t.project.url,
      attributes: { name },
    })
    assert.equal(r.status, 201, r.text)
    return r.body as Record<string, unknown> & { uuid: string }
  }

  test('a new order: creator e-mail, provider description, auto-approval and empty review texts', async () => {
    const o = await place(t.owner, 'one')
    assert.equal(o.created_by_email, 'owner@example.org')
    assert.equal(o.created_by_organization, null)
    assert.equal(o.created_by_organization_registry_code, null)
    assert.equal(o.consumer_rejection_comment, '')
    assert.equal(o.provider_rejection_comment, '')
    assert.equal(o.auto_approved, true, 'the owner may approve: consumer review skipped')
    assert.equal(o.auto_approved_by_rule_uuid, null)
    assert.equal(o.auto_approved_cost_limit_snapshot, null)
    assert.equal(o.provider_description, 'We run clusters.')
    assert.equal(o.output_updated_at, null)
    assert.equal(o.error_updated_at, null)
    assert.equal(o.provider_message_updated_at, null)
    assert.equal(o.consumer_message_updated_at, null)
    const m = await place(t.member, 'two')
    assert.equal(m.state, 'pending-consumer')
    assert.equal(m.auto_approved, false, 'a member needs consumer review')
    assert.equal(m.created_by_email, null, 'no e-mail is null')
  })

  test('approvals answer a detail; rejections store their comments', async () => {
    const a = await place(t.member, 'approved')
    const ok = await client(t.app, t.owner.token).post(`${R}/${a.uuid}/approve_by_consumer/`)
    assert.equal(ok.status, 200)
    assert.deepEqual(ok.body, { detail: 'Order has been approved.' })
    const pv = await client(t.app, t.providerOwner.token).post(`${R}/${a.uuid}/approve_by_provider/`)
    assert.equal(pv.status, 200)
    assert.deepEqual(pv.body, { detail: 'Order has been approved.' })

    const c = await place(t.member, 'consumer-rejected')
    const rc = await client(t.app, t.owner.token).post(`${R}/${c.uuid}/reject_by_consumer/`, {
      consumer_rejection_comment: 'Not this quarter.',
    })
    assert.equal(rc.status, 200, rc.text)
    assert.equal(rc.text, '')
    const cr = (await client(t.app, t.owner.token).get(`${R}/${c.uuid}/`)).body
    assert.equal(cr.state, 'rejected')
    assert.equal(cr.consumer_rejection_comment, 'Not this quarter.')
    assert.equal(cr.provider_rejection_comment, '')

    const p = await place(t.owner, 'provider-rejected')
    assert.equal(p.state, 'pending-provider')
    const rp = await client(t.app, t.providerOwner.token).post(`${R}/${p.uuid}/reject_by_provider/`, {
      provider_rejection_comment: 'No capacity.',
    })
    assert.equal(rp.status, 200, rp.text)
    const pr = (await client(t.app, t.owner.token).get(`${R}/${p.uuid}/`)).body
    assert.equal(pr.provider_rejection_comment, 'No capacity.')
    assert.equal(pr.consumer_rejection_comment, '')
  })

  test('error_updated_at is set when the error message changes', async () => {
    const o = await place(t.owner, 'erring')
    t.clock.advance(60_000)
    const r = await client(t.app, t.providerOwner.token).post(`${R}/${o.uuid}/set_state_erred/`, {
      error_message: 'Quota exceeded.',
    })
    assert.equal(r.status, 200, r.text)
    const e = (await client(t.app, t.owner.token).get(`${R}/${o.uuid}/`)).body
    assert.equal(e.error_message, 'Quota exceeded.')
    assert.equal(e.error_updated_at, t.clock.now().toISOString())
    assert.equal(e.output_updated_at, null)
  })
})

describe('permission requests', () => {
  const t = sharedTestApp()

  test('carry the reviewer full name, organization, role description and project name template', async () => {
    const role = await t.ctx.db
      .selectFrom('roles')
      .select(['uuid', 'description'])
      .where('name', '=', 'PROJECT.MEMBER')
      .executeTakeFirstOrThrow()
    const c = await makeCustomer(t.ctx, 'Acme')
    const owner = await makeUser(t.ctx, { fullName: 'Olga Owner' })
    await grant(t.ctx, owner, 'CUSTOMER.OWNER', { type: 'customer', id: c.id })
    const inv = await client(t.app, owner.token).post('/api/user-group-invitations/', {
      role: role.uuid,
      scope: c.url,
      auto_create_project: true,
      project_name_template: '{username} lab',
      project_role: role.uuid,
    })
    assert.equal(inv.status, 201, inv.text)
    const user = await makeUser(t.ctx)
    const sub = await client(t.app, user.token).post(
      `/api/user-group-invitations/${inv.body.uuid}/submit_request/`,
    )
    assert.equal(sub.status, 200, sub.text)
    const url = `/api/user-permission-requests/${sub.body.uuid}/`
    const pending = (await client(t.app, user.token).get(url)).body
    assert.equal(pending.reviewed_by_full_name, null, 'not reviewed yet')
    assert.equal(pending.customer_uuid, c.uuid)
    assert.equal(pending.customer_name, 'Acme')
    assert.equal(typeof pending.role_description, 'string')
    assert.equal(pending.role_description, role.description)
    assert.equal(pending.project_name_template, '{username} lab')
    const ok = await client(t.app, owner.token).post(`${url}approve/`)
    assert.equal(ok.status, 200, ok.text)
    const approved = (await client(t.app, user.token).get(url)).body
    assert.equal(approved.reviewed_by_full_name, 'Olga Owner')
    const listed = (await client(t.app, owner.token).get('/api/user-permission-requests/')).body
    assert.equal(listed[0].reviewed_by_full_name, 'Olga Owner')
  })

  test("an invitation's projects/ is paginated like every list", async () => {
    const role = await roleUuid(t.ctx, 'CUSTOMER.SUPPORT')
    const c = await makeCustomer(t.ctx)
    const owner = await makeUser(t.ctx)
    await grant(t.ctx, owner, 'CUSTOMER.OWNER', { type: 'customer', id: c.id })
    const projects = [
      await makeProject(t.ctx, c, { name: 'p1' }),
      await makeProject(t.ctx, c, { name: 'p2' }),
      await makeProject(t.ctx, c, { name: 'p3' }),
    ]
    const inv = await client(t.app, owner.token).post('/api/user-group-invitations/', {
      role,
      scope: c.url,
    })
    assert.equal(inv.status, 201, inv.text)
    const url = `/api/user-group-invitations/${inv.body.uuid}/projects/`
    const first = await client(t.app, owner.token).get(`${url}?page_size=2`)
    assert.equal(first.status, 200)
    assert.equal(first.headers['x-result-count'], '3')
    assert.deepEqual(
      first.body.map((p: { uuid: string }) => p.uuid),
      projects.slice(0, 2).map((p) => p.uuid),
    )
    assert.match(String(first.headers.link), /page=2/)
    assert.match(String(first.headers.link), /rel="next"/)
    const second = await client(t.app, owner.token).get(`${url}?page_size=2&page=2`)
    assert.deepEqual(
      second.body.map((p: { uuid: string }) => p.uuid),
      [projects[2]!.uuid],
    )
    assert.equal((await client(t.app, owner.token).get(`${url}?page=9`)).status, 404)
    const head = await client(t.app, owner.token).head(url)
    assert.equal(head.headers['x-result-count'], '3')
  })
})
