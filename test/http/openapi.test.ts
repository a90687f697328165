import { describe, test } from 'node:test'
import { readFileSync } from 'node:fs'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import assert from 'node:assert/strict'
import { Validator } from '@seriousme/openapi-schema-validator'
import { sharedTestApp, buildTestApp } from '../support/app.js'
import { makeUser } from '../support/fixtures.js'

const t = sharedTestApp()

test('the served OpenAPI document is valid OpenAPI 3.1', async () => {
  const r = await t.app.inject({ url: '/api/schema/' })
  assert.equal(r.statusCode, 200)
  const doc = r.json()
  assert.equal(doc.openapi, '3.1.0')
  const result = await new Validator().validate(doc)
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 1)?.slice(0, 2000))
})

test('every API route is in the schema, with the Token security scheme', async () => {
  const doc = (await t.app.inject({ url: '/api/schema/' })).json()
  assert.ok(doc.components.securitySchemes.TokenAuth)
  const documented = new Set<string>()
  for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
    for (const method of Object.keys(ops)) documented.add(`${method.toUpperCase()} ${path}`)
  }
  const missing: string[] = []
  let count = 0
  for (const [url, methods] of t.app.apiRoutes) {
    const path = url.replace(/:([A-Za-z_]+)/g, '{$1}')
    for (const m of methods) {
      if (m === 'HEAD') continue
      count++
      if (!documented.has(`${m} ${path}`)) missing.push(`${m} ${path}`)
    }
  }
  assert.ok(count > 20)
  assert.deepEqual(missing, [])
})

test("the docs UI is served in the product's name, without the framework's branding", async () => {
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }
  const r = await t.app.inject({ url: '/api/docs/' })
  assert.equal(r.statusCode, 200)
  assert.match(r.body, new RegExp(`<title>Marketplace API ${pkg.version.replace(/\./g, '\\.')}</title>`))
  assert.doesNotMatch(r.body, /Swagger UI|favicon-32x32\.png/)
  const icon = await t.app.inject({ url: '/api/docs/static/theme/favicon.svg' })
  assert.equal(icon.statusCode, 200)
  const init = await t.app.inject({ url: '/api/docs/static/swagger-initializer.js' })
  assert.match(init.body, /data:image\/svg\+xml;base64,/)
  const logo = Buffer.from(/data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)/.exec(init.body)![1]!, 'base64')
  assert.match(logo.toString(), new RegExp(`Marketplace API ${pkg.version.replace(/\./g, '\\.')}`))
})

describe('compression', () => {
  const cases = [
    ['/api/schema/', 'gzip', 'gzip'],
    ['/api/schema/', 'br', 'br'],
    ['/api/docs/static/swagger-ui-bundle.js', 'gzip, br', 'br'],
    ['/api/docs/', 'gzip', null], // under the threshold
  ] as const
  for (const [url, accept, expected] of cases) {
    test(`${url} with Accept-Encoding: ${accept}`, async () => {
      const r = await t.app.inject({ url, headers: { 'accept-encoding': accept } })
      assert.equal(r.statusCode, 200)
      assert.equal(r.headers['content-encoding'], expected ?? undefined)
      if (expected === 'gzip' && url === '/api/schema/') {
        const doc = JSON.parse(gunzipSync(r.rawPayload).toString('utf8')) as { openapi: string }
        assert.equal(doc.openapi, '3.1.0')
      }
      if (expected === 'br') assert.ok(brotliDecompressSync(r.rawPayload).length > r.rawPayload.length)
    })
  }

  test('an API answer above the threshold is compressed; without Accept-Encoding nothing is', async () => {
    const plain = await t.app.inject({ url: '/api/schema/' })
    assert.equal(plain.headers['content-encoding'], undefined)
    assert.equal(plain.json().openapi, '3.1.0')
    const staff = await makeUser(t.ctx, { staff: true })
    for (let i = 0; i < 12; i++) await makeUser(t.ctx)
    const headers = { authorization: `Token ${staff.token}` }
    const asIs = await t.app.inject({ url: '/api/users/?page_size=50', headers })
    assert.equal(asIs.statusCode, 200)
    assert.ok(asIs.rawPayload.length > 1024)
    assert.equal(asIs.headers['content-encoding'], undefined)
    const r = await t.app.inject({
      url: '/api/users/?page_size=50',
      headers: { ...headers, 'accept-encoding': 'gzip' },
    })
    assert.equal(r.headers['content-encoding'], 'gzip')
    assert.deepEqual(JSON.parse(gunzipSync(r.rawPayload).toString('utf8')), asIs.json())
  })

  test('COMPRESSION=false sends every body as is', async () => {
    const off = await buildTestApp({ compression: false })
    try {
      for (const url of ['/api/schema/', '/api/docs/static/swagger-ui-bundle.js']) {
        const r = await off.app.inject({ url, headers: { 'accept-encoding': 'gzip, br' } })
        assert.equal(r.statusCode, 200)
        assert.equal(r.headers['content-encoding'], undefined, url)
      }
    } finally {
      await off.close()
    }
  })
})
