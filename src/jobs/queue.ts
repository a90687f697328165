// Durable job queue in the application database. A job row is inserted in the same transaction
// as the change that needs it, so a rolled-back change never runs its job and a committed one is
// never lost. Workers claim one job at a time with a conditional UPDATE (FOR UPDATE SKIP LOCKED on
// PostgreSQL), so two workers never run one job twice.
import { hostname } from 'node:os'
import { sql, type Kysely, type Transaction } from 'kysely'
import type { FastifyBaseLogger } from 'fastify'
import type { DB } from '../db/tables.js'
import type { Dialect } from '../db/database.js'
import { parseJson, toJson } from '../db/values.js'
import { insertReturningId } from '../db/compiled.js'

export interface JobContext {
  /** The job's attempt number, from 1. */
  attempt: number
  isLastAttempt: boolean
  jobId: number
}

export interface JobDefinition<P = any> {
  run: (payload: P, ctx: JobContext) => Promise<void>
  /** Called once when the last attempt failed (mark the target erred, etc.). */
  onFailure?: (payload: P, error: unknown) => Promise<void>
  maxAttempts?: number
  /** Base backoff in ms; attempt n waits base * 2^(n-1), capped at 5 minutes. */
  backoffMs?: number
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
  async claim(): Promise<JobRow | null> {
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
    // The oldest due job: read first, then claimed (on PostgreSQL skipping one another worker holds).
    const oldestDue = sql`select id from jobs where state = 'queued' and run_at <= ${now} order by run_at, id limit 1`
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
      .returning(['id', 'kind', 'payload', 'attempts', 'max_attempts'])
      .executeTakeFirst()
    return row ? { ...row, payload: parseJson(row.payload, null) } : null
  }

  /** Claims and runs one due job. Returns false when none was due. */
  async runOne(): Promise<boolean> {
    const job = await this.claim()
    if (!job) return false
    await this.execute(job)
    return true
  }

  private async execute(job: JobRow): Promise<void> {
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
      await def.run(job.payload, { attempt: job.attempts, isLastAttempt, jobId: job.id })
      await this.db
        .updateTable('jobs')
        .set({ state: 'done', finished: finishedAt(), locked_by: null })
        .where('id', '=', job.id)
        .execute()
    } catch (error) {
      const message = error instanceof Error ? `${error.message}\n${error.stack ?? ''}` : String(error)
      this.log.warn({ job: job.id, kind: job.kind, attempt: job.attempts, err: error }, 'job failed')
      if (isLastAttempt) {
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

  /** Runs due jobs until none is left (jobs enqueued by jobs included). Returns how many ran. */
  async drain(max = 10000): Promise<number> {
    let n = 0
    while (n < max && (await this.runOne())) n++
    return n
  }

  /** Starts the polling loop (serve and worker commands). */
  start(pollMs: number): void {
    this.stopping = false
    const tick = async () => {
      if (this.stopping) return
      this.running = true
      try {
        const p = this.drain(100)
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
  }

  private wakeFn: (() => void) | null = null

  /** Asks a started loop to look for work now (after a commit in this process). */
  wake(): void {
    // Deferred so the enqueuing transaction has committed by the time the loop looks.
    if (this.wakeFn) setTimeout(() => this.wakeFn?.(), 5).unref()
  }

  /** Stops the loop after the job in progress finishes. */
  async stop(): Promise<void> {
    this.stopping = true
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    this.wakeFn = null
    await this.active.catch(() => undefined)
  }
}
