// `npm run bench:events [-- --database URL] [--writes N] [--rate R] [--streams N]`
// The event budgets, measured on the compiled server with the demo data set:
// - commit-to-client latency over Server-Sent Events and, when RabbitMQ is configured, through the
//   site agent's STOMP queue: N orders are placed one at a time at R per second (a steady load, not
//   a saturating one), and each order's `marketplace.order.created` event is awaited on an open
//   stream and its `order` message on a STOMP consumer subscribed as the reference's agent does.
//   The latency of each is its arrival less the event's `time`, which the server stamps inside the
//   transaction, before the commit: an upper bound of commit-to-client. Printed as p50/p99/max.
// - the memory of idle streams: the server's RSS before and after opening --streams streams that
//   then wait (one process).
// RabbitMQ is used when RABBITMQ_URL, RABBITMQ_MANAGEMENT_URL and BENCH_STOMP_URL (the web-STOMP
// endpoint, ws://host:15674/ws) are set; without them the STOMP row says it was not measured.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { Agent, fetch as undiciFetch } from 'undici'
import { freePort, rssMb } from './proc.js'
import { StompConsumer } from '../test/support/stomp.js'

const { values: args } = parseArgs({
  options: {
    database: { type: 'string' },
    writes: { type: 'string', default: '300' },
    rate: { type: 'string', default: '20' },
    streams: { type: 'string', default: '1000' },
  },
})
const writes = Math.max(1, Number(args.writes) || 300)
const rate = Math.max(1, Number(args.rate) || 20)
const streamCount = Math.max(0, Number(args.streams) || 0)
const stompUrl = process.env.BENCH_STOMP_URL
const rabbit = Boolean(process.env.RABBITMQ_URL && process.env.RABBITMQ_MANAGEMENT_URL && stompUrl)

const scratch = mkdtempSync(join(tmpdir(), 'bench-events-'))
const databaseUrl = args.database ?? `sqlite:${join(scratch, 'events.sqlite')}`
const env = {
  ...process.env,
  DATABASE_URL: databaseUrl,
  HOST: '127.0.0.1',
  LOG_LEVEL: 'warn',
  PUBLIC_URL: '',
}

const serverWarnings: string[] = []

interface Demo {
  project: string
  offerings: { slurm: { offering: string; plan: string } }
  tokens: Record<string, string>
}

function seedDemo(): Demo {
  const r = spawnSync(process.execPath, ['dist/main.js', 'seed-demo'], { env, encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`seed-demo failed: ${r.stderr}`)
  return JSON.parse(r.stdout.slice(r.stdout.indexOf('{'))) as Demo
}

async function startServer(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort()
  const child = spawn(process.execPath, ['dist/main.js', 'serve'], {
    env: { ...env, PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  // Warnings and errors the server logs during the run are printed with the results.
  let pending = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (pending + chunk).split('\n')
    pending = lines.pop()!
    for (const line of lines) if (/"level":[456]\d/.test(line)) serverWarnings.push(line)
  })
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

/** Percentiles of a list of milliseconds, as the table prints them. */
function summary(ms: number[]): string {
  if (!ms.length) return 'none arrived'
  const s = [...ms].sort((a, b) => a - b)
  const at = (q: number) => s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]
  return `p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${s[s.length - 1]} ms (${s.length} events)`
}

/** An SSE stream's events, each handed to `onEvent` as it arrives with its arrival time. */
async function openStream(
  dispatcher: Agent,
  url: string,
  token: string,
  onEvent?: (data: { id: string; time: string; data: { uuid: string } }, at: number) => void,
): Promise<AbortController> {
  const abort = new AbortController()
  const res = await undiciFetch(url, {
    headers: { authorization: `Token ${token}`, accept: 'text/event-stream' },
    signal: abort.signal,
    dispatcher,
  })
  if (res.status !== 200 || !res.body) throw new Error(`stream answered ${res.status}`)
  const reader = res.body.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read()
        if (done) return
        const at = Date.now()
        buffer += decoder.decode(value, { stream: true })
        let end: number
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const data = block
            .split('\n')
            .filter((l) => l.startsWith('data:'))
            .map((l) => l.slice(5).trimStart())
            .join('\n')
          if (data && onEvent) onEvent(JSON.parse(data), at)
        }
      }
    } catch {
      // aborted at the end of the run
    }
  })()
  return abort
}

async function main(): Promise<void> {
  const demo = seedDemo()
  const { url, child } = await startServer()
  const dispatcher = new Agent({ connections: null, pipelining: 0 })
  try {
    const api = async (token: string, path: string, body?: unknown) => {
      const res = await fetch(`${url}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { authorization: `Token ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      const json = await res.json()
      if (res.status >= 300) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(json)}`)
      return json
    }
    const owner = demo.tokens['demo-owner']!
    const provider = demo.tokens['demo-provider']!
    const staff = demo.tokens['demo-staff']!
    const { offering, plan } = demo.offerings.slurm

    // Event times by order uuid, and arrivals over each channel.
    const eventTime = new Map<string, number>()
    const sseArrival = new Map<string, number>()
    const stompArrival = new Map<string, number>()
    const hex = (u: string) => u.replaceAll('-', '')

    const sse = await openStream(
      dispatcher,
      `${url}/api/events/stream/?type=marketplace.order.created`,
      staff,
      (e, at) => {
        eventTime.set(hex(e.data.uuid), Date.parse(e.time))
        sseArrival.set(hex(e.data.uuid), at)
      },
    )

    let consumer: StompConsumer | null = null
    if (rabbit) {
      const identity = await api(provider, '/api/marketplace-site-agent-identities/', {
        name: 'bench-agent',
        offering,
      })
      const sub = await api(
        provider,
        `/api/marketplace-site-agent-identities/${identity.uuid}/register_event_subscription/`,
        { observable_object_type: 'order', description: 'bench' },
      )
      const queue = await api(provider, `/api/event-subscriptions/${sub.uuid}/create_queue/`, {
        offering_uuid: offering,
        object_type: 'order',
      })
      consumer = await StompConsumer.connect(stompUrl!, {
        vhost: queue.vhost,
        login: hex(sub.uuid),
        passcode: provider,
        queue: queue.queue_name,
      })
    }

    const body = {
      project: `${url}/api/projects/${demo.project}/`,
      offering: `${url}/api/marketplace-provider-offerings/${offering}/`,
      plan: `${url}/api/marketplace-plans/${plan}/`,
      attributes: { name: 'bench' },
    }
    const placed: string[] = []
    const started = performance.now()
    for (let i = 0; i < writes; i++) {
      const due = started + (i * 1000) / rate
      const wait = due - performance.now()
      if (wait > 0) await new Promise((r) => setTimeout(r, wait))
      const order = await api(owner, '/api/marketplace-orders/', {
        ...body,
        attributes: { name: `bench-${i}` },
      })
      placed.push(hex(order.uuid))
    }
    // Give the last events a moment to arrive (bounded), then read the latencies.
    const deadline = Date.now() + 5000
    while (
      Date.now() < deadline &&
      placed.some((u) => !sseArrival.has(u) || (consumer && !stompArrival.has(u)))
    ) {
      await new Promise((r) => setTimeout(r, 20))
      for (const m of consumer?.messages ?? []) {
        const body = JSON.parse(m.body) as { order_uuid: string; order_state: string }
        if (body.order_state === 'pending-provider' && !stompArrival.has(body.order_uuid)) {
          stompArrival.set(body.order_uuid, m.receivedAt)
        }
      }
    }
    sse.abort()
    consumer?.close()
    const latencies = (arrivals: Map<string, number>) =>
      placed
        .filter((u) => arrivals.has(u) && eventTime.has(u))
        .map((u) => arrivals.get(u)! - eventTime.get(u)!)

    // Idle streams: the server's RSS before and after opening them.
    const rssBefore = rssMb(child.pid!)
    const idle: AbortController[] = []
    for (let i = 0; i < streamCount; i += 50) {
      const batch = Math.min(50, streamCount - i)
      idle.push(
        ...(await Promise.all(
          Array.from({ length: batch }, () => openStream(dispatcher, `${url}/api/events/stream/`, staff)),
        )),
      )
    }
    await new Promise((r) => setTimeout(r, 1000))
    const rssAfter = rssMb(child.pid!)
    for (const a of idle) a.abort()

    const database = databaseUrl.startsWith('postgres') ? 'PostgreSQL' : 'SQLite'
    console.log(`\nEvents on ${database}: ${writes} orders at ${rate}/s, one at a time`)
    console.log(`  commit to SSE client:   ${summary(latencies(sseArrival))}   (budget p99 < 100 ms)`)
    console.log(
      `  commit to STOMP client: ${rabbit ? summary(latencies(stompArrival)) : 'not measured (no RabbitMQ configured)'}   (budget p99 < 500 ms)`,
    )
    console.log(
      `  ${idle.length} idle streams: server RSS ${rssBefore.toFixed(0)} MB before, ${rssAfter.toFixed(0)} MB with them open   (budget < 200 MB)`,
    )
    console.log(`  server warnings and errors during the run: ${serverWarnings.length}`)
    for (const line of serverWarnings.slice(0, 5)) console.log(`    ${line.slice(0, 300)}`)
  } finally {
    child.kill('SIGTERM')
    await dispatcher.close().catch(() => {})
    rmSync(scratch, { recursive: true, force: true })
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
