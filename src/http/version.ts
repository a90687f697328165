// GET /api/version/: the installed version of the server, which the reference's clients (the site
// agent at every start among them) read as `{"version": ...}`. Any authenticated caller may read
// it; the reference also tells staff the newest released version, which a server that does not
// look outside itself has no way to know, so `latest_version` is never sent.
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { errors } from './schemas.js'

export const VersionSchema = Type.Object({
  version: Type.String({ description: 'the installed version of the server' }),
})

export function installVersion(app: FastifyInstance, version: string): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/api/version/',
    {
      schema: {
        tags: ['version'],
        summary: 'Get the installed version of the server',
        response: { 200: VersionSchema, 401: errors[401] },
      },
    },
    // The route requires a token, as every API route does unless it says otherwise.
    async () => ({ version }),
  )
}
