// Durable job queue in the application database. A job row is inserted in the same transaction
// as the change that needs it, so a rolled-back change never runs its job and a committed one is
// never lost. Workers claim one job at a time with a conditional UPDATE (FOR UPDATE SKIP LOCKED on
// PostgreSQL), so two workers never run one job twice.
//
// Jobs run in lanes: the main lane, one job at a time per process, and lanes of their own for
// kinds that wait on the outside world (see lane.ts), so those never hold up the main lane.
import { hostname } from 'node:os'
import { sql, type Kysely, type Transaction } from 'kysely'
import type { FastifyBaseLogger } from 'fastify'
import type { DB } from '../db/tables.js'
import type { Dialect } from '../db/database.js'
import { parseJson, toJson } from '../db/values.js'
import { insertReturningId } from '../db/compiled.js'
import { settledBy, withDeadline } from './deadline.js'
import { LaneRunner, type LaneOptions } from './lane.js'

/** The lane of every kind that names no other. */
export const MAIN_LANE = 'main'

/** Thrown by a job to fail at once, without the attempts it has left (e.g. its time is up). */
export class PermanentJobError extends Error {}

export interface JobContext {
  /** The job's attempt number, from 1. */
  attempt: number
  isLastAttempt: boolean
  jobId: number
  /** Aborted when the worker stops: a job waiting on the network gives up (and is retried). */
  signal: AbortSignal
}

export interface JobDefinition<P = any> {
  run: (payload: P, ctx: JobContext) => Promise<void>
  /** Called once when the last attempt failed (mark the target erred, etc.). */
  onFailure?: (payload: P, error: unknown) => Promise<void>
  maxAttempts?: number
  /** Base backoff in ms; attempt n waits base * 2^(n-1), capped at 5 minutes. */
  backoffMs?: number
  /** The lane whose loop runs this kind (default: the main lane). */
  lane?: string
  /**
   * Longest one attempt may take: then its signal aborts and the attempt counts as failed, even
   * if the work itself does not stop, so it never holds its lane longer (default: no limit).
   */
  timeoutMs?: number
}

export interface EnqueueOptions {
  runAt?: Date
  maxAttempts?: number
}

type Db = Kysely<DB> | Transaction<DB>

export interface JobRow {
  id: number
  kind: string
  payload: unknown
  attempts: number
  max_attempts: number
  /** Its group in its lane (see LaneOptions.groupOf), or null. */
  group_key: string | null
}

export class JobQueue {
  private readonly defs = new Map<string, JobDefinition>()
  private readonly workerId = `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`
  private timer: NodeJS.Timeout | null = null
  private running = false
  private stopping = false
  private active: Promise<unknown> = Promise.resolve()
  /** A job whose lease is older than this is considered abandoned by a crashed worker. */
  readonly leaseMs = 5 * 60 * 1000

  constructor(
    private readonly db: Kysely<DB>,
    private readonly dialect: Dialect,
    private readonly clock: () => Date,
    private readonly log: FastifyBaseLogger,
  ) {}

  define<P>(kind: string, def: JobDefinition<P>): void {
    if (this.defs.has(kind)) throw new Error(`job kind ${kind} defined twice`)
    this.defs.set(kind, def as JobDefinition)
  }

  /**
   * A job that runs every `everyMs`: each run queues the next when it ends (one attempt; a failed
   * run is tried again at the next). `queuePeriodic` queues the first.
   */
  definePeriodic(kind: string, everyMs: number, run: () => Promise<void>): void {
    this.define(kind, {
      maxAttempts: 1,
      run: async () => {
        try {
          await run()
        } finally {
          await this.enqueue(this.db, kind, {}, { runAt: new Date(this.clock().getTime() + everyMs) })
        }
      },
    })
  }

  /** Queues a periodic job now unless one is queued or running (a second one, from a race, only runs twice). */
  async queuePeriodic(kind: string): Promise<void> {
    const pending = await this.db
      .selectFrom('jobs')
      .select('id')
      .where('kind', '=', kind)
      .where('state', 'in', ['queued', 'running'])
      .limit(1)
      .execute()
    if (!pending.length) await this.enqueue(this.db, kind, {})
  }

  private readonly lanes = new Map<string, LaneOptions>()
  private readonly laneRunners: LaneRunner[] = []

  /** Declares a lane besides the main one; its kinds name it in their definition. */
  defineLane(name: string, options: LaneOptions): void {
    if (name === MAIN_LANE || this.lanes.has(name)) throw new Error(`job lane ${name} defined twice`)
    this.lanes.set(name, options)
  }

  /** The group of a job of this definition, when its lane limits jobs per group. */
  private groupOf(def: JobDefinition | undefined, payload: unknown): string | null {
    const lane = def?.lane === undefined ? undefined : this.lanes.get(def.lane)
    return lane?.groupOf ? lane.groupOf(payload).slice(0, 300) : null
  }

  /**
   * The condition on `kind` that selects a lane's jobs (empty: every kind), or null when the lane
   * has none. The main lane takes every kind no other lane owns, unknown kinds included.
   */
  private laneFilter(lane: string | undefined) {
    if (lane === undefined) return sql``
    const owned = (l: string) => [...this.defs].filter(([, d]) => (d.lane ?? MAIN_LANE) === l).map(([k]) => k)
    if (lane !== MAIN_LANE) {
      const kinds = owned(lane)
      return kinds.length ? sql`and kind in (${sql.join(kinds)})` : null
    }
    const others = [...this.lanes.keys()].flatMap(owned)
    return others.length ? sql`and kind not in (${sql.join(others)})` : sql``
  }

  /** Inserts a job; pass the transaction of the change that needs it. */
  async enqueue(db: Db, kind: string, payload: unknown, opts: EnqueueOptions = {}): Promise<void> {
    const def = this.defs.get(kind)
    const now = this.clock().toISOString()
    await insertReturningId(db, 'jobs', {
      kind,
      payload: toJson(payload),
      state: 'queued',
      attempts: 0,
      max_attempts: opts.maxAttempts ?? def?.maxAttempts ?? 5,
      run_at: (opts.runAt ?? this.clock()).toISOString(),
      created: now,
      group_key: this.groupOf(def, payload),
    })
    this.wake()
  }

  /** When this worker next looks for jobs left running by a crashed worker (ms since the epoch). */
  private nextLeaseSweep = 0

  /**
   * Claims the oldest due job, or null. Looking finds nothing most of the time (every poll, and
   * after every request that might have queued something), so it is a read first: only a due job
   * is claimed with a write, and abandoned leases are swept at most every tenth of a lease.
   */
  async claim(lane?: string, fullGroups: readonly string[] = []): Promise<JobRow | null> {
    const now = this.clock().toISOString()
    if (this.clock().getTime() >= this.nextLeaseSweep) {
      this.nextLeaseSweep = this.clock().getTime() + this.leaseMs / 10
      const staleBefore = new Date(this.clock().getTime() - this.leaseMs).toISOString()
      // Jobs left running by a crashed worker go back to the queue.
      await this.db
        .updateTable('jobs')
        .set({ state: 'queued', locked_by: null, locked_at: null })
        .where('state', '=', 'running')
        .where('locked_at', '<', staleBefore)
        .execute()
    }
    const kinds = this.laneFilter(lane)
    if (!kinds) return null
    // A lane passes the groups it runs as many jobs of as it may: their jobs wait, untouched.
    const groups = fullGroups.length
      ? sql`and (group_key is null or group_key not in (${sql.join(fullGroups)}))`
      : sql``
    // The oldest due job: read first, then claimed (on PostgreSQL skipping one another worker holds).
    const oldestDue = sql`select id from jobs where state = 'queued' and run_at <= ${now} ${kinds} ${groups} order by run_at, id limit 1`
    if (!(await oldestDue.execute(this.db)).rows.length) return null
    const pick =
      this.dialect === 'postgres' ? sql`(${oldestDue} for update skip locked)` : sql`(${oldestDue})`
    const row = await this.db
      .updateTable('jobs')
      .set((eb) => ({
        state: 'running',
        locked_by: this.workerId,
        locked_at: now,
        attempts: eb('attempts', '+', 1),
      }))
      .where('id', '=', pick as any)
      .where('state', '=', 'queued')
      .returning(['id', 'kind', 'payload', 'attempts', 'max_attempts', 'group_key'])
      .executeTakeFirst()
    return row ? { ...row, payload: parseJson(row.payload, null) } : null
  }

  /** Claims and runs one due job (of one lane, or of any). Returns false when none was due. */
  async runOne(lane?: string): Promise<boolean> {
    const job = await this.claim(lane)
    if (!job) return false
    await this.execute(job)
    return true
  }

  /** Runs a claimed job and records how it ended: done, queued again after a backoff, or failed. */
  async execute(job: JobRow, signal: AbortSignal = new AbortController().signal): Promise<void> {
    const def = this.defs.get(job.kind)
    const finishedAt = () => this.clock().toISOString()
    if (!def) {
      await this.db
        .updateTable('jobs')
        .set({ state: 'failed', last_error: `no handler for job kind ${job.kind}`, finished: finishedAt() })
        .where('id', '=', job.id)
        .execute()
      return
    }
    const isLastAttempt = job.attempts >= job.max_attempts
    try {
      const attempt = (s: AbortSignal) =>
        def.run(job.payload, { attempt: job.attempts, isLastAttempt, jobId: job.id, signal: s })
      if (def.timeoutMs === undefined) await attempt(signal)
      else await withDeadline(def.timeoutMs, signal, (s) => settledBy(attempt(s), s))
      await this.db
        .updateTable('jobs')
        .set({ state: 'done', finished: finishedAt(), locked_by: null })
        .where('id', '=', job.id)
        .execute()
    } catch (error) {
      const message = error instanceof Error ? `${error.message}\n${error.stack ?? ''}` : String(error)
      this.log.warn({ job: job.id, kind: job.kind, attempt: job.attempts, err: error }, 'job failed')
      if (isLastAttempt || error instanceof PermanentJobError) {
        await this.db
          .updateTable('jobs')
          .set({
            state: 'failed',
            last_error: message.slice(0, 10000),
            finished: finishedAt(),
            locked_by: null,
          })
          .where('id', '=', job.id)
          .execute()
        if (def.onFailure) {
          try {
            await def.onFailure(job.payload, error)
          } catch (e) {
            this.log.error({ job: job.id, err: e }, 'job failure handler failed')
          }
        }
      } else {
        const base = def.backoffMs ?? 1000
        const delay = Math.min(base * 2 ** (job.attempts - 1), 5 * 60 * 1000)
        await this.db
          .updateTable('jobs')
          .set({
            state: 'queued',
            last_error: message.slice(0, 10000),
            run_at: new Date(this.clock().getTime() + delay).toISOString(),
            locked_by: null,
            locked_at: null,
          })
          .where('id', '=', job.id)
          .execute()
      }
    }
  }

  /**
   * Runs due jobs one after the other until none is left (jobs enqueued by jobs included), of one
   * lane or of all. Returns how many ran.
   */
  async drain(max = 10000, lane?: string): Promise<number> {
    let n = 0
    while (n < max && (await this.runOne(lane))) n++
    return n
  }

  /**
   * Deletes finished jobs (done or failed) that finished more than `days` days ago, `batch` rows
   * per statement so no statement holds the table long. Returns how many were deleted.
   */
  async purgeFinished(days: number, batch = 1000): Promise<number> {
    // Bounded so a very large setting keeps everything instead of making an invalid date.
    const cutoff = new Date(this.clock().getTime() - Math.min(days, 100_000) * 86_400_000).toISOString()
    let total = 0
    for (;;) {
      const ids = this.db
        .selectFrom('jobs')
        .select('id')
        .where('state', 'in', ['done', 'failed'])
        .where('finished', '<', cutoff)
        .orderBy('id')
        .limit(batch)
      const r = await this.db.deleteFrom('jobs').where('id', 'in', ids).executeTakeFirst()
      const n = Number(r.numDeletedRows)
      total += n
      if (n < batch) return total
    }
  }

  /** When the loop next deletes old finished jobs (ms since the epoch). */
  private nextPurge = 0
  /** Days finished jobs are kept (0: forever); set by start(). */
  private retentionDays = 0

  private async purgeIfDue(): Promise<void> {
    if (this.retentionDays <= 0 || this.clock().getTime() < this.nextPurge) return
    this.nextPurge = this.clock().getTime() + 60 * 60 * 1000
    const n = await this.purgeFinished(this.retentionDays)
    if (n) this.log.info({ deleted: n, retentionDays: this.retentionDays }, 'old finished jobs deleted')
  }

  /** The failed jobs, newest first, with the first line of their last error. */
  async listFailed(limit = 1000) {
    const rows = await this.db
      .selectFrom('jobs')
      .select(['id', 'kind', 'attempts', 'finished', 'last_error'])
      .where('state', '=', 'failed')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute()
    return rows.map((r) => ({ ...r, last_error: (r.last_error ?? '').split('\n')[0] ?? '' }))
  }

  /**
   * Queues failed jobs again (one by id, or all), due now and with their attempts restored.
   * Returns how many were queued.
   */
  async retryFailed(id?: number): Promise<number> {
    let q = this.db
      .updateTable('jobs')
      .set({
        state: 'queued',
        attempts: 0,
        run_at: this.clock().toISOString(),
        finished: null,
        locked_by: null,
        locked_at: null,
      })
      .where('state', '=', 'failed')
    if (id !== undefined) q = q.where('id', '=', id)
    const r = await q.executeTakeFirst()
    this.wake()
    return Number(r.numUpdatedRows)
  }

  /** What /metrics reports: queued jobs and failed jobs by kind, and how late the oldest due job is. */
  async stats(): Promise<{
    queued: Map<string, number>
    failed: Map<string, number>
    oldestDueAgeSeconds: number
  }> {
    const now = this.clock()
    const counts = await this.db
      .selectFrom('jobs')
      .select(['kind', 'state', (eb) => eb.fn.countAll<number>().as('n')])
      .where('state', 'in', ['queued', 'failed'])
      .groupBy(['kind', 'state'])
      .execute()
    const queued = new Map<string, number>()
    const failed = new Map<string, number>()
    for (const c of counts) (c.state === 'queued' ? queued : failed).set(c.kind, Number(c.n))
    const oldest = await this.db
      .selectFrom('jobs')
      .select((eb) => eb.fn.min('run_at').as('run_at'))
      .where('state', '=', 'queued')
      .where('run_at', '<=', now.toISOString())
      .executeTakeFirst()
    const due = oldest?.run_at ? new Date(String(oldest.run_at)).getTime() : null
    return {
      queued,
      failed,
      oldestDueAgeSeconds: due === null ? 0 : Math.max(0, (now.getTime() - due) / 1000),
    }
  }

  /** Starts the polling loop (serve and worker commands); finished jobs older than
   * `retentionDays` days (0: none) are deleted from it, at most once an hour. */
  start(pollMs: number, retentionDays = 0): void {
    this.stopping = false
    this.retentionDays = retentionDays
    const tick = async () => {
      if (this.stopping) return
      this.running = true
      try {
        await this.purgeIfDue()
        const p = this.drain(100, MAIN_LANE)
        this.active = p
        await p
      } catch (e) {
        this.log.error({ err: e }, 'job worker loop error')
      } finally {
        this.running = false
        if (!this.stopping) this.timer = setTimeout(() => void tick(), pollMs)
      }
    }
    this.timer = setTimeout(() => void tick(), 0)
    this.wakeFn = () => {
      if (this.running || this.stopping || !this.timer) return
      clearTimeout(this.timer)
      this.timer = setTimeout(() => void tick(), 0)
    }
    for (const name of this.lanes.keys()) this.startLane(name, pollMs)
  }

  /** Starts the loop of one lane besides the main one (start() starts them all). */
  startLane(name: string, pollMs: number): LaneRunner {
    const options = this.lanes.get(name)
    if (!options) throw new Error(`no job lane ${name}`)
    const runner = new LaneRunner(this, name, options, this.log)
    this.laneRunners.push(runner)
    runner.start(pollMs)
    return runner
  }

  private wakeFn: (() => void) | null = null

  /** Asks a started loop to look for work now (after a commit in this process). */
  wake(): void {
    // Deferred so the enqueuing transaction has committed by the time the loop looks.
    if (this.wakeFn) setTimeout(() => this.wakeFn?.(), 5).unref()
    if (this.laneRunners.length) setTimeout(() => this.laneRunners.forEach((r) => r.wake()), 5).unref()
  }

  /** Stops the loop after the job in progress finishes. */
  async stop(): Promise<void> {
    this.stopping = true
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    this.wakeFn = null
    const lanes = this.laneRunners.splice(0).map((runner) => runner.stop())
    await Promise.all([this.active.catch(() => undefined), ...lanes])
  }
}
