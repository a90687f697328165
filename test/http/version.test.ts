// GET /api/version/: the package's version, for any authenticated caller.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { sharedTestApp } from '../support/app.js'
import { client } from '../support/client.js'
import { makeUser } from '../support/fixtures.js'

const t = sharedTestApp()
const PACKAGE_VERSION = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version

test('any authenticated caller reads the package version; anonymous is 401', async () => {
  for (const opts of [{}, { staff: true }, { support: true }]) {
    const user = await makeUser(t.ctx, opts)
    const r = await client(t.app, user.token).get('/api/version/')
    assert.equal(r.status, 200, JSON.stringify(opts))
    assert.deepEqual(r.body, { version: PACKAGE_VERSION })
  }
  const anon = await client(t.app).get('/api/version/')
  assert.equal(anon.status, 401)
  assert.deepEqual(anon.body, { detail: 'Authentication credentials were not provided.' })
})

test('the document names it version_retrieve, answering a Version record', async () => {
  const doc = (await client(t.app).get('/api/schema/')).body
  const op = doc.paths['/api/version/'].get
  assert.equal(op.operationId, 'version_retrieve')
  assert.deepEqual(op.responses['200'].content['application/json'].schema, {
    $ref: '#/components/schemas/Version',
  })
  assert.deepEqual(doc.components.schemas.Version.required, ['version'])
})
