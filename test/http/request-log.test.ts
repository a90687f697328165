// The request's logger: made lazily, it writes what pino's child would, with the request id.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import { LazyChildLogger, lazyChildLoggerFactory } from '../../src/http/request-log.js'

function capture(level: string) {
  const lines: Record<string, unknown>[] = []
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n').filter(Boolean))
        lines.push(JSON.parse(l) as Record<string, unknown>)
      done()
    },
  })
  return { logger: pino({ level }, stream), lines }
}

test('lines at enabled levels carry the bindings; lines below the level are not written', async () => {
  const { logger, lines } = capture('warn')
  const log = lazyChildLoggerFactory.call(
    undefined as never,
    logger,
    { reqId: 'r-1' },
    {},
    undefined as never,
  )
  assert.ok(log instanceof LazyChildLogger)
  assert.equal(log.level, 'warn')
  log.info({ a: 1 }, 'not written')
  log.debug('not written either')
  log.error({ err: new Error('boom') }, 'written')
  log.warn('also written')
  await new Promise((r) => setImmediate(r))
  assert.deepEqual(
    lines.map((l) => [l.reqId, l.msg]),
    [
      ['r-1', 'written'],
      ['r-1', 'also written'],
    ],
  )
  assert.equal((lines[0]!.err as { message: string }).message, 'boom')
})

test('the level follows the parent, a child of it keeps the bindings, a route level gets pino at once', async () => {
  const { logger, lines } = capture('info')
  const log = lazyChildLoggerFactory.call(
    undefined as never,
    logger,
    { reqId: 'r-2' },
    {},
    undefined as never,
  )
  log.info('at info')
  logger.level = 'error'
  log.info('no longer')
  log.child({ step: 'x' }).error('from a child')
  await new Promise((r) => setImmediate(r))
  assert.deepEqual(
    lines.map((l) => [l.reqId, l.step, l.msg]),
    [
      ['r-2', undefined, 'at info'],
      ['r-2', 'x', 'from a child'],
    ],
  )
  const own = lazyChildLoggerFactory.call(
    undefined as never,
    logger,
    { reqId: 'r-3' },
    { level: 'debug' },
    undefined as never,
  )
  assert.ok(!(own instanceof LazyChildLogger))
  assert.equal(own.level, 'debug')
})
