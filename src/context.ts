import type { Kysely } from 'kysely'
import type { FastifyBaseLogger } from 'fastify'
import type { Config } from './config.js'
import type { DB } from './db/tables.js'
import type { Dialect } from './db/database.js'
import type { Notifications } from './db/notifications.js'
import type { JobQueue } from './jobs/queue.js'

/** Every address of a host name (as `dns.lookup` with `all: true` answers). */
export type LookupHost = (hostname: string) => Promise<{ address: string; family: number }[]>

/** Everything a service needs: handed to every area at registration, never global. */
export interface AppContext {
  db: Kysely<DB>
  dialect: Dialect
  config: Config
  /** SECRET_KEY, else the install's own secret from the database (never shared by two installs). */
  secretKey: string
  /** The current time; tests replace it to control clocks. */
  clock: () => Date
  newUuid: () => string
  /** Name resolution for outgoing requests; tests replace it (no real DNS). */
  lookupHost: LookupHost
  jobs: JobQueue
  log: FastifyBaseLogger
  /** Drops cached token look-ups after users or role grants change. */
  actorsChanged: () => void
  /** SQLite: calls `listener` after each commit of writes by this process; the answer stops it. */
  onCommit?: (listener: () => void) => () => void
  /** PostgreSQL: the process's LISTEN connection; subscribe to a channel with `listen`. */
  notifications?: Notifications
}
