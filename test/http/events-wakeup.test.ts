// An open stream learns of a commit at once, not at the next poll: on SQLite this process's own
// commits wake it, on PostgreSQL the commit's notification does. The poll is set to an hour here,
// so an event that arrives at all arrived by the wake-up.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { buildTestApp, type TestApp } from '../support/app.js'
import { client } from '../support/client.js'
import { makeCustomer, makeProject, makeUser, uniqueName } from '../support/fixtures.js'
import { makeOffering, makePlan } from '../support/catalog-fixtures.js'

let t: TestApp
let port: number

before(async () => {
  t = await buildTestApp({ eventPollMs: 3_600_000 })
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  port = (t.app.server.address() as AddressInfo).port
})
after(() => t.close())

/** Opens the stream and resolves with the first event's data, or rejects after `ms`. */
function firstEvent(token: string, query: string, ready: () => void, ms: number): Promise<any> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path: `/api/events/stream/${query}`,
        headers: { authorization: `Token ${token}`, accept: 'text/event-stream' },
      },
      (res) => {
        assert.equal(res.statusCode, 200)
        let buffer = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => {
          buffer += chunk
          const data = /^data: (.*)$/m.exec(buffer)
          if (data) {
            clearTimeout(timer)
            req.destroy()
            resolve(JSON.parse(data[1]!))
          }
        })
        ready()
      },
    )
    const timer = setTimeout(() => {
      req.destroy()
      reject(new Error(`no event within ${ms} ms of the commit`))
    }, ms)
    req.on('error', () => undefined)
    req.end()
  })
}

test('a commit reaches an open stream without waiting for the poll', async () => {
  const staff = await makeUser(t.ctx, { staff: true })
  const customer = await makeCustomer(t.ctx, uniqueName('Wake org'))
  const project = await makeProject(t.ctx, customer, { name: uniqueName('Wake project') })
  const offering = await makeOffering(t.ctx, customer, { type: 'Marketplace.Slurm' })
  const plan = await makePlan(t.ctx, offering, { unitPrice: '1' })
  let placed: Promise<{ status: number; body: any }> | null = null
  const event = await firstEvent(
    staff.token,
    // The only order of this file: placed once the stream answered, so it is past the catch-up.
    '?after=0&type=marketplace.order.created',
    () => {
      placed = client(t.app, staff.token).post('/api/marketplace-orders/', {
        offering: offering.url,
        plan: plan.url,
        project: project.url,
        attributes: { name: uniqueName('res') },
      })
    },
    10_000,
  )
  const order = await placed!
  assert.equal(order.status, 201, JSON.stringify(order.body))
  assert.equal(event.type, 'marketplace.order.created')
  assert.equal(event.data.uuid, order.body.uuid)
})
