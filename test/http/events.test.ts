// The event outbox over HTTP: what the list shows (and to whom), and the Server-Sent Events stream
// over a real socket: resuming with Last-Event-ID, reset past the retention, the heartbeat.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { buildTestApp, type TestApp } from '../support/app.js'
import { client } from '../support/client.js'
import {
  grant,
  makeCustomer,
  makeProject,
  makeUser,
  type Ref,
  type UserRef,
  uniqueName,
} from '../support/fixtures.js'
import {
  makeComponent,
  makeOffering,
  makePlan,
  makeResource,
  type OfferingRef,
} from '../support/catalog-fixtures.js'
import { emitEvent, purgeEvents } from '../../src/areas/events/service.js'
import { setHeartbeatTimer, PURGE_JOB } from '../../src/areas/events/routes.js'
import type { HeartbeatTimer } from '../../src/areas/events/stream.js'

let t: TestApp
let port: number
let consumer: Ref
let project: Ref
let provider: Ref
let offering: OfferingRef
let plan: Ref
let users: Record<'staff' | 'owner' | 'manager' | 'provider' | 'outsider' | 'support', UserRef>

/** A heartbeat the test fires by hand (no waiting). */
const beats = new Set<() => void>()
const manualTimer: HeartbeatTimer = {
  every(_ms, beat) {
    beats.add(beat)
    return { stop: () => beats.delete(beat) }
  },
}

before(async () => {
  t = await buildTestApp({ eventPollMs: 10 })
  setHeartbeatTimer(t.ctx, manualTimer)
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  port = (t.app.server.address() as AddressInfo).port
  consumer = await makeCustomer(t.ctx, 'Consumer org')
  project = await makeProject(t.ctx, consumer, { name: 'Events project' })
  provider = await makeCustomer(t.ctx, 'Provider org')
  users = {
    staff: await makeUser(t.ctx, { staff: true }),
    owner: await makeUser(t.ctx),
    manager: await makeUser(t.ctx),
    provider: await makeUser(t.ctx),
    outsider: await makeUser(t.ctx),
    support: await makeUser(t.ctx, { support: true }),
  }
  await grant(t.ctx, users.owner, 'CUSTOMER.OWNER', { type: 'customer', id: consumer.id })
  await grant(t.ctx, users.manager, 'PROJECT.MANAGER', { type: 'project', id: project.id })
  await grant(t.ctx, users.provider, 'CUSTOMER.OWNER', { type: 'customer', id: provider.id })
  offering = await makeOffering(t.ctx, provider, { type: 'Marketplace.Slurm' })
  await makeComponent(t.ctx, offering, { type: 'cpu' })
  plan = await makePlan(t.ctx, offering, { unitPrice: '1' })
})
after(() => t.close())

const as = (u: UserRef) => client(t.app, u.token)

async function order(who: UserRef): Promise<{ uuid: string; resource: string }> {
  const r = await as(who).post('/api/marketplace-orders/', {
    offering: offering.url,
    plan: plan.url,
    project: project.url,
    attributes: { name: uniqueName('res') },
    limits: { cpu: 1 },
  })
  assert.equal(r.status, 201, JSON.stringify(r.body))
  return { uuid: r.body.uuid, resource: r.body.marketplace_resource_uuid }
}

async function eventsOf(who: UserRef, query = ''): Promise<any[]> {
  const r = await as(who).get(`/api/events/?page_size=300${query}`)
  assert.equal(r.status, 200, JSON.stringify(r.body))
  return r.body
}

/** The last position the staff caller sees. */
async function headPosition(): Promise<number> {
  const r = await as(users.staff).get('/api/events/?page=last&page_size=1')
  return r.body.length ? r.body[0].position : 0
}

describe('the list', () => {
  test('an order tells its creation, its approvals and its states, with its resource, in order', async () => {
    const from = await headPosition()
    const o = await order(users.manager)
    assert.equal(
      (await as(users.owner).post(`/api/marketplace-orders/${o.uuid}/approve_by_consumer/`)).status,
      200,
    )
    assert.equal(
      (await as(users.provider).post(`/api/marketplace-orders/${o.uuid}/approve_by_provider/`)).status,
      200,
    )
    const events = await eventsOf(users.staff, `&after=${from}`)
    const mine = events.filter((e) => e.data.uuid === o.uuid || e.data.uuid === o.resource)
    assert.deepEqual(
      mine.map((e) => [e.type, e.data.state_before ?? null, e.data.state_after ?? null]),
      [
        ['marketplace.order.created', null, 'pending-consumer'],
        ['marketplace.order.state_changed', 'pending-consumer', 'pending-provider'],
        ['marketplace.order.state_changed', 'pending-provider', 'executing'],
      ],
    )
    const created = mine[0]!
    assert.equal(created.specversion, '1.0')
    assert.equal(created.subject, `http://localhost:80/api/marketplace-orders/${o.uuid}/`)
    assert.equal(created.data.url, created.subject)
    assert.equal(created.data.project_uuid, project.uuid)
    assert.equal(created.data.customer_uuid, consumer.uuid)
    assert.equal(created.data.offering_uuid, offering.uuid)
    assert.equal(created.data.resource_uuid, o.resource)
    assert.equal(mine[1]!.data.action, 'approve_by_consumer')
    const positions = events.map((e) => e.position)
    assert.deepEqual(
      positions,
      [...positions].sort((a, b) => a - b),
    )
    assert.equal(new Set(positions).size, positions.length)
  })

  test("the provider's agent actions tell the resource's changes", async () => {
    const o = await order(users.owner)
    await as(users.provider).post(`/api/marketplace-orders/${o.uuid}/approve_by_provider/`)
    const from = await headPosition()
    const r = await as(users.provider).post(`/api/marketplace-orders/${o.uuid}/set_state_done/`)
    assert.equal(r.status, 200, JSON.stringify(r.body))
    const set = await as(users.provider).post(
      `/api/marketplace-provider-resources/${o.resource}/set_backend_id/`,
      {
        backend_id: 'b-1',
      },
    )
    assert.equal(set.status, 200, JSON.stringify(set.body))
    const events = await eventsOf(users.staff, `&after=${from}`)
    assert.deepEqual(
      events.map((e) => e.type),
      [
        'marketplace.order.state_changed',
        'marketplace.resource.state_changed',
        'marketplace.resource.backend_id_changed',
      ],
    )
    assert.deepEqual([events[1].data.state_before, events[1].data.state_after], ['Creating', 'OK'])
    assert.deepEqual([events[2].data.backend_id_before, events[2].data.backend_id_after], ['', 'b-1'])
  })

  test('each caller sees the events of what the API shows it; staff and support all', async () => {
    const from = await headPosition()
    const o = await order(users.manager)
    const about = (es: any[]) => es.filter((e) => e.data.uuid === o.uuid).length
    for (const who of ['staff', 'support', 'owner', 'manager', 'provider'] as const)
      assert.equal(about(await eventsOf(users[who], `&after=${from}`)), 1, who)
    assert.equal(about(await eventsOf(users.outsider, `&after=${from}`)), 0)
    // Counted after the visibility: the outsider's count is of what it sees.
    const r = await as(users.outsider).get(`/api/events/?after=${from}`)
    assert.equal(r.headers['x-result-count'], '0')
  })

  test('filters: type, object_type, project_uuid, customer_uuid, offering_uuid; bad ones are 400', async () => {
    const from = await headPosition()
    const o = await order(users.manager)
    const byType = await eventsOf(users.staff, `&after=${from}&type=marketplace.order.created`)
    assert.deepEqual(
      byType.map((e) => e.data.uuid),
      [o.uuid],
    )
    assert.equal((await eventsOf(users.staff, `&after=${from}&object_type=resource`)).length, 0)
    assert.equal((await eventsOf(users.staff, `&after=${from}&project_uuid=${project.uuid}`)).length, 1)
    assert.equal((await eventsOf(users.staff, `&after=${from}&customer_uuid=${provider.uuid}`)).length, 0)
    assert.equal((await eventsOf(users.staff, `&after=${from}&offering_uuid=${offering.uuid}`)).length, 1)
    const bad = await as(users.staff).get('/api/events/?after=x')
    assert.equal(bad.status, 400)
    assert.deepEqual(Object.keys(bad.body), ['after'])
    assert.equal((await as(users.staff).get('/api/events/?project_uuid=nope')).status, 400)
    assert.equal((await client(t.app, null).get('/api/events/')).status, 401)
  })

  test('a rolled-back change tells nothing', async () => {
    const from = await headPosition()
    await assert.rejects(
      t.ctx.db.transaction().execute(async (trx) => {
        await emitEvent(t.ctx, trx, {
          type: 'marketplace.order.created',
          objectType: 'order',
          objectUuid: t.ctx.newUuid(),
          path: '/api/marketplace-orders/x/',
        })
        throw new Error('changed my mind')
      }),
    )
    // A transition refused (409) tells nothing either.
    const o = await order(users.owner)
    const from2 = await headPosition()
    assert.equal(
      (await as(users.owner).post(`/api/marketplace-orders/${o.uuid}/approve_by_consumer/`)).status,
      409,
    )
    assert.deepEqual(await eventsOf(users.staff, `&after=${from2}`), [])
    const after = await eventsOf(users.staff, `&after=${from}`)
    assert.ok(after.every((e) => e.data.uuid === o.uuid || e.data.uuid === o.resource))
  })

  test('granting and revoking a role are told to who sees the scope and to the user', async () => {
    const from = await headPosition()
    const someone = await makeUser(t.ctx)
    const add = await as(users.owner).post(`/api/projects/${project.uuid}/add_user/`, {
      user: someone.uuid,
      role: 'PROJECT.MEMBER',
    })
    assert.equal(add.status, 201, JSON.stringify(add.body))
    const del = await as(users.owner).post(`/api/projects/${project.uuid}/delete_user/`, {
      user: someone.uuid,
      role: 'PROJECT.MEMBER',
    })
    assert.ok(del.status < 300, JSON.stringify(del.body))
    const events = await eventsOf(users.manager, `&after=${from}&object_type=role_grant`)
    assert.deepEqual(
      events.map((e) => e.type),
      ['role.granted', 'role.revoked'],
    )
    assert.equal(events[0].data.user_uuid, someone.uuid)
    assert.equal(events[0].data.scope_uuid, project.uuid)
    assert.equal(events[0].data.customer_uuid, consumer.uuid)
    // The user saw the grant made to them; the outsider sees neither.
    assert.equal((await eventsOf(someone, `&after=${from}&object_type=role_grant`)).length, 2)
    assert.equal((await eventsOf(users.outsider, `&after=${from}&object_type=role_grant`)).length, 0)
  })
})

describe('the other areas', () => {
  test("a backend resource request's states are told to the offering's provider side", async () => {
    const from = await headPosition()
    const r = await as(users.staff).post('/api/backend-resource-requests/', { offering: offering.uuid })
    assert.equal(r.status, 201, JSON.stringify(r.body))
    const moved = await as(users.provider).post(
      `/api/backend-resource-requests/${r.body.uuid}/start_processing/`,
    )
    assert.equal(moved.status, 200, JSON.stringify(moved.body))
    const events = await eventsOf(users.provider, `&after=${from}&object_type=backend_resource_request`)
    assert.deepEqual(
      events.map((e) => [e.type, e.data.state_before, e.data.state_after]),
      [
        ['marketplace.backend_resource_request.created', null, 'Sent'],
        ['marketplace.backend_resource_request.state_changed', 'Sent', 'Processing'],
      ],
    )
    assert.equal(events[0].data.offering_uuid, offering.uuid)
    assert.equal(
      (await eventsOf(users.manager, `&after=${from}&object_type=backend_resource_request`)).length,
      0,
    )
  })
})

// ---- the stream, over a socket ----

interface Sse {
  res: IncomingMessage
  /** Resolves with the next parsed message (comments included, as { comment }). */
  next(): Promise<{ id?: string; event?: string; data?: any; comment?: string }>
  close(): void
}

function openStream(who: UserRef | null, query = '', headers: Record<string, string> = {}): Promise<Sse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path: `/api/events/stream/${query}`,
        headers: {
          ...(who ? { authorization: `Token ${who.token}` } : {}),
          accept: 'text/event-stream',
          ...headers,
        },
      },
      (res) => {
        let buffer = ''
        const queue: any[] = []
        const waiting: ((m: any) => void)[] = []
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => {
          buffer += chunk
          let i: number
          while ((i = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, i)
            buffer = buffer.slice(i + 2)
            const m: any = {}
            for (const line of block.split('\n')) {
              if (line.startsWith(':')) m.comment = line.slice(1).trim()
              else {
                const [k, ...v] = line.split(': ')
                m[k!] = k === 'data' ? JSON.parse(v.join(': ')) : v.join(': ')
              }
            }
            const w = waiting.shift()
            if (w) w(m)
            else queue.push(m)
          }
        })
        resolve({
          res,
          next: () => (queue.length ? Promise.resolve(queue.shift()) : new Promise((r) => waiting.push(r))),
          close: () => req.destroy(),
        })
      },
    )
    req.on('error', reject)
    req.end()
  })
}

/** The next message that is not a comment. */
async function nextEvent(s: Sse) {
  for (;;) {
    const m = await s.next()
    if (!m.comment) return m
  }
}

describe('the stream', () => {
  test('sends each committed event once, in order; a client that resumes with Last-Event-ID misses none', async () => {
    const start = await headPosition()
    const s = await openStream(users.manager, `?after=${start}`)
    assert.equal(s.res.statusCode, 200)
    assert.match(String(s.res.headers['content-type']), /^text\/event-stream/)
    const a = await order(users.manager)
    const first = await nextEvent(s)
    assert.equal(first.data.type, 'marketplace.order.created')
    assert.equal(first.data.data.uuid, a.uuid)
    assert.equal(Number(first.id), first.data.position)
    s.close()
    // While it is away: more changes, some it may not see.
    const b = await order(users.manager)
    await as(users.owner).post(`/api/marketplace-orders/${b.uuid}/approve_by_consumer/`)
    const elsewhere = await makeProject(t.ctx, await makeCustomer(t.ctx))
    const hidden = await as(users.staff).post('/api/marketplace-orders/', {
      offering: offering.url,
      plan: plan.url,
      project: elsewhere.url,
      attributes: { name: uniqueName('res') },
      limits: { cpu: 1 },
    })
    assert.equal(hidden.status, 201)
    const c = await order(users.manager)
    const resumed = await openStream(users.manager, '', { 'last-event-id': String(first.id) })
    const got = [await nextEvent(resumed), await nextEvent(resumed), await nextEvent(resumed)]
    assert.deepEqual(
      got.map((m) => [m.data.type, m.data.data.uuid]),
      [
        ['marketplace.order.created', b.uuid],
        ['marketplace.order.state_changed', b.uuid],
        ['marketplace.order.created', c.uuid],
      ],
    )
    const ids = got.map((m) => Number(m.id))
    assert.ok(ids[0]! > Number(first.id) && ids[0]! < ids[1]! && ids[1]! < ids[2]!)
    // Nothing else is pending: the next thing is the heartbeat, fired by hand.
    for (const beat of beats) beat()
    assert.deepEqual(await resumed.next(), { comment: 'heartbeat' })
    resumed.close()
  })

  test('?after= resumes as Last-Event-ID does; filters apply; without either the stream starts now', async () => {
    const start = await headPosition()
    const o = await order(users.manager)
    await as(users.owner).post(`/api/marketplace-orders/${o.uuid}/approve_by_consumer/`)
    const filtered = await openStream(users.owner, `?after=${start}&type=marketplace.order.state_changed`)
    const m = await nextEvent(filtered)
    assert.equal(m.data.type, 'marketplace.order.state_changed')
    assert.equal(m.data.data.uuid, o.uuid)
    filtered.close()
    const now = await openStream(users.owner)
    const p = await order(users.manager)
    const n = await nextEvent(now)
    assert.equal(n.data.data.uuid, p.uuid)
    now.close()
  })

  test('a position older than the retention gets `event: reset` with the position to go on from', async () => {
    const bad = await openStream(users.staff, '', { 'last-event-id': 'abc' })
    assert.equal(bad.res.statusCode, 400)
    bad.close()
    const anon = await openStream(null)
    assert.equal(anon.res.statusCode, 401)
    anon.close()
    await order(users.manager)
    t.clock.advance((t.config.eventRetentionDays + 1) * 86_400_000)
    assert.ok((await purgeEvents(t.ctx)) > 0)
    const head = await headPosition()
    assert.equal(head, 0, 'every event is gone')
    const s = await openStream(users.staff, '?after=1')
    const reset = await nextEvent(s)
    assert.equal(reset.event, 'reset')
    const resumeAt = Number(reset.id)
    assert.equal(reset.data.position, resumeAt)
    assert.ok(resumeAt > 1)
    const o = await order(users.manager)
    const next = await nextEvent(s)
    assert.equal(next.data.data.uuid, o.uuid)
    assert.ok(Number(next.id) > resumeAt)
    s.close()
    // The cleanup job is defined (and runs again later).
    assert.ok(t.ctx.jobs !== undefined && PURGE_JOB === 'events.purge')
  })
})

describe('offering users', () => {
  test("an account's creation, username, states and deletion: told in order to who may retrieve it", async () => {
    const keeping = await makeOffering(t.ctx, provider, {
      type: 'Marketplace.Slurm',
      pluginOptions: { service_provider_can_create_offering_user: true },
    })
    const holder = await makeUser(t.ctx)
    const start = await headPosition()
    const stream = await openStream(holder, `?after=${start}&object_type=offering_user`)
    const created = await as(users.provider).post('/api/marketplace-offering-users/', {
      offering: keeping.url,
      user_uuid: holder.uuid,
    })
    assert.equal(created.status, 201, JSON.stringify(created.body))
    const path = `/api/marketplace-offering-users/${created.body.uuid}/`
    const ok = async (r: Promise<{ status: number; body: unknown }>, status = 200) => {
      const got = await r
      assert.equal(got.status, status, JSON.stringify(got.body))
    }
    await ok(as(users.provider).post(`${path}begin_creating/`))
    // A move its state does not allow tells nothing.
    await ok(as(users.provider).post(`${path}set_deleting/`), 409)
    await ok(as(users.provider).patch(path, { username: 'holder_1' }))
    await ok(as(users.provider).patch(path, { username: 'holder_2' }))
    // Flags and comments are no state or username: nothing told.
    await ok(as(users.provider).post(`${path}update_restricted/`, { is_restricted: true }))
    await ok(as(users.provider).post(`${path}request_deletion/`))
    const told = (events: any[]) =>
      events.map((e) => {
        const d = e.data
        const facts = e.type.endsWith('.username_changed')
          ? [d.username_before, d.username_after]
          : [d.state_before, d.state_after]
        return [e.type, ...facts, d.username, d.state]
      })
    const life = [
      ['marketplace.offering_user.created', null, 'Requested', null, 'Requested'],
      ['marketplace.offering_user.state_changed', 'Requested', 'Creating', null, 'Creating'],
      ['marketplace.offering_user.username_changed', null, 'holder_1', 'holder_1', 'OK'],
      ['marketplace.offering_user.state_changed', 'Creating', 'OK', 'holder_1', 'OK'],
      ['marketplace.offering_user.username_changed', 'holder_1', 'holder_2', 'holder_2', 'OK'],
      [
        'marketplace.offering_user.state_changed',
        'OK',
        'Requested deletion',
        'holder_2',
        'Requested deletion',
      ],
    ]
    // The account's user reads them on the stream as they commit.
    const streamed: any[] = []
    for (const _ of life) streamed.push((await nextEvent(stream)).data)
    stream.close()
    assert.deepEqual(told(streamed), life)
    const q = `&after=${start}&object_type=offering_user&offering_uuid=${keeping.uuid}`
    const listed = await eventsOf(users.provider, q)
    assert.deepEqual(told(listed), life)
    const first = listed[0]
    assert.equal(first.subject, `http://localhost:80${path}`)
    assert.equal(first.data.url, first.subject)
    assert.equal(first.data.uuid, created.body.uuid)
    assert.equal(first.data.object_type, 'offering_user')
    assert.equal(first.data.user_uuid, holder.uuid)
    assert.equal(first.data.offering_uuid, keeping.uuid)
    assert.equal(first.data.customer_uuid, provider.uuid)
    assert.equal(first.data.project_uuid, null)
    // Who may retrieve the account sees its events; nobody else does.
    assert.equal((await eventsOf(holder, q)).length, life.length)
    assert.equal((await eventsOf(users.support, q)).length, life.length)
    assert.deepEqual(await eventsOf(users.outsider, q), [])
    assert.deepEqual(await eventsOf(users.owner, q), [])

    await ok(as(users.provider).delete(path), 204)
    const all = await eventsOf(users.staff, q)
    assert.deepEqual(told(all), [
      ...life,
      ['marketplace.offering_user.deleted', 'Requested deletion', null, 'holder_2', 'Requested deletion'],
    ])
    // Gone: staff and support only.
    assert.deepEqual(await eventsOf(holder, q), [])
    assert.deepEqual(await eventsOf(users.provider, q), [])
  })

  test('a project role gives an account on the offering of a live resource: its creation is told', async () => {
    const keeping = await makeOffering(t.ctx, provider, {
      type: 'Marketplace.Slurm',
      pluginOptions: {
        service_provider_can_create_offering_user: true,
        username_generation_policy: 'waldur_username',
      },
    })
    const lab = await makeProject(t.ctx, consumer)
    await makeResource(t.ctx, keeping, lab)
    const member = await makeUser(t.ctx)
    const start = await headPosition()
    await grant(t.ctx, member, 'PROJECT.MEMBER', { type: 'project', id: lab.id })
    const told = await eventsOf(member, `&after=${start}&object_type=offering_user`)
    assert.deepEqual(
      told.map((e) => [e.type, e.data.user_uuid, e.data.username, e.data.state, e.data.offering_uuid]),
      [['marketplace.offering_user.created', member.uuid, member.username, 'OK', keeping.uuid]],
    )
  })
})
