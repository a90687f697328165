// `npm run bench [-- --quick] [--orders N] [--duration S]`
// Starts the compiled server on a seeded database, runs each scenario with autocannon on loopback,
// and prints requests/s, p50, p99, peak server RSS and the ratio to the limit (the same stack
// answering a precomputed body of the same size behind the same token check). Runs on SQLite, and
// also on PostgreSQL when DATABASE_URL points at one. --quick is the CI smoke run: it fails only
// on a crash or an error response, never on timing.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { createServer } from 'node:net'
import autocannon from 'autocannon'
import type { Manifest } from './seed.js'

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    orders: { type: 'string' },
    duration: { type: 'string' },
    connections: { type: 'string', default: '10' },
    only: { type: 'string' },
  },
})
const quick = args.quick ?? false
const orders = Number(args.orders ?? (quick ? 2000 : 10000))
const duration = Number(args.duration ?? (quick ? 1 : 10))
const connections = Number(args.connections)

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

interface Result {
  scenario: string
  rps: number
  p50: number
  p99: number
  errors: number
  non2xx: number
  rssMb: number
  /** Server CPU time per request, in microseconds: the whole process, and its main thread. */
  cpuUs: number
  mainCpuUs: number
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer()
    s.listen(0, '127.0.0.1', () => {
      const a = s.address() as { port: number }
      s.close(() => resolve(a.port))
    })
  })
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
    [...(process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? []), 'dist/main.js', 'serve'],
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
      if ((await fetch(`${url}/health/`)).ok) return { url, child }
    } catch {
      // not yet listening
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error('server did not start')
}

const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100

/** CPU seconds used so far (user and system) by a process, or by one of its threads. */
function cpuSeconds(pid: number, thread?: number): number {
  try {
    const stat = readFileSync(thread ? `/proc/${pid}/task/${thread}/stat` : `/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS
  } catch {
    return 0
  }
}

function rssMb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const m = /VmRSS:\s+(\d+) kB/.exec(status)
    return m ? Number(m[1]) / 1024 : 0
  } catch {
    return 0
  }
}

async function run(url: string, s: Scenario, pid: number): Promise<Result> {
  let peak = rssMb(pid)
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 100)
  let i = 0
  const cpuBefore = cpuSeconds(pid)
  const mainBefore = cpuSeconds(pid, pid)
  // The time of the last response: autocannon ends a run of a fixed number of requests only at
  // its next one-second tick, so for those the elapsed time is measured here.
  const started = performance.now()
  let lastResponse = started
  const result = await autocannon({
    url,
    connections,
    duration,
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
  peak = Math.max(peak, rssMb(pid))
  const elapsed = s.once ? (lastResponse - started) / 1000 : result.duration
  const perRequest = (seconds: number) =>
    result.requests.total ? (seconds * 1e6) / result.requests.total : 0
  return {
    scenario: s.name,
    // total / elapsed rather than the per-second average, which is wrong for runs under a second
    rps: elapsed > 0 ? result.requests.total / elapsed : 0,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    rssMb: peak,
    cpuUs: perRequest(cpuSeconds(pid) - cpuBefore),
    mainCpuUs: perRequest(cpuSeconds(pid, pid) - mainBefore),
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

function table(db: string, results: Result[]): string[] {
  const limitItem = results.find((r) => r.scenario === 'limit: item body')?.rps ?? 0
  const limitPage = results.find((r) => r.scenario === 'limit: 10-row page body')?.rps ?? 0
  const lines = [
    `\n${db}: ${orders.toLocaleString('en')} orders, ${connections} connections, ${duration}s per scenario`,
    '| scenario | req/s | p50 ms | p99 ms | ratio to limit | peak RSS MB | errors | server CPU µs/req (main thread) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
  ]
  for (const r of results) {
    const isPage = /list|page/.test(r.scenario)
    const ratio = (isPage ? limitPage : limitItem) ? r.rps / (isPage ? limitPage : limitItem) : 0
    lines.push(
      `| ${r.scenario} | ${Math.round(r.rps)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${(ratio * 100).toFixed(0)}% | ${r.rssMb.toFixed(0)} | ${r.errors + r.non2xx} | ${r.cpuUs.toFixed(0)} (${r.mainCpuUs.toFixed(0)}) |`,
    )
  }
  return lines
}

function budgets(results: Result[]): string[] {
  const limitItem = results.find((r) => r.scenario === 'limit: item body')?.rps ?? 0
  const limitPage = results.find((r) => r.scenario === 'limit: 10-row page body')?.rps ?? 0
  const out: string[] = ['budgets:']
  const check = (ok: boolean, text: string) => out.push(`  ${ok ? 'met   ' : 'MISSED'} ${text}`)
  for (const r of results) {
    if (r.scenario.startsWith('limit')) continue
    if (r.scenario === 'retrieve one order') {
      check(
        r.rps >= 0.5 * limitItem,
        `${r.scenario}: ≥ 50% of limit (${((r.rps / limitItem) * 100).toFixed(0)}%)`,
      )
      check(r.p99 < 10, `${r.scenario}: p99 < 10 ms (${r.p99} ms)`)
    } else if (r.scenario.startsWith('list')) {
      check(
        r.rps >= 0.25 * limitPage,
        `${r.scenario}: ≥ 25% of limit (${((r.rps / limitPage) * 100).toFixed(0)}%)`,
      )
      check(r.p99 < 25, `${r.scenario}: p99 < 25 ms (${r.p99} ms)`)
    } else if (r.scenario.startsWith('create') || r.scenario.startsWith('approve')) {
      check(r.rps >= 2000, `${r.scenario}: ≥ 2000/s (${Math.round(r.rps)}/s)`)
    }
  }
  const peak = Math.max(...results.map((r) => r.rssMb))
  check(peak < 200, `server RSS < 200 MB (peak ${peak.toFixed(0)} MB)`)
  return out
}

async function benchDatabase(label: string, databaseUrl: string): Promise<{ failures: number }> {
  const manifest = seed(databaseUrl)
  const { url, child } = await startServer(manifest.databaseUrl)
  let failures = 0
  try {
    await primeLimit(url, manifest)
    const results: Result[] = []
    for (const s of scenarios(manifest)) {
      const r = await run(url, s, child.pid!)
      results.push(r)
      if (r.errors || r.non2xx) {
        failures++
        console.error(`scenario "${s.name}" had ${r.errors} errors and ${r.non2xx} non-2xx responses`)
      }
      if (child.exitCode !== null) throw new Error(`server crashed during "${s.name}"`)
    }
    console.log(table(label, results).join('\n'))
    console.log(budgets(results).join('\n'))
  } finally {
    child.kill('SIGTERM')
  }
  return { failures }
}

async function main(): Promise<void> {
  if (!existsSync('dist/main.js')) throw new Error('run npm run build first')
  let failures = 0
  failures += (await benchDatabase('SQLite', `sqlite:./bench/data/bench-${orders}.sqlite`)).failures
  const pg = process.env.DATABASE_URL
  if (pg && /^postgres(ql)?:\/\//.test(pg)) {
    const sep = pg.includes('?') ? '&' : '?'
    failures += (await benchDatabase('PostgreSQL', `${pg}${sep}schema=bench_${orders}`)).failures
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
