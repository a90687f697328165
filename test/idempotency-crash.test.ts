// A POST with an Idempotency-Key whose server is killed (SIGKILL) between its write and its
// answer: stopped after its writes and stored answer but before they commit, the retry against
// the restarted server performs it; stopped after the commit but before the answer, the retry
// answers the stored answer. Either way the write is made exactly once.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { childServers } from './support/child-servers.js'
import { checkedFetch, type ServerProcess } from './support/server.js'
import { PAUSED_LINE } from './support/idempotency-pause.js'

const TOKEN = 'idempotency-crash-staff-token'
const servers = childServers(TOKEN, 'SIGKILL')
const PRELOAD = ['--import', './test/support/idempotency-pause.ts']

function postCustomer(base: string, key: string, name: string): Promise<Response> {
  return checkedFetch(`${base}/api/customers/`, {
    method: 'POST',
    headers: { authorization: `Token ${TOKEN}`, 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify({ name }),
  })
}

/** Resolves once the server has written `line` on stderr. */
function said(server: ServerProcess, line: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let text = ''
    server.child.stderr!.on('data', (d: Buffer) => {
      text += d.toString()
      if (text.includes(line)) resolve()
    })
    server.child.once('exit', () => reject(new Error(`the server exited before saying "${line}": ${text}`)))
  })
}

/** The retry: a 409 only while the database has not yet seen the killed process's transaction end. */
async function retry(base: string, key: string, name: string): Promise<Response> {
  const deadline = Date.now() + 30_000
  for (;;) {
    const r = await postCustomer(base, key, name)
    if (r.status !== 409 || Date.now() > deadline) return r
    await r.text()
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

async function customersNamed(base: string, name: string): Promise<number> {
  const r = await checkedFetch(`${base}/api/customers/?name_exact=${encodeURIComponent(name)}`, {
    headers: { authorization: `Token ${TOKEN}` },
  })
  assert.equal(r.status, 200)
  return ((await r.json()) as unknown[]).length
}

for (const point of ['written', 'committed'] as const) {
  test(`killed ${point === 'written' ? 'before its commit' : 'after its commit'}, a POST is made once by its retry`, async () => {
    const key = `crash-${point}`
    const name = `idempotency-crash-${point}`
    const env = { WORKER_ENABLED: 'false' }
    const paused = await servers.start({ ...env, TEST_IDEMPOTENCY_PAUSE: point }, PRELOAD)
    const stopped = said(paused, `${PAUSED_LINE} ${point}`)
    const first = postCustomer(paused.url, key, name).then(
      (r) => r.status,
      () => 'no answer',
    )
    await stopped
    await paused.stop('SIGKILL')
    assert.equal(await first, 'no answer')

    const server = await servers.start(env)
    const r = await retry(server.url, key, name)
    assert.equal(r.status, 201, await r.clone().text())
    const body = (await r.json()) as { name: string; uuid: string }
    assert.equal(body.name, name)
    // Not committed: the retry performed it. Committed: the retry answers what was stored.
    assert.equal(r.headers.get('idempotent-replayed'), point === 'written' ? null : 'true')
    assert.equal(await customersNamed(server.url, name), 1)

    const again = await postCustomer(server.url, key, name)
    assert.equal(again.status, 201)
    assert.equal(again.headers.get('idempotent-replayed'), 'true')
    assert.equal(((await again.json()) as { uuid: string }).uuid, body.uuid)
    assert.equal(await customersNamed(server.url, name), 1)
    await server.stop('SIGTERM')
  })
}
