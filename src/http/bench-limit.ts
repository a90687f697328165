// The benchmark's reference point: the same Fastify stack and token check answering a
// precomputed JSON body, so every scenario can be quoted as a fraction of this limit.
// Registered only with BENCH_ROUTES=true.
import type { FastifyInstance } from 'fastify'
import { actorOf, staffOnly } from './auth.js'

export function installBenchLimit(app: FastifyInstance): void {
  const bodies = new Map<string, string>()
  app.post(
    '/bench/limit/:name',
    { schema: { hide: true }, preValidation: staffOnly },
    async (request, reply) => {
      bodies.set((request.params as { name: string }).name, JSON.stringify(request.body))
      return reply.code(204).send()
    },
  )
  app.get('/bench/limit/:name', { schema: { hide: true } }, async (request, reply) => {
    actorOf(request)
    const body = bodies.get((request.params as { name: string }).name) ?? '{}'
    return reply.type('application/json; charset=utf-8').send(body)
  })
}
