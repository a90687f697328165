// A small HTTP client over app.inject for tests.
import type { FastifyInstance } from 'fastify'

export interface Res<T = any> {
  status: number
  body: T
  text: string
  headers: Record<string, string | string[] | number | undefined>
}

export type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS'

/** An injected answer: its status, headers and body text. */
export interface Injected {
  statusCode: number
  headers: Record<string, string | string[] | number | undefined>
  body: string
}

/**
 * `app.inject`, except that an answer that is an event stream (which never ends by itself) is
 * cut once its headers are in: its status and headers, with an empty body.
 */
export async function injectUntilStream(
  app: FastifyInstance,
  opts: { method: string; url: string; headers?: Record<string, string>; payload?: string | Buffer },
): Promise<Injected> {
  const abort = new AbortController()
  const r = await app.inject({
    ...opts,
    method: opts.method as 'GET',
    payloadAsStream: true,
    signal: abort.signal,
  })
  const stream = r.stream()
  if (String(r.headers['content-type'] ?? '').startsWith('text/event-stream')) {
    stream.on('error', () => undefined)
    abort.abort()
    return { statusCode: r.statusCode, headers: r.headers, body: '' }
  }
  const chunks: Buffer[] = []
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer))
  return { statusCode: r.statusCode, headers: r.headers, body: Buffer.concat(chunks).toString('utf8') }
}

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
  const r = url.startsWith('/api/events/stream')
    ? await injectUntilStream(app, { method, url, headers, payload })
    : await app.inject({ method, url, headers, payload })
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
