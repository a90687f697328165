// The world the generated-client journey (test/journey/) runs in: a test app listening on a real
// socket, fixtures for the setup outside the nine contract areas, and the job queue and clock.
import type { TestApp } from './app.js'
import { grant, makeCustomer, makeProject, makeUser, type Ref } from './fixtures.js'
import { makeOffering, makeServiceProvider } from './catalog-fixtures.js'
import { makePlan } from './cost-policies-fixtures.js'
import { apiClient } from '../journey/client.js'
import type { Link, User, World } from '../journey/world.js'

type Scope = { type: 'customer' | 'project' | 'offering'; id: number }

/** Listens on a free local port and answers the journey's world over it. */
export async function journeyWorld(t: TestApp): Promise<World> {
  const baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' })
  const { ctx } = t
  const scopes = new Map<string, Scope & { ref: Ref }>()
  const here = (url: string) => url.replace(/^https?:\/\/[^/]+/, baseUrl)
  const link = (ref: Ref, type: Scope['type']): Link => {
    scopes.set(ref.uuid, { type, id: ref.id, ref })
    return { uuid: ref.uuid, url: here(ref.url), name: ref.name }
  }
  const known = (l: Link) => {
    const s = scopes.get(l.uuid)
    if (!s) throw new Error(`not made by this world: ${l.url}`)
    return s
  }
  return {
    baseUrl,
    api: (user?: User) => apiClient(baseUrl, user?.token),
    async http(method, path, user, body) {
      const headers: Record<string, string> = {}
      if (user) headers.authorization = `Token ${user.token}`
      if (body !== undefined) headers['content-type'] = 'application/json'
      const r = await fetch(`${baseUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      const text = await r.text()
      return { status: r.status, body: text ? JSON.parse(text) : undefined }
    },
    async drain() {
      await ctx.jobs.drain()
    },
    clock: {
      now: () => t.clock.now(),
      advanceHours: (hours: number) => t.clock.advanceHours(hours),
    },
    async user(opts = {}) {
      const u = await makeUser(ctx, opts)
      return { uuid: u.uuid, url: here(u.url), username: u.username, token: u.token }
    },
    async customer() {
      return link(await makeCustomer(ctx), 'customer')
    },
    async provider() {
      const c = await makeCustomer(ctx)
      await makeServiceProvider(ctx, c)
      return link(c, 'customer')
    },
    async project(customer) {
      return link(await makeProject(ctx, known(customer).ref), 'project')
    },
    async grant(user, role, scope) {
      const s = known(scope)
      const row = await ctx.db
        .selectFrom('users')
        .select('id')
        .where('uuid', '=', user.uuid)
        .executeTakeFirstOrThrow()
      await grant(ctx, { ...user, id: row.id }, role, { type: s.type, id: s.id })
    },
    async offering(provider, opts) {
      const settings = opts.serviceSettings
        ? await ctx.db
            .selectFrom('service_settings')
            .select('id')
            .where('uuid', '=', opts.serviceSettings.uuid)
            .executeTakeFirstOrThrow()
        : null
      const o = await makeOffering(ctx, known(provider).ref, {
        type: opts.type,
        serviceSettingsId: settings?.id ?? null,
      })
      return link(o, 'offering')
    },
    async plan(offering, unitPrice) {
      const p = await makePlan(ctx, known(offering).ref, { unit: 'month', unitPrice })
      return { uuid: p.uuid, url: here(p.url), name: p.name }
    },
  }
}
