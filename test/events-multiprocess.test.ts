// Event streams across processes: a change made through one server process reaches the
// Server-Sent Events streams held on another process sharing the database, whether the processes
// are separate `serve`s (as on several hosts) or the workers of one `serve --workers 2`.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { request, type ClientRequest } from 'node:http'
import { childServers, tokenApi } from './support/child-servers.js'
import { freePort, SERVER_START_MS } from './support/server.js'
import { mainCommand } from './support/main-command.js'

const TOKEN = 'events-multiprocess-staff-token'
const servers = childServers(TOKEN)
const api = tokenApi(TOKEN)
/** How long an event may take to reach a stream before the test fails. */
const DELIVERY_MS = 15_000

interface Stream {
  /** Resolves with the event whose data names `customerUuid`, at most DELIVERY_MS after the call. */
  eventFor(customerUuid: string): Promise<{ type: string; data: { customer_uuid: string } }>
  close(): void
}

/**
 * GET /api/events/stream/ as staff, on a connection of its own (so that a cluster hands each to
 * its next process). Resolves once the server has sent its first line: from then on, every event
 * committed is sent on it.
 */
function openStream(base: string): Promise<Stream> {
  const events: { type: string; data: { customer_uuid: string } }[] = []
  const waiters = new Set<() => void>()
  let req: ClientRequest
  return new Promise((resolve, reject) => {
    req = request(
      `${base}/api/events/stream/`,
      { agent: false, headers: { authorization: `Token ${TOKEN}`, accept: 'text/event-stream' } },
      (res) => {
        if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}`))
        res.setEncoding('utf8')
        let buffer = ''
        let connected = false
        res.on('data', (chunk: string) => {
          buffer += chunk
          let end: number
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end)
            buffer = buffer.slice(end + 2)
            if (!connected && block.startsWith(':')) {
              connected = true
              resolve(stream)
            }
            const data = block
              .split('\n')
              .filter((l) => l.startsWith('data: '))
              .map((l) => l.slice(6))
              .join('\n')
            if (data) events.push(JSON.parse(data) as (typeof events)[number])
          }
          for (const w of [...waiters]) w()
        })
      },
    )
    req.on('error', reject)
    req.end()
    const stream: Stream = {
      eventFor: (customerUuid) =>
        new Promise((found, fail) => {
          const check = () => {
            const e = events.find((x) => x.data.customer_uuid === customerUuid)
            if (!e) return
            clearTimeout(timer)
            waiters.delete(check)
            found(e)
          }
          const timer = setTimeout(() => {
            waiters.delete(check)
            fail(new Error(`no event for ${customerUuid} within ${DELIVERY_MS} ms`))
          }, DELIVERY_MS)
          waiters.add(check)
          check()
        }),
      close: () => req.destroy(),
    }
  })
}

/** A change that tells an event: an organization made, and the staff user made its owner. */
async function change(base: string, name: string): Promise<string> {
  const me = await api(base, 'GET', '/api/users/me/')
  const c = await api(base, 'POST', '/api/customers/', { name })
  assert.equal(c.status, 201, JSON.stringify(c.body))
  const g = await api(base, 'POST', `/api/customers/${c.body.uuid}/add_user/`, {
    user: me.body.uuid,
    role: 'CUSTOMER.OWNER',
  })
  assert.equal(g.status, 201, JSON.stringify(g.body))
  return c.body.uuid as string
}

test('two serve processes on one database: a change through one reaches the streams on both', async () => {
  const a = await servers.start({ WORKER_ENABLED: 'false' })
  const b = await servers.start({ WORKER_ENABLED: 'false' })
  const onB = await openStream(b.url)
  const onA = await openStream(a.url)
  try {
    const fromA = await change(a.url, 'written on A')
    for (const s of [onB, onA]) {
      const e = await s.eventFor(fromA)
      assert.equal(e.type, 'role.granted')
    }
    const fromB = await change(b.url, 'written on B')
    assert.equal((await onA.eventFor(fromB)).type, 'role.granted')
  } finally {
    onA.close()
    onB.close()
  }
})

test('serve --workers 2: a change through one process reaches the streams held on both', async () => {
  const port = await freePort()
  const child = spawn(process.execPath, mainCommand(['serve', '--workers', '2']), {
    env: {
      ...process.env,
      DATABASE_URL: servers.databaseUrl,
      BOOTSTRAP_STAFF_TOKEN: TOKEN,
      WORKER_ENABLED: 'false',
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const streams: Stream[] = []
  try {
    const deadline = Date.now() + SERVER_START_MS
    while ((stdout.match(/Server listening/g) ?? []).length < 2) {
      assert.equal(child.exitCode, null, stderr)
      assert.ok(Date.now() < deadline, `two processes did not start: ${stdout}${stderr}`)
      await new Promise((r) => setTimeout(r, 100))
    }
    const base = `http://127.0.0.1:${port}`
    // The cluster hands new connections to its processes in turn: four streams, on both.
    for (let i = 0; i < 4; i++) streams.push(await openStream(base))
    // Which process serves each stream: the pid of its "incoming request" log line.
    const streamPids = () =>
      stdout
        .split('\n')
        .slice(0, -1) // complete lines only
        .filter((l) => l.includes('"/api/events/stream/"') && l.includes('incoming request'))
        .map((l) => (JSON.parse(l) as { pid: number }).pid)
    while (streamPids().length < 4) {
      assert.ok(Date.now() < deadline, `stream requests not logged: ${stdout}`)
      await new Promise((r) => setTimeout(r, 20))
    }
    assert.equal(new Set(streamPids()).size, 2, 'the streams are not held on both processes')
    for (const name of ['first change', 'second change']) {
      const uuid = await change(base, name)
      const got = await Promise.all(streams.map((s) => s.eventFor(uuid)))
      assert.deepEqual(
        got.map((e) => e.type),
        Array(4).fill('role.granted'),
      )
    }
  } finally {
    for (const s of streams) s.close()
    child.kill('SIGTERM')
    await exited
  }
})
