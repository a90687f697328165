// The bare stack the benchmark compares every scenario with: a Fastify server with no plugins and
// no hooks that checks the Authorization header against a Map and answers each request with the
// status, headers and body the real server gave for it (captured once before the load). It is
// what the same bytes cost on this HTTP stack without the server's plumbing, database and
// serialization. Started by bench/run.ts:
//
//   node --import tsx bench/bare-server.ts SPEC.json
//
// SPEC.json: {"port": N, "tokens": ["Token abc", ...],
//             "answers": [{"method": "GET", "urls": ["/api/x/", ...], "status": 200,
//                          "headers": {"content-type": "application/json"}, "body": "<base64>"}]}
import { readFileSync } from 'node:fs'
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify'

interface Answer {
  method: string
  urls: string[]
  status: number
  headers: Record<string, string>
  body: string
}

interface Spec {
  port: number
  tokens: string[]
  answers: Answer[]
}

const spec = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as Spec
const tokens = new Set(spec.tokens)
const answers = new Map<string, { status: number; headers: Record<string, string>; body: Buffer }>()
for (const a of spec.answers) {
  const answer = { status: a.status, headers: a.headers, body: Buffer.from(a.body, 'base64') }
  for (const url of a.urls) answers.set(`${a.method} ${url}`, answer)
}

const app = Fastify({ logger: false })
// As the server does, a request with a JSON content type and no body (an action's POST) is an
// empty object, not Fastify's 400.
app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
  try {
    done(null, body === '' ? {} : JSON.parse(body as string))
  } catch (e) {
    done(e as Error, undefined)
  }
})
app.route({
  method: ['GET', 'POST'],
  url: '*',
  handler: async (request: FastifyRequest, reply: FastifyReply) => {
    if (!tokens.has(request.headers.authorization ?? '')) {
      return reply.code(401).send({ detail: 'Invalid token.' })
    }
    const a = answers.get(`${request.method} ${request.url}`)
    if (!a) return reply.code(404).send({ detail: 'Not found.' })
    return reply.code(a.status).headers(a.headers).send(a.body)
  },
})

await app.listen({ port: spec.port, host: '127.0.0.1' })
const stop = () => void app.close().then(() => process.exit(0))
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
