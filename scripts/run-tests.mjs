// Runs every *.test.ts under test/ and src/ with node:test (Node 20 has no glob support in --test).
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { spawnSync } from 'node:child_process'

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
const concurrency = process.env.TEST_CONCURRENCY ?? '2'
const r = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, ...flags, ...files],
  { stdio: 'inherit' },
)
process.exit(r.status ?? 1)
