// WAL checkpoints of a SQLite file, run by a worker thread on its own connection.
//
// SQLite's automatic checkpoint runs inside the commit that crosses its page threshold, on the
// thread that committed: every thousand pages or so one request pays for copying them all into the
// database file. Here a worker thread copies committed pages every `intervalMs` with passive
// checkpoints, which never block readers or the writer, so requests only write the log.
//
// A passive checkpoint cannot restart the log while commits keep arriving (only a writer that finds
// every page already copied starts it over), so the request connection keeps SQLite's own
// checkpoint as a backstop at a larger threshold (`BACKSTOP_PAGES`): once the log is that long the
// next commit copies the few pages the worker has not, and the log starts over.
import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'

/** Log length, in pages, at which a commit checkpoints itself (SQLite's default is 1,000). */
export const BACKSTOP_PAGES = 10000

export interface CheckpointResult {
  /** Frames in the log. */
  log: number
  /** Frames copied into the database file, of those. */
  checkpointed: number
}

export interface Checkpointer {
  /** Runs one checkpoint now and answers what the log held after it. */
  run(): Promise<CheckpointResult>
  close(): Promise<void>
}

// Plain CommonJS: an eval'd worker runs the same under tsx (tests, development) and compiled.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads')
const SQLite = require(workerData.module)
const db = new SQLite(workerData.file, { fileMustExist: true })
const checkpoint = () => {
  const [r] = db.pragma('wal_checkpoint(PASSIVE)')
  return { log: r.log, checkpointed: r.checkpointed }
}
const timer = setInterval(() => {
  try { checkpoint() } catch {}
}, workerData.intervalMs)
parentPort.on('message', (m) => {
  if (m.type === 'run') {
    try { parentPort.postMessage({ id: m.id, result: checkpoint() }) }
    catch (e) { parentPort.postMessage({ id: m.id, error: String(e && e.message || e) }) }
  } else if (m.type === 'close') {
    clearInterval(timer)
    db.close()
    parentPort.close()
  }
})
`

/**
 * Starts the thread. `onStop` is called if it stops without being closed (it could not open the
 * file, or it failed), so the caller can hand checkpoints back to SQLite.
 */
export function startCheckpointer(file: string, intervalMs: number, onStop?: () => void): Checkpointer {
  const worker = new Worker(WORKER, {
    eval: true,
    workerData: { module: createRequire(import.meta.url).resolve('better-sqlite3'), file, intervalMs },
  })
  // Never the reason the process stays up, except while an answer from it is awaited.
  worker.unref()
  const pending = new Map<number, { resolve: (r: CheckpointResult) => void; reject: (e: Error) => void }>()
  let next = 0
  let failure: Error | null = null
  let closing = false
  const failAll = (e: Error) => {
    failure = e
    for (const p of pending.values()) p.reject(e)
    pending.clear()
  }
  worker.on('message', (m: { id: number; result?: CheckpointResult; error?: string }) => {
    const p = pending.get(m.id)
    if (!p) return
    pending.delete(m.id)
    if (!pending.size) worker.unref()
    if (m.error !== undefined) p.reject(new Error(m.error))
    else p.resolve(m.result!)
  })
  worker.on('error', (e) => failAll(e))
  const exited = new Promise<void>((resolve) =>
    worker.once('exit', () => {
      failAll(failure ?? new Error('the checkpoint thread has stopped'))
      if (!closing) onStop?.()
      resolve()
    }),
  )
  return {
    run() {
      if (failure) return Promise.reject(failure)
      const id = next++
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject })
        worker.ref()
        worker.postMessage({ type: 'run', id })
      })
    },
    async close() {
      closing = true
      worker.ref()
      if (!failure) worker.postMessage({ type: 'close' })
      await exited
    },
  }
}
