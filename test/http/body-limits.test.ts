// Bodies over the limits, sent over a real socket by a plain Node http client that writes its
// whole body before it reads the answer: the client must get to read the 413.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { request, type Agent } from 'node:http'
import type { AddressInfo } from 'node:net'
import { buildTestApp, type TestApp } from '../support/app.js'
import { client } from '../support/client.js'
import { makeCustomer, makeProject, makeUser, type UserRef } from '../support/fixtures.js'
import { makeOffering } from '../support/catalog-fixtures.js'

const MiB = 1024 * 1024
const TOO_LARGE = { detail: 'Request body is too large.' }

let t: TestApp
let staff: UserRef
let port: number
before(async () => {
  t = await buildTestApp({ bodyLimitBytes: MiB, uploadLimitBytes: MiB })
  staff = await makeUser(t.ctx, { staff: true })
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  port = (t.app.server.address() as AddressInfo).port
})
after(async () => {
  await t.close()
})

interface Sent {
  status?: number
  body: string
  /** Errors the client saw (a broken pipe or a reset while it was still writing). */
  errors: string[]
  /** The client wrote its whole body. */
  finished: boolean
}

/**
 * POSTs `head`, then `size` bytes of spaces in 64 KiB writes that wait for the socket to drain
 * (as a piped stream does), then `tail`; settles when the request is closed.
 */
function post(
  path: string,
  opts: {
    size: number
    contentType: string
    head?: Buffer
    tail?: Buffer
    chunked?: boolean
    agent?: Agent | false
  },
): Promise<Sent> {
  const head = opts.head ?? Buffer.alloc(0)
  const tail = opts.tail ?? Buffer.alloc(0)
  const length = head.length + opts.size + tail.length
  return new Promise((resolve) => {
    const out: Sent = { body: '', errors: [], finished: false }
    const req = request({
      host: '127.0.0.1',
      port,
      path,
      method: 'POST',
      agent: opts.agent,
      headers: {
        authorization: `Token ${staff.token}`,
        'content-type': opts.contentType,
        ...(opts.chunked ? {} : { 'content-length': String(length) }),
      },
    })
    req.on('response', (res) => {
      out.status = res.statusCode
      res.setEncoding('utf8')
      res.on('data', (c: string) => (out.body += c))
    })
    req.on('error', (e) => out.errors.push(String(e)))
    req.on('finish', () => (out.finished = true))
    req.on('close', () => resolve(out))
    const chunk = Buffer.alloc(64 * 1024, 0x20)
    let sent = 0
    req.write(head)
    const write = () => {
      while (sent < opts.size) {
        const n = Math.min(chunk.length, opts.size - sent)
        sent += n
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
          req.once('drain', write)
          return
        }
      }
      req.end(tail)
    }
    write()
  })
}

function assertReadable413(r: Sent) {
  assert.deepEqual(r.errors, [])
  assert.equal(r.finished, true)
  assert.equal(r.status, 413)
  assert.deepEqual(JSON.parse(r.body), TOO_LARGE)
}

describe('a JSON body over BODY_LIMIT_BYTES sent without waiting for 100 Continue', () => {
  test('the client writes all 12 MiB and reads the 413 with its body', async () => {
    const r = await post('/api/customers/', { size: 12 * MiB, contentType: 'application/json' })
    assertReadable413(r)
  })

  test('so does a client that asks to close the connection, and one sending chunks', async () => {
    assertReadable413(
      await post('/api/customers/', { size: 12 * MiB, contentType: 'application/json', agent: false }),
    )
    assertReadable413(
      await post('/api/customers/', { size: 12 * MiB, contentType: 'application/json', chunked: true }),
    )
  })

  test('the server is still there for the next request', async () => {
    await post('/api/customers/', { size: 12 * MiB, contentType: 'application/json' })
    const r = await fetch(`http://127.0.0.1:${port}/api/users/me/`, {
      headers: { authorization: `Token ${staff.token}` },
    })
    assert.equal(r.status, 200)
  })
})

describe('an upload over UPLOAD_LIMIT_BYTES', () => {
  test('the client writes all 12 MiB and reads the 413 with its body', async () => {
    const c = await makeCustomer(t.ctx)
    const p = await makeProject(t.ctx, c)
    const offering = await makeOffering(t.ctx, c, { type: 'Marketplace.Slurm' })
    const order = await client(t.app, staff.token).post('/api/marketplace-orders/', {
      offering: offering.url,
      project: p.url,
    })
    assert.equal(order.status, 201, order.text)
    const boundary = '----marketplace-test'
    const r = await post(`/api/marketplace-orders/${order.body.uuid}/update_attachment/`, {
      size: 12 * MiB,
      contentType: `multipart/form-data; boundary=${boundary}`,
      head: Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="attachment"; filename="a.pdf"\r\n` +
          'Content-Type: application/pdf\r\n\r\n%PDF-',
      ),
      tail: Buffer.from(`\r\n--${boundary}--\r\n`),
    })
    assertReadable413(r)
  })
})
