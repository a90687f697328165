// `npm run bench:drivers [-- --orders N] [--duration S] [--rounds R] [--callers 1,10] [--pool P]`
// What a statement costs through each PostgreSQL driver, on the benchmark's data set (schema
// bench_<N> of the database DATABASE_URL names, seeded or reused as `npm run bench` does):
// - retrieve: the order retrieve's visibility and version statement, exactly as the server sends
//   it, cycling over 1,000 orders;
// - insert: an order's row (every column of a seeded order, with a new id and uuid) inserted in a
//   transaction (`begin`, the insert, `commit`) into a copy of the orders table with the same
//   indexes, in the schema bench_drivers (made afresh, emptied before each load, dropped at the end).
// Through: pg with unnamed statements; pg with statements prepared by name; the server's own path
// (Kysely on the server's pool, which prepares by name: createDatabase); the `postgres` package
// preparing its statements (its own pool, which pipelines); and the `postgres` package as its
// Kysely dialect (kysely-postgres-js) would use it: a reserved connection per statement, unprepared.
// Each load runs C callers at once (--callers, each one statement or transaction after another)
// for --duration seconds on a pool of --pool connections; every driver and statement is loaded in
// each of --rounds rounds, the drivers' order turning round by round, and the table gives medians.
// Columns: operations (statements, or transactions of three) per second, p50 and p99 latency, this
// process's CPU time per operation (process.cpuUsage: the driver's work and the load loop's), and
// PostgreSQL's (every process whose name starts with "postgres", from /proc, as bench/run.ts reads
// it: only meaningful while nothing else uses that server).
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import pg from 'pg'
import postgres from 'postgres'
import { CompiledQuery } from 'kysely'
import { createDatabase, typeParsers } from '../src/db/database.js'
import type { Manifest } from './seed.js'
import { seed } from './seed.js'
import { median } from './report.js'
import { postgresCpu, postgresCpuBetween } from './proc.js'

const { values: args } = parseArgs({
  options: {
    orders: { type: 'string', default: '10000' },
    duration: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '3' },
    callers: { type: 'string', default: '1,10' },
    pool: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '1' },
  },
})
const orders = Number(args.orders)
const duration = Number(args.duration)
const rounds = Math.max(1, Number(args.rounds) || 1)
const callerCounts = args.callers.split(',').map(Number)
const poolSize = Math.max(1, Number(args.pool) || 10)
const warmup = Number(args.warmup)
const scratch = 'bench_drivers'

/** The statement `findVisibleVersionByUuid` sends (src/areas/orders/repository.ts). */
const RETRIEVE =
  'select "id", "project_id", "customer_id", "provider_customer_id", "offering_id", "version", ' +
  `(select n from record_epochs where name = 'orders') as "epoch" from "orders" where "uuid" = $1`

/** An insert's parameters: each value as PostgreSQL's text of its column's type. */
type Values = (string | null)[]

interface Driver {
  name: string
  retrieve(uuid: string): Promise<unknown>
  /** The insert in a transaction of its own. */
  insert(values: Values): Promise<unknown>
  close(): Promise<void>
}

/** pg as Kysely's PostgresDriver uses it: a pooled client per statement or transaction. */
function pgDriver(url: string, schema: string, insertText: string, named: boolean): Driver {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    types: typeParsers,
    options: `-c search_path=${schema}`,
  })
  const query = (client: pg.PoolClient, name: string, text: string, values: Values) =>
    named ? client.query({ name, text, values }) : client.query(text, values)
  return {
    name: named ? 'pg, prepared by name' : 'pg, unnamed',
    async retrieve(uuid) {
      const client = await pool.connect()
      try {
        return await query(client, 'retrieve', RETRIEVE, [uuid])
      } finally {
        client.release()
      }
    },
    async insert(values) {
      const client = await pool.connect()
      try {
        await client.query('begin')
        const r = await query(client, 'insert', insertText, values)
        await client.query('commit')
        return r
      } finally {
        client.release()
      }
    },
    close: () => pool.end(),
  }
}

/** The server's own path: Kysely on the pool createDatabase makes (statements prepared by name). */
async function serverDriver(url: string, schema: string, insertText: string): Promise<Driver> {
  const database = await createDatabase(url, { schema, poolSize })
  const db = database.db
  return {
    name: 'server: Kysely on pg, prepared by name',
    retrieve: (uuid) => db.executeQuery(CompiledQuery.raw(RETRIEVE, [uuid])),
    insert: (values) =>
      db.transaction().execute((trx) => trx.executeQuery(CompiledQuery.raw(insertText, values))),
    close: () => database.close(),
  }
}

/**
 * The `postgres` package: `prepared`, its statements prepared and its queries given to its own
 * pool (which pipelines them on busy connections); otherwise as kysely-postgres-js calls it (a
 * reserved connection for each statement or transaction, `unsafe` with its default: unprepared).
 */
function postgresDriver(url: string, schema: string, insertText: string, prepared: boolean): Driver {
  const sql = postgres(url, { max: poolSize, connection: { search_path: schema } })
  if (prepared) {
    return {
      name: 'postgres, prepared',
      retrieve: (uuid) => sql.unsafe(RETRIEVE, [uuid], { prepare: true }),
      insert: (values) => sql.begin((tx) => tx.unsafe(insertText, values, { prepare: true })),
      close: () => sql.end(),
    }
  }
  return {
    name: 'postgres, as its Kysely dialect uses it',
    async retrieve(uuid) {
      const reserved = await sql.reserve()
      try {
        return await reserved.unsafe(RETRIEVE, [uuid])
      } finally {
        reserved.release()
      }
    },
    async insert(values) {
      const reserved = await sql.reserve()
      try {
        await reserved.unsafe('begin')
        const r = await reserved.unsafe(insertText, values)
        await reserved.unsafe('commit')
        return r
      } finally {
        reserved.release()
      }
    },
    close: () => sql.end(),
  }
}

interface Load {
  ops: number
  seconds: number
  latencies: number[]
  cpuUs: number
  pgCpuUs: number
}

/** `callers` loops, each running `op` one after another until the time is up. */
async function load(callers: number, seconds: number, op: (n: number) => Promise<unknown>): Promise<Load> {
  const latencies: number[] = []
  let n = 0
  const cpu = process.cpuUsage()
  const pgBefore = postgresCpu()
  const started = performance.now()
  const deadline = started + seconds * 1000
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (performance.now() < deadline) {
        const t = performance.now()
        await op(n++)
        latencies.push(performance.now() - t)
      }
    }),
  )
  const elapsed = (performance.now() - started) / 1000
  const used = process.cpuUsage(cpu)
  const pgSeconds = postgresCpuBetween(pgBefore, postgresCpu())
  const ops = latencies.length
  return {
    ops,
    seconds: elapsed,
    latencies,
    cpuUs: ops ? (used.user + used.system) / ops : 0,
    pgCpuUs: ops ? (pgSeconds * 1e6) / ops : 0,
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]! : 0
}

/** The insert: every column of a seeded order, its id and uuid new for each row. */
async function prepareInsert(admin: pg.Client, dataSchema: string) {
  await admin.query(`drop schema if exists ${scratch} cascade`)
  await admin.query(`create schema ${scratch}`)
  await admin.query(
    `create table ${scratch}.orders (like ${dataSchema}.orders including constraints including indexes)`,
  )
  // Every value as PostgreSQL writes it, so it goes back as text of the column's type.
  const { rows, fields } = await admin.query({
    text: `select * from ${dataSchema}.orders where type = 'Create' order by id limit 1`,
    types: { getTypeParser: (() => (v: string) => v) as pg.CustomTypesConfig['getTypeParser'] },
  })
  const template = rows[0] as Record<string, string | null>
  const columns = fields.map((f) => f.name)
  const text =
    `insert into ${scratch}.orders (${columns.map((c) => `"${c}"`).join(', ')}) ` +
    `values (${columns.map((_, i) => `$${i + 1}`).join(', ')}) returning "id"`
  const values = (n: number): Values =>
    columns.map((c) => (c === 'id' ? String(n + 1) : c === 'uuid' ? randomUUID() : (template[c] ?? null)))
  return { text, values, columns: columns.length }
}

interface Cell {
  statement: string
  callers: number
  driver: string
  loads: Load[]
}

async function main(): Promise<void> {
  const base = process.env.DATABASE_URL
  if (!base || !/^postgres(ql)?:\/\//.test(base))
    throw new Error('DATABASE_URL must name a PostgreSQL database')
  const dataSchema = `bench_${orders}`
  const sep = base.includes('?') ? '&' : '?'
  const manifest = JSON.parse(
    readFileSync(await seed(orders, `${base}${sep}schema=${dataSchema}`), 'utf8'),
  ) as Manifest
  const uuids = manifest.orderUuids.slice(0, 1000)
  const admin = new pg.Client({ connectionString: base })
  await admin.connect()
  const insert = await prepareInsert(admin, dataSchema)
  let nextId = 0
  const drivers: Driver[] = [
    pgDriver(base, dataSchema, insert.text, false),
    pgDriver(base, dataSchema, insert.text, true),
    await serverDriver(base, dataSchema, insert.text),
    postgresDriver(base, dataSchema, insert.text, true),
    postgresDriver(base, dataSchema, insert.text, false),
  ]
  const statements = [
    {
      name: 'retrieve: visibility and version',
      op: (d: Driver, n: number) => d.retrieve(uuids[n % uuids.length]!),
    },
    {
      name: `insert an order (${insert.columns} columns) in a transaction`,
      op: (d: Driver) => d.insert(insert.values(nextId++)),
    },
  ]
  const cells = new Map<string, Cell>()
  try {
    for (const d of drivers) {
      for (const s of statements) await load(10, warmup, (n) => s.op(d, n))
    }
    for (let round = 0; round < rounds; round++) {
      for (const s of statements) {
        for (const callers of callerCounts) {
          for (let i = 0; i < drivers.length; i++) {
            const d = drivers[(i + round) % drivers.length]!
            // Each insert load starts on an empty table.
            if (s.name.startsWith('insert')) await admin.query(`truncate ${scratch}.orders`)
            const key = `${s.name}|${callers}|${d.name}`
            const cell = cells.get(key) ?? { statement: s.name, callers, driver: d.name, loads: [] }
            cell.loads.push(await load(callers, duration, (n) => s.op(d, n)))
            cells.set(key, cell)
          }
        }
      }
      console.error(`round ${round + 1} of ${rounds} done`)
    }
  } finally {
    for (const d of drivers) await d.close()
    await admin.query(`drop schema if exists ${scratch} cascade`)
    await admin.end()
  }
  console.log(
    `\nPostgreSQL drivers: ${orders.toLocaleString('en')} orders, pool of ${poolSize}, ${duration}s a load, ` +
      `${rounds} round${rounds > 1 ? 's' : ''} (medians; each round's operations/s in brackets)`,
  )
  console.log(
    '| statement | callers | driver | operations/s (rounds) | p50 ms | p99 ms | client CPU µs/op | PostgreSQL CPU µs/op |',
  )
  console.log('|---|---:|---|---:|---:|---:|---:|---:|')
  const sorted = [...cells.values()].sort(
    (a, b) => a.statement.localeCompare(b.statement) || a.callers - b.callers,
  )
  for (const c of sorted) {
    const rates = c.loads.map((l) => l.ops / l.seconds)
    const m = (f: (l: Load) => number) => median(c.loads.map(f))
    const p = (q: number) =>
      m((l) =>
        percentile(
          [...l.latencies].sort((a, b) => a - b),
          q,
        ),
      ).toFixed(2)
    console.log(
      `| ${c.statement} | ${c.callers} | ${c.driver} | ${Math.round(median(rates))} (${rates.map(Math.round).join(', ')}) | ${p(0.5)} | ${p(0.99)} | ${m((l) => l.cpuUs).toFixed(0)} | ${m((l) => l.pgCpuUs).toFixed(0)} |`,
    )
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.stack : e)
  process.exit(1)
})
