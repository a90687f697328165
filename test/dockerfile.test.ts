// The container image's recipe: valid for Docker (checked by a Dockerfile linter, as no daemon may
// be at hand), and the runtime stage runs node directly as an unprivileged user with a health check.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join, dirname } from 'node:path'
import { promisify } from 'node:util'
import { startFlags } from '../bench/proc.js'

const run = promisify(execFile)

test('the Dockerfile passes the linter', async () => {
  const pkg = createRequire(import.meta.url).resolve('dockerfile-utils/package.json')
  const bin = join(dirname(pkg), 'bin', 'dockerfile-utils')
  const { stdout } = await run(process.execPath, [bin, 'lint', 'Dockerfile'])
  assert.equal(stdout.trim(), '')
})

test('the runtime stage runs node as a non-root user, with a health check on /health/', () => {
  const text = readFileSync('Dockerfile', 'utf8')
  const stages = text.split(/^FROM /m)
  const runtime = stages[stages.length - 1]!
  const user = /^USER (\S+)/m.exec(runtime)?.[1]
  assert.ok(user && user !== 'root' && user !== '0', 'the runtime stage sets a non-root USER')
  assert.match(runtime, /^HEALTHCHECK [\s\S]*\/health\//m)
  // Node's flags as `npm start` gives them (package.json), so both run the same server.
  const flags = startFlags()
  assert.ok(flags.length, 'npm start gives node its flags')
  const entry = /^ENTRYPOINT (\[.*\])$/m.exec(runtime)?.[1]
  assert.deepEqual(JSON.parse(entry ?? '[]'), ['node', ...flags, 'dist/main.js'])
  assert.match(runtime, /^CMD \["serve"\]/m)
  assert.doesNotMatch(runtime, /npm (start|run)/, 'npm in front of node would swallow signals')
  const compose = readFileSync('compose.yaml', 'utf8')
  assert.match(compose, /image: postgres/)
  assert.match(compose, /DATABASE_URL: postgres:\/\//)
})
