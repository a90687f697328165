import assert from 'node:assert/strict'
import { test } from 'node:test'
import { loadConfig } from './config.js'
import { DATABASE_POOL_SIZE } from './db/database.js'

test('settings added to the current time are bounded, so the result is always a date', () => {
  assert.throws(
    () => loadConfig({ CALLBACK_BUDGET_MS: '1000000000000000' }),
    /CALLBACK_BUDGET_MS must be an integer from 1 to 604800000/,
  )
  assert.throws(() => loadConfig({ CALLBACK_TIMEOUT_MS: '604800001' }), /CALLBACK_TIMEOUT_MS/)
  assert.throws(() => loadConfig({ FEEDBACK_TOKEN_DAYS: '1e15' }), /FEEDBACK_TOKEN_DAYS/)
  const widest = loadConfig({ CALLBACK_BUDGET_MS: '604800000', FEEDBACK_TOKEN_DAYS: '36500' })
  assert.equal(widest.callbackBudgetMs, 604800000)
  assert.ok(!Number.isNaN(new Date(Date.parse('2026-01-01') + widest.callbackBudgetMs).getTime()))
})

test('the login throttle is on by default and REDIS_URL is read as given', () => {
  assert.equal(loadConfig({}).loginRateLimitPerMinute, 10)
  assert.equal(loadConfig({ LOGIN_RATE_LIMIT_PER_MINUTE: '0' }).loginRateLimitPerMinute, 0)
  assert.equal(loadConfig({}).redisUrl, null)
  assert.equal(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379/2' }).redisUrl, 'redis://127.0.0.1:6379/2')
})

test('TRUST_PROXY takes a hop count or proxy addresses and CIDRs, and refuses true', () => {
  assert.equal(loadConfig({}).trustProxy, false)
  assert.equal(loadConfig({ TRUST_PROXY: 'false' }).trustProxy, false)
  assert.equal(loadConfig({ TRUST_PROXY: '0' }).trustProxy, false)
  assert.equal(loadConfig({ TRUST_PROXY: '2' }).trustProxy, 2)
  assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.5, 10.1.0.0/16,::1' }).trustProxy, [
    '10.0.0.5',
    '10.1.0.0/16',
    '::1',
  ])
  for (const value of ['true', 'TRUE', 'yes', 'on']) {
    assert.throws(() => loadConfig({ TRUST_PROXY: value }), /TRUST_PROXY=.* would trust the X-Forwarded-For/)
  }
  assert.throws(() => loadConfig({ TRUST_PROXY: 'proxy.example' }), /TRUST_PROXY: "proxy.example"/)
  assert.throws(() => loadConfig({ TRUST_PROXY: '10.0.0.0/99' }), /TRUST_PROXY/)
  assert.throws(() => loadConfig({ TRUST_PROXY: '101' }), /TRUST_PROXY/)
})

test('DATABASE_POOL_SIZE takes a positive count of connections and refuses anything else', () => {
  assert.equal(loadConfig({}).databasePoolSize, DATABASE_POOL_SIZE)
  assert.equal(loadConfig({ DATABASE_POOL_SIZE: '' }).databasePoolSize, DATABASE_POOL_SIZE)
  assert.equal(loadConfig({ DATABASE_POOL_SIZE: '1' }).databasePoolSize, 1)
  assert.equal(loadConfig({ DATABASE_POOL_SIZE: '25' }).databasePoolSize, 25)
  for (const value of ['0', '-1', '2.5', 'ten', '1001']) {
    assert.throws(
      () => loadConfig({ DATABASE_POOL_SIZE: value }),
      /DATABASE_POOL_SIZE must be an integer from 1 to 1000/,
    )
  }
})
