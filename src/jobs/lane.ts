// A lane of the job queue with its own loop: several jobs at once, at most a few per group (e.g.
// per target host), each given a signal that stopping the worker aborts. Jobs that wait on the
// outside world run here, so a slow or silent remote end delays only its own group's jobs.
import type { FastifyBaseLogger } from 'fastify'
import type { JobQueue } from './queue.js'

export interface LaneOptions {
  /** Jobs of the lane running at once in one process. */
  concurrency: number
  /** The group of a job, from its payload (e.g. the host it talks to); stored when it is queued. */
  groupOf?: (payload: unknown) => string
  /** Jobs of one group running at once in one process. */
  perGroup?: number
}

export class LaneRunner {
  private readonly inFlight = new Set<Promise<void>>()
  private readonly perGroup = new Map<string, number>()
  private readonly abort = new AbortController()
  private timer: NodeJS.Timeout | null = null
  private filling: Promise<void> | null = null
  private again = false
  private stopping = false
  private pollMs = 500

  constructor(
    private readonly queue: JobQueue,
    readonly name: string,
    private readonly options: LaneOptions,
    private readonly log: FastifyBaseLogger,
  ) {}

  start(pollMs: number): void {
    this.pollMs = pollMs
    this.wake()
  }

  /** Looks for due jobs now (after a commit in this process, or when a job of the lane ended). */
  wake(): void {
    if (this.stopping) return
    if (this.filling) {
      this.again = true
      return
    }
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    this.filling = this.fill()
      .catch((e: unknown) => this.log.error({ err: e, lane: this.name }, 'job lane loop error'))
      .finally(() => {
        this.filling = null
        if (this.stopping) return
        if (this.again) {
          this.again = false
          this.wake()
        } else {
          this.timer = setTimeout(() => this.wake(), this.pollMs)
        }
      })
  }

  /** Starts due jobs while the lane has room, passing over those whose group is full. */
  private async fill(): Promise<void> {
    const { concurrency, perGroup = Infinity } = this.options
    while (!this.stopping && this.inFlight.size < concurrency) {
      const full = [...this.perGroup].filter(([, n]) => n >= perGroup).map(([group]) => group)
      const job = await this.queue.claim(this.name, full)
      if (!job) return
      const group = job.group_key
      if (group !== null) this.perGroup.set(group, (this.perGroup.get(group) ?? 0) + 1)
      const run: Promise<void> = this.queue
        .execute(job, this.abort.signal)
        .catch((e: unknown) => this.log.error({ err: e, job: job.id, lane: this.name }, 'job lane run error'))
        .finally(() => {
          this.inFlight.delete(run)
          if (group !== null) {
            const n = (this.perGroup.get(group) ?? 1) - 1
            if (n) this.perGroup.set(group, n)
            else this.perGroup.delete(group)
          }
          this.wake()
        })
      this.inFlight.add(run)
    }
  }

  /** Resolves once the current look for due jobs has ended (what it claimed has started). */
  async settled(): Promise<void> {
    await this.filling
  }

  /** How many jobs of the lane this process runs now, in all and per group. */
  get running(): { total: number; perGroup: ReadonlyMap<string, number> } {
    return { total: this.inFlight.size, perGroup: this.perGroup }
  }

  /** Stops looking for jobs and aborts the running ones; resolves once each has been recorded. */
  async stop(): Promise<void> {
    this.stopping = true
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    this.abort.abort(new Error('the job worker is stopping'))
    await this.filling
    await Promise.all([...this.inFlight])
  }
}
