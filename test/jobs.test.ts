// The durable job queue: transactional enqueue, single execution, retries with backoff, lanes.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { buildTestApp, type TestApp } from './support/app.js'
import { JobQueue, MAIN_LANE, PermanentJobError } from '../src/jobs/queue.js'
import { parseJson } from '../src/db/values.js'

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

describe('job lanes', () => {
  test('a lane runs its jobs several at once, a few per group, and never in the main lane', async () => {
    const lane = 'test.lane'
    const started: string[] = []
    const gates = new Map<string, () => void>()
    let onStart = () => {}
    t.ctx.jobs.defineLane(lane, {
      concurrency: 3,
      groupOf: (p) => (p as { group: string }).group,
      perGroup: 2,
    })
    t.ctx.jobs.define<{ name: string; group: string }>('test.waiting', {
      lane,
      run: (p, job) =>
        new Promise<void>((resolve, reject) => {
          started.push(p.name)
          gates.set(p.name, resolve)
          onStart()
          job.signal.addEventListener('abort', () => reject(new Error('stopped')))
        }),
    })
    // Many jobs of group a queued before those of group b.
    const names = [...Array.from({ length: 100 }, (_, i) => `a${i + 1}`), 'b1', 'b2']
    for (const name of names) {
      await t.ctx.jobs.enqueue(t.ctx.db, 'test.waiting', { name, group: name[0] })
    }
    await t.ctx.jobs.enqueue(t.ctx.db, 'test.record', { name: 'main' })
    ran.length = 0
    const runner = t.ctx.jobs.startLane(lane, 600_000)
    await runner.settled()
    // Oldest first: a1 and a2 fill group a; the other a jobs wait; b1 takes the third place.
    assert.deepEqual(started, ['a1', 'a2', 'b1'])
    assert.equal(runner.running.total, 3)
    // The main lane runs its own job at once, and none of the lane's.
    assert.equal(await t.ctx.jobs.drain(100, MAIN_LANE), 1)
    assert.deepEqual(ran, ['main'])
    // A finished job makes room: the next of the lane starts (a3, group a having room again).
    const fourth = new Promise<void>((resolve) => (onStart = () => started.length === 4 && resolve()))
    gates.get('a1')!()
    await fourth
    assert.deepEqual(started, ['a1', 'a2', 'b1', 'a3'])
    // Stopping aborts the running jobs; they go back to the queue for a later attempt.
    await t.ctx.jobs.stop()
    const rows = await t.ctx.db
      .selectFrom('jobs')
      .select(['payload', 'state', 'attempts', 'last_error'])
      .where('kind', '=', 'test.waiting')
      .where('attempts', '>', 0)
      .orderBy('id')
      .execute()
    assert.deepEqual(
      rows.map((r) => [parseJson<{ name: string }>(r.payload, { name: '' }).name, r.state, r.attempts]),
      [
        ['a1', 'done', 1],
        ['a2', 'queued', 1],
        ['a3', 'queued', 1],
        ['b1', 'queued', 1],
      ],
    )
    assert.match(rows[1]!.last_error ?? '', /stopped/)
    // Their gates are gone with the runner: nothing else in this file may run them.
    await t.ctx.db.deleteFrom('jobs').where('kind', '=', 'test.waiting').execute()
  })

  test('a job that fails for good skips the attempts it has left', async () => {
    failed.length = 0
    t.ctx.jobs.define<{ name: string }>('test.hopeless', {
      maxAttempts: 5,
      run: async () => {
        throw new PermanentJobError('no point in trying again')
      },
      onFailure: async (p) => {
        failed.push(p.name)
      },
    })
    await t.ctx.jobs.enqueue(t.ctx.db, 'test.hopeless', { name: 'hopeless' })
    assert.equal(await t.ctx.jobs.drain(10, MAIN_LANE), 1)
    const row = await t.ctx.db
      .selectFrom('jobs')
      .select(['state', 'attempts', 'last_error'])
      .where('kind', '=', 'test.hopeless')
      .executeTakeFirstOrThrow()
    assert.deepEqual([row.state, row.attempts], ['failed', 1])
    assert.match(row.last_error ?? '', /no point/)
    assert.deepEqual(failed, ['hopeless'])
  })
  test('an attempt that never ends is given up at its timeout and retried later', async () => {
    let aborted = false
    t.ctx.jobs.define<{ name: string }>('test.stuck', {
      maxAttempts: 3,
      timeoutMs: 50,
      run: async (_p, job) => {
        job.signal.addEventListener('abort', () => (aborted = true))
        await new Promise(() => undefined) // ignores its signal
      },
    })
    await t.ctx.jobs.enqueue(t.ctx.db, 'test.stuck', { name: 'stuck' })
    assert.equal(await t.ctx.jobs.drain(1, MAIN_LANE), 1)
    const row = await t.ctx.db
      .selectFrom('jobs')
      .select(['state', 'attempts', 'last_error'])
      .where('kind', '=', 'test.stuck')
      .executeTakeFirstOrThrow()
    assert.deepEqual([row.state, row.attempts], ['queued', 1])
    assert.match(row.last_error ?? '', /timed out after 50 ms/)
    assert.equal(aborted, true)
    await t.ctx.db.deleteFrom('jobs').where('kind', '=', 'test.stuck').execute()
  })
})
