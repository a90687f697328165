// A delivery to a host that accepts and never answers ends at its timeout, even when garbage
// collections run while it waits (a collected timeout signal used to leave it waiting forever).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'

test('a silent callback receiver is given up at the timeout under garbage collection', () => {
  const r = spawnSync(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', 'test/support/gc-silent-delivery.ts', '300'],
    { encoding: 'utf8', timeout: 60_000 },
  )
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`)
  const { outcome, ms } = JSON.parse(r.stdout.trim().split('\n').pop()!) as { outcome: string; ms: number }
  assert.notEqual(outcome, 'answered')
  assert.ok(ms >= 250 && ms < 3000, `ended after ${ms} ms`)
})
