// Command line: serve | worker | migrate | create-user | seed-demo
import { startRelay } from './areas/event-subscriptions/relay.js'
import { eventsAfter, onEventsCommitted } from './areas/events/service.js'
import { parseArgs } from 'node:util'
import cluster from 'node:cluster'
import v8 from 'node:v8'
import type { FastifyBaseLogger } from 'fastify'
import { loadConfig, type Config } from './config.js'
import { buildApp } from './app.js'
import { connectDatabase, describeDatabaseUrl } from './db/database.js'
import { listMigrations, migrateToLatest } from './db/migrate.js'
import { pino } from 'pino'
import { processLogger } from './log.js'
import { serveClusterMetrics } from './http/metrics.js'
import { ensureBootstrapStaff } from './areas/directory/service.js'
import { createUserWithToken, seedDemo } from './seed.js'

const USAGE = `usage: node dist/main.js <command>   (npm run cli -- <command>)

commands:
  serve [--workers N]        serve the API (runs migrations and the job worker)
  worker                     run only the job worker
  migrate                    apply pending database migrations, list them, and exit
  migrate --list             list every migration, applied or pending
  create-user --username X [--staff] [--support] [--password P]
                             create a user and print a new API token
  seed-demo                  fill a small demo data set and print its tokens
  jobs failed                list the failed jobs
  jobs retry <id> | --all    queue one failed job (or every one) again, with its attempts restored
`

/**
 * V8 lets the old generation grow to up to four times what the last full collection left before
 * it collects again; under a steady request load that is garbage, not data (the server's live heap
 * is about 40 MB), and it was a third of the process's memory. Growing by 30% keeps the resident
 * size near what is in use, at no measured cost in throughput (docs/performance.md).
 */
const HEAP_GROWING_PERCENT = 30

/** What an operator needs to know at start: which database, what was migrated, what runs. */
function logStart(
  log: FastifyBaseLogger,
  config: Config,
  migrationsApplied: string[],
  extra: Record<string, unknown> = {},
): void {
  log.info(
    {
      database: describeDatabaseUrl(config.databaseUrl),
      migrationsApplied,
      worker: config.workerEnabled,
      host: config.host,
      port: config.port,
      ...extra,
    },
    migrationsApplied.length
      ? `starting: ${migrationsApplied.length} migration(s) applied`
      : 'starting: database schema up to date',
  )
}

/**
 * The background work of a process that runs jobs: the job loop, and the relay of events to
 * RabbitMQ when it is configured (processes share it by lease). Answers what stops the relay
 * before the app closes (the app's close stops the jobs).
 */
function startBackground(app: Awaited<ReturnType<typeof buildApp>>, config: Config): () => Promise<void> {
  app.ctx.jobs.start(config.workerPollMs, config.jobRetentionDays)
  const relay = startRelay(app.ctx, { eventsAfter, onEventsCommitted })
  return async () => {
    await relay?.stop()
  }
}

async function serve(config: Config, workers: number): Promise<void> {
  if (workers > 1 && cluster.isPrimary) {
    // N processes sharing the port (node:cluster) and one database. Migrations and the bootstrap
    // user are done once here, before any process serves.
    const log = processLogger(config.logLevel)
    const setup = await buildApp({ ...config, logLevel: 'warn' })
    logStart(log, config, setup.migrationsApplied, { workers })
    if (config.bootstrapStaffToken) await ensureBootstrapStaff(setup.ctx, config.bootstrapStaffToken)
    await setup.close()
    let shuttingDown = false
    serveClusterMetrics()
    for (let i = 0; i < workers; i++) cluster.fork()
    cluster.on('exit', (worker, code, signal) => {
      if (shuttingDown) return
      log.error(
        { serverProcess: worker.process.pid, exit: signal ?? code },
        'server process exited; starting another',
      )
      cluster.fork()
    })
    const stopAll = () => {
      shuttingDown = true
      for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM')
    }
    process.on('SIGTERM', stopAll)
    process.on('SIGINT', stopAll)
    return
  }
  const app = await buildApp(config)
  // In a cluster the primary has said it once.
  if (!cluster.isWorker) logStart(app.log, config, app.migrationsApplied)
  // In a cluster the primary has already done this once.
  if (config.bootstrapStaffToken && !cluster.isWorker)
    await ensureBootstrapStaff(app.ctx, config.bootstrapStaffToken)
  const stopBackground = config.workerEnabled ? startBackground(app, config) : async () => {}
  let closing = false
  const shutdown = (signal: string) => {
    if (closing) return
    closing = true
    app.log.info({ signal }, 'shutting down: finishing in-flight requests')
    stopBackground()
      .then(() => app.close())
      .then(
        () => process.exit(0),
        (e: unknown) => {
          app.log.error({ err: e }, 'error during shutdown')
          process.exit(1)
        },
      )
  }
  process.on('SIGTERM', () => shutdown('SIGTERM'))
  process.on('SIGINT', () => shutdown('SIGINT'))
  await app.listen({ port: config.port, host: config.host })
}

async function worker(config: Config): Promise<void> {
  const app = await buildApp(config)
  const stopBackground = startBackground(app, config)
  app.log.info(
    { database: describeDatabaseUrl(config.databaseUrl), migrationsApplied: app.migrationsApplied },
    'worker started',
  )
  const stop = () =>
    void stopBackground()
      .then(() => app.close())
      .then(() => process.exit(0))
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
}

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2)
  const config = loadConfig()
  // Read by V8 each time it sets the next collection's threshold, so setting it now takes effect.
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`)
  switch (command) {
    case 'serve': {
      const { values } = parseArgs({ args: rest, options: { workers: { type: 'string', default: '1' } } })
      await serve(config, Math.max(1, Number(values.workers) || 1))
      return
    }
    case 'worker':
      await worker(config)
      return
    case 'migrate': {
      const { values } = parseArgs({ args: rest, options: { list: { type: 'boolean', default: false } } })
      const database = await connectDatabase(config.databaseUrl, { cacheMb: config.sqliteCacheMb })
      try {
        console.log(`database: ${describeDatabaseUrl(config.databaseUrl)}`)
        if (values.list) {
          const all = await listMigrations(database.db, database.schema)
          for (const m of all) {
            console.log(`${m.appliedAt ? 'applied' : 'pending'}  ${m.name}`)
          }
          const pending = all.filter((m) => !m.appliedAt).length
          console.log(`${all.length} migration(s), ${pending} pending`)
        } else {
          const applied = await migrateToLatest(database.db, database.schema)
          for (const name of applied) console.log(`applied  ${name}`)
          console.log(applied.length ? `${applied.length} migration(s) applied` : 'no pending migrations')
        }
      } finally {
        await database.close()
      }
      return
    }
    case 'create-user': {
      const { values } = parseArgs({
        args: rest,
        options: {
          username: { type: 'string' },
          staff: { type: 'boolean', default: false },
          support: { type: 'boolean', default: false },
          password: { type: 'string' },
          email: { type: 'string' },
          'full-name': { type: 'string' },
        },
      })
      if (!values.username) throw new Error('--username is required')
      const app = await buildApp({ ...config, logLevel: 'warn' })
      try {
        const token = await createUserWithToken(app.ctx, {
          username: values.username,
          isStaff: values.staff ?? false,
          isSupport: values.support ?? false,
          password: values.password,
          email: values.email,
          fullName: values['full-name'],
        })
        console.log(token)
      } finally {
        await app.close()
      }
      return
    }
    case 'jobs': {
      const { values, positionals } = parseArgs({
        args: rest,
        allowPositionals: true,
        options: { all: { type: 'boolean', default: false } },
      })
      const [action, id] = positionals
      if (action !== 'failed' && action !== 'retry')
        throw new Error('usage: jobs failed | jobs retry <id> | --all')
      if (action === 'retry' && !values.all && !/^\d+$/.test(id ?? ''))
        throw new Error('jobs retry needs a job id or --all')
      const app = await buildApp({ ...config, logLevel: 'warn' })
      try {
        if (action === 'failed') {
          const failed = await app.ctx.jobs.listFailed()
          for (const j of failed) {
            console.log(
              `${j.id}\t${j.kind}\tattempts=${j.attempts}\tfinished=${j.finished ?? ''}\t${j.last_error}`,
            )
          }
          console.log(`${failed.length} failed job(s)`)
        } else {
          const n = await app.ctx.jobs.retryFailed(values.all ? undefined : Number(id))
          if (!values.all && n === 0) throw new Error(`no failed job with id ${id}`)
          console.log(`${n} job(s) queued again`)
        }
      } finally {
        await app.close()
      }
      return
    }
    case 'seed-demo': {
      const app = await buildApp({ ...config, logLevel: 'warn' })
      try {
        const out = await seedDemo(app.ctx)
        console.log(JSON.stringify(out, null, 2))
      } finally {
        await app.close()
      }
      return
    }
    default:
      process.stderr.write(USAGE)
      process.exit(command ? 2 : 0)
  }
}

main().catch((e: unknown) => {
  // One JSON line on stderr, like every other log line; the message says what failed.
  const log = pino({ level: 'fatal' }, pino.destination(2))
  log.fatal(
    { err: e instanceof Error ? { type: e.name, message: e.message } : e },
    e instanceof Error ? e.message : String(e),
  )
  process.exit(1)
})
