// A small HTTP client over app.inject for tests.
import type { FastifyInstance } from 'fastify'

export interface Res<T = any> {
  status: number
  body: T
  text: string
  headers: Record<string, string | string[] | number | undefined>
}

export type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS'

export async function call<T = any>(
  app: FastifyInstance,
  method: Method,
  url: string,
  opts: {
    token?: string | null
    body?: unknown
    headers?: Record<string, string>
    payload?: string | Buffer
  } = {},
): Promise<Res<T>> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) }
  if (opts.token) headers.authorization = `Token ${opts.token}`
  let payload: string | Buffer | undefined = opts.payload
  if (opts.body !== undefined) {
    headers['content-type'] ??= 'application/json'
    payload = JSON.stringify(opts.body)
  }
  const r = await app.inject({ method, url, headers, payload })
  let body: any = undefined
  if (r.body) {
    try {
      body = JSON.parse(r.body)
    } catch {
      body = r.body
    }
  }
  return { status: r.statusCode, body, text: r.body, headers: r.headers }
}

/** Binds a token: `const as = client(app, token); await as.get('/api/...')`. */
export function client(app: FastifyInstance, token?: string | null) {
  return {
    get: <T = any>(url: string) => call<T>(app, 'GET', url, { token }),
    head: (url: string) => call(app, 'HEAD', url, { token }),
    post: <T = any>(url: string, body?: unknown) => call<T>(app, 'POST', url, { token, body }),
    put: <T = any>(url: string, body?: unknown) => call<T>(app, 'PUT', url, { token, body }),
    patch: <T = any>(url: string, body?: unknown) => call<T>(app, 'PATCH', url, { token, body }),
    delete: <T = any>(url: string) => call<T>(app, 'DELETE', url, { token }),
  }
}

/** The path of an absolute URL returned by the API. */
export function pathOf(url: string): string {
  const u = new URL(url)
  return u.pathname + u.search
}

/** The scheme and host of the URLs the app answers tests with. */
export const BASE = 'http://localhost:80'

/** The uuids of a list's records, in order. */
export const uuids = (body: { uuid: string }[]) => body.map((x) => x.uuid)
