// The outbox's positions: every committed event gets one, in the order the events became
// visible, with no gap a reader could ever see filled later; a rolled-back one gets none. On
// PostgreSQL, with writers committing out of the order they wrote in, and concurrent readers.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { buildTestApp, sharedTestApp } from './support/app.js'
import {
  emitEvent,
  eventsAfter,
  onEventsCommitted,
  sequenceEvents,
  type StoredEvent,
} from '../src/areas/events/service.js'
import type { AppContext } from '../src/context.js'

const ON_POSTGRES = (process.env.TEST_DATABASE_URL ?? '').startsWith('postgres')
// On PostgreSQL the poll (a backstop there) is made too slow to matter: wake-ups must come from
// LISTEN/NOTIFY.
const t = sharedTestApp(async () => ({}), ON_POSTGRES ? { eventPollMs: 600_000 } : { eventPollMs: 10 })

function event(ctx: AppContext, n: number) {
  return {
    type: 'test.thing.changed',
    objectType: 'thing',
    objectUuid: ctx.newUuid(),
    path: `/api/things/${n}/`,
    data: { n },
  }
}

/** A promise and its resolver: a transaction waits on it before it commits. */
function latch() {
  let open!: () => void
  const opened = new Promise<void>((r) => (open = r))
  return { open, opened }
}

/**
 * A transaction that writes event `n` and waits to commit: `commit` lets it, `committed` is its end.
 * Resolves once the event is written.
 */
async function writtenNotCommitted(ctx: AppContext, n: number) {
  const slow = latch()
  const wrote = latch()
  const committed = ctx.db.transaction().execute(async (trx) => {
    await emitEvent(ctx, trx, event(ctx, n))
    wrote.open()
    await slow.opened
  })
  await wrote.opened
  return { commit: slow.open, committed }
}

async function all(ctx: AppContext, after = 0): Promise<StoredEvent[]> {
  const out: StoredEvent[] = []
  for (;;) {
    const batch = await eventsAfter(ctx, after, 100)
    out.push(...batch)
    if (batch.length < 100) return out
    after = batch[batch.length - 1]!.position
  }
}

test('a rolled-back change writes no event; committed ones get consecutive positions', async () => {
  const before = await all(t.ctx)
  const start = before.length ? before[before.length - 1]!.position : 0
  await assert.rejects(
    t.ctx.db.transaction().execute(async (trx) => {
      await emitEvent(t.ctx, trx, event(t.ctx, -1))
      throw new Error('rolled back')
    }),
  )
  for (let i = 0; i < 3; i++)
    await t.ctx.db.transaction().execute((trx) => emitEvent(t.ctx, trx, event(t.ctx, i)))
  const after = await all(t.ctx, start)
  assert.deepEqual(
    after.map((e) => e.envelope.data.n),
    [0, 1, 2],
  )
  assert.deepEqual(
    after.map((e) => e.position),
    [start + 1, start + 2, start + 3],
  )
  assert.equal(after[0]!.envelope.specversion, '1.0')
  assert.equal(after[0]!.objectType, 'thing')
})

test('a transaction that writes first and commits last gets the later position (PostgreSQL)', async (tc) => {
  if (t.dialect !== 'postgres') return tc.skip('SQLite runs one writing transaction at a time')
  const start = (await all(t.ctx)).at(-1)?.position ?? 0
  const first = await writtenNotCommitted(t.ctx, 1)
  await t.ctx.db.transaction().execute((trx) => emitEvent(t.ctx, trx, event(t.ctx, 2)))
  // The second committed first: it is the one visible, at the next position.
  const seen = await all(t.ctx, start)
  assert.deepEqual(
    seen.map((e) => [e.position, e.envelope.data.n]),
    [[start + 1, 2]],
  )
  first.commit()
  await first.committed
  const now = await all(t.ctx, start)
  assert.deepEqual(
    now.map((e) => [e.position, e.envelope.data.n]),
    [
      [start + 1, 2],
      [start + 2, 1],
    ],
  )
})

test('a backlog longer than a batch is numbered in the order written, a batch after another (PostgreSQL)', async (tc) => {
  if (t.dialect !== 'postgres') return tc.skip('SQLite numbers each event as it is written')
  await sequenceEvents(t.ctx)
  const start = (await all(t.ctx)).at(-1)?.position ?? 0
  // Written first, committed after the others: the pass that numbers them cannot see it.
  const first = await writtenNotCommitted(t.ctx, 0)
  for (let n = 1; n <= 25; n++)
    await t.ctx.db.transaction().execute((trx) => emitEvent(t.ctx, trx, event(t.ctx, n)))
  const numbered = async () =>
    (
      await t.ctx.db
        .selectFrom('outbox_events')
        .select(['position', 'envelope'])
        .where('position', '>', start)
        .orderBy('position')
        .execute()
    ).map((r) => {
      const envelope = typeof r.envelope === 'string' ? JSON.parse(r.envelope) : r.envelope
      return [Number(r.position) - start, envelope.data.n]
    })
  // Three batches of at most ten.
  await sequenceEvents(t.ctx, 10)
  const ordered = Array.from({ length: 25 }, (_, i) => [i + 1, i + 1])
  assert.deepEqual(await numbered(), ordered)
  first.commit()
  await first.committed
  await sequenceEvents(t.ctx, 10)
  assert.deepEqual(await numbered(), [...ordered, [26, 0]])
})

test('concurrent writers and readers: a reader only ever sees every position up to the highest it sees', async () => {
  const start = (await all(t.ctx)).at(-1)?.position ?? 0
  const writers = t.dialect === 'postgres' ? 3 : 4
  const rounds = 8
  let done = false
  const observed: Map<number, string> = new Map()
  const violations: string[] = []
  let wakeUps = 0
  const unsubscribe = onEventsCommitted(t.ctx, () => wakeUps++)
  const reader = (async () => {
    while (!done) {
      const seen = await all(t.ctx, start)
      seen.forEach((e, i) => {
        if (e.position !== start + i + 1) violations.push(`gap before ${e.position}`)
        const was = observed.get(e.position)
        if (was && was !== e.envelope.id) violations.push(`position ${e.position} changed its event`)
        observed.set(e.position, e.envelope.id)
      })
      // Positions seen once stay seen (none appears later below the highest seen).
      const highest = Math.max(start, ...observed.keys())
      if (seen.length !== highest - start) violations.push(`saw ${seen.length} of ${highest - start}`)
    }
  })()
  // Each round: writers write, then commit in the reverse order of their writes.
  for (let r = 0; r < rounds; r++) {
    const gates = Array.from({ length: writers }, () => latch())
    const written = Array.from({ length: writers }, () => latch())
    const txs = gates.map((gate, w) =>
      t.ctx.db.transaction().execute(async (trx) => {
        await emitEvent(t.ctx, trx, event(t.ctx, r * 100 + w))
        await emitEvent(t.ctx, trx, event(t.ctx, r * 100 + w + 50))
        written[w]!.open()
        await gate.opened
      }),
    )
    if (t.dialect === 'postgres') {
      await Promise.all(written.map((w) => w.opened))
      for (let w = writers - 1; w >= 0; w--) {
        gates[w]!.open()
        await txs[w]
        await sequenceEvents(t.ctx)
      }
    } else {
      gates.forEach((g) => g.open())
      await Promise.all(txs)
    }
  }
  done = true
  await reader
  unsubscribe()
  assert.deepEqual(violations, [])
  const final = await all(t.ctx, start)
  assert.equal(final.length, writers * rounds * 2)
  assert.deepEqual(
    final.map((e) => e.position),
    final.map((_, i) => start + i + 1),
  )
  // The two events of one transaction are next to each other, in the order written.
  for (let i = 0; i < final.length; i += 2)
    assert.equal(Number(final[i + 1]!.envelope.data.n), Number(final[i]!.envelope.data.n) + 50)
})

test('a commit in another app on the database wakes this one', async () => {
  const other = await buildTestApp({}, undefined, t)
  try {
    const start = (await all(t.ctx)).at(-1)?.position ?? 0
    let woken!: () => void
    const wake = new Promise<void>((r) => (woken = r))
    const unsubscribe = onEventsCommitted(t.ctx, async () => {
      if ((await eventsAfter(t.ctx, start, 10)).length) woken()
    })
    // Written through the other app: only the database tells this one (a commit before this
    // app listens is found by the look it takes once it listens).
    await other.ctx.db.transaction().execute((trx) => emitEvent(other.ctx, trx, event(other.ctx, 7)))
    await wake
    unsubscribe()
  } finally {
    await other.close()
  }
})
