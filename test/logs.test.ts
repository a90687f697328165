// Logs carry a request id and never a token or a password.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { createDatabase } from '../src/db/database.js'
import { TEST_DATABASE_URL } from './support/app.js'
import { makeUser } from './support/fixtures.js'
import { randomBytes } from 'node:crypto'
import { dialectOf, dropSchema } from '../src/db/database.js'

test('tokens and passwords never reach the logs; every line has a request id', async () => {
  let captured = ''
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      captured += chunk.toString()
      done()
    },
  })
  const schema =
    dialectOf(TEST_DATABASE_URL) === 'postgres' ? `l_${randomBytes(6).toString('hex')}` : undefined
  const database = await createDatabase(TEST_DATABASE_URL, { schema })
  const app = await buildApp(
    loadConfig({}, { databaseUrl: TEST_DATABASE_URL, logLevel: 'trace', workerEnabled: false }),
    {
      database,
      logStream: stream,
    },
  )
  try {
    const staff = await makeUser(app.ctx, { staff: true })
    const password = 'very-secret-password-123'
    await app.inject({
      method: 'POST',
      url: '/api/users/',
      headers: { authorization: `Token ${staff.token}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ username: 'logged', password }),
    })
    await app.inject({
      method: 'POST',
      url: '/api-auth/password/',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ username: 'logged', password }),
    })
    await app.inject({ url: `/api/users/me/?x-auth-token=${staff.token}` })
    await app.inject({ url: '/api/users/me/', headers: { authorization: 'Token wrong-token-value-xyz' } })
    assert.ok(captured.includes('request completed'))
    assert.equal(captured.includes(staff.token), false, 'a token was logged')
    assert.equal(captured.includes(password), false, 'a password was logged')
    assert.equal(captured.includes('wrong-token-value-xyz'), false, 'a presented token was logged')
    for (const line of captured.trim().split('\n')) {
      const entry = JSON.parse(line) as { reqId?: string; msg: string }
      if (entry.msg === 'incoming request' || entry.msg === 'request completed') assert.ok(entry.reqId)
    }
  } finally {
    await app.close()
    await database.close()
    if (schema) await dropSchema(TEST_DATABASE_URL, schema)
  }
})
