// Every list's page links repeat only the query parameters its route declares, so a list must
// declare every parameter it reads: otherwise a client following `next` would lose that filter.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { buildTestApp, TestClock, type TestApp } from '../support/app.js'
import { client } from '../support/client.js'
import { makeUser } from '../support/fixtures.js'

type Doc = {
  paths: Record<
    string,
    Record<string, { parameters?: { in: string; name: string }[]; responses?: Record<string, any> }>
  >
}

/** Route URL → the query parameters its handler read. */
const reads = new Map<string, Set<string>>()
let t: TestApp
before(async () => {
  t = await buildTestApp({}, new TestClock(), undefined, (app) => {
    app.addHook('preHandler', async (request) => {
      const url = request.routeOptions.url ?? ''
      const names = reads.get(url) ?? new Set<string>()
      reads.set(url, names)
      request.query = new Proxy(request.query as object, {
        get(target, key) {
          if (typeof key === 'string') names.add(key)
          return Reflect.get(target, key) as unknown
        },
      })
    })
  })
})
after(async () => {
  await t.close()
})

test('every list declares each query parameter it reads', async () => {
  const staff = await makeUser(t.ctx, { staff: true })
  const doc = t.app.swagger() as unknown as Doc
  const lists = Object.entries(doc.paths).filter(
    ([path, ops]) =>
      !path.includes('{') &&
      ops.get?.responses?.['200']?.content?.['application/json']?.schema?.type === 'array',
  )
  let paginated = 0
  for (const [path, ops] of lists) {
    const r = await client(t.app, staff.token).get(path)
    assert.equal(r.status, 200, `${path}: ${r.text}`)
    // A few arrays are not pages (the offering types); they have no links.
    if (r.headers['x-result-count'] === undefined) continue
    paginated++
    assert.ok(r.headers.link, path)
    const declared = new Set((ops.get!.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name))
    const read = [...(reads.get(path) ?? [])]
    assert.ok(read.includes('page'), `${path} reads its page`)
    assert.deepEqual(
      read.filter((name) => !declared.has(name)),
      [],
      `${path} reads query parameters it does not declare`,
    )
  }
  assert.ok(paginated > 30, `${paginated} lists`)
})
