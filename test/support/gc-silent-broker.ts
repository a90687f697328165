// Run with `node --expose-gc --import tsx`: the relay's calls to a "broker" that accepts connections
// and never answers (a management API request, an AMQP connection for a publish), with garbage
// collections all along. Prints, per call, how it ended and the milliseconds it took, or exits 2
// when one did not end.
import { createServer, type Socket } from 'node:net'
import { ManagementApi, Publisher } from '../../src/areas/event-subscriptions/broker.js'

const timeoutMs = Number(process.argv[2] ?? 300)
const sockets: Socket[] = []
const silent = createServer((s) => void sockets.push(s))
await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
const port = (silent.address() as { port: number }).port

const gc = (globalThis as { gc?: () => void }).gc
if (!gc) throw new Error('run with --expose-gc')
const collecting = setInterval(gc, 5)
const giveUp = setTimeout(() => {
  console.log('still waiting')
  process.exit(2)
}, timeoutMs * 20)

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
clearTimeout(giveUp)
clearInterval(collecting)
console.log(JSON.stringify(outcomes))
sockets.forEach((s) => s.destroy())
silent.close()
