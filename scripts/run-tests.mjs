// Runs every *.test.ts under test/ and src/ with node:test (Node 20 has no glob support in --test).
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'

function collect(dir, out) {
  let entries
  try {
    entries = readdirSync(dir)
  } catch {
    return out
  }
  for (const name of entries) {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) collect(p, out)
    else if (name.endsWith('.test.ts')) out.push(p)
  }
  return out
}

const filters = process.argv.slice(2).filter((a) => !a.startsWith('--'))
const flags = process.argv.slice(2).filter((a) => a.startsWith('--'))
let files = [...collect('src', []), ...collect('test', [])].sort()
if (filters.length) files = files.filter((f) => filters.some((x) => f.includes(x)))

// The generated-client journey (test/journey/) is typed by the client generated from the reference's
// schema: the client is generated first, and the journey is type-checked against it, so that a typed
// compile error there fails the run as a failing test does.
let typeErrors = false
if (files.some((f) => f.startsWith(join('test', 'journey')))) {
  const run = (args) => spawnSync(process.execPath, args, { stdio: 'inherit' }).status
  if (run(['scripts/generate-client.mjs']) !== 0) process.exit(1)
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
  typeErrors = run([tsc, '--noEmit', '-p', 'tsconfig.journey.json']) !== 0
}

const concurrency = process.env.TEST_CONCURRENCY ?? '2'
// --test-force-exit: a file whose tests have all finished ends even if it left a handle open (a
// client reconnecting, a timer), instead of holding the whole run until CI's time runs out.
const r = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-force-exit', `--test-concurrency=${concurrency}`, ...flags, ...files],
  { stdio: 'inherit' },
)
if (typeErrors) {
  console.error('FAIL: the journey does not type-check against the generated client (tsconfig.journey.json).')
  process.exit(1)
}
process.exit(r.status ?? 1)
