// What happens to the rest of a request body the server answers before reading it all: a JSON
// body over BODY_LIMIT_BYTES (413 as soon as Content-Length or the bytes read say so), an upload
// over UPLOAD_LIMIT_BYTES, a 401 given before the body is looked at.
import type { IncomingMessage } from 'node:http'
import type { FastifyInstance } from 'fastify'

/**
 * How much of the rest of such a body is read and thrown away before the answer goes out. Well
 * above what a client overshoots a limit by (an upload a few times UPLOAD_LIMIT_BYTES); a client
 * that sends more gets the answer at once and the connection closed, as before. The time it may
 * take is bounded by REQUEST_TIMEOUT_MS.
 */
export const DRAIN_LIMIT_BYTES = 64 * 1024 * 1024

/** Reads and discards the rest of the body: true once it has ended, false past `limit` bytes or
 * when the connection goes away first. */
function discardRest(req: IncomingMessage, limit: number): Promise<boolean> {
  return new Promise((resolve) => {
    let discarded = 0
    const settle = (ended: boolean) => {
      req.off('data', onData)
      req.off('end', onEnd)
      req.off('error', onGone)
      req.off('close', onGone)
      resolve(ended)
    }
    const onData = (chunk: Buffer) => {
      discarded += chunk.length
      if (discarded > limit) settle(false)
    }
    const onEnd = () => settle(true)
    const onGone = () => settle(false)
    req.on('data', onData)
    req.on('end', onEnd)
    req.on('error', onGone)
    req.on('close', onGone)
    req.resume()
  })
}

/**
 * Lets a client that writes its whole body before reading the answer (Node's http client, Python
 * requests: anything that does not wait for `100 Continue`) read an answer the server gives
 * before it has read the body. Closing a socket that still has unread input makes the kernel
 * reset the connection, and the reset destroys the answer on the client's side before it is
 * read: the client saw a broken pipe or a reset instead of the 413. Sending the answer at once
 * and reading on (nginx's lingering close) is not enough either: Node's http client, once it has
 * the whole answer, stops writing a body it sends with backpressure and hangs. So the rest of the
 * body is read and discarded first, up to DRAIN_LIMIT_BYTES, and the answer goes out after it;
 * a connection that then closes has no unread input left.
 *
 * A body declared (Content-Length) larger than the limit, or found larger while it is read, is
 * not read further: the answer goes out at once and the connection is closed.
 */
export function installBodyDrain(app: FastifyInstance, limit = DRAIN_LIMIT_BYTES): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    const req = request.raw
    // Only a request from a socket whose body has not been read to its end (app.inject's
    // requests have no `complete`).
    if (req.complete !== false) {
      done(null, payload)
      return
    }
    if (Number(req.headers['content-length']) > limit) {
      void reply.header('connection', 'close')
      done(null, payload)
      return
    }
    void discardRest(req, limit).then((ended) => {
      if (!ended) void reply.header('connection', 'close')
      done(null, payload)
    })
  })
}
