// The RabbitMQ the broker tests run against: TEST_RABBITMQ_URL (AMQP), TEST_RABBITMQ_MANAGEMENT_URL
// (management HTTP API, administrator credentials in the URL) and TEST_RABBITMQ_STOMP_URL (the
// web-STOMP endpoint), as .ci/run exports them. Without them the tests fail with this message,
// unless TEST_RABBITMQ=off says to leave them out (they are then reported as skipped).
import { ManagementApi } from '../../src/areas/event-subscriptions/broker.js'

export interface RabbitTestSettings {
  amqpUrl: string
  managementUrl: string
  stompUrl: string
}

export const RABBITMQ_MISSING =
  'RabbitMQ tests need TEST_RABBITMQ_URL (amqp://...), TEST_RABBITMQ_MANAGEMENT_URL (http://user:pass@host:15672) ' +
  'and TEST_RABBITMQ_STOMP_URL (ws://host:15674/ws), with the rabbitmq_management and rabbitmq_web_stomp ' +
  'plugins enabled (.ci/run does this); set TEST_RABBITMQ=off to skip them'

/** The settings; null when the tests are switched off (TEST_RABBITMQ=off); throws when missing. */
export function rabbitTestSettings(): RabbitTestSettings | null {
  if (/^(0|off|false|no)$/i.test(process.env.TEST_RABBITMQ ?? '')) return null
  const amqpUrl = process.env.TEST_RABBITMQ_URL
  const managementUrl = process.env.TEST_RABBITMQ_MANAGEMENT_URL
  const stompUrl = process.env.TEST_RABBITMQ_STOMP_URL
  if (!amqpUrl || !managementUrl || !stompUrl) throw new Error(RABBITMQ_MISSING)
  return { amqpUrl, managementUrl, stompUrl }
}

/** The management API as the tests use it (to inspect, to cut connections, to clean up). */
export function management(s: RabbitTestSettings): ManagementApi {
  return new ManagementApi({ amqpUrl: s.amqpUrl, managementUrl: s.managementUrl, timeoutMs: 5000 })
}

/**
 * Closes every client connection to `vhost` (as a broker restart would). Answers how many. The
 * management API lists a new connection once its statistics are first collected (every few
 * seconds): it is asked again, for at most `withinMs`, until it lists one.
 */
export async function closeConnections(
  s: RabbitTestSettings,
  vhost: string,
  withinMs = 15_000,
): Promise<number> {
  const api = management(s)
  const list = async () =>
    (await api.request('GET', `/api/vhosts/${encodeURIComponent(vhost)}/connections`)) as { name: string }[]
  const deadline = Date.now() + withinMs
  let all = await list()
  while (!all.length && Date.now() < deadline) {
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
