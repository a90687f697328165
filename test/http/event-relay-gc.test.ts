// The relay's calls to RabbitMQ end at their timeout even when garbage collections run while they
// wait on a broker that accepts connections and never answers.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'

test('a silent broker is given up at the timeout under garbage collection', () => {
  const r = spawnSync(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', 'test/support/gc-silent-broker.ts', '300'],
    { encoding: 'utf8', timeout: 60_000 },
  )
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`)
  const outcomes = JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<
    string,
    { outcome: string; ms: number }
  >
  for (const call of ['management', 'publish']) {
    const { outcome, ms } = outcomes[call]!
    assert.equal(outcome, 'BrokerError', `${call}: ${outcome}`)
    assert.ok(ms >= 250 && ms < 3000, `${call} ended after ${ms} ms`)
  }
  assert.ok(outcomes.close!.ms < 3000, `close ended after ${outcomes.close!.ms} ms`)
})
