// The API answers the same on both databases. Every journey of the nine contract areas (orders,
// cost policies, site agent identities/services/processors, backend requests, invitations and
// permission requests, payment profiles, support feedbacks, cloudA public IPs, cloudB tenants,
// networks, subnets, ports, floating IPs, routers and migrations) runs once on in-memory SQLite
// and once on PostgreSQL; then a staff user lists every collection of the schema (customers,
// projects, offerings, plans, resources, ...). Every answer is recorded and the two runs must
// match, with uuids, URLs, timestamps and tokens compared by their form, not their value.
// Runs where TEST_DATABASE_URL points at PostgreSQL (it needs both databases).
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { test } from 'node:test'
import { TEST_DATABASE_URL } from './support/app.js'
import { form, type Answer } from './support/parity-record.js'

// The recorder beside this file, run as this file runs: the TypeScript source through tsx, or
// the transpiled JavaScript that `npm test` runs.
const typescript = import.meta.url.endsWith('.ts')
const recorder = fileURLToPath(
  new URL(`./support/parity-record.${typescript ? 'ts' : 'js'}`, import.meta.url),
)
const loader = typescript ? ['--import', 'tsx'] : ['--enable-source-maps']

async function record(url: string): Promise<Answer[]> {
  const dir = mkdtempSync(join(tmpdir(), 'parity-'))
  try {
    const out = join(dir, 'answers.json')
    await promisify(execFile)(process.execPath, [...loader, recorder, url, out], {
      env: { ...process.env, TEST_DATABASE_URL: url },
    })
    return JSON.parse(readFileSync(out, 'utf8')) as Answer[]
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

test(
  'every record reads the same on SQLite and PostgreSQL',
  { skip: TEST_DATABASE_URL.startsWith('postgres') ? false : 'needs TEST_DATABASE_URL (PostgreSQL)' },
  async () => {
    const [sqlite, postgres] = await Promise.all([record('sqlite::memory:'), record(TEST_DATABASE_URL)])
    assert.ok(sqlite.length > 100, `${sqlite.length} answers recorded`)
    for (let i = 0; i < Math.min(sqlite.length, postgres.length); i++) {
      assert.deepEqual(postgres[i], sqlite[i], `answer ${i}`)
    }
    assert.equal(postgres.length, sqlite.length)
  },
)

test('forms hide values, not formats', () => {
  const base = 'http://127.0.0.1:1234'
  assert.equal(
    form(
      `{"url":"${base}/api/x/0199aabb-ccdd-7eef-8001-123456789abc/","t":"2026-01-15T10:00:00.000Z"}`,
      base,
    ),
    '{"url":"<base>/api/x/<uuid>/","t":"9999-99-99T99:99:99.999Z"}',
  )
  assert.notEqual(form('"2026-01-15T10:00:00.000Z"', base), form('"2026-01-15T10:00:00+00:00"', base))
  assert.notEqual(
    form('0199aabbccdd7eef8001123456789abc', base),
    form('0199aabb-ccdd-7eef-8001-123456789abc', base),
  )
})
