// The served OpenAPI document passes the OpenAPI linter (Redocly CLI, rules in redocly.yaml) with no
// errors. The linter runs offline: its telemetry and update check are switched off.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { buildTestApp, type TestApp } from '../support/app.js'

const require = createRequire(import.meta.url)

let t: TestApp
let dir: string
before(async () => {
  t = await buildTestApp()
  dir = mkdtempSync(join(tmpdir(), 'schema-lint-'))
})
after(async () => {
  await t.close()
  rmSync(dir, { recursive: true, force: true })
})

test('the linter reports no errors on /api/schema/', async () => {
  const r = await t.app.inject({ url: '/api/schema/' })
  assert.equal(r.statusCode, 200)
  const file = join(dir, 'openapi.json')
  writeFileSync(file, r.body)
  const pkg = require.resolve('@redocly/cli/package.json')
  const bin = join(dirname(pkg), (require(pkg) as { bin: Record<string, string> }).bin.redocly!)
  const run = spawnSync(
    process.execPath,
    [bin, 'lint', file, '--config', 'redocly.yaml', '--format', 'json', '--max-problems', '10000'],
    {
      encoding: 'utf8',
      env: {
        ...process.env,
        REDOCLY_TELEMETRY: 'off',
        REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
        REDOCLY_SUPPRESS_NOTIFICATIONS: 'true',
        NO_COLOR: '1',
      },
      timeout: 120_000,
    },
  )
  const start = run.stdout.indexOf('{')
  assert.ok(start >= 0, `no report from the linter: ${run.stderr.slice(0, 2000)}`)
  const report = JSON.parse(run.stdout.slice(start)) as {
    totals: { errors: number; warnings: number }
    problems: { ruleId: string; severity: string; message: string; location?: { pointer?: string }[] }[]
  }
  const errors = report.problems
    .filter((p) => p.severity === 'error')
    .map((p) => `${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer ?? '?'}`)
  assert.deepEqual(errors.slice(0, 30), [])
  assert.equal(report.totals.errors, 0)
})
