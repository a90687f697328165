// Run with `node --expose-gc --import tsx`: one callback delivery to a listener that accepts the
// connection and never answers, with garbage collections all along. Prints the milliseconds the
// delivery took to fail, or exits 2 when it did not end.
import { loadConfig } from '../../src/config.js'
import { CallbackSender } from '../../src/areas/orders/callbacks.js'
import { silentPeer } from './gc-silent.js'

const timeoutMs = Number(process.argv[2] ?? 300)
const peer = await silentPeer(timeoutMs * 20)
const port = peer.port
const config = loadConfig({}, { callbackAllowPrivate: true, callbackAllowList: [] })
const sender = new CallbackSender(config, async () => [{ address: '127.0.0.1', family: 4 }])
const started = performance.now()
const body = { uuid: 'u', state: 'done', type: 'Create', resource_uuid: null, modified: '' }
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
const ms = Math.round(performance.now() - started)
peer.end()
console.log(JSON.stringify({ outcome, ms }))
await sender.close()
