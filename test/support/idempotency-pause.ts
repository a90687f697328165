// Preloaded (`node --import`) by test/idempotency-crash.test.ts into a server process: the first
// POST with an Idempotency-Key that reaches the point named by TEST_IDEMPOTENCY_PAUSE (`written`:
// its writes and stored answer made, not committed; `committed`: committed, not answered) stops
// there for good and says so on stderr, so that the test kills the process at that very point.
import { idempotencyProbe, type IdempotencyPoint } from '../../src/http/idempotency.js'

export const PAUSED_LINE = 'idempotency-pause: stopped'

const point = process.env.TEST_IDEMPOTENCY_PAUSE as IdempotencyPoint | undefined
let stopped = false
if (point) {
  idempotencyProbe.at = (at) => {
    if (at !== point || stopped) return Promise.resolve()
    stopped = true
    process.stderr.write(`${PAUSED_LINE} ${at}\n`)
    return new Promise<void>(() => undefined)
  }
}
