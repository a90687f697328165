// `npm run bench:seed -- --orders N [--database URL]`
// Fills a realistic data set for the benchmark: N orders over 1,000 projects in 200 customers,
// 50 offerings of 20 providers, every order state, with their marketplace resources, plus
// floating IPs and site agent services. Writes a manifest (tokens and uuids the scenarios use)
// next to the database and prints its path. An existing data set of the same size is reused.
import { randomUUID } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { sql, type Kysely } from 'kysely'
import { createDatabase, dropSchema } from '../src/db/database.js'
import { migrateToLatest } from '../src/db/migrate.js'
import type { DB } from '../src/db/tables.js'
import { isPostgres } from '../src/db/sql.js'
import { hashToken } from '../src/http/auth.js'
import { slugify } from '../src/http/slug.js'
import { BATCH, insertMany, type Ref, type Row } from './seed-rows.js'
import { seedFloatingIps, seedOrders, seedSiteAgents } from './seed-orders.js'

export interface Manifest {
  databaseUrl: string
  orders: number
  tokens: { staff: string; member: string; owner: string }
  orderUuids: string[]
  pendingOrderUuids: string[]
  projectUuids: string[]
  createOffering: string
  createPlan: string
  floatingIpUuids: string[]
  /** Whether site agent services were seeded (the scenario needs them). */
  siteAgents: boolean
}

const CUSTOMERS = 200
const PROJECTS = 1000
const PROVIDERS = 20
const OFFERINGS = 50
/** Deterministic pseudo-random numbers so every run builds the same data set. */
function rng(seed: number) {
  let s = seed >>> 0
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0
    return s / 2 ** 32
  }
}

type RecordTable = 'customers' | 'projects' | 'offerings' | 'plans' | 'users' | 'service_providers'

async function refs(db: Kysely<DB>, table: RecordTable): Promise<Ref[]> {
  return db.selectFrom(table).select(['id', 'uuid']).orderBy('id').execute()
}

/**
 * Inserts records, each with a new uuid and `at` as its creation and modification time, and
 * answers every record of the table (id and uuid, in id order).
 */
async function insertRecords(db: Kysely<DB>, table: RecordTable, at: string, rows: Row[]): Promise<Ref[]> {
  await insertMany(
    db,
    table,
    rows.map((r) => ({ uuid: randomUUID(), ...r, created: at, modified: at })),
  )
  return refs(db, table)
}

/** `count` rows: the i-th named `name(i)`, with its name's slug, and the fields `fields(i)`. */
function named(count: number, name: (i: number) => string, fields: (i: number) => Row): Row[] {
  return Array.from({ length: count }, (_, i) => ({
    name: name(i),
    slug: slugify(name(i), ''),
    ...fields(i),
  }))
}

/**
 * Removes a data set this checkout has no manifest for (seeded by another checkout, or a seed that
 * stopped half-way), so that a fresh seed starts from empty tables instead of failing on their rows.
 */
async function discardDataSet(databaseUrl: string): Promise<void> {
  if (databaseUrl.startsWith('sqlite:')) {
    const file = databaseUrl.slice('sqlite:'.length)
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true })
    return
  }
  const url = new URL(databaseUrl)
  const schema = url.searchParams.get('schema')
  if (!schema) return
  url.searchParams.delete('schema')
  await dropSchema(url.toString(), schema)
}

/** The seeded records' clock: every seeded row was created before it. */
const SEED_NOW = Date.parse('2026-06-01T00:00:00.000Z')

export async function seed(orders: number, databaseUrl: string): Promise<string> {
  const manifestPath = databaseUrl.startsWith('sqlite:')
    ? `${databaseUrl.slice('sqlite:'.length)}.manifest.json`
    : `./bench/data/manifest-pg-${orders}.json`
  if (existsSync(manifestPath)) {
    const m = JSON.parse(readFileSync(manifestPath, 'utf8')) as Manifest
    if (m.orders === orders && m.databaseUrl === databaseUrl) {
      const database = await createDatabase(databaseUrl, { poolSize: 4 })
      await migrateToLatest(database.db, database.schema)
      await undoBenchWrites(database.db, m)
      await syncResourceIds(database.db)
      if (m.siteAgents) await freshenSiteAgents(database.db, Date.now())
      await vacuumPostgres(database.db)
      await database.close()
      return manifestPath
    }
  }
  mkdirSync('./bench/data', { recursive: true })
  await discardDataSet(databaseUrl)
  const database = await createDatabase(databaseUrl, { poolSize: 4 })
  const db = database.db
  await migrateToLatest(db, database.schema)
  const random = rng(42)
  const now = SEED_NOW
  const iso = new Date(now).toISOString()

  const tokens = {
    staff: randomUUID().replace(/-/g, ''),
    member: randomUUID().replace(/-/g, ''),
    owner: randomUUID().replace(/-/g, ''),
  }
  const people: [string, number][] = [
    ['bench-staff', 1],
    ['bench-member', 0],
    ['bench-owner', 0],
  ]
  /** Records of `table`, created and modified at the seed's time. */
  const records = (table: RecordTable, rows: Row[]) => insertRecords(db, table, iso, rows)
  const users = await records(
    'users',
    people.map(([username, staff]) => ({
      username,
      email: `${username}@example.com`,
      full_name: username,
      is_staff: staff,
      is_support: 0,
      is_active: 1,
      affiliations: '[]',
      identity_source: '',
      civil_number: null,
      image: null,
      password_hash: null,
    })),
  )
  const userId = (name: string) => users[people.findIndex(([u]) => u === name)]!.id
  await insertMany(db, 'tokens', [
    { user_id: userId('bench-staff'), key_hash: hashToken(tokens.staff), created: iso },
    { user_id: userId('bench-member'), key_hash: hashToken(tokens.member), created: iso },
    { user_id: userId('bench-owner'), key_hash: hashToken(tokens.owner), created: iso },
  ])

  const customers = await records(
    'customers',
    named(
      CUSTOMERS,
      (i) => `Customer ${i}`,
      (i) => ({ abbreviation: `C${i}`, native_name: '', email: '', image: null }),
    ),
  )
  const projects = await records(
    'projects',
    named(
      PROJECTS,
      (i) => `project-${i}`,
      (i) => ({
        customer_id: customers[i % CUSTOMERS]!.id,
        description: '',
        start_date: null,
        end_date: null,
      }),
    ),
  )
  const providers = customers.slice(0, PROVIDERS)
  await records(
    'service_providers',
    providers.map((c) => ({ customer_id: c.id, description: '', image: null })),
  )
  await insertMany(db, 'categories', [
    { uuid: randomUUID(), title: 'Compute', description: '', icon: null, created: iso, modified: iso },
  ])
  const category = (await db.selectFrom('categories').select('id').executeTakeFirstOrThrow()).id
  const types = ['Marketplace.Basic', 'Marketplace.Slurm', 'Support.OfferingTemplate']
  const offerings = await records(
    'offerings',
    named(
      OFFERINGS,
      (i) => `Offering ${i}`,
      (i) => ({
        description: '',
        category_id: category,
        customer_id: providers[i % PROVIDERS]!.id,
        parent_id: null,
        type: types[i % types.length],
        state: 'Active',
        shared: 1,
        billable: 1,
        plugin_options: '{}',
        terms_of_service: '',
        image: null,
        thumbnail: null,
        service_settings_id: null,
        project_id: null,
      }),
    ),
  )
  const plans = await records(
    'plans',
    offerings.map((o, i) => ({
      offering_id: o.id,
      name: `Plan ${i}`,
      description: '',
      unit: 'month',
      unit_price: 10 + i,
      fixed_price: 0,
      activation_price: 0,
      archived: 0,
    })),
  )

  // The member sees one project; the owner owns one consumer customer.
  const roleId = async (name: string) =>
    (await db.selectFrom('roles').select('id').where('name', '=', name).executeTakeFirstOrThrow()).id
  await insertMany(db, 'user_roles', [
    {
      uuid: randomUUID(),
      user_id: userId('bench-member'),
      role_id: await roleId('PROJECT.MEMBER'),
      scope_type: 'project',
      scope_id: projects[7]!.id,
      expiration_time: null,
      is_active: 1,
      created_by_id: null,
      created: iso,
    },
    {
      uuid: randomUUID(),
      user_id: userId('bench-owner'),
      role_id: await roleId('CUSTOMER.OWNER'),
      scope_type: 'customer',
      scope_id: customers[150]!.id,
      expiration_time: null,
      is_active: 1,
      created_by_id: null,
      created: iso,
    },
  ])

  const seeded = await seedOrders(db, {
    orders,
    projects,
    customers,
    offerings,
    plans,
    random,
    now,
    creatorId: userId('bench-staff'),
  })
  const floatingIpUuids = await seedFloatingIps(db, projects, customers, iso)
  const siteAgents = await seedSiteAgents(db, offerings, now)
  await freshenSiteAgents(db, Date.now())
  await syncResourceIds(db)
  await vacuumPostgres(db)

  const every = Math.max(1, Math.floor(orders / 2000))
  const manifest: Manifest = {
    databaseUrl,
    orders,
    tokens,
    orderUuids: seeded.orderUuids.filter((_, i) => i % every === 0).slice(0, 2000),
    pendingOrderUuids: seeded.pendingOrderUuids,
    projectUuids: projects.map((p) => p.uuid),
    createOffering: offerings[0]!.uuid,
    createPlan: plans[0]!.uuid,
    floatingIpUuids,
    siteAgents,
  }
  writeFileSync(manifestPath, JSON.stringify(manifest))
  await database.close()
  return manifestPath
}

/**
 * Resources are inserted with explicit ids (orders point at them in the same batch); on
 * PostgreSQL the id sequence is then moved past them so the server's own inserts do not collide.
 */
async function syncResourceIds(db: Kysely<DB>): Promise<void> {
  if (!isPostgres(db)) return
  await sql`select setval(pg_get_serial_sequence('resources', 'id'), (select coalesce(max(id), 1) from resources))`.execute(
    db,
  )
}

/**
 * A freshly loaded (or just reset) PostgreSQL schema has neither planner statistics nor a visibility
 * map until autovacuum gets to it, which may be in the middle of a run: without them PostgreSQL
 * counts by reading the table instead of the index, and scans the trigram index's pending list
 * entry by entry. The schema's tables are vacuumed and analyzed after loading and after each reset,
 * as autovacuum keeps a server's database. (SQLite is left without ANALYZE, as a server's own is.)
 */
async function vacuumPostgres(db: Kysely<DB>): Promise<void> {
  if (!isPostgres(db)) return
  const { rows } = await sql<{ name: string }>`
    select tablename as name from pg_tables where schemaname = current_schema()`.execute(db)
  const tables = rows.map((r) => `"${r.name.replace(/"/g, '""')}"`).join(', ')
  if (tables) await sql.raw(`vacuum (analyze) ${tables}`).execute(db)
}

/**
 * A reused data set is put back as seeded: the orders approved by the last run are pending again,
 * the orders (with their resources) the create scenario added are removed, and so are the events
 * the runs wrote (the seed writes none), so every run measures the same data. Left in place, the
 * events would also wait for positions that the server's periodic clean-up gives them (PostgreSQL)
 * at its start, in the middle of the next run's scenarios.
 */
async function undoBenchWrites(db: Kysely<DB>, m: Manifest): Promise<void> {
  const seededUntil = new Date(SEED_NOW).toISOString()
  await db.transaction().execute(async (trx) => {
    for (let i = 0; i < m.pendingOrderUuids.length; i += BATCH) {
      await trx
        .updateTable('orders')
        .set({ state: 'pending-consumer', consumer_reviewed_by_id: null, consumer_reviewed_at: null })
        .where('uuid', 'in', m.pendingOrderUuids.slice(i, i + BATCH))
        .execute()
    }
    await trx.deleteFrom('orders').where('created', '>', seededUntil).execute()
    await trx.deleteFrom('resources').where('created', '>', seededUntil).execute()
    await trx.deleteFrom('outbox_events').where('created', '>', seededUntil).execute()
  })
}

/**
 * The stale rule compares `modified` with the server's clock, so the services' times are set
 * relative to the real time of each run: every third service two days old (stale), the rest
 * within the last hour.
 */
async function freshenSiteAgents(db: Kysely<DB>, now: number): Promise<void> {
  const ids = await db.selectFrom('site_agent_services').select('id').orderBy('id').execute()
  await db.transaction().execute(async (trx) => {
    for (const [n, { id }] of ids.entries()) {
      const modified = n % 3 === 0 ? now - 2 * 86_400_000 - n * 1000 : now - (n % 3600) * 1000
      await trx
        .updateTable('site_agent_services')
        .set({ modified: new Date(modified).toISOString() })
        .where('id', '=', id)
        .execute()
    }
  })
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { orders: { type: 'string', default: '10000' }, database: { type: 'string' } },
  })
  const orders = Number(values.orders)
  const started = Date.now()
  const path = await seed(orders, values.database ?? `sqlite:./bench/data/bench-${orders}.sqlite`)
  console.error(`data set ready in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  console.log(path)
}

if (process.argv[1]?.endsWith('seed.ts')) {
  main().catch((e: unknown) => {
    console.error(e instanceof Error ? e.stack : e)
    process.exit(1)
  })
}
