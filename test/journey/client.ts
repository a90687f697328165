// The client the journey drives the app with: generated from the reference's OpenAPI schema
// (openapi-typescript types of test/contract/reference-openapi.json, openapi-fetch at run time),
// and validating every answer against that schema as the reference's own clients do.
import assert, { AssertionError } from 'node:assert/strict'
import createClient, { type Client, type Middleware } from 'openapi-fetch'
import type { components, paths } from './generated/reference-api.js'
import { contract } from '../support/contract-watch.js'
import { formatViolation } from '../contract/contract.js'

export type Api = Client<paths>
export type Schemas = components['schemas']

/** Rejects an answer that breaks the wire contract, naming the operation, pointer, rule and value. */
const validating: Middleware = {
  async onResponse({ request, response }) {
    const url = new URL(request.url)
    const violations = contract().check({
      method: request.method,
      url: url.pathname + url.search,
      status: response.status,
      contentType: response.headers.get('content-type') ?? '',
      body: await response.clone().text(),
    })
    if (violations.length) throw new AssertionError({ message: violations.map(formatViolation).join('\n') })
    return undefined
  },
}

/** A generated client for `baseUrl`, authenticated with `token` when given. */
export function apiClient(
  baseUrl: string,
  token?: string,
  fetch: (request: Request) => Promise<Response> = globalThis.fetch,
): Api {
  const api = createClient<paths>({
    baseUrl,
    fetch,
    headers: token ? { Authorization: `Token ${token}` } : {},
  })
  api.use(validating)
  return api
}

/** The body of an answer that must have this status (the error body is shown when it has not). */
export async function answer<D>(
  status: number,
  call: Promise<{ data?: D; error?: unknown; response: Response }>,
): Promise<D> {
  const r = await call
  assert.equal(
    r.response.status,
    status,
    `${r.response.url} answered ${r.response.status}: ${JSON.stringify(r.error ?? r.data)}`,
  )
  return r.data as D
}

/** The uuids of a list that must answer 200, in its order. */
export async function uuidsOf(
  call: Promise<{ data?: { uuid?: string }[]; error?: unknown; response: Response }>,
): Promise<(string | undefined)[]> {
  return (await answer(200, call)).map((x) => x.uuid)
}

/** Multipart form data of one file field, for the endpoints that take an upload. */
export function formData(fields: Record<string, Blob | null | undefined>, filename: string): FormData {
  const form = new FormData()
  for (const [name, value] of Object.entries(fields)) if (value) form.append(name, value, filename)
  return form
}
