// Builds the app for a test file on a fresh database: in-memory SQLite by default, or a fresh
// PostgreSQL schema when TEST_DATABASE_URL points at PostgreSQL (CI runs the suite both ways).
import { randomBytes } from 'node:crypto'
import { after, before } from 'node:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { buildApp, type AppDeps } from '../../src/app.js'
import { loadConfig, type Config } from '../../src/config.js'
import { createDatabase, dialectOf, dropSchema, type Database } from '../../src/db/database.js'
import type { AppContext } from '../../src/context.js'
import { Conformance } from './conformance.js'
import { ContractWatch } from './contract-watch.js'
import { schemaFromTemplate } from './pg-template.js'

export class TestClock {
  private t: number
  constructor(start = '2026-01-15T10:00:00.000Z') {
    this.t = Date.parse(start)
  }
  now = (): Date => new Date(this.t)
  set(iso: string): void {
    this.t = Date.parse(iso)
  }
  advance(ms: number): void {
    this.t += ms
  }
  advanceHours(h: number): void {
    this.t += h * 3600 * 1000
  }
}

export interface TestApp {
  app: FastifyInstance
  ctx: AppContext
  clock: TestClock
  config: Config
  dialect: 'sqlite' | 'postgres'
  database: Database
  /** Responses that did not match the served OpenAPI document (checked at close). */
  conformance: Conformance
  /** Responses that broke the reference's wire contract: app.inject rejects on them, and any left
   * (answers over a socket) fail the file at close. */
  contract: ContractWatch
  close(): Promise<void>
}

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || 'sqlite::memory:'

/**
 * `sharing`: a second app on that app's database (which stays that app's to close);
 * `instrument`: called on the new instance before anything is registered (to add hooks); `deps`:
 * what the app would otherwise take from the system (e.g. name resolution).
 */
export async function buildTestApp(
  overrides: Partial<Config> = {},
  clock = new TestClock(),
  sharing?: TestApp,
  instrument?: (app: FastifyInstance) => void,
  deps: Pick<AppDeps, 'lookupHost'> = {},
): Promise<TestApp> {
  const url = overrides.databaseUrl ?? TEST_DATABASE_URL
  const dialect = dialectOf(url)
  const schema = sharing || dialect !== 'postgres' ? undefined : `t_${randomBytes(6).toString('hex')}`
  const templated = schema ? await schemaFromTemplate(url, schema) : false
  // A lost LISTEN connection is opened again at once rather than after the server's second.
  const database = sharing?.database ?? (await createDatabase(url, { schema, poolSize: 5, listenRetryMs: 5 }))
  const config = loadConfig(
    {},
    {
      databaseUrl: url,
      logLevel: process.env.TEST_LOG_LEVEL || 'silent',
      tokenCacheSeconds: 0,
      workerEnabled: false,
      uploadDir: mkdtempSync(join(tmpdir(), 'marketplace-uploads-')),
      callbackAllowPrivate: true,
      ...overrides,
    },
  )
  const conformance = new Conformance()
  const contract = new ContractWatch()
  const app = await buildApp(config, {
    clock: clock.now,
    database,
    // A schema made from the template holds every migration already.
    migrate: !templated,
    ...deps,
    instrument: (a) => {
      conformance.install(a)
      contract.install(a)
      instrument?.(a)
    },
  })
  await app.ready()
  return {
    app,
    ctx: app.ctx,
    clock,
    config,
    dialect,
    database,
    conformance,
    contract,
    async close() {
      await app.close()
      if (!sharing) await database.close()
      rmSync(config.uploadDir, { recursive: true, force: true })
      if (schema) await dropSchema(url, schema)
      contract.assertNoneLeft()
      if (conformance.problems.length) {
        throw new Error(
          `responses not matching /api/schema/:\n${[...new Set(conformance.problems)].join('\n')}`,
        )
      }
    },
  }
}

/**
 * The app a test file's (or a suite's) tests share, on its own database: built in a `before` of the
 * suite it is called in, so its fields are there from that suite's first test on, and closed in an
 * `after`. Node 20 starts a file's top-level `before` hooks as they are declared, without waiting for
 * the one before, so another `before` must not count on the app: what the tests need built on it
 * goes in `setup`, which runs in the same `before`, right after the app is built; the fields it
 * answers join the app's (e.g. the users the tests act as). `overrides` are the app's
 * configuration, as for `buildTestApp`.
 */
export function sharedTestApp(): TestApp
export function sharedTestApp<X extends object>(
  setup: (t: TestApp) => Promise<X>,
  overrides?: Partial<Config>,
): TestApp & X
export function sharedTestApp<X extends object>(
  setup?: (t: TestApp) => Promise<X>,
  overrides: Partial<Config> = {},
): TestApp & X {
  const t = {} as TestApp & X
  before(async () => {
    Object.assign(t, await buildTestApp(overrides))
    if (setup) Object.assign(t, await setup(t))
  })
  after(() => t.close())
  return t
}
