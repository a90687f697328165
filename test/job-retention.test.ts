// Operating the job queue: finished jobs deleted after the retention period (in batches), failed
// jobs listed and queued again, and the figures /metrics reports about the queue.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { buildTestApp, type TestApp } from './support/app.js'

const DAY = 86_400_000
let t: TestApp
let failing = true

before(async () => {
  t = await buildTestApp()
  t.ctx.jobs.define('ops.ok', { run: async () => undefined })
  t.ctx.jobs.define('ops.broken', {
    maxAttempts: 1,
    run: async () => {
      if (failing) throw new Error('backend said no\nstack line')
    },
  })
})
after(async () => {
  await t.close()
})

async function states(): Promise<Record<string, number>> {
  const rows = await t.ctx.db
    .selectFrom('jobs')
    .select(['state', 'kind'])
    .where('kind', 'like', 'ops.%')
    .execute()
  const out: Record<string, number> = {}
  for (const r of rows) out[`${r.kind}:${r.state}`] = (out[`${r.kind}:${r.state}`] ?? 0) + 1
  return out
}

test('finished jobs older than the retention period are deleted in batches; newer and pending ones stay', async () => {
  await t.ctx.db.deleteFrom('jobs').execute()
  for (let i = 0; i < 5; i++) await t.ctx.jobs.enqueue(t.ctx.db, 'ops.ok', { i })
  await t.ctx.jobs.enqueue(t.ctx.db, 'ops.broken', {})
  assert.equal(await t.ctx.jobs.drain(), 6)
  t.clock.advance(2 * DAY)
  for (let i = 0; i < 3; i++) await t.ctx.jobs.enqueue(t.ctx.db, 'ops.ok', { i })
  await t.ctx.jobs.drain()
  await t.ctx.jobs.enqueue(
    t.ctx.db,
    'ops.ok',
    { later: true },
    { runAt: new Date(t.clock.now().getTime() + 30 * DAY) },
  )
  t.clock.advance(5 * DAY + 1000)
  // 7 days after the first six finished, 5 days after the next three.
  assert.equal(await t.ctx.jobs.purgeFinished(7, 2), 6)
  assert.deepEqual(await states(), { 'ops.ok:done': 3, 'ops.ok:queued': 1 })
  assert.equal(await t.ctx.jobs.purgeFinished(7, 2), 0)
  t.clock.advance(2 * DAY)
  assert.equal(await t.ctx.jobs.purgeFinished(7), 3)
  assert.deepEqual(await states(), { 'ops.ok:queued': 1 })
  // A retention beyond any date deletes nothing (and is no error).
  assert.equal(await t.ctx.jobs.purgeFinished(1e15), 0)
})

test('failed jobs are listed with their error, and queued again one by one or all at once', async () => {
  await t.ctx.db.deleteFrom('jobs').execute()
  failing = true
  for (let i = 0; i < 3; i++) await t.ctx.jobs.enqueue(t.ctx.db, 'ops.broken', { i })
  await t.ctx.jobs.drain()
  const failed = await t.ctx.jobs.listFailed()
  assert.equal(failed.length, 3)
  assert.deepEqual(
    failed.map((j) => [j.kind, j.attempts, j.last_error]),
    Array(3).fill(['ops.broken', 1, 'backend said no']),
  )
  assert.equal(await t.ctx.jobs.retryFailed(failed[0]!.id), 1)
  assert.equal(await t.ctx.jobs.retryFailed(failed[0]!.id), 0, 'no longer failed')
  assert.deepEqual(await states(), { 'ops.broken:failed': 2, 'ops.broken:queued': 1 })
  failing = false
  assert.equal(await t.ctx.jobs.drain(), 1)
  assert.deepEqual(await states(), { 'ops.broken:failed': 2, 'ops.broken:done': 1 })
  assert.equal(await t.ctx.jobs.retryFailed(), 2)
  assert.equal(await t.ctx.jobs.drain(), 2)
  assert.deepEqual(await states(), { 'ops.broken:done': 3 })
})

test('queue figures: queued and failed by kind, and the age of the oldest due job', async () => {
  await t.ctx.db.deleteFrom('jobs').execute()
  failing = true
  await t.ctx.jobs.enqueue(t.ctx.db, 'ops.broken', {})
  await t.ctx.jobs.drain()
  await t.ctx.jobs.enqueue(t.ctx.db, 'ops.ok', { a: 1 })
  t.clock.advance(90_000)
  await t.ctx.jobs.enqueue(t.ctx.db, 'ops.ok', { a: 2 })
  await t.ctx.jobs.enqueue(
    t.ctx.db,
    'ops.ok',
    { later: 1 },
    { runAt: new Date(t.clock.now().getTime() + DAY) },
  )
  const stats = await t.ctx.jobs.stats()
  assert.deepEqual(Object.fromEntries(stats.queued), { 'ops.ok': 3 })
  assert.deepEqual(Object.fromEntries(stats.failed), { 'ops.broken': 1 })
  assert.equal(stats.oldestDueAgeSeconds, 90)
})
