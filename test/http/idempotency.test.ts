// POSTs with an Idempotency-Key: performed once per user and key, a retry of the same request
// answers the first answer again (marked as a replay), another request under the key is 422,
// retries racing the first never act twice, keys are per user and expire after 24 hours.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildTestApp, TEST_DATABASE_URL, type TestApp } from '../support/app.js'
import { call, type Res } from '../support/client.js'
import {
  grant,
  makeCustomer,
  makeProject,
  makeUser,
  uniqueName,
  type Ref,
  type UserRef,
} from '../support/fixtures.js'
import { makeComponent, makeOffering, makePlan, type OfferingRef } from '../support/catalog-fixtures.js'
import { idempotencyProbe, purgeIdempotencyKeys } from '../../src/http/idempotency.js'

const R = '/api/marketplace-orders/'
let t: TestApp
let project: Ref
let offering: OfferingRef
let plan: Ref
let manager: UserRef
let owner: UserRef

before(async () => {
  // SQLite as served, from a file: a keyed request holds the writing connection while it runs, and
  // others read on the second connection a file has (an in-memory database has only the one).
  const file = TEST_DATABASE_URL.startsWith('sqlite')
  t = await buildTestApp(
    file ? { databaseUrl: `sqlite:${join(mkdtempSync(join(tmpdir(), 'idempotency-')), 'db.sqlite')}` } : {},
  )
  const consumer = await makeCustomer(t.ctx, 'Idempotency consumer')
  project = await makeProject(t.ctx, consumer, { name: 'Idempotency project' })
  const provider = await makeCustomer(t.ctx, 'Idempotency provider')
  offering = await makeOffering(t.ctx, provider, { type: 'Marketplace.Slurm', name: 'Idempotent offering' })
  await makeComponent(t.ctx, offering, { type: 'cpu' })
  plan = await makePlan(t.ctx, offering, { unitPrice: '1' })
  manager = await makeUser(t.ctx)
  owner = await makeUser(t.ctx)
  await grant(t.ctx, manager, 'PROJECT.MANAGER', { type: 'project', id: project.id })
  await grant(t.ctx, owner, 'CUSTOMER.OWNER', { type: 'customer', id: consumer.id })
})
after(async () => {
  await t.close()
})

function orderBody(name: string) {
  return {
    offering: offering.url,
    plan: plan.url,
    project: project.url,
    limits: { cpu: 1 },
    attributes: { name },
  }
}

function post(who: UserRef, key: string | null, body: unknown, url = R): Promise<Res> {
  return call(t.app, 'POST', url, {
    token: who.token,
    body,
    headers: key === null ? {} : { 'idempotency-key': key },
  })
}

/** Orders whose resource is named `name`, in the database. */
async function ordersNamed(name: string): Promise<number> {
  const rows = await t.ctx.db.selectFrom('orders').select('attributes').execute()
  const text = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v))
  return rows.filter((r) => text(r.attributes).includes(`"${name}"`)).length
}

async function keysStored(): Promise<number> {
  const r = await t.ctx.db
    .selectFrom('idempotency_keys')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow()
  return Number(r.n)
}

describe('a POST with an Idempotency-Key', () => {
  test('a retry of the same request answers the first answer without acting again', async () => {
    const name = uniqueName('idem')
    const first = await post(manager, 'retry-1', orderBody(name))
    assert.equal(first.status, 201, first.text)
    assert.equal(first.headers['idempotent-replayed'], undefined)
    const second = await post(manager, 'retry-1', orderBody(name))
    assert.equal(second.status, 201)
    assert.equal(second.text, first.text)
    assert.equal(second.headers['content-type'], first.headers['content-type'])
    assert.equal(second.headers['location'], first.headers['location'])
    assert.equal(second.headers['idempotent-replayed'], 'true')
    assert.ok(second.headers['x-request-id'], 'a replay still carries its own request id')
    assert.equal(await ordersNamed(name), 1)
    // Without the header, the same body is another order.
    assert.equal((await post(manager, null, orderBody(name))).status, 201)
    assert.equal(await ordersNamed(name), 2)
  })

  test('the answer is kept as it was before compression', async () => {
    const name = uniqueName('idem')
    const headers = { 'idempotency-key': 'compressed', 'accept-encoding': 'gzip' }
    const first = await call(t.app, 'POST', R, { token: manager.token, body: orderBody(name), headers })
    assert.equal(first.status, 201)
    assert.equal(first.headers['content-encoding'], 'gzip')
    const plain = await post(manager, 'compressed', orderBody(name))
    assert.equal(plain.headers['idempotent-replayed'], 'true')
    assert.equal(plain.headers['content-encoding'], undefined)
    assert.equal((plain.body as { attributes: { name: string } }).attributes.name, name)
    const again = await call(t.app, 'POST', R, { token: manager.token, body: orderBody(name), headers })
    assert.equal(again.headers['content-encoding'], 'gzip')
    assert.equal(await ordersNamed(name), 1)
  })

  test('an error answer is kept and replayed too', async () => {
    const bad = { ...orderBody(uniqueName('idem')), plan: 'not a url' }
    const first = await post(manager, 'retry-400', bad)
    assert.equal(first.status, 400)
    const second = await post(manager, 'retry-400', bad)
    assert.equal(second.status, 400)
    assert.equal(second.text, first.text)
    assert.equal(second.headers['idempotent-replayed'], 'true')
  })

  test('a server error is not kept: the request’s writes are undone and the retry performs it', async () => {
    // A second app on the same database whose answers fail, once written, when asked to.
    const failing = await buildTestApp({}, t.clock, t, (app) => {
      app.addHook('onSend', (request, reply, payload, done) => {
        if (request.headers['x-test-fail'] && reply.statusCode < 500) done(new Error('the answer failed'))
        else done(null, payload)
      })
    })
    try {
      const name = uniqueName('idem')
      const headers = { 'idempotency-key': 'server-error', 'x-test-fail': '1' }
      const first = await call(failing.app, 'POST', R, {
        token: manager.token,
        body: orderBody(name),
        headers,
      })
      assert.equal(first.status, 500)
      // A 500 is documented nowhere: this one is made by the test.
      assert.deepEqual(
        [...new Set(failing.conformance.problems)],
        ['POST /api/marketplace-orders/ → 500: status not documented'],
      )
      failing.conformance.problems.length = 0
      assert.equal(await ordersNamed(name), 0)
      const retry = await post(manager, 'server-error', orderBody(name))
      assert.equal(retry.status, 201)
      assert.equal(retry.headers['idempotent-replayed'], undefined)
      assert.equal(await ordersNamed(name), 1)
    } finally {
      await failing.close()
    }
  })

  test('the same key with another body or path is 422 naming the header, and acts not', async () => {
    const name = uniqueName('idem')
    assert.equal((await post(manager, 'reused', orderBody(name))).status, 201)
    const other = await post(manager, 'reused', orderBody(`${name}-other`))
    assert.equal(other.status, 422)
    assert.deepEqual(Object.keys(other.body as object), ['Idempotency-Key'])
    assert.match((other.body as Record<string, string[]>)['Idempotency-Key']![0]!, /another request/)
    assert.equal(await ordersNamed(`${name}-other`), 0)
    const elsewhere = await post(manager, 'reused', { name: 'x' }, '/api/customers/')
    assert.equal(elsewhere.status, 422)
  })

  test('retries fired at once: exactly one performs, the others replay it or are told it runs', async () => {
    const name = uniqueName('idem')
    const answers = await Promise.all(Array.from({ length: 8 }, () => post(manager, 'race', orderBody(name))))
    const performed = answers.filter(
      (a) => a.status === 201 && a.headers['idempotent-replayed'] === undefined,
    )
    const replayed = answers.filter((a) => a.status === 201 && a.headers['idempotent-replayed'] === 'true')
    const running = answers.filter((a) => a.status === 409)
    assert.equal(performed.length, 1, answers.map((a) => `${a.status} ${a.text}`).join('\n'))
    assert.equal(performed.length + replayed.length + running.length, 8)
    for (const r of replayed) assert.equal(r.text, performed[0]!.text)
    for (const r of running) assert.ok((r.body as { detail: string }).detail.includes('Idempotency-Key'))
    assert.equal(await ordersNamed(name), 1)
    const later = await post(manager, 'race', orderBody(name))
    assert.equal(later.headers['idempotent-replayed'], 'true')
    assert.equal(later.text, performed[0]!.text)
  })

  test('a retry that arrives while the first still runs is 409, and acts not', async () => {
    const name = uniqueName('idem')
    let release = () => {}
    const held = new Promise<void>((r) => (release = r))
    let reached = () => {}
    const atWrite = new Promise<void>((r) => (reached = r))
    // The first stops after its writes, before its commit, until the retry has been answered.
    idempotencyProbe.at = async (point) => {
      if (point !== 'written') return
      reached()
      await held
    }
    try {
      const first = post(manager, 'slow', orderBody(name))
      await atWrite
      const retry = await post(manager, 'slow', orderBody(name))
      assert.equal(retry.status, 409, retry.text)
      assert.match((retry.body as { detail: string }).detail, /Idempotency-Key/)
      release()
      assert.equal((await first).status, 201)
    } finally {
      idempotencyProbe.at = null
      release()
    }
    assert.equal(await ordersNamed(name), 1)
    assert.equal((await post(manager, 'slow', orderBody(name))).headers['idempotent-replayed'], 'true')
  })

  test('a key is the user’s own: another user with the same key acts on its own', async () => {
    const name = uniqueName('idem')
    const mine = await post(manager, 'shared-key', orderBody(name))
    const theirs = await post(owner, 'shared-key', orderBody(name))
    assert.equal(mine.status, 201)
    assert.equal(theirs.status, 201)
    assert.equal(theirs.headers['idempotent-replayed'], undefined)
    assert.notEqual((theirs.body as { uuid: string }).uuid, (mine.body as { uuid: string }).uuid)
    assert.equal(await ordersNamed(name), 2)
  })

  test('a key is kept 24 hours: then the same request acts again, and the cleanup deletes it', async () => {
    const name = uniqueName('idem')
    assert.equal((await post(manager, 'day-old', orderBody(name))).status, 201)
    t.clock.advanceHours(23)
    assert.equal((await post(manager, 'day-old', orderBody(name))).headers['idempotent-replayed'], 'true')
    assert.equal(await ordersNamed(name), 1)
    t.clock.advanceHours(1)
    t.clock.advance(1)
    const again = await post(manager, 'day-old', orderBody(name))
    assert.equal(again.status, 201)
    assert.equal(again.headers['idempotent-replayed'], undefined)
    assert.equal(await ordersNamed(name), 2)

    // Every key written before the last one is now over 24 hours old.
    const before = await keysStored()
    t.clock.advance(1)
    const deleted = await purgeIdempotencyKeys(t.ctx)
    assert.ok(deleted >= 1)
    assert.equal(await keysStored(), before - deleted)
    t.clock.advanceHours(24)
    await purgeIdempotencyKeys(t.ctx)
    assert.equal(await keysStored(), 0)
  })

  test('an empty, too long or control-character key is 400 naming the header, and acts not', async () => {
    const name = uniqueName('idem')
    for (const key of ['', 'k'.repeat(256), 'tab\there', 'caf\u00e9']) {
      const r = await post(manager, key, orderBody(name))
      assert.equal(r.status, 400, `${JSON.stringify(key)}: ${r.text}`)
      assert.deepEqual(Object.keys(r.body as object), ['Idempotency-Key'])
    }
    assert.equal(await ordersNamed(name), 0)
    assert.equal((await post(manager, 'k'.repeat(255), orderBody(name))).status, 201)
  })

  test('requests without a token are not concerned: a login with a key is performed each time', async () => {
    for (let i = 0; i < 2; i++) {
      const r = await call(t.app, 'POST', '/api-auth/password/', {
        body: { username: 'nobody', password: 'wrong' },
        headers: { 'idempotency-key': 'login' },
      })
      assert.equal(r.status, 400)
      assert.equal(r.headers['idempotent-replayed'], undefined)
    }
  })

  test('the schema documents the header on every POST, and the 409 and 422 answers', async () => {
    const doc = (await call(t.app, 'GET', '/api/schema/', { token: manager.token })).body as {
      paths: Record<
        string,
        Record<string, { parameters?: { name: string; in: string }[]; responses: object }>
      >
    }
    let posts = 0
    for (const item of Object.values(doc.paths)) {
      const op = item.post
      if (!op) continue
      posts++
      assert.ok(op.parameters?.some((p) => p.name === 'Idempotency-Key' && p.in === 'header'))
      assert.ok('409' in op.responses && '422' in op.responses)
    }
    assert.ok(posts > 10)
  })
})
