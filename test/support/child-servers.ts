// A test file's server processes on their own database, and the calls its tests make to them over
// the socket as a client holding a token (for the crash and multi-process tests).
import { after, before } from 'node:test'
import { checkedFetch, childDatabase, startServer, type ServerProcess } from './server.js'

export interface Answer {
  status: number
  body: any
}

/** Calls to a server process as the holder of `token`: JSON in and out, checked against the wire
 * contract; `base` is the process's address. */
export function tokenApi(token: string) {
  return async (base: string, method: string, path: string, body?: unknown): Promise<Answer> => {
    const r = await checkedFetch(`${base}${path}`, {
      method,
      headers: { authorization: `Token ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    })
    const text = await r.text()
    return { status: r.status, body: text ? JSON.parse(text) : null }
  }
}

export type TokenApi = ReturnType<typeof tokenApi>

/** The uuid of the role named `name`, from the roles list at `base`. */
export async function roleUuid(api: TokenApi, base: string, name: string): Promise<string> {
  const roles = await api(base, 'GET', '/api/roles/?page_size=100')
  return (roles.body as { name: string; uuid: string }[]).find((r) => r.name === name)!.uuid
}

/** The token a password login at `base` answers. */
export async function passwordToken(base: string, username: string, password: string): Promise<string> {
  const login = await checkedFetch(`${base}/api-auth/password/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  })
  const { token } = (await login.json()) as { token: string }
  return token
}

/**
 * The file's database for child processes and the servers started on it, each with `staffToken` as
 * its bootstrap staff token. Registers the file's hooks: the database is made before its tests;
 * after them every server started is stopped with `signal` and the database dropped. Call it at
 * the top level of the file, before the file's own hooks.
 */
export function childServers(staffToken: string, signal: NodeJS.Signals = 'SIGTERM') {
  let db: { url: string; cleanup: () => Promise<void> }
  const started: ServerProcess[] = []
  before(() => {
    db = childDatabase()
  })
  after(async () => {
    for (const s of started) await s.stop(signal)
    await db.cleanup()
  })
  return {
    get databaseUrl() {
      return db.url
    },
    /** A server on the file's database; `env` adds to its settings, `nodeArgs` to node's options. */
    async start(env: Record<string, string> = {}, nodeArgs: string[] = []): Promise<ServerProcess> {
      const server = await startServer(
        { DATABASE_URL: db.url, BOOTSTRAP_STAFF_TOKEN: staffToken, ...env },
        nodeArgs,
      )
      started.push(server)
      return server
    },
  }
}
