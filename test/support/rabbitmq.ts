// The RabbitMQ the broker tests run against: TEST_RABBITMQ_URL (AMQP), TEST_RABBITMQ_MANAGEMENT_URL
// (management HTTP API, administrator credentials in the URL) and TEST_RABBITMQ_STOMP_URL (the
// web-STOMP endpoint), as .ci/run exports them. Without any of them the tests use a local broker
// (127.0.0.1, guest/guest, the standard ports); if its management API does not answer and
// `rabbitmq-plugins` is at hand, its management and web-STOMP plugins are enabled first, as
// .ci/run does. A broker that cannot be reached fails the tests; TEST_RABBITMQ=off leaves them out
// (they are then reported as skipped).
import { spawnSync } from 'node:child_process'
import { ManagementApi } from '../../src/areas/event-subscriptions/broker.js'

export interface RabbitTestSettings {
  amqpUrl: string
  managementUrl: string
  stompUrl: string
}

export const RABBITMQ_MISSING =
  'RabbitMQ tests need a broker with the rabbitmq_management and rabbitmq_web_stomp plugins: by default the ' +
  'local one (127.0.0.1, guest/guest), or TEST_RABBITMQ_URL (amqp://...), TEST_RABBITMQ_MANAGEMENT_URL ' +
  '(http://user:pass@host:15672) and TEST_RABBITMQ_STOMP_URL (ws://host:15674/ws) together; set TEST_RABBITMQ=off to skip them'

/** The settings; null when the tests are switched off (TEST_RABBITMQ=off); throws when missing. */
export function rabbitTestSettings(): RabbitTestSettings | null {
  if (/^(0|off|false|no)$/i.test(process.env.TEST_RABBITMQ ?? '')) return null
  const env = process.env
  if (!env.TEST_RABBITMQ_URL && !env.TEST_RABBITMQ_MANAGEMENT_URL && !env.TEST_RABBITMQ_STOMP_URL) {
    return localBroker()
  }
  const amqpUrl = env.TEST_RABBITMQ_URL
  const managementUrl = env.TEST_RABBITMQ_MANAGEMENT_URL
  const stompUrl = env.TEST_RABBITMQ_STOMP_URL
  if (!amqpUrl || !managementUrl || !stompUrl) throw new Error(RABBITMQ_MISSING)
  return { amqpUrl, managementUrl, stompUrl }
}

/** The local broker, its plugins enabled when its management API does not answer. */
function localBroker(): RabbitTestSettings {
  const local = {
    amqpUrl: 'amqp://guest:guest@127.0.0.1:5672',
    managementUrl: 'http://guest:guest@127.0.0.1:15672',
    stompUrl: 'ws://127.0.0.1:15674/ws',
  }
  const answers = () =>
    spawnSync('curl', [
      '-sf',
      '-o',
      '/dev/null',
      '-m',
      '5',
      '-u',
      'guest:guest',
      'http://127.0.0.1:15672/api/overview',
    ]).status === 0
  if (answers()) return local
  const enabled = spawnSync('rabbitmq-plugins', ['enable', 'rabbitmq_management', 'rabbitmq_web_stomp'], {
    stdio: 'ignore',
  })
  if (enabled.error || enabled.status !== 0) throw new Error(RABBITMQ_MISSING)
  for (let i = 0; i < 60 && !answers(); i++) spawnSync('sleep', ['1'])
  if (!answers()) throw new Error(RABBITMQ_MISSING)
  return local
}

/** The management API as the tests use it (to inspect, to cut connections, to clean up). */
export function management(s: RabbitTestSettings): ManagementApi {
  return new ManagementApi({ amqpUrl: s.amqpUrl, managementUrl: s.managementUrl, timeoutMs: 5000 })
}

/**
 * Closes every client connection to `vhost` (as a broker restart would). Answers how many. The
 * management API lists a new connection once its statistics are first collected (every few
 * seconds), and each connection on its own schedule: it is asked again, for at most `withinMs`,
 * until it lists `atLeast` of them.
 */
export async function closeConnections(
  s: RabbitTestSettings,
  vhost: string,
  atLeast = 1,
  withinMs = 15_000,
): Promise<number> {
  const api = management(s)
  const list = async () =>
    (await api.request('GET', `/api/vhosts/${encodeURIComponent(vhost)}/connections`)) as { name: string }[]
  const deadline = Date.now() + withinMs
  let all = await list()
  while (all.length < atLeast && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250))
    all = await list()
  }
  for (const c of all) {
    await api.request('DELETE', `/api/connections/${encodeURIComponent(c.name)}`, undefined, {
      missingOk: true,
    })
  }
  return all.length
}
