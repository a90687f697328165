// Runs every *.test.ts under test/ and src/ with node:test (Node 20 has no glob support in --test).
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { randomBytes } from 'node:crypto'

function collect(dir, out, suffix = '.test.ts') {
  let entries
  try {
    entries = readdirSync(dir)
  } catch {
    return out
  }
  for (const name of entries) {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) collect(p, out, suffix)
    else if (name.endsWith(suffix)) out.push(p)
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

// Tests run the program's command line in child processes (test/support/main-command.ts): they run
// the compiled program, as `npm start` does, so dist/ is built first when a source is newer.
if (spawnSync(process.execPath, ['scripts/ensure-build.mjs'], { stdio: 'inherit' }).status !== 0)
  process.exit(1)
process.env.TEST_MAIN_BUILT = '1'

/**
 * On PostgreSQL each test app gets a fresh schema. Running the migrations into each costs about
 * 1.4 s (some 540 statements) and the suite builds well over a hundred; loading the schema that
 * the migrations made once, as pg_dump writes it, costs 0.4 to 0.7 s. So the migrations run once
 * here, by the compiled program's `migrate`, and the schema they made is dumped to a file whose
 * path TEST_PG_TEMPLATE tells the tests (test/support/pg-template.ts), with the schema's name as
 * a placeholder. The tests of the migrations themselves, and the server processes the tests start,
 * still run the migrations. Without pg_dump the tests migrate each schema.
 */
async function pgTemplate(url) {
  const schema = `tpl_${randomBytes(6).toString('hex')}`
  const sep = url.includes('?') ? '&' : '?'
  try {
    const migrate = spawnSync(process.execPath, ['dist/main.js', 'migrate'], {
      env: { ...process.env, DATABASE_URL: `${url}${sep}schema=${schema}`, LOG_LEVEL: 'error' },
      stdio: ['ignore', 'ignore', 'inherit'],
    })
    if (migrate.status !== 0) throw new Error('the migrations failed on the test database')
    const dump = spawnSync(
      'pg_dump',
      ['--schema', schema, '--no-owner', '--no-privileges', '--inserts', '--dbname', url],
      { encoding: 'utf8', maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'inherit'] },
    )
    if (dump.error?.code === 'ENOENT') {
      console.error('pg_dump is not installed: each test schema is migrated on its own (slower)')
      return undefined
    }
    if (dump.status !== 0) throw new Error('pg_dump failed')
    // psql's meta-commands (\restrict) are not SQL; the schema's name becomes the placeholder.
    const sql = dump.stdout
      .split('\n')
      .filter((line) => !line.startsWith('\\'))
      .join('\n')
      .replaceAll(schema, '__test_schema__')
    const file = join(mkdtempSync(join(tmpdir(), 'marketplace-pg-template-')), 'schema.sql')
    writeFileSync(file, sql)
    return file
  } finally {
    const { dropSchema } = await import('../dist/db/database.js')
    await dropSchema(url, schema)
  }
}

/**
 * The test files run as JavaScript: src/, test/ and bench/ are transpiled to dist-test/ (the same tree,
 * with source maps, so failures point at the TypeScript lines) by esbuild, the compiler tsx runs
 * on each import. Loading a test file and the app through tsx's loader cost about 0.9 s more CPU
 * per file than loading the transpiled files (measured: 4.8 against 3.9 s for one small file),
 * and the suite runs each of its hundred-odd files in its own process, twice in CI. Transpiling
 * everything takes about a second. The JSON files the code reads beside itself are copied along.
 */
async function transpile() {
  const out = 'dist-test'
  rmSync(out, { recursive: true, force: true })
  const sources = ['src', 'test', 'bench']
    .flatMap((dir) => collect(dir, [], '.ts'))
    .filter((f) => !f.endsWith('.d.ts'))
  const { build } = await import('esbuild')
  await build({
    entryPoints: sources,
    outdir: out,
    outbase: '.',
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    logLevel: 'warning',
  })
  for (const f of ['package.json', ...collect('src', [], '.json'), ...collect('test', [], '.json')]) {
    mkdirSync(dirname(join(out, f)), { recursive: true })
    copyFileSync(f, join(out, f))
  }
  return (file) => join(out, file.replace(/\.ts$/, '.js'))
}
const compiled = await transpile()

const databaseUrl = process.env.TEST_DATABASE_URL ?? ''
let template
if (/^postgres(ql)?:/.test(databaseUrl) && !process.env.TEST_PG_TEMPLATE) {
  template = await pgTemplate(databaseUrl)
  if (template) process.env.TEST_PG_TEMPLATE = template
}

// Three files at once: on two cores the suite is CPU-bound, and a third file fills the time the
// others spend waiting on child processes and the database (SQLite run: 519 s with two, 475 s with three).
const concurrency = process.env.TEST_CONCURRENCY ?? '3'
// --test-force-exit: a file whose tests have all finished ends even if it left a handle open (a
// client reconnecting, a timer), instead of holding the whole run until CI's time runs out.
const r = spawnSync(
  process.execPath,
  [
    '--enable-source-maps',
    '--test',
    '--test-force-exit',
    `--test-concurrency=${concurrency}`,
    ...flags,
    ...files.map(compiled),
  ],
  { stdio: 'inherit' },
)
if (template) rmSync(join(template, '..'), { recursive: true, force: true })
if (typeErrors) {
  console.error('FAIL: the journey does not type-check against the generated client (tsconfig.journey.json).')
  process.exit(1)
}
process.exit(r.status ?? 1)
