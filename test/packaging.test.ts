// The built tree as an operator installs it (`npm ci --omit=dev`: no compiler, no tsx) starts with
// `npm start`, answers /health/, and a SIGTERM sent to npm stops the server: it finishes what is
// in flight and exits, leaving no process behind.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync, spawn } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { childDatabase, freePort, SERVER_START_MS } from './support/server.js'

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Every process below pid (a shell between npm and node included). */
function descendantsOf(pid: number): number[] {
  let children: number[] = []
  try {
    children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .map((s) => Number(s.trim()))
      .filter((n) => n > 0)
  } catch {
    // none
  }
  return children.flatMap((c) => [c, ...descendantsOf(c)])
}

test('a built tree installed without dev dependencies runs under npm start and stops on SIGTERM', async () => {
  execFileSync(process.execPath, ['scripts/ensure-build.mjs'], { stdio: 'inherit' })
  const dir = mkdtempSync(join(tmpdir(), 'marketplace-omit-dev-'))
  const db = childDatabase()
  let started: number[] = []
  try {
    for (const f of ['package.json', 'package-lock.json', 'dist'])
      cpSync(f, join(dir, f), { recursive: true })
    mkdirSync(join(dir, 'scripts'))
    for (const f of ['ensure-build.mjs', 'prepare.mjs']) cpSync(join('scripts', f), join(dir, 'scripts', f))
    // From the npm cache this install just filled. Scripts are skipped only so that the native
    // SQLite module is copied from this tree instead of compiled again (minutes); the install's
    // own script (prepare) is run by hand below, as npm would.
    execFileSync(npm, ['ci', '--omit=dev', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], {
      cwd: dir,
      stdio: 'ignore',
    })
    cpSync('node_modules/better-sqlite3/build', join(dir, 'node_modules/better-sqlite3/build'), {
      recursive: true,
    })
    for (const dev of ['typescript', 'tsx', 'eslint']) {
      assert.equal(
        existsSync(join(dir, 'node_modules', dev)),
        false,
        `${dev} installed without dev dependencies`,
      )
    }
    execFileSync(process.execPath, ['scripts/prepare.mjs'], { cwd: dir, stdio: 'ignore' })

    const port = await freePort()
    const child = spawn(npm, ['start'], {
      cwd: dir,
      env: { ...process.env, DATABASE_URL: db.url, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (d: Buffer) => (output += d.toString()))
    child.stderr.on('data', (d: Buffer) => (output += d.toString()))
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    const deadline = Date.now() + SERVER_START_MS
    let health: { status: string } | null = null
    while (!health) {
      assert.equal(child.exitCode, null, `npm start exited: ${output}`)
      assert.ok(Date.now() < deadline, `the server did not answer: ${output}`)
      try {
        const r = await fetch(`http://127.0.0.1:${port}/health/`)
        if (r.ok) health = (await r.json()) as { status: string }
      } catch {
        await new Promise((r) => setTimeout(r, 100))
      }
    }
    assert.equal(health.status, 'ok')
    const servers = descendantsOf(child.pid!)
    started = servers
    assert.ok(servers.length > 0, 'npm start runs the server as its child')

    child.kill('SIGTERM')
    const code = await exited
    assert.match(output, /shutting down: finishing in-flight requests/)
    assert.equal(code, 0, output)
    for (const pid of servers) {
      // The server exits with npm (a process is reaped asynchronously: wait for it, bounded).
      for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50))
      assert.equal(alive(pid), false, `server process ${pid} left running after npm exited`)
    }
    child.stdout.destroy()
    child.stderr.destroy()
  } finally {
    // A server left behind (the failure this test looks for) is stopped, so the run can end.
    for (const pid of started) if (alive(pid)) process.kill(pid, 'SIGKILL')
    rmSync(dir, { recursive: true, force: true })
    await db.cleanup()
  }
})
