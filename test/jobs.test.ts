// The durable job queue: transactional enqueue, single execution, retries with backoff.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { buildTestApp, type TestApp } from './support/app.js'
import { JobQueue } from '../src/jobs/queue.js'

let t: TestApp
const ran: string[] = []
let failuresLeft = 0
const failed: string[] = []

before(async () => {
  t = await buildTestApp()
  t.ctx.jobs.define<{ name: string }>('test.record', {
    run: async (p) => {
      ran.push(p.name)
    },
  })
  t.ctx.jobs.define<{ name: string }>('test.flaky', {
    maxAttempts: 3,
    backoffMs: 1000,
    run: async (p) => {
      if (failuresLeft > 0) {
        failuresLeft--
        throw new Error('backend unavailable')
      }
      ran.push(p.name)
    },
    onFailure: async (p) => {
      failed.push(p.name)
    },
  })
})
after(async () => {
  await t.close()
})

describe('job queue', () => {
  test('a job enqueued in a rolled-back transaction never runs', async () => {
    ran.length = 0
    await assert.rejects(
      t.ctx.db.transaction().execute(async (trx) => {
        await t.ctx.jobs.enqueue(trx, 'test.record', { name: 'rolled-back' })
        throw new Error('abort')
      }),
    )
    await t.ctx.db.transaction().execute(async (trx) => {
      await t.ctx.jobs.enqueue(trx, 'test.record', { name: 'committed' })
    })
    await t.ctx.jobs.drain()
    assert.deepEqual(ran, ['committed'])
  })

  test('two workers draining at once never run one job twice', async () => {
    ran.length = 0
    for (let i = 0; i < 40; i++) await t.ctx.jobs.enqueue(t.ctx.db, 'test.record', { name: `job-${i}` })
    const second = new JobQueue(t.ctx.db, t.ctx.dialect, t.clock.now, t.ctx.log)
    second.define<{ name: string }>('test.record', {
      run: async (p) => {
        ran.push(p.name)
      },
    })
    const [a, b] = await Promise.all([t.ctx.jobs.drain(), second.drain()])
    assert.equal(a + b, 40)
    assert.equal(ran.length, 40)
    assert.equal(new Set(ran).size, 40)
  })

  test('a failing job is retried with backoff, then succeeds', async () => {
    ran.length = 0
    failuresLeft = 1
    await t.ctx.jobs.enqueue(t.ctx.db, 'test.flaky', { name: 'flaky' })
    assert.equal(await t.ctx.jobs.drain(), 1)
    assert.deepEqual(ran, [])
    // Not due yet: the retry waits for its backoff.
    assert.equal(await t.ctx.jobs.drain(), 0)
    t.clock.advance(1500)
    await t.ctx.jobs.drain()
    assert.deepEqual(ran, ['flaky'])
  })

  test('after the last attempt the job is failed and its failure handler runs once', async () => {
    failed.length = 0
    failuresLeft = 10
    await t.ctx.jobs.enqueue(t.ctx.db, 'test.flaky', { name: 'doomed' })
    for (let i = 0; i < 5; i++) {
      await t.ctx.jobs.drain()
      t.clock.advance(10_000)
    }
    assert.deepEqual(failed, ['doomed'])
    const row = await t.ctx.db
      .selectFrom('jobs')
      .select(['state', 'attempts', 'last_error'])
      .where('kind', '=', 'test.flaky')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow()
    assert.equal(row.state, 'failed')
    assert.equal(row.attempts, 3)
    assert.match(row.last_error ?? '', /backend unavailable/)
  })

  test('a job left running by a crashed worker is picked up again after its lease', async () => {
    ran.length = 0
    await t.ctx.jobs.enqueue(t.ctx.db, 'test.record', { name: 'orphan' })
    const claimed = await t.ctx.jobs.claim()
    assert.ok(claimed)
    // The claiming worker "dies" here; nothing runs until the lease expires.
    assert.equal(await t.ctx.jobs.drain(), 0)
    t.clock.advance(t.ctx.jobs.leaseMs + 1000)
    await t.ctx.jobs.drain()
    assert.deepEqual(ran, ['orphan'])
  })

  test('looking for jobs when none is due writes nothing', async () => {
    await t.ctx.jobs.drain()
    // Past the lease sweep's interval: the first look sweeps, the next ones only read.
    t.clock.advance(t.ctx.jobs.leaseMs)
    assert.equal(await t.ctx.jobs.drain(), 0)
    const stats = t.database.commitStats
    const before = stats && { ...stats() }
    for (let i = 0; i < 5; i++) assert.equal(await t.ctx.jobs.claim(), null)
    if (stats) assert.deepEqual({ ...stats() }, before, 'no commit on SQLite')
    // A job queued meanwhile is still found at once.
    await t.ctx.jobs.enqueue(t.ctx.db, 'test.record', { name: 'found' })
    ran.length = 0
    assert.equal(await t.ctx.jobs.drain(), 1)
    assert.deepEqual(ran, ['found'])
  })

  test('a job of an unknown kind is marked failed, not retried forever', async () => {
    await t.ctx.jobs.enqueue(t.ctx.db, 'test.nobody-handles-this', {})
    await t.ctx.jobs.drain()
    const row = await t.ctx.db
      .selectFrom('jobs')
      .select(['state'])
      .where('kind', '=', 'test.nobody-handles-this')
      .executeTakeFirstOrThrow()
    assert.equal(row.state, 'failed')
  })
})
