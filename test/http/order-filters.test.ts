// The order list's time, slug and auto-approval filters, as the reference's clients send them (the
// site agent's event mode re-lists `modified_before=<now - 30 min>&offering_uuid=…&state=…`).
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { sharedTestApp } from '../support/app.js'
import { client } from '../support/client.js'
import { grant, makeCustomer, makeProject, makeUser, type UserRef } from '../support/fixtures.js'
import { makeOffering, makePlan } from '../support/catalog-fixtures.js'

const R = '/api/marketplace-orders/'

describe('order list filters the newest clients send', () => {
  const t = sharedTestApp(async (t) => {
    const consumer = await makeCustomer(t.ctx)
    const project = await makeProject(t.ctx, consumer)
    const provider = await makeCustomer(t.ctx)
    const owner = await makeUser(t.ctx)
    const manager = await makeUser(t.ctx)
    const providerOwner = await makeUser(t.ctx)
    const staff = await makeUser(t.ctx, { staff: true })
    await grant(t.ctx, owner, 'CUSTOMER.OWNER', { type: 'customer', id: consumer.id })
    await grant(t.ctx, manager, 'PROJECT.MANAGER', { type: 'project', id: project.id })
    await grant(t.ctx, providerOwner, 'CUSTOMER.OWNER', { type: 'customer', id: provider.id })
    const offering = await makeOffering(t.ctx, provider, { type: 'Marketplace.Slurm' })
    const other = await makeOffering(t.ctx, provider, { type: 'Marketplace.Slurm' })
    const plan = await makePlan(t.ctx, offering)
    const otherPlan = await makePlan(t.ctx, other)
    const place = async (who: UserRef, name: string, o = offering, p = plan) => {
      const r = await client(t.app, who.token).post(R, {
        offering: o.url,
        plan: p.url,
        project: project.url,
        attributes: { name },
      })
      assert.equal(r.status, 201, JSON.stringify(r.body))
      return r.body as { uuid: string; slug: string; created: string; state: string; auto_approved: boolean }
    }
    // Hour 0: the owner's order (consumer review implied); hour 1: the manager's (it waits for
    // the owner); hour 2: another owner's order, and one for the other offering; hour 3: the
    // provider approves the first, which moves it to executing.
    const first = await place(owner, 'first')
    t.clock.advanceHours(1)
    const second = await place(manager, 'second')
    t.clock.advanceHours(1)
    const third = await place(owner, 'third')
    const elsewhere = await place(owner, 'elsewhere', other, otherPlan)
    t.clock.advanceHours(1)
    const approved = await client(t.app, providerOwner.token).post(`${R}${first.uuid}/approve_by_provider/`)
    assert.equal(approved.status, 200, approved.text)
    return { staff, owner, providerOwner, offering, first, second, third, elsewhere }
  })

  /** The slugs of the orders listed with this query, checked against the count header. */
  async function listed(who: UserRef, qs: string): Promise<string[]> {
    const r = await client(t.app, who.token).get(`${R}?page_size=100&o=created&${qs}`)
    assert.equal(r.status, 200, `${qs}: ${r.text}`)
    assert.equal(Number(r.headers['x-result-count']), r.body.length, `${qs}: total`)
    return r.body.map(
      (o: { uuid: string }) => [t.first, t.second, t.third, t.elsewhere].find((x) => x.uuid === o.uuid)!.slug,
    )
  }
  const at = (hours: number) => new Date(Date.parse('2026-01-15T10:00:00.000Z') + hours * 3600_000)
  /** As Python's isoformat() writes an aware date-time, URL-encoded. */
  const pythonIso = (d: Date) => encodeURIComponent(d.toISOString().replace('Z', '123+00:00'))

  test("the agent's re-list: orders of its offering waiting for it, not modified for half an hour", async () => {
    const agentQuery = (now: Date) =>
      `modified_before=${pythonIso(new Date(now.getTime() - 30 * 60_000))}` +
      `&offering_uuid=${t.offering.uuid}&state=pending-provider&state=executing`
    // 20 minutes after the approval: the approved order changed too recently; the third waits.
    assert.deepEqual(await listed(t.providerOwner, agentQuery(at(3 + 1 / 3))), [t.third.slug])
    // An hour after it, both are listed; the other offering's order never is.
    assert.deepEqual(await listed(t.providerOwner, agentQuery(at(4))), [t.first.slug, t.third.slug])
  })

  test('created and modified bounds, each way, include their limit', async () => {
    const iso = (h: number) => encodeURIComponent(at(h).toISOString())
    assert.deepEqual(await listed(t.staff, `created_before=${iso(1)}`), [t.first.slug, t.second.slug])
    assert.deepEqual(await listed(t.staff, `created_after=${iso(1)}&created_before=${iso(1)}`), [
      t.second.slug,
    ])
    assert.deepEqual(await listed(t.staff, `created=${iso(1)}&created_before=${iso(2)}`), [
      t.second.slug,
      t.third.slug,
      t.elsewhere.slug,
    ])
    // `created` and `created_after` are both lower bounds: the later one decides.
    assert.deepEqual(await listed(t.staff, `created=${iso(0)}&created_after=${iso(2)}`), [
      t.third.slug,
      t.elsewhere.slug,
    ])
    assert.deepEqual(await listed(t.staff, `modified_after=${iso(3)}`), [t.first.slug])
    assert.deepEqual(await listed(t.staff, `modified=${iso(3)}`), [t.first.slug])
    assert.deepEqual(await listed(t.staff, `modified_before=${iso(2)}`), [
      t.second.slug,
      t.third.slug,
      t.elsewhere.slug,
    ])
    // A date alone is midnight UTC.
    assert.deepEqual(await listed(t.staff, `created_before=2026-01-15`), [])
    assert.deepEqual(await listed(t.staff, `modified_after=2026-01-16`), [])
    for (const name of ['created_before', 'modified_before', 'created_after', 'modified_after']) {
      const r = await client(t.app, t.staff.token).get(`${R}?${name}=yesterday`)
      assert.equal(r.status, 400, name)
      assert.deepEqual(r.body, { [name]: ['Enter a valid date/time.'] })
    }
  })

  test('slug is exact; was_auto_approved splits the orders by whether the consumer had to review', async () => {
    assert.deepEqual(await listed(t.staff, `slug=${t.second.slug}`), [t.second.slug])
    assert.deepEqual(await listed(t.staff, `slug=${t.second.slug.slice(0, -1)}`), [])
    assert.equal(t.second.auto_approved, false)
    assert.deepEqual(await listed(t.staff, 'was_auto_approved=true'), [
      t.first.slug,
      t.third.slug,
      t.elsewhere.slug,
    ])
    // Unfiltered staff lists are counted from a kept total: a false filter must not take that path.
    assert.deepEqual(await listed(t.staff, 'was_auto_approved=false'), [t.second.slug])
    assert.deepEqual(await listed(t.owner, 'was_auto_approved=0&state=pending-consumer'), [t.second.slug])
    // Other values are ignored, as for every boolean filter.
    assert.equal((await listed(t.staff, 'was_auto_approved=maybe')).length, 4)
  })

  test('the links of a page repeat the new filters', async () => {
    const r = await client(t.app, t.staff.token).get(
      `${R}?page_size=1&was_auto_approved=true&created_before=${encodeURIComponent(at(5).toISOString())}`,
    )
    assert.equal(r.status, 200)
    assert.match(String(r.headers.link), /was_auto_approved=true/)
    assert.match(String(r.headers.link), /created_before=/)
  })
})
