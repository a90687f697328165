// The site agent's event mode on a real RabbitMQ: the queue create_queue makes is the one a STOMP
// consumer connecting as the agent does reads; the relay publishes committed events to it in order,
// in the bodies the agent reads, and resumes from its stored position after a restart or an outage
// without losing or repeating an event.
import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { buildTestApp, type TestApp } from '../support/app.js'
import { client } from '../support/client.js'
import { makeOffering, makeResource, providerGraph, type OfferingRef } from '../support/catalog-fixtures.js'
import type { Ref, UserRef } from '../support/fixtures.js'
import { StompConsumer } from '../support/stomp.js'
import {
  closeConnections,
  management,
  rabbitTestSettings,
  type RabbitTestSettings,
} from '../support/rabbitmq.js'
import { Relay } from '../../src/areas/event-subscriptions/relay.js'
import type { EventSource, StoredEvent } from '../../src/areas/event-subscriptions/messages.js'
import { hex } from '../../src/areas/event-subscriptions/broker.js'
import { eventsAfter, onEventsCommitted } from '../../src/areas/events/service.js'
import { grant, makeCustomer, makeProject, makeUser } from '../support/fixtures.js'

let settings: RabbitTestSettings | null = null
let missing: Error | null = null
try {
  settings = rabbitTestSettings()
} catch (e) {
  missing = e as Error
}

/** An event log in memory, in commit order. */
class MemoryEvents implements EventSource {
  readonly events: StoredEvent[] = []
  private readonly listeners = new Set<() => void>()
  add(
    objectType: string,
    type: string,
    offeringUuid: string,
    data: Record<string, unknown> = {},
  ): StoredEvent {
    const uuid = (data.uuid as string | undefined) ?? randomUUID()
    const e: StoredEvent = {
      position: this.events.length + 1,
      envelope: {
        specversion: '1.0',
        datacontenttype: 'application/json',
        id: randomUUID(),
        source: '/marketplace',
        type,
        subject: `http://localhost/api/x/${uuid}/`,
        time: new Date().toISOString(),
        data: { uuid, offering_uuid: offeringUuid, ...data },
      },
      objectType,
      offeringUuid,
      projectUuid: null,
      customerUuid: null,
    }
    this.events.push(e)
    for (const l of this.listeners) l()
    return e
  }
  async eventsAfter(_ctx: unknown, position: number, limit: number): Promise<StoredEvent[]> {
    return this.events.filter((e) => e.position > position).slice(0, limit)
  }
  onEventsCommitted(_ctx: unknown, listener: () => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }
}

const order = (log: MemoryEvents, offering: string, uuid: string, state: string, created = false) =>
  log.add('order', created ? 'marketplace.order.created' : 'marketplace.order.state_changed', offering, {
    uuid,
    state_before: created ? null : 'pending-consumer',
    state_after: state,
  })

const orderBody = (offering: string, uuid: string, state: string) => ({
  order_uuid: hex(uuid),
  order_state: state,
  offering_uuid: hex(offering),
})

interface Agent {
  t: TestApp
  owner: UserRef
  offering: OfferingRef
  /** The provider's organization. */
  customer: Ref
  subscription: { uuid: string; user_uuid: string }
  queue: { queue_name: string; vhost: string }
  consumer: StompConsumer
}

/**
 * A provider's agent in event mode on a fresh app: identity, subscription, queue, STOMP consumer
 * (for `objectType`'s queue: order by default).
 */
async function agent(
  s: RabbitTestSettings,
  cleanups: (() => Promise<void>)[],
  on?: TestApp,
  objectType = 'order',
): Promise<Agent> {
  const t =
    on ??
    (await buildTestApp({
      rabbitmqUrl: s.amqpUrl,
      rabbitmqManagementUrl: s.managementUrl,
      rabbitmqTimeoutMs: 5000,
    }))
  if (!on) cleanups.push(() => t.close())
  const provider = providerGraph(t.ctx)
  const owner = await provider.owner()
  const customer = await provider.customer()
  const offering = await makeOffering(t.ctx, customer, { type: 'Marketplace.Slurm' })
  const as = client(t.app, owner.token)
  const identity = await as.post('/api/marketplace-site-agent-identities/', {
    name: `agent-${offering.uuid}`,
    offering: offering.uuid,
  })
  assert.equal(identity.status, 201, JSON.stringify(identity.body))
  const sub = await as.post(
    `/api/marketplace-site-agent-identities/${hex(identity.body.uuid)}/register_event_subscription/`,
    { observable_object_type: objectType, description: 'agent' },
  )
  assert.equal(sub.status, 201, JSON.stringify(sub.body))
  const q = await as.post(`/api/event-subscriptions/${hex(sub.body.uuid)}/create_queue/`, {
    offering_uuid: offering.uuid,
    object_type: objectType,
  })
  assert.equal(q.status, 201, JSON.stringify(q.body))
  cleanups.push(async () => {
    await as.delete(`/api/event-subscriptions/${sub.body.uuid}/`)
    await management(s).request('DELETE', `/api/vhosts/${q.body.vhost}`, undefined, { missingOk: true })
  })
  const consumer = await StompConsumer.connect(s.stompUrl, {
    vhost: q.body.vhost,
    login: hex(sub.body.uuid),
    passcode: owner.token,
    queue: q.body.queue_name,
  })
  cleanups.push(async () => consumer.close())
  return { t, owner, offering, customer, subscription: sub.body, queue: q.body, consumer }
}

/** Passes until the relay's position reaches `position`, at most `tries` of them (each may fail). */
async function relayUntil(relay: Relay, position: number, tries = 10): Promise<void> {
  const errors: unknown[] = []
  for (let i = 0; i < tries && (await relay.position()) < position; i++) {
    try {
      await relay.runOnce()
    } catch (e) {
      errors.push(e)
    }
  }
  assert.equal(await relay.position(), position, `relay stopped short: ${errors.map(String).join('; ')}`)
}

/** Passes until the relay has nothing more to read; the messages the broker confirmed. */
async function passes(relay: Relay): Promise<number> {
  let r = await relay.runOnce()
  let messages = r.messages
  while (r.more) messages += (r = await relay.runOnce()).messages
  return messages
}

/** The restart test stops and starts the broker with `rabbitmqctl`: the broker must run on this machine. */
const restartSkipped = /^(0|off|false|no)$/i.test(process.env.TEST_RABBITMQ_RESTART ?? '')
const rabbitmqctl = async (command: string) => {
  await promisify(execFile)('rabbitmqctl', [command], { timeout: 60_000 })
}

if (missing) {
  test('RabbitMQ settings for the broker tests', () => {
    throw missing
  })
}

describe('site agent event queues on RabbitMQ', { skip: settings ? false : 'TEST_RABBITMQ=off' }, () => {
  const s = settings!
  const cleanups: (() => Promise<void>)[] = []
  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => {})
  })

  test('create_queue makes the durable queue the agent reads, with its own user and passcode', async () => {
    const a = await agent(s, cleanups)
    assert.equal(a.queue.vhost, hex(a.owner.uuid))
    assert.equal(
      a.queue.queue_name,
      `subscription_${hex(a.subscription.uuid)}_offering_${hex(a.offering.uuid)}_order`,
    )
    const q = (await management(s).request('GET', `/api/queues/${a.queue.vhost}/${a.queue.queue_name}`)) as {
      durable: boolean
      auto_delete: boolean
    }
    assert.equal(q.durable, true)
    assert.equal(q.auto_delete, false)
    // Another passcode is refused.
    await assert.rejects(
      StompConsumer.connect(s.stompUrl, {
        vhost: a.queue.vhost,
        login: hex(a.subscription.uuid),
        passcode: 'not-the-token',
        queue: a.queue.queue_name,
      }),
    )
    // Asked again, the queue is found again (200), and the agent still reads it.
    const again = await client(a.t.app, a.owner.token).post(
      `/api/event-subscriptions/${a.subscription.uuid}/create_queue/`,
      { offering_uuid: hex(a.offering.uuid), object_type: 'order' },
    )
    assert.equal(again.status, 200)
    assert.equal(again.body.queue_name, a.queue.queue_name)
  })

  test('committed events reach the queue in order, in the bodies the agent reads', async () => {
    const a = await agent(s, cleanups)
    const log = new MemoryEvents()
    const relay = new Relay(a.t.ctx, log)
    cleanups.push(() => relay.stop())
    const other = randomUUID()
    const o1 = randomUUID()
    const o2 = randomUUID()
    order(log, a.offering.uuid, o1, 'pending-consumer', true)
    order(log, other, randomUUID(), 'pending-provider') // another offering: not this queue
    order(log, a.offering.uuid, o1, 'pending-provider')
    log.add('order', 'marketplace.order.backend_id_set', a.offering.uuid, { uuid: o1 }) // not a state
    log.add('resource', 'marketplace.resource.state_changed', a.offering.uuid) // a resource queue's
    order(log, a.offering.uuid, o2, 'executing', true)
    order(log, a.offering.uuid, o1, 'done')
    const r = await relay.runOnce()
    assert.deepEqual(r, { leader: true, events: 7, messages: 4, more: false })
    assert.equal(await relay.position(), 7)
    assert.deepEqual(await a.consumer.take(4), [
      orderBody(a.offering.uuid, o1, 'pending-consumer'),
      orderBody(a.offering.uuid, o1, 'pending-provider'),
      orderBody(a.offering.uuid, o2, 'executing'),
      orderBody(a.offering.uuid, o1, 'done'),
    ])
    assert.equal(a.consumer.messages[0]!.headers['content-type'], 'application/json')
    assert.equal(a.consumer.messages[0]!.headers['amqp-message-id'], log.events[0]!.envelope.id)
  })

  test('a relay restarted resumes from its stored position: nothing lost, nothing twice', async () => {
    const a = await agent(s, cleanups)
    const log = new MemoryEvents()
    const uuids = Array.from({ length: 6 }, () => randomUUID())
    const first = new Relay(a.t.ctx, log, { holder: 'first' })
    for (const u of uuids.slice(0, 3)) order(log, a.offering.uuid, u, 'pending-provider', true)
    assert.equal((await first.runOnce()).events, 3)
    await first.stop()
    // Committed while no relay runs.
    for (const u of uuids.slice(3)) order(log, a.offering.uuid, u, 'pending-provider', true)
    const second = new Relay(a.t.ctx, log, { holder: 'second' })
    cleanups.push(() => second.stop())
    assert.equal(await second.position(), 3)
    assert.equal((await second.runOnce()).events, 3)
    const sentinel = randomUUID()
    order(log, a.offering.uuid, sentinel, 'executing', true)
    await second.runOnce()
    assert.deepEqual(await a.consumer.take(7), [
      ...uuids.map((u) => orderBody(a.offering.uuid, u, 'pending-provider')),
      orderBody(a.offering.uuid, sentinel, 'executing'),
    ])
  })

  test('one relay at a time: another waits for the lease', async () => {
    const a = await agent(s, cleanups)
    const log = new MemoryEvents()
    const one = new Relay(a.t.ctx, log, { holder: 'one' })
    const two = new Relay(a.t.ctx, log, { holder: 'two' })
    cleanups.push(
      () => one.stop(),
      () => two.stop(),
    )
    const u = randomUUID()
    order(log, a.offering.uuid, u, 'pending-provider', true)
    assert.equal((await one.runOnce()).leader, true)
    order(log, a.offering.uuid, u, 'executing')
    assert.deepEqual(await two.runOnce(), { leader: false, events: 0, messages: 0, more: false })
    assert.equal(await one.position(), 1)
    // The lease runs out without renewal: the other takes over where the first stopped.
    a.t.clock.advance(31_000)
    assert.equal((await two.runOnce()).events, 1)
    assert.deepEqual(await a.consumer.take(2), [
      orderBody(a.offering.uuid, u, 'pending-provider'),
      orderBody(a.offering.uuid, u, 'executing'),
    ])
  })

  test('connections cut by the broker: the relay reconnects and loses nothing', async () => {
    const a = await agent(s, cleanups)
    const log = new MemoryEvents()
    const relay = new Relay(a.t.ctx, log)
    cleanups.push(() => relay.stop())
    const uuids = Array.from({ length: 5 }, () => randomUUID())
    order(log, a.offering.uuid, uuids[0]!, 'pending-provider', true)
    await relay.runOnce()
    assert.deepEqual(await a.consumer.take(1), [orderBody(a.offering.uuid, uuids[0]!, 'pending-provider')])
    // Every connection to the virtual host is cut: the relay's and the agent's.
    assert.ok((await closeConnections(s, a.queue.vhost, 2)) >= 2)
    for (const u of uuids.slice(1)) order(log, a.offering.uuid, u, 'pending-provider', true)
    await relayUntil(relay, 5)
    const sentinel = randomUUID()
    order(log, a.offering.uuid, sentinel, 'executing', true)
    await relayUntil(relay, 6)
    // The agent connects again, as it does after a disconnection: the durable queue kept the rest.
    const again = await StompConsumer.connect(s.stompUrl, {
      vhost: a.queue.vhost,
      login: hex(a.subscription.uuid),
      passcode: a.owner.token,
      queue: a.queue.queue_name,
    })
    cleanups.push(async () => again.close())
    assert.deepEqual(await again.take(5), [
      ...uuids.slice(1).map((u) => orderBody(a.offering.uuid, u, 'pending-provider')),
      orderBody(a.offering.uuid, sentinel, 'executing'),
    ])
  })

  test('a broker that cannot be reached: the position stays, and the events follow once it can', async () => {
    const a = await agent(s, cleanups)
    const log = new MemoryEvents()
    const u = randomUUID()
    order(log, a.offering.uuid, u, 'pending-provider', true)
    // The same app's relay, pointed at a port where no broker answers.
    const unreachable = new URL(s.amqpUrl)
    unreachable.port = '1'
    const down = new Relay(
      { ...a.t.ctx, config: { ...a.t.config, rabbitmqUrl: unreachable.toString() } },
      log,
      {
        holder: 'down',
      },
    )
    await assert.rejects(down.runOnce(), /RabbitMQ/)
    assert.equal(await down.position(), 0)
    await down.stop()
    const up = new Relay(a.t.ctx, log, { holder: 'up' })
    cleanups.push(() => up.stop())
    assert.equal((await up.runOnce()).events, 1)
    assert.deepEqual(await a.consumer.take(1), [orderBody(a.offering.uuid, u, 'pending-provider')])
  })

  test('a virtual host gone from the broker does not hold back the other queues', async () => {
    const a = await agent(s, cleanups)
    const b = await agent(s, cleanups, a.t)
    assert.notEqual(a.queue.vhost, b.queue.vhost)
    a.consumer.close()
    await management(s).request('DELETE', `/api/vhosts/${a.queue.vhost}`)
    const log = new MemoryEvents()
    const relay = new Relay(a.t.ctx, log)
    cleanups.push(() => relay.stop())
    const ua = randomUUID()
    const ub = randomUUID()
    order(log, a.offering.uuid, ua, 'pending-provider', true)
    order(log, b.offering.uuid, ub, 'pending-provider', true)
    const r = await relay.runOnce()
    assert.equal(r.events, 2)
    assert.equal(r.messages, 1)
    assert.deepEqual(await b.consumer.take(1), [orderBody(b.offering.uuid, ub, 'pending-provider')])
  })

  test('the relay started runs a pass at each commit', async () => {
    const a = await agent(s, cleanups)
    const log = new MemoryEvents()
    const relay = new Relay(a.t.ctx, log)
    cleanups.push(() => relay.stop())
    relay.start()
    const u = randomUUID()
    order(log, a.offering.uuid, u, 'pending-provider', true)
    assert.deepEqual(await a.consumer.take(1), [orderBody(a.offering.uuid, u, 'pending-provider')])
  })

  test('a project role granted, then revoked, reaches the user_role queue of each offering with a resource there', async () => {
    const a = await agent(s, cleanups, undefined, 'user_role')
    const as = client(a.t.app, a.owner.token)
    // The provider's second offering, whose only resource in the project is Terminated: its own
    // user_role queue is told nothing.
    const other = await makeOffering(a.t.ctx, a.customer, { type: 'Marketplace.Slurm' })
    const otherQueue = await as.post(`/api/event-subscriptions/${a.subscription.uuid}/create_queue/`, {
      offering_uuid: other.uuid,
      object_type: 'user_role',
    })
    assert.equal(otherQueue.status, 201, JSON.stringify(otherQueue.body))
    const consumerOrg = await makeCustomer(a.t.ctx)
    const boss = await makeUser(a.t.ctx)
    await grant(a.t.ctx, boss, 'CUSTOMER.OWNER', { type: 'customer', id: consumerOrg.id })
    const project = await makeProject(a.t.ctx, consumerOrg, { name: 'Genome lab' })
    await makeResource(a.t.ctx, a.offering, project)
    await makeResource(a.t.ctx, a.offering, project) // a second resource: still one message
    await makeResource(a.t.ctx, other, project, { state: 'Terminated' })
    const member = await makeUser(a.t.ctx)

    const relay = new Relay(a.t.ctx, { eventsAfter, onEventsCommitted })
    cleanups.push(() => relay.stop())
    const pass = () => passes(relay)
    await pass() // what the set-up told
    const body = (granted: boolean) => ({
      user_uuid: hex(member.uuid),
      user_username: member.username,
      project_uuid: hex(project.uuid),
      project_name: 'Genome lab',
      role_name: 'PROJECT.ADMIN',
      granted,
      offering_uuid: hex(a.offering.uuid),
    })
    const asBoss = client(a.t.app, boss.token)
    const added = await asBoss.post(`/api/projects/${project.uuid}/add_user/`, {
      user: member.uuid,
      role: 'PROJECT.ADMIN',
    })
    assert.equal(added.status, 201, JSON.stringify(added.body))
    assert.equal(await pass(), 1)
    assert.deepEqual(await a.consumer.take(1), [body(true)])
    const removed = await asBoss.post(`/api/projects/${project.uuid}/delete_user/`, {
      user: member.uuid,
      role: 'PROJECT.ADMIN',
    })
    assert.equal(removed.status, 204, JSON.stringify(removed.body))
    assert.equal(await pass(), 1)
    assert.deepEqual(await a.consumer.take(1), [body(false)])
    // A role on the organization tells the agent nothing.
    const orgGrant = await asBoss.post(`/api/customers/${consumerOrg.uuid}/add_user/`, {
      user: member.uuid,
      role: 'CUSTOMER.MANAGER',
    })
    assert.equal(orgGrant.status, 201, JSON.stringify(orgGrant.body))
    assert.equal(await pass(), 0)
    assert.equal(a.consumer.pending, 0)
  })

  test("an offering user's creation, states, username and deletion reach its offering's offering_user queue", async () => {
    const a = await agent(s, cleanups, undefined, 'offering_user')
    await a.t.ctx.db
      .updateTable('offerings')
      .set({ plugin_options: JSON.stringify({ service_provider_can_create_offering_user: true }) })
      .where('id', '=', a.offering.id)
      .execute()
    const project = await makeProject(a.t.ctx, await makeCustomer(a.t.ctx))
    await makeResource(a.t.ctx, a.offering, project, { backendId: 'hpc_alloc_1' })
    await makeResource(a.t.ctx, a.offering, project, { backendId: 'hpc_alloc_0', state: 'Terminated' })
    const member = await makeUser(a.t.ctx)
    const relay = new Relay(a.t.ctx, { eventsAfter, onEventsCommitted })
    cleanups.push(() => relay.stop())
    await passes(relay) // what the set-up told

    // A project role gives the user an account on the offering (no username yet: the agent names it).
    await grant(a.t.ctx, member, 'PROJECT.MEMBER', { type: 'project', id: project.id })
    assert.equal(await passes(relay), 1)
    const as = client(a.t.app, a.owner.token)
    const listed = await as.get(`/api/marketplace-offering-users/?user_uuid=${member.uuid}`)
    assert.equal(listed.body.length, 1, JSON.stringify(listed.body))
    const account = listed.body[0].uuid as string
    const body = (action: string, username: string, state: string, more = {}) => ({
      offering_user_uuid: hex(account),
      user_uuid: hex(member.uuid),
      username,
      state,
      action,
      offering_uuid: hex(a.offering.uuid),
      ...more,
    })
    assert.deepEqual(await a.consumer.take(1), [body('create', '', 'Requested')])

    // The agent's own flow: begin_creating, then the username (which makes the account OK).
    assert.equal((await as.post(`/api/marketplace-offering-users/${account}/begin_creating/`)).status, 200)
    assert.equal(await passes(relay), 1)
    assert.deepEqual(await a.consumer.take(1), [body('update', '', 'Creating')])
    const named = await as.patch(`/api/marketplace-offering-users/${account}/`, { username: 'member_1' })
    assert.equal(named.status, 200, JSON.stringify(named.body))
    assert.equal(await passes(relay), 2)
    assert.deepEqual(await a.consumer.take(2), [
      body('username_set', 'member_1', 'OK', { resource_backend_ids: ['hpc_alloc_1'] }),
      body('update', 'member_1', 'OK'),
    ])

    assert.equal((await as.delete(`/api/marketplace-offering-users/${account}/`)).status, 204)
    assert.equal(await passes(relay), 1)
    assert.deepEqual(await a.consumer.take(1), [body('delete', 'member_1', 'OK')])
    assert.equal(a.consumer.pending, 0)
  })

  test('a deleted subscription loses its RabbitMQ user and queue', async () => {
    const a = await agent(s, cleanups)
    a.consumer.close()
    const r = await client(a.t.app, a.owner.token).delete(`/api/event-subscriptions/${a.subscription.uuid}/`)
    assert.equal(r.status, 204)
    const api = management(s)
    assert.equal(
      await api.request('GET', `/api/queues/${a.queue.vhost}/${a.queue.queue_name}`, undefined, {
        missingOk: true,
      }),
      null,
    )
    assert.equal(
      await api.request('GET', `/api/users/${hex(a.subscription.uuid)}`, undefined, { missingOk: true }),
      null,
    )
  })

  test(
    'a broker restarted: confirmed messages survive it, and what was committed meanwhile follows',
    {
      skip: restartSkipped ? 'TEST_RABBITMQ_RESTART=off' : false,
    },
    async () => {
      const a = await agent(s, cleanups)
      // The agent is away: the messages wait in the durable queue.
      a.consumer.close()
      const log = new MemoryEvents()
      const relay = new Relay(a.t.ctx, log)
      cleanups.push(() => relay.stop())
      const [u1, u2, u3] = [randomUUID(), randomUUID(), randomUUID()]
      order(log, a.offering.uuid, u1, 'pending-provider', true)
      assert.equal((await relay.runOnce()).messages, 1)
      await rabbitmqctl('stop_app')
      try {
        order(log, a.offering.uuid, u2, 'pending-provider', true)
        await assert.rejects(relay.runOnce(), /RabbitMQ/)
        assert.equal(await relay.position(), 1)
      } finally {
        await rabbitmqctl('start_app')
        await rabbitmqctl('await_startup')
      }
      order(log, a.offering.uuid, u3, 'executing', true)
      await relayUntil(relay, 3)
      const back = await StompConsumer.connect(s.stompUrl, {
        vhost: a.queue.vhost,
        login: hex(a.subscription.uuid),
        passcode: a.owner.token,
        queue: a.queue.queue_name,
      })
      cleanups.push(async () => back.close())
      assert.deepEqual(await back.take(3), [
        orderBody(a.offering.uuid, u1, 'pending-provider'),
        orderBody(a.offering.uuid, u2, 'pending-provider'),
        orderBody(a.offering.uuid, u3, 'executing'),
      ])
    },
  )
})
