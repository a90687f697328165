// /metrics: callers on this machine only by default; with METRICS_TOKEN or METRICS_ALLOW set, only the token's bearer
// or a listed address reads it. Also: the request timeout holds from a request's first byte.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { connect } from 'node:net'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'

const base = { databaseUrl: 'sqlite::memory:', logLevel: 'silent', workerEnabled: false }

test('/metrics answers only loopback callers when unconfigured, and a token or an address list when set', async () => {
  const open = await buildApp(loadConfig({}, base))
  try {
    for (const local of ['127.0.0.1', '127.8.0.1', '::1', '::ffff:127.0.0.1']) {
      assert.equal((await open.inject({ url: '/metrics', remoteAddress: local })).statusCode, 200, local)
    }
    for (const remote of ['203.0.113.9', '10.0.0.2', '::ffff:203.0.113.9', '2001:db8::1']) {
      assert.equal((await open.inject({ url: '/metrics', remoteAddress: remote })).statusCode, 403, remote)
    }
  } finally {
    await open.close()
  }
  const guarded = await buildApp(
    loadConfig({ METRICS_TOKEN: 'scrape-secret', METRICS_ALLOW: '10.1.0.0/16,192.0.2.7' }, base),
  )
  try {
    const get = (headers: Record<string, string> = {}, remoteAddress = '127.0.0.1') =>
      guarded.inject({ url: '/metrics', headers, remoteAddress })
    const anonymous = await get()
    assert.equal(anonymous.statusCode, 403)
    assert.deepEqual(anonymous.json(), { detail: 'You do not have permission to perform this action.' })
    assert.equal((await get({ authorization: 'Bearer wrong' })).statusCode, 403)
    assert.equal((await get({ authorization: 'Token scrape-secret' })).statusCode, 401, 'not an API token')
    const withToken = await get({ authorization: 'Bearer scrape-secret' })
    assert.equal(withToken.statusCode, 200)
    assert.match(withToken.body, /http_requests_total/)
    assert.equal((await get({}, '10.1.200.3')).statusCode, 200)
    assert.equal((await get({}, '192.0.2.7')).statusCode, 200)
    assert.equal((await get({}, '192.0.2.8')).statusCode, 403)
  } finally {
    await guarded.close()
  }
  assert.throws(() => loadConfig({ METRICS_ALLOW: '10.0.0.0/99' }), /METRICS_ALLOW/)
})

test('a connection sending its headers slowly is cut at REQUEST_TIMEOUT_MS, counted from its first byte', async () => {
  const app = await buildApp(loadConfig({ REQUEST_TIMEOUT_MS: '1000' }, base))
  try {
    await app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = app.server.address() as { port: number }
    const socket = connect(port, '127.0.0.1')
    await new Promise<void>((r) => socket.once('connect', () => r()))
    const started = Date.now()
    socket.write('GET /health/ HTTP/1.1\r\nHost: x\r\n')
    // One header line every 200 ms: each keeps the socket busy, none completes the request.
    const drip = setInterval(() => socket.write('X-Slow: 1\r\n'), 200)
    let answer = ''
    socket.on('data', (d: Buffer) => (answer += d.toString()))
    await new Promise<void>((r) => socket.once('close', () => r()))
    clearInterval(drip)
    const elapsed = Date.now() - started
    assert.ok(elapsed >= 900, `cut after ${elapsed} ms, before the timeout`)
    // Node's default check every 30 s cut such a connection up to 30 s late.
    assert.ok(elapsed < 5000, `cut after ${elapsed} ms`)
    assert.match(answer, /^HTTP\/1\.1 408/)
  } finally {
    await app.close()
  }
})
