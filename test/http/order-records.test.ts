// Order records kept between requests are never stale: after a change to any column of the order
// or of any row its record shows, the list and the retrieval answer exactly what an app that
// renders every time answers, on the same database.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'kysely'
import { buildTestApp, type TestApp } from '../support/app.js'
import { client } from '../support/client.js'
import { grant, makeCustomer, makeProject, makeUser, type UserRef } from '../support/fixtures.js'
import {
  makeCategory,
  makeOffering,
  makePlan,
  makeResource,
  makeServiceProvider,
} from '../support/catalog-fixtures.js'

let cached: TestApp
let fresh: TestApp
let viewer: UserRef
const rows: Record<string, number[]> = {}
const R = '/api/marketplace-orders'

before(async () => {
  cached = await buildTestApp()
  fresh = await buildTestApp({ orderRecordCacheSize: 0 }, cached.clock, cached)
  const ctx = cached.ctx
  viewer = await makeUser(ctx, { staff: true })
  const consumer = await makeCustomer(ctx)
  const provider = await makeCustomer(ctx)
  const project = await makeProject(ctx, consumer)
  const owner = await makeUser(ctx)
  const providerOwner = await makeUser(ctx)
  await grant(ctx, owner, 'CUSTOMER.OWNER', { type: 'customer', id: consumer.id })
  await grant(ctx, providerOwner, 'CUSTOMER.OWNER', { type: 'customer', id: provider.id })
  await makeServiceProvider(ctx, provider)
  const category = await makeCategory(ctx)
  const offering = await makeOffering(ctx, provider, { type: 'Marketplace.Basic', categoryId: category.id })
  const plan = await makePlan(ctx, offering, { unitPrice: '12.5' })
  const next = await makePlan(ctx, offering, { unitPrice: '20' })
  // A Create order (consumer approval implied, provider approved), and an Update order.
  const created = await client(cached.app, owner.token).post(`${R}/`, {
    offering: offering.url,
    plan: plan.url,
    project: project.url,
    attributes: { name: 'kept' },
  })
  assert.equal(created.status, 201, created.text)
  await client(cached.app, providerOwner.token).post(`${R}/${created.body.uuid}/approve_by_provider/`)
  const res = await makeResource(ctx, offering, project, { planId: plan.id, state: 'OK' })
  const sw = await client(cached.app, owner.token).post(
    `/api/marketplace-resources/${res.uuid}/switch_plan/`,
    {
      plan: next.url,
    },
  )
  assert.equal(sw.status, 200, sw.text)
  const resources = await ctx.db.selectFrom('resources').select('id').execute()
  rows.offerings = [offering.id]
  rows.customers = [consumer.id, provider.id]
  rows.categories = [category.id]
  rows.plans = [plan.id, next.id]
  rows.projects = [project.id]
  rows.resources = resources.map((r) => r.id)
  rows.users = [owner.id, providerOwner.id]
  rows.service_providers = (await ctx.db.selectFrom('service_providers').select('id').execute()).map(
    (r) => r.id,
  )
  assert.ok(rows.service_providers.length, 'the provider is a service provider')
  rows.orders = (await ctx.db.selectFrom('orders').select('id').execute()).map((r) => r.id)
})

after(async () => {
  await fresh.close()
  await cached.close()
})

/** Every order, listed and retrieved, as the caching app and the rendering app answer it. */
async function same(what: string): Promise<void> {
  const a = client(cached.app, viewer.token)
  const b = client(fresh.app, viewer.token)
  const list = await a.get(`${R}/?page_size=50`)
  assert.equal(list.status, 200)
  assert.deepEqual(list.body, (await b.get(`${R}/?page_size=50`)).body, `list after ${what}`)
  for (const o of list.body as { uuid: string }[]) {
    assert.deepEqual(
      (await a.get(`${R}/${o.uuid}/`)).body,
      (await b.get(`${R}/${o.uuid}/`)).body,
      `${o.uuid} after ${what}`,
    )
  }
}

interface Column {
  name: string
  type: string
  nullable: boolean
}

async function columnsOf(table: string): Promise<Column[]> {
  if (cached.dialect === 'postgres') {
    const { rows: cols } = await sql<{
      column_name: string
      data_type: string
      is_nullable: string
      len: number | null
    }>`
      select column_name, data_type, is_nullable, character_maximum_length as len from information_schema.columns
      where table_name = ${table} and table_schema = current_schema()`.execute(cached.ctx.db)
    return cols.map((c) => ({ name: c.column_name, type: c.data_type, nullable: c.is_nullable === 'YES' }))
  }
  const { rows: cols } = await sql<{ name: string; type: string; notnull: number }>`
    select name, type, "notnull" from pragma_table_info(${table})`.execute(cached.ctx.db)
  return cols.map((c) => ({ name: c.name, type: c.type.toLowerCase(), nullable: !c.notnull }))
}

/** Columns whose values are one of a few names (the record's schema lists them). */
const CHOICES: Record<string, string[]> = {
  'orders.state': ['done', 'erred'],
  'orders.type': ['Create', 'Terminate'],
  'plans.unit': ['month', 'day'],
}

/** Columns that hold a link the API only accepts as an absolute http(s) URL. */
const LINK = /(_url|^image|^thumbnail|^icon)$/

let serial = 0

/** A value of the column's type that differs from `v`; undefined when the column is left alone. */
function changed(table: string, column: Column, v: unknown): unknown {
  const { name, type, nullable } = column
  if (name === 'id' || name === 'version') return undefined
  if (name.endsWith('_id')) return v !== null && nullable ? null : undefined
  if (name === 'uuid') return cached.ctx.newUuid()
  const choices = CHOICES[`${table}.${name}`]
  if (choices) return choices.find((c) => c !== v)
  if (type === 'boolean') return !v
  const numeric = /int|numeric|real|double/.test(type)
  if (v === null || v === undefined) {
    if (numeric) return 7
    if (/json/.test(type)) return '{"set": 1}'
    if (name.endsWith('_date')) return '2031-01-02'
    if (name.endsWith('_at')) return '2031-01-02T03:04:05.000Z'
    if (LINK.test(name)) return 'https://example.com/set'
    return 'set'
  }
  if (LINK.test(name)) return `https://example.com/${++serial}`
  if (numeric) return Number(v) + 1
  // A JSON object of integers fits every JSON column (order limits hold integers only).
  if (typeof v === 'object' || /json/.test(type)) return JSON.stringify({ changed: ++serial })
  const s = String(v)
  if (/^\d{4}-\d{2}-\d{2}/.test(s)) return s.replace(/^\d{4}/, '2031')
  if (s.startsWith('{')) return JSON.stringify({ changed: ++serial })
  // Unique (usernames), and no longer than before (varchar limits).
  const mark = String(++serial)
  return s.length > mark.length ? s.slice(0, -mark.length) + mark : mark
}

// Foreign keys are changed too (to null): the tables whose rows they lead to come first.
for (const table of [
  'customers',
  'categories',
  'plans',
  'projects',
  'resources',
  'users',
  'service_providers',
  'offerings',
  'orders',
]) {
  test(`a change to any column of ${table} shows at once`, async () => {
    await same('setup')
    for (const column of await columnsOf(table)) {
      for (const id of rows[table]!) {
        const db = cached.ctx.db as any
        const current = (
          await db.selectFrom(table).select(column.name).where('id', '=', id).executeTakeFirst()
        )[column.name]
        const value = changed(table, column, current)
        if (value === undefined) continue
        await db
          .updateTable(table)
          .set({ [column.name]: value })
          .where('id', '=', id)
          .execute()
        await same(`${table}.${column.name} of ${id}`)
      }
    }
  })
}

test('the records were served from the cache between changes', async () => {
  // Two requests for an unchanged order: the second is answered without rendering it again, as
  // the record cache's counters in /metrics show.
  const counter = async (app: TestApp['app'], name: string) => {
    const body = (await app.inject({ url: '/metrics' })).body
    const m = new RegExp(`^${name} (\\d+)$`, 'm').exec(body)
    assert.ok(m, `${name} in /metrics`)
    return Number(m[1])
  }
  const counts = async (app: TestApp['app']) => ({
    hits: await counter(app, 'order_record_cache_hits_total'),
    misses: await counter(app, 'order_record_cache_misses_total'),
  })
  const a = client(cached.app, viewer.token)
  const uuid = (await a.get(`${R}/?page_size=1`)).body[0].uuid as string
  await a.get(`${R}/${uuid}/`)
  const before = await counts(cached.app)
  assert.equal((await a.get(`${R}/${uuid}/`)).status, 200)
  assert.equal((await a.get(`${R}/?page_size=1`)).status, 200)
  const after = await counts(cached.app)
  assert.deepEqual(
    { hits: after.hits - before.hits, misses: after.misses - before.misses },
    { hits: 2, misses: 0 },
  )
  // The same request on the app that keeps nothing renders the record.
  const freshBefore = await counts(fresh.app)
  assert.equal((await client(fresh.app, viewer.token).get(`${R}/${uuid}/`)).status, 200)
  const freshAfter = await counts(fresh.app)
  assert.deepEqual(
    { hits: freshAfter.hits - freshBefore.hits, misses: freshAfter.misses - freshBefore.misses },
    { hits: 0, misses: 1 },
  )
})
