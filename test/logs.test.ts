// Logs: one JSON stream that carries a request id and never a token or a password, and says at
// start what an operator needs to know.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { createDatabase } from '../src/db/database.js'
import { TEST_DATABASE_URL } from './support/app.js'
import { makeUser } from './support/fixtures.js'
import { randomBytes } from 'node:crypto'
import { describeDatabaseUrl, dialectOf, dropSchema } from '../src/db/database.js'
import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import { childDatabase, freePort, SERVER_START_MS } from './support/server.js'
import { mainCommand } from './support/main-command.js'

test('tokens and passwords never reach the logs; every line has a request id', async () => {
  let captured = ''
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      captured += chunk.toString()
      done()
    },
  })
  const schema =
    dialectOf(TEST_DATABASE_URL) === 'postgres' ? `l_${randomBytes(6).toString('hex')}` : undefined
  const database = await createDatabase(TEST_DATABASE_URL, { schema })
  const app = await buildApp(
    loadConfig({}, { databaseUrl: TEST_DATABASE_URL, logLevel: 'trace', workerEnabled: false }),
    {
      database,
      logStream: stream,
    },
  )
  try {
    const staff = await makeUser(app.ctx, { staff: true })
    const password = 'very-secret-password-123'
    await app.inject({
      method: 'POST',
      url: '/api/users/',
      headers: { authorization: `Token ${staff.token}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ username: 'logged', password }),
    })
    await app.inject({
      method: 'POST',
      url: '/api-auth/password/',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ username: 'logged', password }),
    })
    await app.inject({ url: `/api/users/me/?x-auth-token=${staff.token}` })
    // Every spelling of a secret in a URL or a header.
    const spelled = ['aaa-first-111', 'bbb-second-222', 'ccc-encoded-333', 'ddd-upper-444', 'eee-cookie-555']
    await app.inject({ url: `/api/users/me/?x-auth-token=${spelled[0]}&page=1&x-auth-token=${spelled[1]}` })
    await app.inject({ url: `/api/users/me/?x%2Dauth%2dtoken=${spelled[2]}` })
    await app.inject({ url: `/api/users/me/?X-AUTH-TOKEN=${spelled[3]}#frag` })
    await app.inject({
      url: '/api/users/me/?access_token=zzz-access-666;password=yyy-pass-777',
      headers: { cookie: `session=${spelled[4]}`, 'x-auth-token': 'fff-header-888' },
    })
    for (const secret of [...spelled, 'zzz-access-666', 'yyy-pass-777', 'fff-header-888']) {
      assert.equal(captured.includes(secret), false, `${secret} was logged`)
    }
    assert.ok(captured.includes('page=1'), 'the rest of the query is still logged')
    await app.inject({ url: '/api/users/me/', headers: { authorization: 'Token wrong-token-value-xyz' } })
    assert.ok(captured.includes('request completed'))
    assert.equal(captured.includes(staff.token), false, 'a token was logged')
    assert.equal(captured.includes(password), false, 'a password was logged')
    assert.equal(captured.includes('wrong-token-value-xyz'), false, 'a presented token was logged')
    for (const line of captured.trim().split('\n')) {
      const entry = JSON.parse(line) as { reqId?: string; msg: string }
      if (entry.msg === 'incoming request' || entry.msg === 'request completed') assert.ok(entry.reqId)
    }
  } finally {
    await app.close()
    await database.close()
    if (schema) await dropSchema(TEST_DATABASE_URL, schema)
  }
})

interface Running {
  lines: string[]
  child: ChildProcess
  exited: Promise<number | null>
  waitFor(match: (entry: LogEntry) => boolean, what: string): Promise<LogEntry>
}
type LogEntry = Record<string, unknown> & { msg: string; pid: number; level: number }

/** The real server as a child process, its stdout and stderr read line by line. */
function spawnServer(args: string[], env: Record<string, string>): Running {
  const child = spawn(process.execPath, mainCommand(args), {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const lines: string[] = []
  const waiters: (() => void)[] = []
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => {
      lines.push(line)
      for (const w of waiters.splice(0)) w()
    })
  }
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  return {
    lines,
    child,
    exited,
    async waitFor(match, what) {
      const deadline = Date.now() + SERVER_START_MS
      for (;;) {
        const found = lines.map(parse).find((e) => e && match(e))
        if (found) return found
        assert.equal(child.exitCode, null, `exited before ${what}:\n${lines.join('\n')}`)
        assert.ok(Date.now() < deadline, `no ${what}:\n${lines.join('\n')}`)
        await new Promise<void>((r) => {
          waiters.push(r)
          setTimeout(r, 500)
        })
      }
    },
  }
}

function parse(line: string): LogEntry | null {
  try {
    return JSON.parse(line) as LogEntry
  } catch {
    return null
  }
}

test('serve --workers 2 logs JSON only: the start and the cluster replacing a process', async () => {
  const db = childDatabase()
  const port = await freePort()
  const server = spawnServer(['serve', '--workers', '2'], {
    DATABASE_URL: db.url,
    PORT: String(port),
    HOST: '0.0.0.0',
    LOG_LEVEL: 'info',
    SECRET_KEY: '',
    WORKER_POLL_MS: '50',
  })
  try {
    const start = await server.waitFor((e) => /^starting/.test(e.msg), 'start line')
    assert.equal(start.database, describeDatabaseUrl(db.url))
    assert.ok(
      Array.isArray(start.migrationsApplied) && start.migrationsApplied.length > 0,
      'migrations named',
    )
    assert.equal(start.worker, true)
    assert.equal(start.workers, 2)
    const listening = await server.waitFor((e) => /Server listening/.test(e.msg), 'a process listening')
    // A server process dies: the cluster says so, as JSON, and starts another.
    process.kill(listening.pid, 'SIGKILL')
    const replaced = await server.waitFor((e) => /exited; starting another/.test(e.msg), 'cluster message')
    assert.equal(replaced.pid, start.pid)
    assert.equal(replaced.serverProcess, listening.pid)
    assert.equal(replaced.exit, 'SIGKILL')
    server.child.kill('SIGTERM')
    assert.equal(await server.exited, 0)
    for (const line of server.lines) assert.ok(parse(line), `not a JSON log line: ${line}`)
  } finally {
    if (server.child.exitCode === null) server.child.kill('SIGKILL')
    await db.cleanup()
  }
})

test('serve without SECRET_KEY (the install makes its own) or with one does not warn about it', async () => {
  const db = childDatabase()
  try {
    for (const env of [
      { HOST: '0.0.0.0', SECRET_KEY: '' },
      { HOST: '0.0.0.0', SECRET_KEY: 'a-long-random-production-value' },
    ]) {
      const server = spawnServer(['serve'], {
        DATABASE_URL: db.url,
        PORT: String(await freePort()),
        LOG_LEVEL: 'info',
        WORKER_ENABLED: 'false',
        ...env,
      })
      const start = await server.waitFor((e) => /^starting/.test(e.msg), 'start line')
      assert.equal(start.worker, false)
      await server.waitFor((e) => /Server listening/.test(e.msg), 'listening')
      server.child.kill('SIGTERM')
      assert.equal(await server.exited, 0)
      assert.equal(server.lines.map(parse).filter((e) => e && /SECRET_KEY/.test(e.msg)).length, 0, env.HOST)
    }
  } finally {
    await db.cleanup()
  }
})

test('a database that cannot be reached is reported as such, without its password', async () => {
  const port = await freePort()
  const migrate = spawnServer(['migrate'], {
    DATABASE_URL: `postgres://ops:s3cret-pw@127.0.0.1:${port}/market`,
  })
  assert.equal(await migrate.exited, 1)
  const out = migrate.lines.join('\n')
  assert.match(out, new RegExp(`cannot connect to database postgres://ops@127.0.0.1:${port}/market`))
  assert.doesNotMatch(out, /s3cret-pw/)
  assert.doesNotMatch(out, /migration failed/)
  for (const line of migrate.lines) assert.ok(parse(line), `not a JSON log line: ${line}`)
})
