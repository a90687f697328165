// Route schemas are compiled when a request first needs them (src/http/plumbing.ts), so a schema
// that does not compile would show only as a 500 on its route's first request: here every route's
// request and response schemas are compiled as the server compiles them.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { RouteOptions } from 'fastify'
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import { buildTestApp } from '../support/app.js'
import { PARSED_BY_HANDLER, requestValidators } from '../../src/http/plumbing.js'

test("every route's request and response schemas compile", async () => {
  const routes: RouteOptions[] = []
  const t = await buildTestApp({}, undefined, undefined, (app) => {
    app.addHook('onRoute', (route) => {
      routes.push(route)
    })
  })
  try {
    const validator = requestValidators()
    const serializer = SerializerSelector()(t.app.getSchemas(), {})
    let compiled = 0
    for (const route of routes) {
      const schema = (route.schema ?? {}) as Record<string, unknown>
      const name = `${String(route.method)} ${route.url}`
      for (const httpPart of ['body', 'querystring', 'params', 'headers']) {
        const part = schema[httpPart] as Record<PropertyKey, unknown> | undefined
        if (!part || part[PARSED_BY_HANDLER]) continue
        assert.doesNotThrow(() => validator({ schema: part, httpPart }), `${name}: ${httpPart}`)
        compiled++
      }
      const responses = (schema.response ?? {}) as Record<string, unknown>
      for (const [httpStatus, part] of Object.entries(responses)) {
        const definition = { schema: part, method: String(route.method), url: route.url, httpStatus }
        assert.doesNotThrow(() => serializer(definition), `${name}: response ${httpStatus}`)
        compiled++
      }
    }
    // Every documented operation has at least a response schema.
    assert.ok(compiled >= t.app.apiRoutes.size, `${compiled} schemas compiled`)
  } finally {
    await t.close()
  }
})
