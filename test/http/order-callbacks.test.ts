// Order callbacks: which URLs are accepted, the connect-time guard against private targets, and
// the delivery lane that keeps callbacks from holding up order processing.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer as createHttpServer } from 'node:http'
import { createServer, type Server, type Socket } from 'node:net'
import { buildTestApp, TestClock } from '../support/app.js'
import { client } from '../support/client.js'
import { makeCustomer, makeProject, makeUser } from '../support/fixtures.js'
import { makeOffering } from '../support/catalog-fixtures.js'
import type { Config } from '../../src/config.js'
import type { LookupHost } from '../../src/context.js'
import { CALLBACK_LANE, JOBS } from '../../src/areas/orders/service.js'
import { MAIN_LANE } from '../../src/jobs/queue.js'

const R = '/api/marketplace-orders'

/** An app with a staff user, a project and a Basic offering (processed by the server). */
async function setup(overrides: Partial<Config> = {}, lookupHost?: LookupHost) {
  const t = await buildTestApp(
    overrides,
    new TestClock(),
    undefined,
    undefined,
    lookupHost ? { lookupHost } : {},
  )
  const c = await makeCustomer(t.ctx)
  const project = await makeProject(t.ctx, c)
  const staff = await makeUser(t.ctx, { staff: true })
  const offering = await makeOffering(t.ctx, c, { type: 'Marketplace.Basic' })
  const api = client(t.app, staff.token)
  const post = (extra: Record<string, unknown> = {}) =>
    api.post(`${R}/`, { offering: offering.url, project: project.url, ...extra })
  /** Creates an order and approves it until it is executing (its processing job queued). */
  const executing = async (extra: Record<string, unknown> = {}) => {
    const created = await post(extra)
    assert.equal(created.status, 201, JSON.stringify(created.body))
    const uuid = created.body.uuid as string
    for (const action of ['approve_by_consumer', 'approve_by_provider']) {
      const { state } = (await api.get(`${R}/${uuid}/`)).body
      if (state === 'executing') break
      if (action === 'approve_by_consumer' && state !== 'pending-consumer') continue
      assert.equal((await api.post(`${R}/${uuid}/${action}/`)).status, 200)
    }
    assert.equal((await api.get(`${R}/${uuid}/`)).body.state, 'executing')
    return uuid
  }
  const state = async (uuid: string) => (await api.get(`${R}/${uuid}/`)).body.state as string
  const deliveries = () =>
    t.ctx.db
      .selectFrom('jobs')
      .select(['id', 'state', 'attempts', 'last_error'])
      .where('kind', '=', JOBS.callback)
      .orderBy('id')
      .execute()
  return { t, post, executing, state, deliveries }
}

/**
 * A TCP listener that accepts connections, reads and never answers. `requests` are the
 * connections a request was sent on; `reached(n)` waits for n of them.
 */
async function blackHole(host = '127.0.0.1') {
  const sockets: Socket[] = []
  let requests = 0
  const waiting: { n: number; resolve: () => void }[] = []
  const server: Server = createServer((socket) => {
    sockets.push(socket)
    socket.on('error', () => undefined)
    socket.once('data', () => {
      requests++
      for (const w of waiting.filter((x) => requests >= x.n)) w.resolve()
    })
  })
  await new Promise<void>((r) => server.listen(0, host, r))
  return {
    port: (server.address() as { port: number }).port,
    requests: () => requests,
    reached: (n: number) =>
      requests >= n ? Promise.resolve() : new Promise<void>((resolve) => waiting.push({ n, resolve })),
    close: async () => {
      for (const s of sockets) s.destroy()
      await new Promise<void>((r) => server.close(() => r()))
    },
  }
}

/** An HTTP listener on loopback that records every connection and every request body. */
async function recorder() {
  let connections = 0
  const bodies: any[] = []
  const server = createHttpServer((req, res) => {
    let data = ''
    req.on('data', (c: Buffer) => (data += c.toString()))
    req.on('end', () => {
      bodies.push(JSON.parse(data))
      res.writeHead(204).end()
    })
  })
  server.on('connection', () => connections++)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return {
    port: (server.address() as { port: number }).port,
    bodies,
    connections: () => connections,
    close: () => new Promise<void>((r) => server.close(() => r())),
  }
}

describe('callback_url at creation', () => {
  test('every private, loopback and embedded form is refused with a 400 naming the field', async () => {
    const { t, post } = await setup({
      callbackAllowPrivate: false,
      callbackAllowList: ['hooks.internal', '10.20.0.0/16'],
    })
    try {
      for (const url of [
        'http://127.0.0.1:8080/x',
        'http://127.1/',
        'http://2130706433/',
        'http://0x7f.1/',
        'http://0x7f000001/',
        'http://0177.0.0.1/',
        'http://0/',
        'http://0.0.0.0/',
        'http://10.1.2.3/',
        'http://172.16.0.1/',
        'http://192.168.1.1/',
        'http://100.64.0.1/',
        'http://169.254.169.254/latest',
        'http://224.0.0.1/',
        'http://255.255.255.255/',
        'http://240.0.0.1/',
        'http://192.0.2.1/',
        'http://198.18.0.1/',
        'http://localhost/x',
        'http://LOCALHOST/x',
        'http://localhost./x',
        'http://localhost.localdomain/x',
        'http://ip6-localhost/x',
        'http://ip6-loopback/x',
        'http://api.localhost/x',
        'http://api.localhost./x',
        'http://[::1]/',
        'http://[::]/',
        'http://[::127.0.0.1]:8450/x',
        'http://[::ffff:127.0.0.1]/',
        'http://[::ffff:7f00:1]/',
        'http://[::ffff:0:7f00:1]/',
        'http://[::ffff:0:127.0.0.1]/',
        'http://[64:ff9b::127.0.0.1]/',
        'http://[64:ff9b::10.0.0.1]/',
        'http://[64:ff9b:1::1]/',
        'http://[2002:7f00:1::]/',
        'http://[2002:a00:1::1]/',
        'http://[2001::1]/',
        'http://[fe80::1]/',
        'http://[fc00::1]/',
        'http://[fd12:3456::1]/',
        'http://[fec0::1]/',
        'http://[ff02::1]/',
        'http://[2001:db8::1]/',
        'ftp://example.com/',
        'http://user:secret@example.com/',
        'not a url',
      ]) {
        const r = await post({ callback_url: url })
        assert.equal(r.status, 400, url)
        assert.deepEqual(Object.keys(r.body), ['callback_url'], url)
      }
      for (const url of [
        'https://hooks.example.com/order',
        'http://93.184.216.34/',
        'http://[2606:4700::1111]/',
        'http://[::ffff:93.184.216.34]/',
        'http://[64:ff9b::93.184.216.34]/',
        'http://[2002:5db8:d822::1]/',
        'http://localhost.example.com/',
        'http://hooks.internal/order',
        'http://HOOKS.INTERNAL./order',
        'http://10.20.0.5/',
        'http://[::ffff:10.20.0.5]/',
      ]) {
        const r = await post({ callback_url: url })
        assert.equal(r.status, 201, `${url}: ${JSON.stringify(r.body)}`)
      }
    } finally {
      await t.close()
    }
  })
})

describe('callback delivery guard', () => {
  test('a name that resolves to a public address and then to loopback is refused at the connection', async () => {
    const listener = await recorder()
    const lookups: string[] = []
    const lookupHost: LookupHost = async (hostname) => {
      lookups.push(hostname)
      const address = lookups.length === 1 ? '93.184.216.34' : '127.0.0.1'
      return [{ address, family: 4 }]
    }
    const { t, post, deliveries } = await setup({ callbackAllowPrivate: false }, lookupHost)
    try {
      const created = await post({ callback_url: `http://rebind.test:${listener.port}/hook` })
      assert.equal(created.status, 201)
      assert.equal(await t.ctx.jobs.drain(10, CALLBACK_LANE), 1)
      // Looked up once before the request, and again by the connection itself, which refused.
      assert.deepEqual(lookups, ['rebind.test', 'rebind.test'])
      const [job] = await deliveries()
      assert.equal(job!.state, 'queued')
      assert.equal(job!.attempts, 1)
      assert.match(job!.last_error ?? '', /rebind\.test resolves to 127\.0\.0\.1/)
      t.clock.advance(10_000)
      assert.equal(await t.ctx.jobs.drain(10, CALLBACK_LANE), 1)
      assert.equal(listener.connections(), 0)
      assert.deepEqual(listener.bodies, [])
    } finally {
      await t.close()
      await listener.close()
    }
  })

  test('a name with one private address among public ones is refused', async () => {
    const listener = await recorder()
    const lookupHost: LookupHost = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '::1', family: 6 },
      { address: '127.0.0.1', family: 4 },
    ]
    const { t, post, deliveries } = await setup({ callbackAllowPrivate: false }, lookupHost)
    try {
      assert.equal((await post({ callback_url: `http://mixed.test:${listener.port}/` })).status, 201)
      await t.ctx.jobs.drain(10, CALLBACK_LANE)
      assert.match((await deliveries())[0]!.last_error ?? '', /mixed\.test resolves to ::1/)
      assert.equal(listener.connections(), 0)
    } finally {
      await t.close()
      await listener.close()
    }
  })

  test('an allowed network is reached through the checked lookup', async () => {
    const listener = await recorder()
    const lookupHost: LookupHost = async (hostname) =>
      hostname === 'hooks.test' ? [{ address: '127.0.0.1', family: 4 }] : []
    const { t, post, deliveries } = await setup(
      { callbackAllowPrivate: false, callbackAllowList: ['127.0.0.0/8'] },
      lookupHost,
    )
    try {
      const created = await post({ callback_url: `http://hooks.test:${listener.port}/hook` })
      assert.equal(created.status, 201)
      await t.ctx.jobs.drain(10, CALLBACK_LANE)
      assert.deepEqual(
        listener.bodies.map((b) => [b.uuid, b.state]),
        [[created.body.uuid, created.body.state]],
      )
      assert.equal((await deliveries())[0]!.state, 'done')
    } finally {
      await t.close()
      await listener.close()
    }
  })
})

describe('callback delivery lane', () => {
  test('orders are processed while callbacks to a host that never answers are pending', async () => {
    const hole = await blackHole()
    // Attempts are only ended by stopping the lane, so the test does not depend on its speed.
    const { t, executing, state, deliveries } = await setup({
      callbackTimeoutMs: 600_000,
      callbackConcurrency: 16,
      callbackHostConcurrency: 4,
    })
    try {
      for (let i = 0; i < 20; i++) await executing({ callback_url: `http://127.0.0.1:${hole.port}/x` })
      const lane = t.ctx.jobs.startLane(CALLBACK_LANE, 600_000)
      await hole.reached(4)
      await lane.settled()
      // At most four deliveries to the host at once; the rest wait queued, untouched.
      assert.equal(lane.running.total, 4)
      assert.deepEqual([...lane.running.perGroup], [['127.0.0.1', 4]])
      const pending = await deliveries()
      assert.ok(pending.length >= 20)
      assert.equal(pending.filter((j) => j.state === 'running').length, 4)
      assert.equal(pending.filter((j) => j.attempts > 0).length, 4)

      // Order processing runs in its own lane and finishes the orders; the callbacks are untouched.
      const basic = await executing()
      const processed = await t.ctx.jobs.drain(100, MAIN_LANE)
      assert.equal(processed, 21)
      assert.equal(await state(basic), 'done')
      const after = await deliveries()
      assert.equal(after.filter((j) => j.state === 'done').length, 0)
      assert.equal(after.filter((j) => j.state === 'running').length, 4)
      assert.equal(hole.requests(), 4)
      assert.ok(lane.running.total === 4)

      // Stopping aborts the deliveries in flight; they wait for their retry, nothing is lost.
      await t.ctx.jobs.stop()
      const stopped = await deliveries()
      assert.equal(stopped.filter((j) => j.state === 'queued').length, stopped.length)
      assert.equal(stopped.filter((j) => j.attempts === 1).length, 4)
      assert.ok(stopped.every((j) => j.attempts === 0 || /stopping/.test(j.last_error ?? '')))
    } finally {
      await t.close()
      await hole.close()
    }
  })

  test('an attempt ends within what is left of the delivery budget, and then the delivery gives up', async () => {
    const hole = await blackHole()
    const { t, post, deliveries } = await setup({ callbackTimeoutMs: 600_000, callbackBudgetMs: 60_000 })
    try {
      assert.equal((await post({ callback_url: `http://127.0.0.1:${hole.port}/x` })).status, 201)
      // 2 s of the budget left: the attempt is cut then, not after CALLBACK_TIMEOUT_MS (ten minutes).
      // The margin lets a loaded machine connect to the listener before the cut.
      t.clock.advance(60_000 - 2_000)
      assert.equal(await t.ctx.jobs.drain(10, CALLBACK_LANE), 1)
      const [first] = await deliveries()
      assert.equal(first!.state, 'queued')
      assert.match(first!.last_error ?? '', /abort|timeout/i)
      assert.equal(hole.requests(), 1)
      // Past the budget the delivery fails for good, though it had attempts left.
      t.clock.advance(10_000)
      assert.equal(await t.ctx.jobs.drain(10, CALLBACK_LANE), 1)
      const [last] = await deliveries()
      assert.equal(last!.state, 'failed')
      assert.equal(last!.attempts, 2)
      assert.match(last!.last_error ?? '', /time budget/)
      assert.equal(hole.requests(), 1)
    } finally {
      await t.close()
      await hole.close()
    }
  })
})
