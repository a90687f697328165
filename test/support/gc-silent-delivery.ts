// Run with `node --expose-gc --import tsx`: one callback delivery to a listener that accepts the
// connection and never answers, with garbage collections all along. Prints the milliseconds the
// delivery took to fail, or exits 2 when it did not end.
import { createServer, type Socket } from 'node:net'
import { loadConfig } from '../../src/config.js'
import { CallbackSender } from '../../src/areas/orders/callbacks.js'

const timeoutMs = Number(process.argv[2] ?? 300)
const sockets: Socket[] = []
const silent = createServer((s) => void sockets.push(s))
await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
const port = (silent.address() as { port: number }).port

const gc = (globalThis as { gc?: () => void }).gc
if (!gc) throw new Error('run with --expose-gc')
const collecting = setInterval(gc, 5)
const config = loadConfig({}, { callbackAllowPrivate: true, callbackAllowList: [] })
const sender = new CallbackSender(config, async () => [{ address: '127.0.0.1', family: 4 }])
const started = performance.now()
const body = { uuid: 'u', state: 'done', type: 'Create', resource_uuid: null, modified: '' }
const giveUp = setTimeout(() => {
  console.log('still waiting')
  process.exit(2)
}, timeoutMs * 20)
let outcome = 'answered'
try {
  await sender.deliver(
    { url: `http://127.0.0.1:${port}/hook`, body },
    timeoutMs,
    new AbortController().signal,
  )
} catch (e) {
  outcome = (e as Error).name
}
clearTimeout(giveUp)
clearInterval(collecting)
console.log(JSON.stringify({ outcome, ms: Math.round(performance.now() - started) }))
sockets.forEach((s) => s.destroy())
await sender.close()
silent.close()
