// Runs the real server as a child process (for crash, multi-process and socket tests).
import { spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'
import { randomBytes } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { AssertionError } from 'node:assert'
import { TEST_DATABASE_URL } from './app.js'
import { contract } from './contract-watch.js'
import { formatViolation } from '../contract/contract.js'
import { dialectOf, dropSchema } from '../../src/db/database.js'
import { mainCommand } from './main-command.js'

/**
 * How long a spawned server may take to answer: run from the sources (a test file run on its own,
 * test/support/main-command.ts) tsx compiles it on start, which takes long on a machine busy with
 * other work.
 */
export const SERVER_START_MS = 180_000

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.listen(0, '127.0.0.1', () => {
      const a = s.address()
      s.close(() => (typeof a === 'object' && a ? resolve(a.port) : reject(new Error('no port'))))
    })
  })
}

/** A database URL for child processes: a SQLite file, or a fresh PostgreSQL schema. */
export function childDatabase(): { url: string; cleanup: () => Promise<void> } {
  if (dialectOf(TEST_DATABASE_URL) === 'postgres') {
    const schema = `c_${randomBytes(6).toString('hex')}`
    const sep = TEST_DATABASE_URL.includes('?') ? '&' : '?'
    return {
      url: `${TEST_DATABASE_URL}${sep}schema=${schema}`,
      cleanup: () => dropSchema(TEST_DATABASE_URL, schema),
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'marketplace-server-'))
  return { url: `sqlite:${join(dir, 'db.sqlite')}`, cleanup: async () => undefined }
}

export interface ServerProcess {
  url: string
  child: ChildProcess
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

/** `nodeArgs`: more options for node, after tsx (a module to preload, say). */
export async function startServer(
  env: Record<string, string>,
  nodeArgs: string[] = [],
): Promise<ServerProcess> {
  const port = await freePort()
  const child = spawn(process.execPath, mainCommand(['serve'], nodeArgs), {
    env: { ...process.env, LOG_LEVEL: 'error', ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()))
  const url = `http://127.0.0.1:${port}`
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const deadline = Date.now() + SERVER_START_MS
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited early: ${stderr}`)
    try {
      const r = await fetch(`${url}/health/`)
      if (r.ok) break
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`server did not start: ${stderr}`)
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  return {
    url,
    child,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal)
      return exited
    },
  }
}

/** `fetch` for a test talking to a server process: an answer that breaks the wire contract
 * (test/contract/) rejects, naming the operation, the pointer, the rule and the value. */
export async function checkedFetch(url: string, init?: RequestInit): Promise<Response> {
  const r = await fetch(url, init)
  const violations = contract().check({
    method: (init?.method ?? 'GET').toUpperCase(),
    url: new URL(url).pathname + new URL(url).search,
    status: r.status,
    contentType: r.headers.get('content-type') ?? '',
    body: await r.clone().text(),
  })
  if (violations.length) throw new AssertionError({ message: violations.map(formatViolation).join('\n') })
  return r
}
