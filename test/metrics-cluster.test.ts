// /metrics under `serve --workers 2`: every scrape answers the sum over both processes, so a
// counter never goes back between scrapes, whichever process answers.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { request } from 'node:http'
import { childDatabase, freePort, SERVER_START_MS } from './support/server.js'
import { mainCommand } from './support/main-command.js'

/** One request on a connection of its own, so the cluster spreads requests over its processes. */
function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (d: string) => (body += d))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on('error', reject)
    req.end()
  })
}

function sample(text: string, name: string, labels = ''): number | null {
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}${labels} `)) return Number(line.slice(`${name}${labels} `.length))
  }
  return null
}

test('serve --workers 2: /metrics sums both processes, scrape after scrape', async () => {
  const db = childDatabase()
  const port = await freePort()
  const child = spawn(process.execPath, mainCommand(['serve', '--workers', '2']), {
    env: { ...process.env, DATABASE_URL: db.url, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  try {
    // Both processes up: each logs that it listens.
    const deadline = Date.now() + SERVER_START_MS
    while ((stdout.match(/Server listening/g) ?? []).length < 2) {
      assert.equal(child.exitCode, null, stderr)
      assert.ok(Date.now() < deadline, `two processes did not start: ${stdout}${stderr}`)
      await new Promise((r) => setTimeout(r, 100))
    }
    const route = '{method="GET",route="/health/",status="200"}'
    const before = sample((await get(port, '/metrics')).body, 'http_requests_total', route) ?? 0
    for (let i = 0; i < 7; i++) assert.equal((await get(port, '/health/')).status, 200)
    const seen: number[] = []
    for (let i = 0; i < 6; i++) {
      const r = await get(port, '/metrics')
      assert.equal(r.status, 200)
      seen.push(sample(r.body, 'http_requests_total', route) ?? -1)
      // Figures read from the database are reported once, not once per process.
      assert.equal(sample(r.body, 'jobs_oldest_due_age_seconds'), 0)
    }
    assert.deepEqual(seen, Array(6).fill(before + 7))
  } finally {
    child.kill('SIGTERM')
    await exited
    await db.cleanup()
  }
})
