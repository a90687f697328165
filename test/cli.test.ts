// The command line and the bootstrap token, as an operator uses them.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { sharedTestApp } from './support/app.js'
import { client } from './support/client.js'
import { childDatabase } from './support/server.js'
import { ensureBootstrapStaff } from '../src/areas/directory/service.js'
import { createUserWithToken, seedDemo } from '../src/seed.js'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { mainCommand } from './support/main-command.js'

const run = promisify(execFile)
const t = sharedTestApp()

/** The command line on this database: what it prints. */
const cliOn =
  (databaseUrl: string) =>
  async (...args: string[]) =>
    (
      await run(process.execPath, mainCommand(args), {
        env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' },
      })
    ).stdout

test('BOOTSTRAP_STAFF_TOKEN makes a staff admin whose token works, idempotently', async () => {
  await ensureBootstrapStaff(t.ctx, 'bootstrap-key-1')
  await ensureBootstrapStaff(t.ctx, 'bootstrap-key-1')
  const me = await client(t.app, 'bootstrap-key-1').get('/api/users/me/')
  assert.equal(me.status, 200)
  assert.equal(me.body.username, 'admin')
  assert.equal(me.body.is_staff, true)
  const admins = await t.ctx.db.selectFrom('users').select('id').where('username', '=', 'admin').execute()
  assert.equal(admins.length, 1)
  const tokens = await t.ctx.db
    .selectFrom('tokens')
    .select('id')
    .where('user_id', '=', admins[0]!.id)
    .execute()
  assert.equal(tokens.length, 1)
})

test('create-user and seed-demo give working tokens', async () => {
  const token = await createUserWithToken(t.ctx, { username: 'scripted', isStaff: true })
  assert.equal((await client(t.app, token).get('/api/customers/')).status, 200)
  const demo = (await seedDemo(t.ctx)) as { tokens: Record<string, string>; project: string }
  const owner = await client(t.app, demo.tokens['demo-owner']).get('/api/projects/')
  assert.equal(owner.status, 200)
  assert.ok(owner.body.some((p: { uuid: string }) => p.uuid === demo.project))
  // Seeding twice does not duplicate the data set.
  await seedDemo(t.ctx)
  const projects = await t.ctx.db
    .selectFrom('projects')
    .select('id')
    .where('name', '=', 'Demo research project')
    .execute()
  assert.equal(projects.length, 1)
})

test('npm run cli -- create-user prints a token that authenticates', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'marketplace-cli-'))
  const url = `sqlite:${join(dir, 'cli.sqlite')}`
  try {
    const token = (await cliOn(url)('create-user', '--username', 'ops', '--staff')).trim()
    assert.match(token, /^[0-9a-f]{40}$/)
    const app = await buildApp(loadConfig({}, { databaseUrl: url, logLevel: 'silent', workerEnabled: false }))
    try {
      const me = await client(app, token).get('/api/users/me/')
      assert.equal(me.status, 200)
      assert.equal(me.body.username, 'ops')
      assert.equal(me.body.is_staff, true)
    } finally {
      await app.close()
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('migrate names what it applies; migrate --list shows what exists and what is pending', async () => {
  const db = childDatabase()
  const cli = cliOn(db.url)
  try {
    const names = readdirSync('src/db/migrations')
      .filter((f) => f.endsWith('.ts') && !f.startsWith('_') && !f.includes('.test.'))
      .map((f) => f.replace(/\.ts$/, ''))
      .sort()
    assert.ok(names.length > 1)
    const before = await cli('migrate', '--list')
    for (const name of names) assert.match(before, new RegExp(`^pending  ${name}$`, 'm'))
    assert.match(before, new RegExp(`${names.length} migration\\(s\\), ${names.length} pending`))
    const applied = await cli('migrate')
    assert.deepEqual(
      applied
        .split('\n')
        .filter((l) => l.startsWith('applied  '))
        .map((l) => l.slice('applied  '.length)),
      names,
    )
    assert.doesNotMatch(applied, /password|:\/\/[^/@]*:[^/@]*@/)
    const after = await cli('migrate', '--list')
    for (const name of names) assert.match(after, new RegExp(`^applied  ${name}$`, 'm'))
    assert.match(after, /, 0 pending/)
    assert.match(await cli('migrate'), /^no pending migrations$/m)
  } finally {
    await db.cleanup()
  }
})

test('jobs failed lists failed jobs; jobs retry --all queues them again', async () => {
  const db = childDatabase()
  const cli = cliOn(db.url)
  try {
    const app = await buildApp(
      loadConfig({}, { databaseUrl: db.url, logLevel: 'silent', workerEnabled: false }),
    )
    try {
      // A kind no process knows fails at once.
      await app.ctx.jobs.enqueue(app.ctx.db, 'ops.unknown-kind', {})
      await app.ctx.jobs.drain()
    } finally {
      await app.close()
    }
    const listed = await cli('jobs', 'failed')
    assert.match(
      listed,
      /^\d+\tops\.unknown-kind\tattempts=1\tfinished=\S+\tno handler for job kind ops\.unknown-kind$/m,
    )
    assert.match(listed, /^1 failed job\(s\)$/m)
    await assert.rejects(cli('jobs', 'retry', '999999'), /no failed job with id 999999/)
    assert.match(await cli('jobs', 'retry', '--all'), /^1 job\(s\) queued again$/m)
    assert.match(await cli('jobs', 'failed'), /^0 failed job\(s\)$/m)
  } finally {
    await db.cleanup()
  }
})
