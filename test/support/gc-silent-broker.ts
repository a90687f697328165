// Run with `node --expose-gc --import tsx`: the relay's calls to a "broker" that accepts connections
// and never answers (a management API request, an AMQP connection for a publish), with garbage
// collections all along. Prints, per call, how it ended and the milliseconds it took, or exits 2
// when one did not end.
import { ManagementApi, Publisher } from '../../src/areas/event-subscriptions/broker.js'
import { silentPeer } from './gc-silent.js'

const timeoutMs = Number(process.argv[2] ?? 300)
const peer = await silentPeer(timeoutMs * 20)
const port = peer.port

const settings = {
  amqpUrl: `amqp://guest:guest@127.0.0.1:${port}`,
  managementUrl: `http://guest:guest@127.0.0.1:${port}`,
  timeoutMs,
}
const outcomes: Record<string, { outcome: string; ms: number }> = {}
const timed = async (name: string, work: () => Promise<unknown>) => {
  const started = performance.now()
  let outcome = 'answered'
  try {
    const r = await work()
    if (Array.isArray(r) && r[0]) outcome = (r[0] as Error).name
  } catch (e) {
    outcome = (e as Error).name
  }
  outcomes[name] = { outcome, ms: Math.round(performance.now() - started) }
}
await timed('management', () => new ManagementApi(settings).request('GET', '/api/overview'))
const publisher = new Publisher(settings)
await timed('publish', () =>
  publisher.publish([
    { vhost: 'v', queue: 'q', body: Buffer.from('{}'), messageId: 'm', timestamp: new Date() },
  ]),
)
await timed('close', () => publisher.close())
peer.end()
console.log(JSON.stringify(outcomes))
