import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { Validator } from '@seriousme/openapi-schema-validator'
import { buildTestApp, type TestApp } from '../support/app.js'

let t: TestApp
before(async () => {
  t = await buildTestApp()
})
after(async () => {
  await t.close()
})

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

test('the docs UI is served', async () => {
  const r = await t.app.inject({ url: '/api/docs/' })
  assert.ok([200, 302].includes(r.statusCode))
})
