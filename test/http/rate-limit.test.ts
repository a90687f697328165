// The request rate limit (per authenticated user, per address otherwise, shared through the
// database or Redis) and the login throttle.
import assert from 'node:assert/strict'
import { after, before, describe, mock, test } from 'node:test'
import { createServer, type AddressInfo, type Socket } from 'node:net'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { Redis } from 'ioredis'
import { passwordKdf } from '../../src/http/auth.js'
import { loadConfig } from '../../src/config.js'
import { buildTestApp, TestClock, type TestApp } from '../support/app.js'
import { call, client } from '../support/client.js'
import { makeUser, type UserRef } from '../support/fixtures.js'
import { issueToken } from '../../src/areas/directory/service.js'

const REDIS_URL = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379'

async function from(app: TestApp, address: string, url: string, token?: string) {
  const r = await app.app.inject({
    url,
    remoteAddress: address,
    headers: token ? { authorization: `Token ${token}` } : {},
  })
  return r.statusCode
}

describe('request rate limit', () => {
  let t: TestApp
  before(async () => {
    t = await buildTestApp({ rateLimitPerMinute: 3 })
  })
  after(() => t.close())

  test('counts per authenticated user, whatever token it presents', async () => {
    const u = await makeUser(t.ctx)
    const second = await issueToken(t.ctx, u.id)
    const other = await makeUser(t.ctx)
    assert.equal(await from(t, '10.0.0.1', '/api/users/me/', u.token), 200)
    assert.equal(await from(t, '10.0.0.2', '/api/users/me/', second), 200)
    assert.equal(await from(t, '10.0.0.3', '/api/users/me/', u.token), 200)
    // A fourth request of the same user from yet another address and token: its limit is spent.
    const r = await t.app.inject({
      url: '/api/users/me/',
      remoteAddress: '10.0.0.4',
      headers: { authorization: `Token ${second}` },
    })
    assert.equal(r.statusCode, 429)
    assert.deepEqual(r.json(), { detail: 'Request was throttled.' })
    assert.ok(Number(r.headers['retry-after']) >= 1)
    assert.equal(r.headers['x-ratelimit-limit'], '3')
    // Another user from the same address is counted on its own.
    assert.equal(await from(t, '10.0.0.1', '/api/users/me/', other.token), 200)
    t.clock.advance(61_000)
    assert.equal(await from(t, '10.0.0.4', '/api/users/me/', second), 200)
  })

  test('bogus tokens, each different, are counted as the one anonymous address', async () => {
    for (let i = 0; i < 3; i++) {
      assert.equal(await from(t, '10.0.1.1', '/api/customers/', `bogus${i}`), 401)
    }
    assert.equal(await from(t, '10.0.1.1', '/api/customers/', 'bogus-next'), 429)
    assert.equal(await from(t, '10.0.1.1', '/api/customers/'), 429, 'no token: the same anonymous caller')
    assert.equal(await from(t, '10.0.1.2', '/api/customers/', 'bogus-other'), 401, 'another address')
    t.clock.advance(61_000)
  })

  test('/health/ and /metrics are never limited', async () => {
    for (let i = 0; i < 6; i++) {
      assert.equal(await from(t, '127.0.2.1', '/health/'), 200)
      assert.equal(await from(t, '127.0.2.1', '/metrics'), 200)
    }
    for (let i = 0; i < 3; i++) assert.equal(await from(t, '127.0.2.1', '/api/customers/'), 401)
    assert.equal(await from(t, '127.0.2.1', '/api/customers/'), 429)
    assert.equal(await from(t, '127.0.2.1', '/health/'), 200)
  })

  test('two servers on one database share the counts', async () => {
    const second = await buildTestApp({ rateLimitPerMinute: 3 }, t.clock, t)
    try {
      const u = await makeUser(t.ctx)
      assert.equal(await from(t, '10.0.3.1', '/api/users/me/', u.token), 200)
      assert.equal(await from(second, '10.0.3.1', '/api/users/me/', u.token), 200)
      assert.equal(await from(t, '10.0.3.1', '/api/users/me/', u.token), 200)
      assert.equal(await from(second, '10.0.3.1', '/api/users/me/', u.token), 429)
      assert.equal(await from(t, '10.0.3.1', '/api/users/me/', u.token), 429)
    } finally {
      await second.close()
    }
  })

  test('expired windows are deleted', async () => {
    t.clock.advance(10 * 60_000)
    await from(t, '10.0.4.1', '/api/customers/')
    const rows = await t.ctx.db
      .selectFrom('rate_limits' as any)
      .select(['key'])
      .execute()
    assert.deepEqual(
      rows.map((r: any) => r.key),
      ['ip:10.0.4.1'],
    )
  })
})

describe('behind a proxy', () => {
  for (const trustProxy of [1, ['127.0.0.1']] as const) {
    test(`TRUST_PROXY=${String(trustProxy)}: a client's own X-Forwarded-For entries do not escape the limit`, async () => {
      const t = await buildTestApp({ rateLimitPerMinute: 2, trustProxy: trustProxy as number | string[] })
      try {
        const statuses = []
        for (let i = 0; i < 3; i++) {
          // The client writes the left-most entries; the proxy appends the address it saw.
          const r = await t.app.inject({
            url: '/api/customers/',
            remoteAddress: '127.0.0.1',
            headers: { 'x-forwarded-for': `198.51.100.${i + 1}, 203.0.113.7` },
          })
          statuses.push(r.statusCode)
        }
        assert.deepEqual(statuses, [401, 401, 429])
        // Another client behind the same proxy has a limit of its own.
        const other = await t.app.inject({
          url: '/api/customers/',
          remoteAddress: '127.0.0.1',
          headers: { 'x-forwarded-for': '203.0.113.8' },
        })
        assert.equal(other.statusCode, 401)
      } finally {
        await t.close()
      }
    })
  }
})

describe('login', () => {
  let t: TestApp
  before(async () => {
    t = await buildTestApp({ loginRateLimitPerMinute: loadConfig({}).loginRateLimitPerMinute })
  })
  after(() => t.close())

  const login = (username: string, address: string, password = 'wrong') =>
    t.app.inject({
      method: 'POST',
      url: '/api-auth/password/',
      remoteAddress: address,
      payload: { username, password },
    })

  test('the login throttle is on by default, per username and address', async () => {
    assert.equal(loadConfig({}).loginRateLimitPerMinute, 10)
    for (let i = 0; i < 10; i++) assert.equal((await login('victim', '10.1.0.1')).statusCode, 400)
    const r = await login('victim', '10.1.0.1')
    assert.equal(r.statusCode, 429)
    assert.ok(Number(r.headers['retry-after']) >= 1)
    assert.equal((await login('someone-else', '10.1.0.1')).statusCode, 400, 'another username')
    assert.equal((await login('victim', '10.1.0.2')).statusCode, 400, 'another address')
    t.clock.advance(61_000)
    assert.equal((await login('victim', '10.1.0.1')).statusCode, 400)
  })

  test('failed logins are throttled per address across usernames, by default', async () => {
    assert.equal(loadConfig({}).loginFailuresPerAddressPerMinute, 30)
    // Password spraying: one attempt per username, each under its own per-username limit.
    for (let i = 0; i < 30; i++) assert.equal((await login(`spray-${i}`, '10.1.2.1')).statusCode, 400)
    const r = await login('spray-next', '10.1.2.1')
    assert.equal(r.statusCode, 429)
    assert.ok(Number(r.headers['retry-after']) >= 1)
    assert.equal((await login('spray-next', '10.1.2.2')).statusCode, 400, 'another address')
    t.clock.advance(61_000)
    assert.equal((await login('spray-next', '10.1.2.1')).statusCode, 400)
  })

  test('successful logins do not count as failures', async () => {
    const u = await makeUser(t.ctx)
    const set = await call(t.app, 'POST', `/api/users/${u.uuid}/password/`, {
      token: u.token,
      body: { password: 'Correct-horse-42' },
    })
    assert.ok(set.status < 300)
    const few = await buildTestApp(
      { loginFailuresPerAddressPerMinute: 2, loginRateLimitPerMinute: 0 },
      t.clock,
      t,
    )
    try {
      const attempt = (password: string) =>
        few.app.inject({
          method: 'POST',
          url: '/api-auth/password/',
          remoteAddress: '10.1.3.1',
          payload: { username: u.username, password },
        })
      for (let i = 0; i < 5; i++) assert.equal((await attempt('Correct-horse-42')).statusCode, 200)
      assert.equal((await attempt('wrong')).statusCode, 400)
      assert.equal((await attempt('wrong')).statusCode, 400)
      assert.equal((await attempt('Correct-horse-42')).statusCode, 429)
    } finally {
      await few.close()
    }
  })

  test('an unknown username costs the same key derivation as a wrong password', async () => {
    const known = await makeUser(t.ctx)
    assert.equal(
      (
        await call(t.app, 'POST', `/api/users/${known.uuid}/password/`, {
          token: known.token,
          body: { password: 'Correct-horse-42' },
        })
      ).status < 300,
      true,
    )
    const derive = mock.method(passwordKdf, 'derive')
    try {
      assert.equal((await login('nobody-by-this-name', '10.1.1.1')).statusCode, 400)
      assert.equal(derive.mock.callCount(), 1, 'unknown user')
      assert.equal((await login(known.username, '10.1.1.1')).statusCode, 400)
      assert.equal(derive.mock.callCount(), 2, 'known user, wrong password')
      const ok = await login(known.username, '10.1.1.1', 'Correct-horse-42')
      assert.equal(ok.statusCode, 200)
      assert.equal(derive.mock.callCount(), 3)
    } finally {
      derive.mock.restore()
    }
  })
})

describe('request rate limit in Redis', () => {
  let available = false
  before(async () => {
    const probe = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 500 })
    probe.on('error', () => {})
    try {
      await probe.connect()
      available = (await probe.ping()) === 'PONG'
    } catch {
      available = false
    } finally {
      probe.disconnect()
    }
  })

  test('two servers on separate databases share the counts through REDIS_URL', async (ctx) => {
    if (!available) return ctx.skip(`no Redis at ${REDIS_URL}`)
    const clock = new TestClock()
    const one = await buildTestApp({ rateLimitPerMinute: 2, redisUrl: REDIS_URL }, clock)
    const two = await buildTestApp({ rateLimitPerMinute: 2, redisUrl: REDIS_URL }, clock)
    try {
      const u = await makeUser(one.ctx)
      // The same user in both databases: the key is the user's uuid.
      const copy = await makeUser(two.ctx)
      await two.ctx.db.updateTable('users').set({ uuid: u.uuid }).where('id', '=', copy.id).execute()
      const key = copy.token
      assert.equal((await client(one.app, u.token).get('/api/users/me/')).status, 200)
      assert.equal((await client(two.app, key).get('/api/users/me/')).status, 200)
      assert.equal((await client(one.app, u.token).get('/api/users/me/')).status, 429)
      assert.equal((await client(two.app, key).get('/api/users/me/')).status, 429)
      const rows = await one.ctx.db
        .selectFrom('rate_limits' as any)
        .select(['key'])
        .execute()
      assert.equal(rows.length, 0, 'nothing counted in the database')
    } finally {
      await one.close()
      await two.close()
    }
  })
})

/** A TCP listener standing in for a Redis server: `answer` handles each connection's bytes. */
async function fakeRedis(answer: (data: string, socket: Socket) => void) {
  const sockets = new Set<Socket>()
  const server = createServer((s) => {
    sockets.add(s)
    s.on('data', (d) => answer(d.toString('latin1'), s))
    s.on('close', () => sockets.delete(s))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `redis://127.0.0.1:${port}`,
    close: () => {
      sockets.forEach((s) => s.destroy())
      return new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/** Three requests of one user with a limit of 2: the third is refused, and none waits long. */
async function limitStillHolds(t: TestApp) {
  const u = await makeUser(t.ctx)
  const started = performance.now()
  const statuses = []
  for (let i = 0; i < 3; i++) statuses.push((await client(t.app, u.token).get('/api/users/me/')).status)
  assert.deepEqual(statuses, [200, 200, 429])
  assert.equal((await client(t.app, u.token).get('/health/')).status, 200)
  const ms = performance.now() - started
  assert.ok(ms < 2500, `took ${ms} ms`)
  return u
}

describe('request rate limit while Redis is away', () => {
  const redisOptions = { rateLimitPerMinute: 2, redisTimeoutMs: 200 }

  test('a Redis that accepts connections and never answers: counted in the database', async () => {
    const silent = await fakeRedis(() => undefined)
    const t = await buildTestApp({ ...redisOptions, redisUrl: silent.url })
    try {
      await limitStillHolds(t)
    } finally {
      await t.close()
      await silent.close()
    }
  })

  test('a Redis that stops answering once connected: commands time out, counted in the database', async () => {
    // Answers the connection's readiness check, then nothing more (a frozen server).
    const frozen = await fakeRedis((data, s) => {
      if (/info/i.test(data)) {
        const info = 'redis_version:7.0.0\r\nloading:0\r\n'
        s.write(`$${info.length}\r\n${info}\r\n`)
      }
    })
    const t = await buildTestApp({ ...redisOptions, redisUrl: frozen.url })
    try {
      const started = performance.now()
      while (performance.now() - started < 3000) {
        if ((await t.app.inject({ url: '/health/' })).statusCode === 200) break
      }
      await limitStillHolds(t)
      await limitStillHolds(t) // the next user too, without waiting on Redis again
    } finally {
      await t.close()
      await frozen.close()
    }
  })

  test('a Redis that refuses connections: counted in the database, then in Redis once it is back', async (ctx) => {
    const port = await closedPort()
    const t = await buildTestApp({ ...redisOptions, redisUrl: `redis://127.0.0.1:${port}` })
    let server: ChildProcess | null = null
    try {
      await limitStillHolds(t)
      const binary = spawnSync('redis-server', ['--version'])
      if (binary.status !== 0) return ctx.skip('no redis-server to come back')
      server = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no'], {
        stdio: 'ignore',
      })
      const probe = new Redis(`redis://127.0.0.1:${port}`, { lazyConnect: true, maxRetriesPerRequest: 0 })
      probe.on('error', () => {})
      try {
        // The server reconnects on its own: a user's requests are counted in Redis again.
        let counted: string[] = []
        let u: UserRef | null = null
        const started = performance.now()
        while (!counted.length && performance.now() - started < 15_000) {
          u = await makeUser(t.ctx)
          assert.equal((await client(t.app, u.token).get('/api/users/me/')).status, 200)
          await probe.connect().catch(() => undefined)
          counted = probe.status === 'ready' ? await probe.keys(`marketplace-rate-limit:u:${u.uuid}`) : []
        }
        assert.deepEqual(counted, [`marketplace-rate-limit:u:${u!.uuid}`])
        const all = await probe.keys('*')
        assert.ok(
          all.every((k) => !k.includes('undefined')),
          all.join(' '),
        )
        await limitStillHolds(t)
      } finally {
        probe.disconnect()
      }
    } finally {
      await t.close()
      server?.kill()
    }
  })
})
