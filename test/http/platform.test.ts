// Wire conventions shared by every endpoint, exercised through the directory lists.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { sharedTestApp, buildTestApp } from '../support/app.js'
import { call, client } from '../support/client.js'
import { makeCustomer, makeUser, withStaff } from '../support/fixtures.js'

const t = sharedTestApp(
  async (t) => {
    const users = await withStaff(t)
    for (let i = 0; i < 25; i++) await makeCustomer(t.ctx, `Wire ${String(i).padStart(2, '0')}`)
    return users
  },
  { bodyLimitBytes: 4096 },
)

describe('pagination', () => {
  test('default page size is 10 with X-Result-Count and Link first/next/last', async () => {
    const r = await client(t.app, t.staff.token).get('/api/customers/?name=Wire')
    assert.equal(r.status, 200)
    assert.equal(r.body.length, 10)
    assert.equal(r.headers['x-result-count'], '25')
    assert.equal(
      r.headers.link,
      '<http://localhost:80/api/customers/?name=Wire>; rel="first", ' +
        '<http://localhost:80/api/customers/?name=Wire&page=2>; rel="next", ' +
        '<http://localhost:80/api/customers/?name=Wire&page=3>; rel="last"',
    )
  })

  test('a middle page has prev and next; prev to page 1 drops the page parameter', async () => {
    const r = await client(t.app, t.staff.token).get('/api/customers/?name=Wire&page=2')
    assert.equal(r.body.length, 10)
    assert.match(String(r.headers.link), /<http:\/\/localhost:80\/api\/customers\/\?name=Wire>; rel="prev"/)
    assert.match(String(r.headers.link), /page=3>; rel="next"/)
  })

  test('page=last and page_size work; page_size is capped and bad values fall back', async () => {
    const as = client(t.app, t.staff.token)
    const last = await as.get('/api/customers/?name=Wire&page=last')
    assert.equal(last.body.length, 5)
    assert.equal((await as.get('/api/customers/?name=Wire&page_size=7')).body.length, 7)
    assert.equal((await as.get('/api/customers/?name=Wire&page_size=100000')).body.length, 25)
    assert.equal((await as.get('/api/customers/?name=Wire&page_size=-3')).body.length, 10)
    assert.equal((await as.get('/api/customers/?name=Wire&page_size=abc')).body.length, 10)
  })

  test('out-of-range, zero, negative and non-numeric pages are 404 Invalid page', async () => {
    const as = client(t.app, t.staff.token)
    for (const p of ['4', '0', '-1', 'abc', '99999999999999999999']) {
      const r = await as.get(`/api/customers/?name=Wire&page=${p}`)
      assert.equal(r.status, 404, p)
      assert.deepEqual(r.body, { detail: 'Invalid page.' })
    }
  })

  test('an empty list is 200 [] with count 0', async () => {
    const r = await client(t.app, t.staff.token).get('/api/customers/?name=nothing-matches')
    assert.equal(r.status, 200)
    assert.deepEqual(r.body, [])
    assert.equal(r.headers['x-result-count'], '0')
  })

  test('HEAD on a list answers the headers without a body', async () => {
    const r = await call(t.app, 'HEAD', '/api/customers/?name=Wire', { token: t.staff.token })
    assert.equal(r.status, 200)
    assert.equal(r.text, '')
    assert.equal(r.headers['x-result-count'], '25')
    assert.ok(r.headers.link)
  })
})

describe('long request targets and page links', () => {
  test('Link repeats the parameters the list knows (filters, page_size, field, o) and drops the others', async () => {
    const r = await client(t.app, t.staff.token).get(
      '/api/customers/?name=Wire&bogus=1&page_size=7&utm_source=x&field=uuid&field=name&o=name&page=2',
    )
    assert.equal(r.status, 200)
    const q = 'name=Wire&page_size=7&field=uuid&field=name&o=name'
    assert.equal(
      r.headers.link,
      `<http://localhost:80/api/customers/?${q}>; rel="first", ` +
        `<http://localhost:80/api/customers/?${q}>; rel="prev", ` +
        `<http://localhost:80/api/customers/?${q}&page=3>; rel="next", ` +
        `<http://localhost:80/api/customers/?${q}&page=4>; rel="last"`,
    )
  })

  test('a list asked with 1,000 query parameters is 414, not a Link header no client can read', async () => {
    const params = Array.from({ length: 1000 }, (_, i) => `filter_${i}=value`).join('&')
    const r = await client(t.app, t.staff.token).get(`/api/customers/?name=Wire&${params}`)
    assert.equal(r.status, 414)
    assert.deepEqual(r.body, { detail: 'The request URI is too long: at most 8192 bytes are accepted.' })
    assert.equal(r.headers.link, undefined)
  })

  test('any request target over 8192 bytes is 414; at 8192 it is answered', async () => {
    const c = await makeCustomer(t.ctx)
    const path = `/api/customers/${c.uuid}/?pad=`
    const over = await client(t.app, t.staff.token).get(`${path}${'x'.repeat(8193 - path.length)}`)
    assert.equal(over.status, 414)
    assert.deepEqual(over.body, { detail: 'The request URI is too long: at most 8192 bytes are accepted.' })
    assert.equal((await client(t.app).get(`${path}${'x'.repeat(8193 - path.length)}`)).status, 414)
    const at = await client(t.app, t.staff.token).get(`${path}${'x'.repeat(8192 - path.length)}`)
    assert.equal(at.status, 200)
    // An unknown parameter, however long, does not reach the links.
    const list = `/api/customers/?name=Wire&pad=`
    const padded = await client(t.app, t.staff.token).get(`${list}${'x'.repeat(8192 - list.length)}`)
    assert.equal(padded.status, 200)
    assert.ok(String(padded.headers.link).length < 400)
  })

  test('a list whose known parameters are too long to repeat in its links is 414', async () => {
    const fields = Array.from({ length: 400 }, () => 'field=uuid').join('&')
    const r = await client(t.app, t.staff.token).get(`/api/customers/?name=Wire&${fields}`)
    assert.equal(r.status, 414)
    assert.deepEqual(r.body, {
      detail:
        "The query is too long to be repeated in the list's page links (Link header); send fewer query parameters.",
    })
    const fewer = Array.from({ length: 100 }, () => 'field=uuid').join('&')
    const ok = await client(t.app, t.staff.token).get(`/api/customers/?name=Wire&${fewer}`)
    assert.equal(ok.status, 200)
  })
})

describe('field selection and ordering', () => {
  test('field is repeatable and comma-separated; unknown names are ignored', async () => {
    const as = client(t.app, t.staff.token)
    const a = await as.get('/api/customers/?name=Wire&field=uuid&field=name')
    assert.deepEqual(Object.keys(a.body[0]).sort(), ['name', 'uuid'])
    const b = await as.get('/api/customers/?name=Wire&field=uuid,name,bogus')
    assert.deepEqual(Object.keys(b.body[0]).sort(), ['name', 'uuid'])
    const c = await as.get('/api/customers/?name=Wire&field=bogus')
    assert.ok(Object.keys(c.body[0]).length > 5)
    const one = await as.get(`/api/customers/${a.body[0].uuid}/?field=name`)
    assert.deepEqual(Object.keys(one.body), ['name'])
  })

  test('o orders ascending and descending, comma-separated and repeatable', async () => {
    const as = client(t.app, t.staff.token)
    const asc = await as.get('/api/customers/?name=Wire&o=name&page_size=3')
    assert.deepEqual(
      asc.body.map((c: { name: string }) => c.name),
      ['Wire 00', 'Wire 01', 'Wire 02'],
    )
    const desc = await as.get('/api/customers/?name=Wire&o=-name&page_size=2')
    assert.deepEqual(
      desc.body.map((c: { name: string }) => c.name),
      ['Wire 24', 'Wire 23'],
    )
    const multi = await as.get('/api/customers/?name=Wire&o=-created,name&o=abbreviation&page_size=2')
    assert.equal(multi.status, 200)
  })

  test('an unknown ordering is 400 on o, and injection attempts are just unknown names', async () => {
    const as = client(t.app, t.staff.token)
    const r = await as.get('/api/customers/?o=bogus')
    assert.equal(r.status, 400)
    assert.deepEqual(r.body, { o: ['Select a valid choice. bogus is not one of the available choices.'] })
    const inj = await as.get(`/api/customers/?o=${encodeURIComponent('name; drop table customers --')}`)
    assert.equal(inj.status, 400)
    assert.ok((await as.get('/api/customers/?name=Wire')).body.length > 0)
  })

  test('filter values with SQL wildcards and quotes match literally', async () => {
    const as = client(t.app, t.staff.token)
    for (const v of ['%', '_', "' or 1=1 --", '\\']) {
      const r = await as.get(`/api/customers/?name=${encodeURIComponent(v)}`)
      assert.equal(r.status, 200, v)
      assert.deepEqual(r.body, [], v)
    }
  })

  test('a malformed uuid filter is 400 naming the parameter', async () => {
    const r = await client(t.app, t.staff.token).get('/api/customers/?uuid=not-a-uuid')
    assert.equal(r.status, 400)
    assert.deepEqual(r.body, { uuid: ['Enter a valid UUID.'] })
  })
})

describe('identifiers, paths and methods', () => {
  test('uuids render hyphenated; 32-hex and hyphenated forms both resolve', async () => {
    const c = await makeCustomer(t.ctx)
    const as = client(t.app, t.staff.token)
    const dashed = await as.get(`/api/customers/${c.uuid}/`)
    assert.equal(dashed.status, 200)
    assert.equal(dashed.body.uuid, c.uuid)
    const hex = await as.get(`/api/customers/${c.uuid.replace(/-/g, '')}/`)
    assert.equal(hex.status, 200)
    assert.equal(hex.body.uuid, c.uuid)
  })

  test('unknown and malformed uuids are 404 with a detail', async () => {
    const as = client(t.app, t.staff.token)
    const unknown = await as.get('/api/customers/00000000-0000-4000-8000-000000000000/')
    assert.equal(unknown.status, 404)
    assert.deepEqual(unknown.body, { detail: 'No Customer matches the given query.' })
    const malformed = await as.get('/api/customers/xyz/')
    assert.equal(malformed.status, 404)
  })

  test('unknown paths are 404 Not found, also for anonymous callers', async () => {
    const r = await client(t.app).get('/api/does-not-exist/')
    assert.equal(r.status, 404)
    assert.deepEqual(r.body, { detail: 'Not found.' })
  })

  test('a path without the trailing slash answers the same', async () => {
    const r = await client(t.app, t.staff.token).get('/api/customers?name=Wire')
    assert.equal(r.status, 200)
    assert.equal(r.headers['x-result-count'], '25')
  })

  test('a wrong method on a known path is 405', async () => {
    const r = await client(t.app, t.staff.token).delete('/api/customers/')
    assert.equal(r.status, 405)
    assert.deepEqual(r.body, { detail: 'Method "DELETE" not allowed.' })
  })

  test('absolute urls follow PUBLIC_URL, else the request host (forwarded headers only with TRUST_PROXY)', async () => {
    const c = await makeCustomer(t.ctx)
    const plain = await call(t.app, 'GET', `/api/customers/${c.uuid}/`, {
      token: t.staff.token,
      headers: { host: 'api.example.org', 'x-forwarded-proto': 'https' },
    })
    assert.equal(plain.body.url, `http://api.example.org/api/customers/${c.uuid}/`)
    const pub = await buildTestApp({ publicUrl: 'https://market.example.com' })
    try {
      const s = await makeUser(pub.ctx, { staff: true })
      const c2 = await makeCustomer(pub.ctx)
      const r = await client(pub.app, s.token).get(`/api/customers/${c2.uuid}/`)
      assert.equal(r.body.url, `https://market.example.com/api/customers/${c2.uuid}/`)
    } finally {
      await pub.close()
    }
    const proxied = await buildTestApp({ trustProxy: 1 })
    try {
      const s = await makeUser(proxied.ctx, { staff: true })
      const c3 = await makeCustomer(proxied.ctx)
      const r = await call(proxied.app, 'GET', `/api/customers/${c3.uuid}/`, {
        token: s.token,
        headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'edge.example.net' },
      })
      assert.equal(r.body.url, `https://edge.example.net/api/customers/${c3.uuid}/`)
    } finally {
      await proxied.close()
    }
  })
})

/** Staff posts `payload` as it is, with the content type `contentType`, to the customer list. */
const postRaw = (contentType: string, payload: string) =>
  call(t.app, 'POST', '/api/customers/', {
    token: t.staff.token,
    headers: { 'content-type': contentType },
    payload,
  })

describe('bad input never answers 500', () => {
  test('malformed JSON is 400 with a JSON parse error detail', async () => {
    const r = await postRaw('application/json', '{"name":')
    assert.equal(r.status, 400)
    assert.match(r.body.detail, /^JSON parse error - /)
  })

  test('wrong types and missing fields name the field', async () => {
    const as = client(t.app, t.staff.token)
    const wrong = await as.post('/api/customers/', { name: 12 })
    assert.equal(wrong.status, 400)
    assert.deepEqual(wrong.body, { name: ['Not a valid string.'] })
    const missing = await as.post('/api/customers/', { abbreviation: 'x' })
    assert.deepEqual(missing.body, { name: ['This field is required.'] })
    const nul = await as.post('/api/customers/', { name: null })
    assert.equal(nul.status, 400)
    const notObject = await as.post('/api/customers/', [1, 2])
    assert.equal(notObject.status, 400)
    assert.ok(notObject.body.non_field_errors)
  })

  test('unknown body fields are ignored', async () => {
    const r = await client(t.app, t.staff.token).post('/api/customers/', { name: 'Extra', surprise: true })
    assert.equal(r.status, 201)
    assert.equal('surprise' in r.body, false)
  })

  test('an oversize body is 413', async () => {
    const r = await client(t.app, t.staff.token).post('/api/customers/', { name: 'x'.repeat(10000) })
    assert.equal(r.status, 413)
    assert.deepEqual(r.body, { detail: 'Request body is too large.' })
  })

  test('an unsupported content type is 415', async () => {
    const r = await postRaw('text/plain', 'name=x')
    assert.equal(r.status, 415)
    assert.deepEqual(r.body, { detail: 'Unsupported media type "text/plain" in request.' })
  })

  test('a null character in a body or a query is 400 naming the field, on both databases', async () => {
    const as = client(t.app, t.staff.token)
    const NUL = ['Null characters are not allowed.']
    const flat = await as.post('/api/customers/', { name: 'Null\u0000org' })
    assert.equal(flat.status, 400)
    assert.deepEqual(flat.body, { name: NUL })
    const nested = await as.post('/api/customers/', { name: 'Fine', organization_groups: ['x\u0000'] })
    assert.deepEqual(nested.body, { organization_groups: NUL })
    const key = await as.post('/api/customers/', { name: 'Fine', ['sur\u0000prise']: 1 })
    assert.deepEqual(key.body, { non_field_errors: NUL })
    const form = await postRaw('application/x-www-form-urlencoded', 'name=Null%00org')
    assert.deepEqual(form.body, { name: NUL })
    const query = await as.get('/api/customers/?name=Null%00org')
    assert.equal(query.status, 400)
    assert.deepEqual(query.body, { name: NUL })
    // An escaped backslash before "u0000" is not a null character.
    const literal = await as.post('/api/customers/', { name: 'Literal \\u0000 org' })
    assert.equal(literal.status, 201, JSON.stringify(literal.body))
    assert.equal(literal.body.name, 'Literal \\u0000 org')
    const encoded = await as.get('/api/customers/?name=%2500')
    assert.equal(encoded.status, 200)
  })

  test('strings longer than a column allows are 400, unicode is fine', async () => {
    const as = client(t.app, t.staff.token)
    const long = await as.post('/api/customers/', { name: 'y'.repeat(151) })
    assert.equal(long.status, 400)
    assert.deepEqual(long.body, { name: ['Ensure this field has no more than 150 characters.'] })
    const uni = await as.post('/api/customers/', { name: 'Üñíçødé 組織 🚀' })
    assert.equal(uni.status, 201)
    assert.equal(uni.body.name, 'Üñíçødé 組織 🚀')
  })
})

describe('operations endpoints', () => {
  test('health reports the database', async () => {
    const r = await client(t.app).get('/health/')
    assert.equal(r.status, 200)
    assert.equal(r.body.status, 'ok')
  })

  test('metrics count requests by route and status', async () => {
    await client(t.app, t.staff.token).get('/api/customers/')
    const r = await t.app.inject({ url: '/metrics' })
    assert.equal(r.statusCode, 200)
    assert.match(r.body, /http_requests_total\{method="GET",route="\/api\/customers\/",status="200"\} \d+/)
    assert.match(r.body, /http_request_duration_seconds_bucket/)
  })

  test('on SQLite, metrics count commits and the writes they carried', async (ctx) => {
    if (t.dialect !== 'sqlite') return ctx.skip('SQLite only: PostgreSQL commits each transaction itself')
    const read = async () => {
      const body = (await t.app.inject({ url: '/metrics' })).body
      const value = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(body)?.[1])
      return { commits: value('sqlite_commits_total'), writes: value('sqlite_committed_writes_total') }
    }
    const before = await read()
    const admin = client(t.app, t.staff.token)
    await Promise.all(['m1', 'm2', 'm3'].map((name) => admin.post('/api/customers/', { name })))
    const after = await read()
    assert.ok(after.commits > before.commits, 'the creations committed')
    assert.ok(after.writes - before.writes >= 3, 'three creations were written')
    assert.ok(after.commits - before.commits < after.writes - before.writes, 'creations shared a commit')
  })

  test('security headers are set on API responses', async () => {
    const r = await client(t.app, t.staff.token).get('/api/customers/')
    assert.equal(r.headers['x-content-type-options'], 'nosniff')
    assert.equal(r.headers['x-frame-options'], 'DENY')
    assert.ok(r.headers['x-request-id'])
  })
})

describe('limits', () => {
  test('the per-token rate limit answers 429 with Retry-After', async () => {
    const limited = await buildTestApp({ rateLimitPerMinute: 3 })
    try {
      const u = await makeUser(limited.ctx)
      const as = client(limited.app, u.token)
      for (let i = 0; i < 3; i++) assert.equal((await as.get('/api/users/me/')).status, 200)
      const r = await as.get('/api/users/me/')
      assert.equal(r.status, 429)
      assert.ok(Number(r.headers['retry-after']) >= 1)
      limited.clock.advance(61_000)
      assert.equal((await as.get('/api/users/me/')).status, 200)
    } finally {
      await limited.close()
    }
  })

  test('CORS answers preflights for configured origins only', async () => {
    const cors = await buildTestApp({ corsOrigins: ['https://app.example.com'] })
    try {
      const ok = await call(cors.app, 'OPTIONS', '/api/customers/', {
        headers: { origin: 'https://app.example.com', 'access-control-request-method': 'GET' },
      })
      assert.equal(ok.status, 204)
      assert.equal(ok.headers['access-control-allow-origin'], 'https://app.example.com')
      const other = await call(cors.app, 'GET', '/health/', {
        headers: { origin: 'https://evil.example.com' },
      })
      assert.equal(other.headers['access-control-allow-origin'], undefined)
    } finally {
      await cors.close()
    }
  })
})
