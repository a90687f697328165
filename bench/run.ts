// `npm run bench [-- --quick] [--orders N] [--duration S] [--workers N] [--databases sqlite,postgres]`
// Starts the compiled server on a seeded database, runs each scenario with autocannon on loopback,
// and prints requests/s, p50, p99, peak server RSS, the ratio to the limit (the same stack
// answering a precomputed body of the same size behind the same token check) and the ratio to the
// bare stack (bench/bare-server.ts: Fastify without plugins answering the very bytes the server
// gave, behind a token looked up in a Map). Each scenario runs --rounds times (3; 1 with --quick),
// alternating the server and the bare stack round by round; the table gives medians. Runs on SQLite, and
// also on PostgreSQL when DATABASE_URL points at one (--databases picks one of them). --quick is
// the CI smoke run: it fails only on a crash or an error response, never on timing.
//
// --workers N starts the server as `serve --workers N` (N processes sharing the port and the
// database; the default 1 is the single process of `serve`); the table's title says how many.
// Columns: peak RSS is the sum over the server's processes (a cluster's primary and workers);
// "server CPU µs/req (main thread)" is their user and system CPU time per request, all threads and
// (in brackets) the main threads only; on PostgreSQL, "PostgreSQL CPU µs/req" is the user and
// system CPU time of every process whose command name starts with "postgres" (backends, postmaster,
// background writers; from /proc/<pid>/stat, in clock ticks of `getconf CLK_TCK`), read before and
// after the scenario, per request. It counts whatever else the PostgreSQL server ran meanwhile, so
// it is only meaningful on a machine where nothing else uses that server.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import type { Manifest } from './seed.js'
import { budgets, median, table, type Result, type Round } from './report.js'
import {
  cpuSeconds,
  freePort,
  postgresCpu,
  postgresCpuBetween,
  rssMb,
  serverProcesses,
  startFlags,
} from './proc.js'

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    orders: { type: 'string' },
    duration: { type: 'string' },
    connections: { type: 'string', default: '10' },
    only: { type: 'string' },
    workers: { type: 'string', default: '1' },
    databases: { type: 'string', default: 'sqlite,postgres' },
    rounds: { type: 'string' },
    warmup: { type: 'string' },
  },
})
const quick = args.quick ?? false
const orders = Number(args.orders ?? (quick ? 2000 : 10000))
const duration = Number(args.duration ?? (quick ? 1 : 10))
const connections = Number(args.connections)
const workers = Math.max(1, Number(args.workers) || 1)
const databases = args.databases.split(',')
const rounds = Math.max(1, Number(args.rounds ?? (quick ? 1 : 3)) || 1)
/** Seconds of unmeasured load on each server before a scenario's rounds (not for transitions). */
const warmup = Number(args.warmup ?? (quick ? 0 : 2))

interface Scenario {
  name: string
  kind: 'item' | 'list' | 'write'
  limit: 'item' | 'page'
  method: 'GET' | 'POST'
  paths: string[]
  body?: (i: number) => string
  token: string
  /** Each path may be requested once only (a transition): the run stops when they are used up. */
  once?: boolean
}

function seed(databaseUrl: string): Manifest {
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'bench/seed.ts', '--orders', String(orders), '--database', databaseUrl],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    },
  )
  if (r.status !== 0) throw new Error('seeding failed')
  const path = r.stdout.trim().split('\n').pop()!
  return JSON.parse(readFileSync(path, 'utf8')) as Manifest
}

async function startServer(databaseUrl: string): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort()
  const child = spawn(
    process.execPath,
    [
      ...startFlags(),
      ...(process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? []),
      'dist/main.js',
      'serve',
      ...(workers > 1 ? ['--workers', String(workers)] : []),
    ],
    {
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        BENCH_ROUTES: 'true',
        WORKER_ENABLED: 'true',
        PUBLIC_URL: 'http://bench.local',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  )
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error('server exited during start')
    try {
      // a cluster answers once its first worker listens: wait for all of them
      if (
        (await fetch(`${url}/health/`)).ok &&
        serverProcesses(child.pid!).length > (workers > 1 ? workers : 0)
      )
        return { url, child }
    } catch {
      // not yet listening
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error('server did not start')
}

/** The summed RSS and CPU time (all threads, main threads) of the server's processes. */
function serverUsage(pid: number) {
  const pids = serverProcesses(pid)
  const sum = (f: (p: number) => number) => pids.reduce((a, p) => a + f(p), 0)
  return { pids, rss: sum(rssMb), cpu: sum((p) => cpuSeconds(p)), main: sum((p) => cpuSeconds(p, p)) }
}

async function run(
  url: string,
  s: Scenario,
  pid: number,
  postgres: boolean,
  seconds = duration,
): Promise<Round> {
  const before = serverUsage(pid)
  let peak = before.rss
  let largest = 0
  const sample = () => {
    const each = before.pids.map(rssMb)
    peak = Math.max(
      peak,
      each.reduce((a, b) => a + b, 0),
    )
    largest = Math.max(largest, ...each)
  }
  sample()
  const sampler = setInterval(sample, 100)
  let i = 0
  const pgBefore = postgres ? postgresCpu() : null
  // The time of the last response: autocannon ends a run of a fixed number of requests only at
  // its next one-second tick, so for those the elapsed time is measured here.
  const started = performance.now()
  let lastResponse = started
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    ...(s.once ? { amount: s.paths.length } : {}),
    headers: { authorization: `Token ${s.token}`, 'content-type': 'application/json' },
    requests: [
      {
        method: s.method,
        setupRequest: (req: any) => {
          const n = i++
          req.path = s.paths[n % s.paths.length]
          if (s.body) req.body = s.body(n)
          return req
        },
        onResponse: () => {
          lastResponse = performance.now()
        },
      },
    ],
  })
  clearInterval(sampler)
  const pgAfter = postgres ? postgresCpu() : null
  const after = serverUsage(pid)
  sample()
  const elapsed = s.once ? (lastResponse - started) / 1000 : result.duration
  const perRequest = (seconds: number) =>
    result.requests.total ? (seconds * 1e6) / result.requests.total : 0
  return {
    // total / elapsed rather than the per-second average, which is wrong for runs under a second
    rps: elapsed > 0 ? result.requests.total / elapsed : 0,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    rssMb: peak,
    largestRssMb: largest,
    cpuUs: perRequest(after.cpu - before.cpu),
    mainCpuUs: perRequest(after.main - before.main),
    pgCpuUs: pgBefore && pgAfter ? perRequest(postgresCpuBetween(pgBefore, pgAfter)) : null,
  }
}

function scenarios(m: Manifest): Scenario[] {
  const staff = m.tokens.staff
  const list: Scenario[] = [
    {
      name: 'limit: item body',
      kind: 'item',
      limit: 'item',
      method: 'GET',
      paths: ['/bench/limit/item'],
      token: staff,
    },
    {
      name: 'limit: 10-row page body',
      kind: 'list',
      limit: 'page',
      method: 'GET',
      paths: ['/bench/limit/page'],
      token: staff,
    },
    {
      name: 'retrieve one order',
      kind: 'item',
      limit: 'item',
      method: 'GET',
      paths: m.orderUuids.slice(0, 1000).map((u) => `/api/marketplace-orders/${u}/`),
      token: staff,
    },
    {
      name: 'list orders (staff)',
      kind: 'list',
      limit: 'page',
      method: 'GET',
      paths: ['/api/marketplace-orders/?page_size=10'],
      token: staff,
    },
    {
      name: 'list orders (project member)',
      kind: 'list',
      limit: 'page',
      method: 'GET',
      paths: ['/api/marketplace-orders/?page_size=10'],
      token: m.tokens.member,
    },
    {
      name: 'list orders by project+state, -created',
      kind: 'list',
      limit: 'page',
      method: 'GET',
      paths: m.projectUuids
        .slice(0, 200)
        .map((p) => `/api/marketplace-orders/?project_uuid=${p}&state=done&o=-created&page_size=10`),
      token: staff,
    },
    {
      name: 'list orders with query search',
      kind: 'list',
      limit: 'page',
      method: 'GET',
      // A name as a user would type it: it matches one project of 1,000 (project-777) and the
      // resources whose names contain it.
      paths: ['/api/marketplace-orders/?query=project-777&page_size=10'],
      token: staff,
    },
    {
      name: 'create order',
      kind: 'write',
      limit: 'item',
      method: 'POST',
      paths: ['/api/marketplace-orders/'],
      body: (n) =>
        JSON.stringify({
          offering: `http://bench.local/api/marketplace-provider-offerings/${m.createOffering}/`,
          plan: `http://bench.local/api/marketplace-plans/${m.createPlan}/`,
          project: `http://bench.local/api/projects/${m.projectUuids[n % m.projectUuids.length]}/`,
          attributes: { name: `bench-${n}` },
          limits: {},
        }),
      token: staff,
    },
    {
      name: 'approve order (consumer)',
      kind: 'write',
      limit: 'item',
      method: 'POST',
      paths: m.pendingOrderUuids.map((u) => `/api/marketplace-orders/${u}/approve_by_consumer/`),
      token: staff,
      once: true,
    },
    {
      name: 'retrieve floating IP',
      kind: 'item',
      limit: 'item',
      method: 'GET',
      paths: m.floatingIpUuids.map((u) => `/api/cloudB-floating-ips/${u}/`),
      token: staff,
    },
    {
      name: 'list site agent services stale=true',
      kind: 'list',
      limit: 'page',
      method: 'GET',
      paths: ['/api/marketplace-site-agent-services/?stale=true&page_size=10'],
      token: staff,
    },
  ]
  return list.filter(
    (s) =>
      s.paths.length &&
      (s.name !== 'list site agent services stale=true' || m.siteAgents) &&
      (!args.only || args.only.split('|').some((o) => s.name.includes(o)) || s.name.startsWith('limit')),
  )
}

async function primeLimit(url: string, m: Manifest): Promise<void> {
  const h = { authorization: `Token ${m.tokens.staff}`, 'content-type': 'application/json' }
  const item = await (await fetch(`${url}/api/marketplace-orders/${m.orderUuids[0]}/`, { headers: h })).json()
  const page = await (await fetch(`${url}/api/marketplace-orders/?page_size=10`, { headers: h })).json()
  for (const [name, body] of [
    ['item', item],
    ['page', page],
  ] as const) {
    const r = await fetch(`${url}/bench/limit/${name}`, {
      method: 'POST',
      headers: h,
      body: JSON.stringify(body),
    })
    if (r.status !== 204) throw new Error(`could not store the limit body (${r.status})`)
  }
}

/** Headers that belong to the connection or the moment, not to the answer. */
const CONNECTION_HEADERS = new Set([
  'date',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
])

/**
 * The answer the bare stack gives for a scenario: the server's own answer to the scenario's first
 * request (status, headers, bytes), for every path of the scenario. A transition (`once`) is
 * captured on its last path, which the load then leaves out.
 */
async function captureAnswer(url: string, s: Scenario) {
  const path = s.once ? s.paths.pop()! : s.paths[0]!
  const r = await fetch(`${url}${path}`, {
    method: s.method,
    headers: { authorization: `Token ${s.token}`, 'content-type': 'application/json' },
    ...(s.body ? { body: s.body(0) } : {}),
  })
  const body = Buffer.from(await r.arrayBuffer())
  if (r.status >= 300) throw new Error(`capturing "${s.name}": ${r.status} ${body.toString().slice(0, 200)}`)
  const headers: Record<string, string> = {}
  r.headers.forEach((value, name) => {
    if (!CONNECTION_HEADERS.has(name)) headers[name] = value
  })
  return { method: s.method, urls: s.paths, status: r.status, headers, body: body.toString('base64') }
}

/** Starts the bare stack answering the captured answers; resolves when it answers. */
async function startBare(
  answers: Awaited<ReturnType<typeof captureAnswer>>[],
  tokens: string[],
): Promise<{ url: string; child: ChildProcess; dir: string }> {
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'bench-bare-'))
  const specFile = join(dir, 'spec.json')
  writeFileSync(specFile, JSON.stringify({ port, tokens: tokens.map((t) => `Token ${t}`), answers }))
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/bare-server.ts', specFile], {
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error('the bare server exited during start')
    try {
      await fetch(`${url}/`)
      return { url, child, dir }
    } catch {
      // not yet listening
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error('the bare server did not start')
}

/** A transition's paths split over the rounds (each is requested once); other scenarios whole. */
function roundScenario(s: Scenario, round: number): Scenario {
  if (!s.once) return s
  const size = Math.ceil(s.paths.length / rounds)
  return { ...s, paths: s.paths.slice(round * size, (round + 1) * size) }
}

/** The medians of a scenario's rounds, with the bare stack's rounds beside them. */
function summarize(name: string, ours: Round[], bare: Round[]): Result {
  const m = (rs: Round[], f: (r: Round) => number) => median(rs.map(f))
  const pg = ours.map((r) => r.pgCpuUs).filter((x): x is number => x !== null)
  return {
    scenario: name,
    rps: m(ours, (r) => r.rps),
    p50: m(ours, (r) => r.p50),
    p99: m(ours, (r) => r.p99),
    errors: ours.reduce((a, r) => a + r.errors, 0),
    non2xx: ours.reduce((a, r) => a + r.non2xx, 0),
    rssMb: Math.max(...ours.map((r) => r.rssMb)),
    largestRssMb: Math.max(...ours.map((r) => r.largestRssMb)),
    cpuUs: m(ours, (r) => r.cpuUs),
    mainCpuUs: m(ours, (r) => r.mainCpuUs),
    pgCpuUs: pg.length ? median(pg) : null,
    roundRps: ours.map((r) => r.rps),
    bare: {
      rps: m(bare, (r) => r.rps),
      cpuUs: m(bare, (r) => r.cpuUs),
      errors: bare.reduce((a, r) => a + r.errors + r.non2xx, 0),
      // each round's ratio pairs two loads run one after the other
      ratio: median(ours.map((r, i) => (bare[i]!.rps ? r.rps / bare[i]!.rps : 0))),
      roundRatios: ours.map((r, i) => (bare[i]!.rps ? r.rps / bare[i]!.rps : 0)),
    },
  }
}

async function benchDatabase(
  label: string,
  databaseUrl: string,
  postgres: boolean,
): Promise<{ failures: number }> {
  const manifest = seed(databaseUrl)
  const { url, child } = await startServer(manifest.databaseUrl)
  let bare: Awaited<ReturnType<typeof startBare>> | null = null
  let failures = 0
  try {
    await primeLimit(url, manifest)
    const list = scenarios(manifest)
    const answers = []
    for (const s of list) answers.push(await captureAnswer(url, s))
    bare = await startBare(answers, [manifest.tokens.staff, manifest.tokens.member])
    const results: Result[] = []
    for (const s of list) {
      const ours: Round[] = []
      const theirs: Round[] = []
      if (warmup > 0 && !s.once) {
        await run(url, s, child.pid!, false, warmup)
        await run(bare.url, s, bare.child.pid!, false, warmup)
      }
      for (let round = 0; round < rounds; round++) {
        const part = roundScenario(s, round)
        if (!part.paths.length) break
        ours.push(await run(url, part, child.pid!, postgres))
        if (child.exitCode !== null) throw new Error(`server crashed during "${s.name}"`)
        theirs.push(await run(bare.url, part, bare.child.pid!, false))
        if (bare.child.exitCode !== null) throw new Error(`the bare server exited during "${s.name}"`)
      }
      const r = summarize(s.name, ours, theirs)
      results.push(r)
      if (r.errors || r.non2xx) {
        failures++
        console.error(`scenario "${s.name}" had ${r.errors} errors and ${r.non2xx} non-2xx responses`)
      }
      if (r.bare.errors) {
        failures++
        console.error(`the bare stack had ${r.bare.errors} errors or non-2xx responses in "${s.name}"`)
      }
    }
    console.log(table(label, results, { orders, workers, connections, duration, rounds }).join('\n'))
    console.log(budgets(results, postgres).join('\n'))
  } finally {
    child.kill('SIGTERM')
    if (bare) {
      bare.child.kill('SIGTERM')
      rmSync(bare.dir, { recursive: true, force: true })
    }
  }
  return { failures }
}

async function main(): Promise<void> {
  if (!existsSync('dist/main.js')) throw new Error('run npm run build first')
  let failures = 0
  if (databases.includes('sqlite'))
    failures += (await benchDatabase('SQLite', `sqlite:./bench/data/bench-${orders}.sqlite`, false)).failures
  const pg = process.env.DATABASE_URL
  if (databases.includes('postgres') && pg && /^postgres(ql)?:\/\//.test(pg)) {
    const sep = pg.includes('?') ? '&' : '?'
    failures += (await benchDatabase('PostgreSQL', `${pg}${sep}schema=bench_${orders}`, true)).failures
  }
  if (failures) {
    console.error(`${failures} scenario(s) had errors`)
    process.exit(1)
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.stack : e)
  process.exit(1)
})
