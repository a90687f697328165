// Security headers (helmet), the docs UI under its own policy, and CORS (@fastify/cors).
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { buildTestApp, type TestApp } from '../support/app.js'
import { call } from '../support/client.js'
import { makeUser } from '../support/fixtures.js'

describe('security headers', () => {
  let t: TestApp
  before(async () => {
    t = await buildTestApp()
  })
  after(() => t.close())

  test('API answers, errors included, allow nothing to run, frame or sniff them', async () => {
    const u = await makeUser(t.ctx)
    for (const [url, token, status] of [
      ['/api/users/me/', u.token, 200],
      ['/api/customers/', undefined, 401],
      ['/api/no-such-thing/', u.token, 404],
      ['/health/', undefined, 200],
    ] as const) {
      const r = await call(t.app, 'GET', url, { token })
      assert.equal(r.status, status, url)
      assert.equal(r.headers['content-security-policy'], "default-src 'none';frame-ancestors 'none'", url)
      assert.equal(r.headers['x-content-type-options'], 'nosniff', url)
      assert.equal(r.headers['x-frame-options'], 'DENY', url)
      assert.equal(r.headers['referrer-policy'], 'same-origin', url)
      assert.equal(r.headers['cross-origin-opener-policy'], 'same-origin', url)
      assert.ok(r.headers['strict-transport-security'], url)
      assert.match(String(r.headers['x-request-id']), /^[0-9a-f-]{36}$/, url)
      // Helmet's headers for HTML documents in old browsers are not sent with JSON.
      for (const name of [
        'origin-agent-cluster',
        'x-dns-prefetch-control',
        'x-download-options',
        'x-permitted-cross-domain-policies',
        'x-xss-protection',
      ]) {
        assert.equal(r.headers[name], undefined, `${url}: ${name}`)
      }
    }
  })

  test('the docs UI loads under its policy: every script and style it names is served, none inline unhashed', async () => {
    const page = await t.app.inject({ url: '/api/docs/' })
    assert.equal(page.statusCode, 200)
    assert.match(page.headers['content-type'] as string, /text\/html/)
    const csp = String(page.headers['content-security-policy'])
    const directives = new Map(
      csp
        .split(';')
        .map((d) => d.trim().split(/\s+/))
        .filter((d) => d[0])
        .map(([name, ...values]) => [name!, values]),
    )
    assert.deepEqual(directives.get('default-src'), ["'self'"])
    assert.ok(directives.get('script-src')?.includes("'self'"), csp)
    assert.ok(directives.get('style-src')?.includes("'self'"), csp)
    assert.equal(directives.has('upgrade-insecure-requests'), false, 'the UI is served over plain HTTP too')
    const html = page.body
    const sources = [
      ...[...html.matchAll(/<script[^>]*\ssrc="([^"]+)"/g)].map((m) => m[1]!),
      ...[...html.matchAll(/<link[^>]*rel="stylesheet"[^>]*href="([^"]+)"/g)].map((m) => m[1]!),
    ]
    assert.ok(sources.length >= 3, html)
    for (const src of sources) {
      const url = new URL(src, 'http://localhost/api/docs/')
      assert.equal(url.origin, 'http://localhost', `${src} comes from this server ('self')`)
      const r = await t.app.inject({ url: url.pathname })
      assert.equal(r.statusCode, 200, src)
    }
    const hashes = directives.get('script-src') ?? []
    for (const m of html.matchAll(/<script(?![^>]*\ssrc=)[^>]*>([\s\S]*?)<\/script>/g)) {
      const hash = `'sha256-${createHash('sha256').update(m[1]!).digest('base64')}'`
      assert.ok(hashes.includes(hash), `inline script allowed by ${hash}`)
    }
    // The initializer reads the schema from this server (default-src 'self' covers the fetch).
    const init = await t.app.inject({ url: '/api/docs/static/swagger-initializer.js' })
    assert.equal(init.statusCode, 200)
    assert.match(init.body, /\/api\/schema\//)
    assert.equal((await t.app.inject({ url: '/api/schema/' })).statusCode, 200)
  })
})

describe('CORS', () => {
  let t: TestApp
  before(async () => {
    t = await buildTestApp({ corsOrigins: ['https://app.example.com'] })
  })
  after(() => t.close())

  test('a preflight from a configured origin is answered before authentication', async () => {
    const r = await call(t.app, 'OPTIONS', '/api/customers/', {
      headers: {
        origin: 'https://app.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    })
    assert.equal(r.status, 204)
    assert.equal(r.headers['access-control-allow-origin'], 'https://app.example.com')
    assert.match(String(r.headers['access-control-allow-methods']), /\bPOST\b/)
    assert.match(String(r.headers['access-control-allow-headers']), /Authorization/i)
    // A browser may retry a POST safely (docs/decisions.md, Idempotency-Key).
    assert.match(String(r.headers['access-control-allow-headers']), /Idempotency-Key/i)
    assert.equal(r.headers['access-control-max-age'], '600')
  })

  test('answers to a configured origin name it and expose the list headers', async () => {
    const u = await makeUser(t.ctx)
    const r = await call(t.app, 'GET', '/api/customers/', {
      token: u.token,
      headers: { origin: 'https://app.example.com' },
    })
    assert.equal(r.status, 200)
    assert.equal(r.headers['access-control-allow-origin'], 'https://app.example.com')
    assert.match(String(r.headers.vary), /Origin/)
    assert.match(String(r.headers['access-control-expose-headers']), /Link/)
    assert.match(String(r.headers['access-control-expose-headers']), /X-Result-Count/)
    assert.match(String(r.headers['access-control-expose-headers']), /Idempotent-Replayed/)
  })

  test('another origin gets no CORS header', async () => {
    const r = await call(t.app, 'GET', '/health/', { headers: { origin: 'https://evil.example.com' } })
    assert.equal(r.status, 200)
    assert.equal(r.headers['access-control-allow-origin'], undefined)
    const pre = await call(t.app, 'OPTIONS', '/api/customers/', {
      headers: { origin: 'https://evil.example.com', 'access-control-request-method': 'GET' },
    })
    assert.equal(pre.headers['access-control-allow-origin'], undefined)
  })

  test('`*` allows any origin; without CORS_ORIGINS there is no CORS at all', async () => {
    const any = await buildTestApp({ corsOrigins: ['*'] }, t.clock, t)
    const none = await buildTestApp({}, t.clock, t)
    try {
      const headers = { origin: 'https://anywhere.example.org' }
      assert.equal(
        (await call(any.app, 'GET', '/health/', { headers })).headers['access-control-allow-origin'],
        '*',
      )
      assert.equal(
        (await call(none.app, 'GET', '/health/', { headers })).headers['access-control-allow-origin'],
        undefined,
      )
    } finally {
      await any.close()
      await none.close()
    }
  })
})
