// Event subscriptions over HTTP, without a broker: registration through an agent identity, who
// sees and deletes them, create_queue's checks, and the message each event gives.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { sharedTestApp, type TestApp } from '../support/app.js'
import { client, uuids } from '../support/client.js'
import { makeUser, type UserRef } from '../support/fixtures.js'
import {
  makeOffering,
  makeOfferingManager,
  providerGraph,
  type OfferingRef,
} from '../support/catalog-fixtures.js'
import {
  accountKey,
  factsWanted,
  messageFor,
  messagesFor,
  type StoredEvent,
} from '../../src/areas/event-subscriptions/messages.js'
import { BrokerError, withTimeout } from '../../src/areas/event-subscriptions/broker.js'
import { loadConfig } from '../../src/config.js'

const IDS = '/api/marketplace-site-agent-identities/'
const SUBS = '/api/event-subscriptions/'

async function world(t: TestApp) {
  const staff = await makeUser(t.ctx, { staff: true })
  const support = await makeUser(t.ctx, { support: true })
  const outsider = await makeUser(t.ctx)
  const provider = providerGraph(t.ctx)
  const owner = await provider.owner()
  const offering = await makeOffering(t.ctx, await provider.customer(), { type: 'Marketplace.Slurm' })
  const foreign = await makeOffering(t.ctx, await providerGraph(t.ctx).customer(), {
    type: 'Marketplace.Slurm',
  })
  const manager = await makeOfferingManager(t.ctx, offering)
  return { staff, support, outsider, owner, manager, offering, foreign }
}

async function identityOf(t: TestApp, user: UserRef, offering: OfferingRef): Promise<string> {
  const r = await client(t.app, user.token).post(IDS, {
    name: `a-${randomUUID().slice(0, 8)}`,
    offering: offering.uuid,
  })
  assert.equal(r.status, 201, JSON.stringify(r.body))
  return r.body.uuid
}

describe('event subscriptions', () => {
  const t = sharedTestApp(world)

  test('an agent registers its subscription at each start: 201, then the same one 200', async () => {
    const identity = await identityOf(t, t.owner, t.offering)
    const as = client(t.app, t.owner.token)
    const first = await as.post(`${IDS}${identity}/register_event_subscription/`, {
      observable_object_type: 'order',
      description: 'orders',
    })
    assert.equal(first.status, 201, JSON.stringify(first.body))
    assert.equal(first.body.user_uuid, t.owner.uuid)
    assert.equal(first.body.user, `http://localhost:80/api/users/${t.owner.uuid}/`)
    assert.equal(first.body.user_username, t.owner.username)
    assert.equal(first.body.description, 'orders')
    assert.equal(first.body.source_ip, '127.0.0.1')
    assert.deepEqual(first.body.observable_objects, [
      { object_type: 'order', offering_uuid: t.offering.uuid },
    ])
    const again = await as.post(`${IDS}${identity}/register_event_subscription/`, {
      observable_object_type: 'order',
    })
    assert.equal(again.status, 200)
    assert.equal(again.body.uuid, first.body.uuid)
    assert.equal(again.body.description, 'orders')
    const resource = await as.post(`${IDS}${identity}/register_event_subscription/`, {
      observable_object_type: 'resource',
    })
    assert.equal(resource.status, 201)
    assert.notEqual(resource.body.uuid, first.body.uuid)
    const bad = await as.post(`${IDS}${identity}/register_event_subscription/`, {
      observable_object_type: 'orders',
    })
    assert.equal(bad.status, 400)
    assert.ok(bad.body.observable_object_type, JSON.stringify(bad.body))
  })

  test('a user sees its own subscriptions; staff and support all; others none', async () => {
    const identity = await identityOf(t, t.staff, t.offering)
    const r = await client(t.app, t.manager.token).post(`${IDS}${identity}/register_event_subscription/`, {
      observable_object_type: 'order',
    })
    assert.equal(r.status, 201)
    const uuid = r.body.uuid as string
    for (const [user, sees] of [
      [t.manager, true],
      [t.staff, true],
      [t.support, true],
      [t.owner, false],
      [t.outsider, false],
    ] as const) {
      const list = await client(t.app, user.token).get(`${SUBS}?page_size=300`)
      assert.equal(list.status, 200)
      assert.equal(uuids(list.body).includes(uuid), sees, user.username)
      const item = await client(t.app, user.token).get(`${SUBS}${uuid}/`)
      assert.equal(item.status, sees ? 200 : 404)
    }
    const mine = await client(t.app, t.staff.token).get(`${SUBS}?user_uuid=${t.manager.uuid}`)
    assert.deepEqual(
      mine.body.map((s: { user_uuid: string }) => s.user_uuid),
      mine.body.map(() => t.manager.uuid),
    )
    assert.ok(uuids(mine.body).includes(uuid))
    // Support reads it but may not delete it; its user may.
    assert.equal((await client(t.app, t.support.token).delete(`${SUBS}${uuid}/`)).status, 403)
    assert.equal((await client(t.app, t.manager.token).delete(`${SUBS}${uuid}/`)).status, 204)
    assert.equal((await client(t.app, t.manager.token).get(`${SUBS}${uuid}/`)).status, 404)
  })

  test('only whoever manages the identity registers through it', async () => {
    const identity = await identityOf(t, t.staff, t.offering)
    const body = { observable_object_type: 'order' }
    assert.equal(
      (await client(t.app, t.outsider.token).post(`${IDS}${identity}/register_event_subscription/`, body))
        .status,
      404,
    )
    assert.equal(
      (await client(t.app, t.support.token).post(`${IDS}${identity}/register_event_subscription/`, body))
        .status,
      403,
    )
  })

  test("create_queue: the subscription's user, an offering it manages, and a broker", async () => {
    const identity = await identityOf(t, t.owner, t.offering)
    const as = client(t.app, t.owner.token)
    const sub = (
      await as.post(`${IDS}${identity}/register_event_subscription/`, { observable_object_type: 'order' })
    ).body
    const path = `${SUBS}${sub.uuid}/create_queue/`
    const missing = await as.post(path, { offering_uuid: randomUUID(), object_type: 'order' })
    assert.equal(missing.status, 400)
    assert.ok(missing.body.offering_uuid)
    assert.equal((await as.post(path, { offering_uuid: 'nope', object_type: 'order' })).status, 400)
    assert.equal((await as.post(path, { offering_uuid: t.offering.uuid, object_type: 'x' })).status, 400)
    assert.equal((await as.post(path, { offering_uuid: t.foreign.uuid, object_type: 'order' })).status, 403)
    // Staff sees the subscription, but its queue's passcode is its user's token.
    assert.equal(
      (
        await client(t.app, t.staff.token).post(path, {
          offering_uuid: t.offering.uuid,
          object_type: 'order',
        })
      ).status,
      403,
    )
    // This server runs without RABBITMQ_URL: event queues are off.
    const off = await as.post(path, {
      offering_uuid: t.offering.uuid.replace(/-/g, ''),
      object_type: 'order',
    })
    assert.equal(off.status, 503)
    assert.match(off.body.detail, /not enabled/)
  })
})

describe('the message of each event', () => {
  const offering = randomUUID()
  const event = (objectType: string, type: string, data: Record<string, unknown> = {}): StoredEvent => ({
    position: 1,
    envelope: {
      specversion: '1.0',
      datacontenttype: 'application/json',
      id: randomUUID(),
      source: '/x',
      type,
      subject: 'http://x/',
      time: '2026-01-15T10:00:00.000Z',
      data: { uuid: '0190e2b4-8f4c-7a2b-9c3d-4e5f60718293', offering_uuid: offering, ...data },
    },
    objectType,
    offeringUuid: offering,
    projectUuid: null,
    customerUuid: null,
  })
  const hexOffering = offering.replace(/-/g, '')

  test('an order created or changing state: the order body with the state after', () => {
    assert.deepEqual(
      messageFor(event('order', 'marketplace.order.state_changed', { state_after: 'executing' })),
      {
        objectType: 'order',
        offeringUuid: offering,
        body: {
          order_uuid: '0190e2b48f4c7a2b9c3d4e5f60718293',
          order_state: 'executing',
          offering_uuid: hexOffering,
        },
      },
    )
    assert.equal(
      (
        messageFor(event('order', 'marketplace.order.created', { state_after: 'pending-consumer' }))!
          .body as { order_state: string }
      ).order_state,
      'pending-consumer',
    )
    assert.equal(messageFor(event('order', 'marketplace.order.backend_id_set')), null)
  })

  test('a resource change: the resource body; a backend resource request: importable resources', () => {
    assert.deepEqual(messageFor(event('resource', 'marketplace.resource.limits_changed'))!.body, {
      resource_uuid: '0190e2b48f4c7a2b9c3d4e5f60718293',
    })
    const r = messageFor(event('backend_resource_request', 'marketplace.backend_resource_request.created'))!
    assert.equal(r.objectType, 'importable_resources')
    assert.deepEqual(r.body, { backend_resource_request_uuid: '0190e2b48f4c7a2b9c3d4e5f60718293' })
  })

  test('an event without an offering, or of another kind, gives none', () => {
    assert.equal(
      messageFor({
        ...event('order', 'marketplace.order.created', { state_after: 'x', offering_uuid: null }),
        offeringUuid: null,
      }),
      null,
    )
    assert.equal(messageFor(event('role_grant', 'marketplace.role_grant.granted')), null)
  })

  test('a role granted on or revoked from a project: one user_role body per offering of its resources', () => {
    const user = '0190e2b4-0000-7000-8000-00000000000a'
    const project = '0190e2b4-0000-7000-8000-00000000000b'
    const second = '0190e2b4-0000-7000-8000-00000000000c'
    const facts = {
      usernames: new Map([[user, 'alice']]),
      projects: new Map([[project, { name: 'Alpha', offerings: [offering, second] }]]),
      accountResources: new Map(),
    }
    const grant = (type: string, scopeType = 'project') => ({
      ...event('role_grant', type, {
        user_uuid: user,
        role_name: 'PROJECT.ADMIN',
        scope_type: scopeType,
        scope_uuid: project,
        offering_uuid: null,
      }),
      offeringUuid: null,
    })
    const body = (o: string, granted: boolean) => ({
      user_uuid: user.replace(/-/g, ''),
      user_username: 'alice',
      project_uuid: project.replace(/-/g, ''),
      project_name: 'Alpha',
      role_name: 'PROJECT.ADMIN',
      granted,
      offering_uuid: o.replace(/-/g, ''),
    })
    assert.deepEqual(messagesFor(grant('role.granted'), facts), [
      { objectType: 'user_role', offeringUuid: offering, body: body(offering, true) },
      { objectType: 'user_role', offeringUuid: second, body: body(second, true) },
    ])
    assert.deepEqual(
      messagesFor(grant('role.revoked'), facts).map((m) => m.body),
      [body(offering, false), body(second, false)],
    )
    // On a customer or an offering: none. A user or project gone: none.
    assert.deepEqual(messagesFor(grant('role.granted', 'customer'), facts), [])
    assert.deepEqual(messagesFor(grant('role.granted', 'offering'), facts), [])
    assert.deepEqual(messagesFor(grant('role.granted'), { ...facts, usernames: new Map() }), [])
    assert.deepEqual(messagesFor(grant('role.granted'), { ...facts, projects: new Map() }), [])
    // Any other event gives what messageFor gives.
    const resource = event('resource', 'marketplace.resource.state_changed')
    assert.deepEqual(messagesFor(resource, facts), [messageFor(resource)])
  })

  test("an offering user's changes: the offering_user body with the agent's action", () => {
    const user = '0190e2b4-0000-7000-8000-00000000000a'
    const facts = {
      usernames: new Map(),
      projects: new Map(),
      accountResources: new Map([[accountKey(user, offering), ['slurm-a', 'slurm-b']]]),
    }
    const account = (type: string, data: Record<string, unknown>) =>
      event('offering_user', `marketplace.offering_user.${type}`, { user_uuid: user, ...data })
    const body = (action: string, username: string, state: string, more = {}) => ({
      offering_user_uuid: '0190e2b48f4c7a2b9c3d4e5f60718293',
      user_uuid: user.replace(/-/g, ''),
      username,
      state,
      action,
      offering_uuid: hexOffering,
      ...more,
    })
    const bodies = (e: StoredEvent) =>
      messagesFor(e, facts).map((m) => {
        assert.equal(m.objectType, 'offering_user')
        assert.equal(m.offeringUuid, offering)
        return m.body
      })
    const named = (username: string, state: string) =>
      body('username_set', username, state, { resource_backend_ids: ['slurm-a', 'slurm-b'] })
    assert.deepEqual(bodies(account('created', { username: null, state: 'Requested' })), [
      body('create', '', 'Requested'),
    ])
    assert.deepEqual(bodies(account('created', { username: 'alice', state: 'OK' })), [
      body('create', 'alice', 'OK'),
      named('alice', 'OK'),
    ])
    assert.deepEqual(
      bodies(account('username_changed', { username: 'al', username_before: 'alice', state: 'OK' })),
      [named('al', 'OK')],
    )
    assert.deepEqual(bodies(account('username_changed', { username: null, state: 'OK' })), [
      body('update', '', 'OK'),
    ])
    assert.deepEqual(bodies(account('state_changed', { username: 'al', state: 'Requested deletion' })), [
      body('update', 'al', 'Requested deletion'),
    ])
    assert.deepEqual(bodies(account('deleted', { username: 'al', state: 'OK' })), [
      body('delete', 'al', 'OK'),
    ])
    // Without the facts of the batch (no resource of the offering where the user has a role): no ids.
    assert.deepEqual(
      messagesFor(account('created', { username: 'bo', state: 'OK' }), {
        ...facts,
        accountResources: new Map(),
      })[1]!.body,
      {
        ...named('bo', 'OK'),
        resource_backend_ids: [],
      },
    )
    assert.deepEqual(factsWanted([account('created', { username: 'bo', state: 'OK' })]).accounts, [
      { user, offering },
    ])
    assert.deepEqual(factsWanted([account('created', { username: null, state: 'Requested' })]).accounts, [])
  })
})

describe('the broker settings and calls', () => {
  test('RABBITMQ_URL and RABBITMQ_MANAGEMENT_URL go together', () => {
    assert.throws(() => loadConfig({ RABBITMQ_URL: 'amqp://127.0.0.1' }), /set together/)
    assert.throws(() => loadConfig({ RABBITMQ_MANAGEMENT_URL: 'http://127.0.0.1:15672' }), /set together/)
    assert.throws(
      () => loadConfig({ RABBITMQ_URL: 'http://x', RABBITMQ_MANAGEMENT_URL: 'http://127.0.0.1:15672' }),
      /amqp/,
    )
    const c = loadConfig({
      RABBITMQ_URL: 'amqp://u:p@127.0.0.1:5672',
      RABBITMQ_MANAGEMENT_URL: 'http://u:p@127.0.0.1:15672/',
    })
    assert.equal(c.rabbitmqManagementUrl, 'http://u:p@127.0.0.1:15672')
    assert.equal(c.rabbitmqTimeoutMs, 5000)
    assert.equal(loadConfig({}).rabbitmqUrl, null)
  })

  test('a call past its time is abandoned: aborted, and what it opens late is handed back', async () => {
    let aborted = false
    let release: (v: string) => void = () => {}
    const late: string[] = []
    const call = withTimeout(
      20,
      'slow call',
      (signal) =>
        new Promise<string>((resolve) => {
          signal.addEventListener('abort', () => (aborted = true))
          release = resolve
        }),
      (v) => late.push(v),
    )
    await assert.rejects(
      call,
      (e: unknown) => e instanceof BrokerError && /slow call: no answer within 20 ms/.test(e.message),
    )
    assert.equal(aborted, true)
    release('connection')
    await Promise.resolve()
    assert.deepEqual(late, ['connection'])
    // In time: the answer, and no abort.
    let abortedInTime = false
    assert.equal(
      await withTimeout(1000, 'quick', async (signal) => {
        signal.addEventListener('abort', () => (abortedInTime = true))
        return 7
      }),
      7,
    )
    assert.equal(abortedInTime, false)
  })
})
