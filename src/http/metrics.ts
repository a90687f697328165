// Metrics on /metrics (Prometheus): request counts and latencies by route, the job queue's
// gauges, the counters areas register, and in a cluster every process's figures summed.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import cluster from 'node:cluster'
import { timingSafeEqual, createHash } from 'node:crypto'
import { Registry, Histogram, Counter, Gauge, AggregatorRegistry, collectDefaultMetrics } from 'prom-client'
import type { JobQueue } from '../jobs/queue.js'
import type { Config } from '../config.js'
import type { Database } from '../db/database.js'
import { inAnyNetwork, parseCidr, parseIp, type Address } from './addresses.js'

/** A counter read when /metrics is scraped. */
export interface MetricCounter {
  name: string
  help: string
  value: () => number
}

export function installMetrics(
  app: FastifyInstance,
  database: Database,
  counters: readonly MetricCounter[] = [],
  jobs?: JobQueue,
): Registry {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  if (jobs) installJobMetrics(registry, jobs)
  const commitStats = database.commitStats
  const all: MetricCounter[] = [...counters]
  if (commitStats) {
    all.push(
      {
        name: 'sqlite_commits_total',
        help: 'SQLite commits (the write transactions of requests that arrive together share one)',
        value: () => commitStats().commits,
      },
      {
        name: 'sqlite_committed_writes_total',
        help: 'Write transactions and single write statements made durable by those commits',
        value: () => commitStats().writes,
      },
    )
  }
  for (const { name, help, value } of all) {
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset()
        this.inc(value())
      },
    })
  }
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Request latency by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  })
  const total = new Counter({
    name: 'http_requests_total',
    help: 'Requests by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  })
  // The series of each method, route and status, looked up once: prom-client otherwise builds and
  // hashes the label set on every observation.
  const series = new Map<
    string,
    { total: ReturnType<typeof total.labels>; duration: ReturnType<typeof duration.labels> }
  >()
  app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done) => {
    const route = request.routeOptions.url ?? 'unmatched'
    const key = `${request.method} ${reply.statusCode} ${route}`
    let s = series.get(key)
    if (!s) {
      const labels = { method: request.method, route, status: String(reply.statusCode) }
      s = { total: total.labels(labels), duration: duration.labels(labels) }
      series.set(key, s)
    }
    s.total.inc()
    s.duration.observe(reply.elapsedTime / 1000)
    done()
  })
  const allowed = metricsAccess(app.appConfig)
  app.get('/metrics', { schema: { hide: true }, config: { auth: 'optional' } }, async (req, reply) => {
    if (!allowed(req)) {
      return reply.code(403).send({ detail: 'You do not have permission to perform this action.' })
    }
    void reply.type(registry.contentType)
    // In a cluster, every process's figures summed by the primary (see serveClusterMetrics).
    return cluster.isWorker ? clusterMetrics() : registry.metrics()
  })
  // In a cluster, the primary asks each process for this registry's figures.
  // (Creating an AggregatorRegistry is what installs prom-client's answering listener.)
  if (cluster.isWorker) {
    new AggregatorRegistry()
    AggregatorRegistry.setRegistries([registry])
  }
  return registry
}

const sha = (s: string) => createHash('sha256').update(s).digest()

/** The loopback networks: callers on this machine. */
const LOOPBACK = ['127.0.0.0/8', '::1'].map((n) => parseCidr(n)!)

/** Whether the request's client address (as TRUST_PROXY defines it) lies in `networks`. */
function from(req: FastifyRequest, networks: readonly [Address, number][]): boolean {
  const ip = parseIp(req.ip)
  return !!ip && inAnyNetwork(ip, networks)
}

/**
 * Who may read /metrics. With neither METRICS_TOKEN nor METRICS_ALLOW set, callers on this
 * machine only (loopback addresses); otherwise a caller presenting `Authorization: Bearer <METRICS_TOKEN>`, or connecting from an
 * address in METRICS_ALLOW (the client address as TRUST_PROXY defines it).
 */
export function metricsAccess(config: Config): (req: FastifyRequest) => boolean {
  const { metricsToken, metricsAllow } = config
  if (!metricsToken && !metricsAllow.length) return (req) => from(req, LOOPBACK)
  const expected = metricsToken ? sha(metricsToken) : null
  const networks = metricsAllow.map((entry) => {
    const network = parseCidr(entry)
    if (!network) throw new Error(`METRICS_ALLOW: "${entry}" is not an address or CIDR`)
    return network
  })
  return (req) => {
    const header = req.headers.authorization ?? ''
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header)
    if (expected && m && timingSafeEqual(sha(m[1]!), expected)) return true
    return from(req, networks)
  }
}

/**
 * Figures read from the jobs table at each scrape. They are the same in every process (one
 * database), so the cluster's aggregation takes the first process's, not their sum.
 */
function installJobMetrics(registry: Registry, jobs: JobQueue): void {
  let pending: ReturnType<JobQueue['stats']> | null = null
  // One query per scrape for the three gauges.
  const stats = () => (pending ??= jobs.stats().finally(() => setImmediate(() => (pending = null))))
  const byKind = (name: string, help: string, counts: 'queued' | 'failed') =>
    new Gauge({
      name,
      help,
      labelNames: ['kind'] as const,
      registers: [registry],
      aggregator: 'first',
      async collect() {
        this.reset()
        for (const [kind, n] of (await stats())[counts]) this.set({ kind }, n)
      },
    })
  byKind('jobs_queued', 'Jobs waiting to run (due or not), by kind', 'queued')
  byKind(
    'jobs_failed',
    'Jobs that failed for good and are kept (see `jobs failed` and `jobs retry`), by kind',
    'failed',
  )
  new Gauge({
    name: 'jobs_oldest_due_age_seconds',
    help: 'How long the oldest due job has waited past its time (0: none is waiting)',
    registers: [registry],
    aggregator: 'first',
    async collect() {
      this.set((await stats()).oldestDueAgeSeconds)
    },
  })
}

const METRICS_REQUEST = 'marketplace:metrics'
const METRICS_REPLY = 'marketplace:metrics-reply'
let metricsRequests = 0
const metricsWaiting = new Map<number, { resolve: (text: string) => void; reject: (e: Error) => void }>()

/** A cluster process's /metrics: asks the primary for every process's figures, aggregated. */
function clusterMetrics(): Promise<string> {
  const id = ++metricsRequests
  if (metricsWaiting.size === 0) {
    process.on('message', onMetricsReply)
  }
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      metricsWaiting.delete(id)
      reject(new Error('the cluster did not answer the metrics request'))
    }, 10_000)
    metricsWaiting.set(id, {
      resolve: (text) => {
        clearTimeout(timer)
        resolve(text)
      },
      reject: (e) => {
        clearTimeout(timer)
        reject(e)
      },
    })
    process.send!({ type: METRICS_REQUEST, id })
  })
}

function onMetricsReply(message: unknown): void {
  const m = message as { type?: string; id?: number; text?: string; error?: string }
  if (m?.type !== METRICS_REPLY || m.id === undefined) return
  const waiting = metricsWaiting.get(m.id)
  if (!waiting) return
  metricsWaiting.delete(m.id)
  if (metricsWaiting.size === 0) process.off('message', onMetricsReply)
  if (m.error !== undefined) waiting.reject(new Error(m.error))
  else waiting.resolve(m.text ?? '')
}

/**
 * The cluster primary's half: answers a process's metrics request with every process's figures,
 * gathered and aggregated by prom-client (counters and histograms summed, per-process gauges
 * summed or averaged as prom-client declares, figures read from the database taken once).
 */
export function serveClusterMetrics(): void {
  const aggregator = new AggregatorRegistry()
  cluster.on('message', (worker, message: unknown) => {
    const m = message as { type?: string; id?: number }
    if (m?.type !== METRICS_REQUEST) return
    aggregator.clusterMetrics().then(
      (text) => worker.send({ type: METRICS_REPLY, id: m.id, text }),
      (e: unknown) => worker.send({ type: METRICS_REPLY, id: m.id, error: String(e) }),
    )
  })
}
