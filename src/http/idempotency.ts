// Safe retries of POSTs: a POST carrying `Idempotency-Key` is performed once per (user, key); a
// retry of the same request answers the first answer again, marked `Idempotent-Replayed: true`,
// without acting. The answer is stored in the same transaction as the request's writes (the
// request runs in a transaction of its own: src/db/request-transaction.ts), so either both
// committed and a retry replays, or neither did and a retry performs the request. The design and
// its guarantees: docs/decisions.md ("Idempotency-Key").
import { createHash } from 'node:crypto'
import { sql } from 'kysely'
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import type { AppContext } from '../context.js'
import type { Database } from '../db/database.js'
import type { RequestTransaction } from '../db/request-transaction.js'
import { AppError, fieldError } from './errors.js'

export const IDEMPOTENCY_HEADER = 'Idempotency-Key'
const HEADER = 'idempotency-key'
export const REPLAYED_HEADER = 'Idempotent-Replayed'
/** The longest key accepted. */
export const KEY_MAX_LENGTH = 255
/** How long a key and its answer are kept. */
export const KEEP_MS = 24 * 60 * 60 * 1000
export const PURGE_JOB = 'idempotency.purge'
const PURGE_EVERY_MS = 60 * 60 * 1000
const PURGE_BATCH = 1000
/** The headers of an answer that a replay repeats (the rest are the replay's own). */
const KEPT_HEADERS = ['content-type', 'location']

/** Visible ASCII and spaces: no control characters, nothing a header would carry mangled. */
const VALID_KEY = /^[\x20-\x7e]+$/
const KEY_MESSAGE = `Enter a key of 1 to ${KEY_MAX_LENGTH} printable ASCII characters.`
const MISMATCH_MESSAGE =
  'This key was already used for another request (method, path or body). Use a new key for a new request.'
const RUNNING_MESSAGE = 'A request with this Idempotency-Key is still being processed. Retry later.'

interface Idempotent {
  key: string
  userId: number
  /** sha256 of the method, the request target and the body. */
  hash: string
  /** The request's transaction, once it performs the request. */
  tx: RequestTransaction | null
}

declare module 'fastify' {
  interface FastifyRequest {
    idempotency: Idempotent | null
  }
}

/** Where a test may stop a request: after its writes (before the commit), or after the commit. */
export type IdempotencyPoint = 'written' | 'committed'

/**
 * Test probe: called at each point of a request that performs with a key, and awaited. Null in
 * the server; a crash test's child process sets it (through a module it preloads) to stop there.
 */
export const idempotencyProbe: { at: ((point: IdempotencyPoint) => Promise<void>) | null } = { at: null }

export function requestHash(method: string, url: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method}\n${url}\n`)
    .update(body === undefined ? '' : JSON.stringify(body))
    .digest('hex')
}

function isPost(r: RouteOptions): boolean {
  return (Array.isArray(r.method) ? r.method : [r.method]).includes('POST')
}

function listOf<T>(hooks: T | T[] | undefined): T[] {
  return hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks]
}

function prepend<T>(hooks: T | T[] | undefined, hook: T): T[] {
  return [hook, ...listOf(hooks)]
}

function append<T>(hooks: T | T[] | undefined, hook: T): T[] {
  return [...listOf(hooks), hook]
}

/**
 * Registers the hooks on every POST route added after it (call it before the areas and before the
 * compression), and the cleanup job. A POST without the header costs a header look-up or a property
 * check per hook; other methods nothing.
 */
export function installIdempotency(app: FastifyInstance, database: Database, ctx: AppContext): void {
  const { db } = database
  const pg = database.dialect === 'postgres'
  app.decorateRequest('idempotency', null)
  /** The (user, key) pairs this process is performing now: a retry of one is answered 409 at once. */
  const running = new Set<string>()
  const runningId = (idem: Idempotent) => `${idem.userId}:${idem.key}`

  /** The key, checked, and the request's hash, before the body is validated (and trimmed). */
  const readKey = (request: FastifyRequest, _reply: FastifyReply, done: (e?: Error) => void) => {
    const header = request.headers[HEADER]
    if (header === undefined || request.method !== 'POST' || !request.actor) return done()
    const key = Array.isArray(header) ? header.join(', ') : header
    if (key.length > KEY_MAX_LENGTH || !VALID_KEY.test(key))
      return done(fieldError(IDEMPOTENCY_HEADER, KEY_MESSAGE))
    request.idempotency = {
      key,
      userId: request.actor.id,
      hash: requestHash(request.method, request.url, request.body),
      tx: null,
    }
    done()
  }

  /** Replays a stored answer, or opens the request's transaction and runs the rest inside it. */
  const claim = (request: FastifyRequest, reply: FastifyReply, done: (e?: Error) => void) => {
    const idem = request.idempotency
    if (!idem) return done()
    // In this process without a look at the database (on SQLite the retry would otherwise wait for
    // the writing connection the first holds); across processes the check in `start` tells.
    const id = runningId(idem)
    if (running.has(id)) return done(new AppError('conflict', RUNNING_MESSAGE))
    running.add(id)
    start(idem, reply).then(
      (tx) => {
        if (tx) return tx.run(() => done())
        running.delete(id)
      },
      (e: Error) => {
        running.delete(id)
        done(e)
      },
    )
  }

  const start = async (idem: Idempotent, reply: FastifyReply): Promise<RequestTransaction | null> => {
    const tx = await database.beginRequest()
    try {
      const found = await tx.run(async () => {
        // Another request with this key holds its transaction: it is still running.
        if (pg) {
          const r = await sql<{
            locked: boolean
          }>`select pg_try_advisory_xact_lock(hashtextextended(${`${idem.userId}:${idem.key}`}, 0)) as locked`.execute(
            db,
          )
          if (!r.rows[0]?.locked) return 'running' as const
        }
        return db
          .selectFrom('idempotency_keys')
          .selectAll()
          .where('user_id', '=', idem.userId)
          .where('idempotency_key', '=', idem.key)
          .executeTakeFirst()
      })
      if (found === 'running') throw new AppError('conflict', RUNNING_MESSAGE)
      if (found && found.created > cutoff()) {
        await tx.rollback()
        if (found.request_hash !== idem.hash) {
          throw new AppError('unprocessable', { [IDEMPOTENCY_HEADER]: [MISMATCH_MESSAGE] })
        }
        const headers = JSON.parse(found.headers) as Record<string, string>
        void reply.code(found.status).headers(headers).header(REPLAYED_HEADER, 'true').send(found.body)
        return null
      }
      // Kept past its time (the cleanup has not run yet): as if gone.
      if (found) {
        await tx.run(() =>
          db
            .deleteFrom('idempotency_keys')
            .where('user_id', '=', idem.userId)
            .where('idempotency_key', '=', idem.key)
            .execute(),
        )
      }
      idem.tx = tx
      return tx
    } catch (e) {
      await tx.rollback().catch(() => undefined)
      throw e
    }
  }

  const cutoff = () => new Date(ctx.clock().getTime() - KEEP_MS).toISOString()

  /** Stores the answer with the request's writes and commits both, before anything is sent. */
  const finish = async (idem: Idempotent, tx: RequestTransaction, reply: FastifyReply, payload: unknown) => {
    // A server error is not kept: its writes are undone, and a retry performs the request again.
    if (reply.statusCode >= 500) return tx.rollback()
    let body: string
    if (payload === undefined || payload === null) body = ''
    else if (typeof payload === 'string') body = payload
    else if (Buffer.isBuffer(payload)) body = payload.toString('utf8')
    else {
      await tx.rollback()
      throw new Error('an answer to a POST with an Idempotency-Key must not be a stream')
    }
    const headers: Record<string, string> = {}
    for (const name of KEPT_HEADERS) {
      const value = reply.getHeader(name)
      if (value !== undefined) headers[name] = String(value)
    }
    try {
      await tx.run(() =>
        db
          .insertInto('idempotency_keys')
          .values({
            user_id: idem.userId,
            idempotency_key: idem.key,
            request_hash: idem.hash,
            status: reply.statusCode,
            headers: JSON.stringify(headers),
            body,
            created: ctx.clock().toISOString(),
          })
          .execute(),
      )
      if (idempotencyProbe.at) await idempotencyProbe.at('written')
      await tx.commit()
    } catch (e) {
      await tx.rollback()
      throw e
    }
    if (idempotencyProbe.at) await idempotencyProbe.at('committed')
    // Jobs the request queued are visible only now.
    ctx.jobs.wake()
  }

  /** Stores the answer and commits, once it is serialized and before it is compressed or sent. */
  const store = (
    request: FastifyRequest,
    reply: FastifyReply,
    payload: unknown,
    done: (e: Error | null, payload?: unknown) => void,
  ) => {
    const idem = request.idempotency
    if (!idem?.tx?.open) return done(null, payload)
    finish(idem, idem.tx, reply, payload)
      .finally(() => running.delete(runningId(idem)))
      .then(
        () => done(null, payload),
        (e: Error) => done(e),
      )
  }

  /** Whatever happened to the answer, the transaction ends with the request. */
  const end = (request: FastifyRequest, _reply: FastifyReply, done: () => void) => {
    const idem = request.idempotency
    if (idem?.tx?.open) {
      void idem.tx.rollback().catch(() => undefined)
      running.delete(runningId(idem))
    }
    done()
  }

  // Hooks of the POST routes only. The compression hook is a route hook too, added by an onRoute
  // hook registered after this one, so `store` runs before it.
  app.addHook('onRoute', (r) => {
    if (!r.url.startsWith('/api') || !isPost(r)) return
    r.preValidation = prepend(r.preValidation, readKey)
    r.preHandler = prepend(r.preHandler, claim)
    r.onSend = append(r.onSend, store)
    r.onResponse = append(r.onResponse, end)
  })

  ctx.jobs.definePeriodic(PURGE_JOB, PURGE_EVERY_MS, async () => {
    const n = await purgeIdempotencyKeys(ctx)
    if (n) ctx.log.info({ deleted: n }, 'expired idempotency keys deleted')
  })
  // With a worker, one cleanup job is kept queued.
  if (ctx.config.workerEnabled) app.addHook('onReady', () => ctx.jobs.queuePeriodic(PURGE_JOB))
}

/** Deletes the keys older than 24 hours, a thousand rows per statement; answers how many. */
export async function purgeIdempotencyKeys(ctx: AppContext): Promise<number> {
  const before = new Date(ctx.clock().getTime() - KEEP_MS).toISOString()
  let total = 0
  for (;;) {
    const r = await ctx.db
      .deleteFrom('idempotency_keys')
      .where(
        sql<boolean>`(user_id, idempotency_key) in (${ctx.db
          .selectFrom('idempotency_keys')
          .select(['user_id', 'idempotency_key'])
          .where('created', '<', before)
          .limit(PURGE_BATCH)})`,
      )
      .executeTakeFirst()
    const n = Number(r.numDeletedRows)
    total += n
    if (n < PURGE_BATCH) return total
  }
}
