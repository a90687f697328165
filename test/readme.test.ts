// The README's walkthrough, run as written: its seed command, then its block of curl commands
// against a real server process (on the test database), and what each `# →` line says the
// command before it prints. A README that no longer gets an order to `done` fails here.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile, execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { promisify } from 'node:util'
import { childDatabase, startServer, type ServerProcess } from './support/server.js'
import { mainCommand } from './support/main-command.js'

const run = promisify(execFile)
const README = readFileSync('README.md', 'utf8')
/** The address the README's commands use. */
const README_API = 'http://127.0.0.1:8000'

/** The first fenced `sh` block after a marker comment. */
function blockAfter(text: string, marker: string): string {
  const at = text.indexOf(`<!-- ${marker}`)
  assert.ok(at >= 0, `README.md has no <!-- ${marker} marker`)
  const m = /```sh\n([\s\S]*?)```/.exec(text.slice(at))
  assert.ok(m, `no sh block after <!-- ${marker}`)
  return m[1]!
}

/** What the block says it prints: its `# → value` lines, in order. */
function expectedOutput(block: string): string[] {
  return [...block.matchAll(/^# → (.*)$/gm)].map((m) => m[1]!)
}

let server: ServerProcess
let db: ReturnType<typeof childDatabase>
before(async () => {
  db = childDatabase()
  const env = { ...process.env, DATABASE_URL: db.url, LOG_LEVEL: 'silent' }
  // In the README's order: the server runs, then the seed block fills its database from a second
  // process (`npm run cli --` runs the compiled program, the same as src/main.ts).
  server = await startServer({ DATABASE_URL: db.url })
  const seed = blockAfter(README, 'walkthrough:seed').trim()
  assert.equal(seed, 'npm run cli -- seed-demo')
  await run(process.execPath, mainCommand(['seed-demo']), { env })
})
after(async () => {
  await server?.stop()
  await db?.cleanup()
})

test('the README walkthrough gets an order to done, printing what it says', async () => {
  for (const tool of ['curl', 'jq', 'bash']) {
    assert.doesNotThrow(() => execFileSync('sh', ['-c', `command -v ${tool}`]), `${tool} is needed`)
  }
  const block = blockAfter(README, 'walkthrough -->')
  assert.ok(block.includes(README_API), 'the block talks to the documented address')
  const expected = expectedOutput(block)
  assert.deepEqual(expected.slice(-4), ['200', 'done', 'my-first-resource', 'OK'])
  const script = block.split(README_API).join(server.url)
  const { stdout } = await run('bash', ['-e', '-u', '-o', 'pipefail', '-c', script], { timeout: 60_000 })
  assert.deepEqual(stdout.trim().split('\n'), expected)
})

test('the marker helpers read blocks and expectations', () => {
  const text = 'x\n<!-- m -->\n```sh\necho a\n# → a\n```\n'
  assert.equal(blockAfter(text, 'm -->'), 'echo a\n# → a\n')
  assert.deepEqual(expectedOutput('echo a\n# → a\necho b\n# → b\n'), ['a', 'b'])
})
