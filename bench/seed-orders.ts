// The bulk of the benchmark's data set: the orders with their resources, the cloudB floating IPs
// and the site agent services (bench/seed.ts builds the records they point at).
import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { DB } from '../src/db/tables.js'
import { insertMany, type Ref, type Row } from './seed-rows.js'

const STATES = [
  ['done', 0.62],
  ['executing', 0.06],
  ['pending-consumer', 0.1],
  ['pending-provider', 0.06],
  ['erred', 0.05],
  ['canceled', 0.04],
  ['rejected', 0.05],
  ['pending-start-date', 0.01],
  ['pending-project', 0.01],
] as const

function pickState(r: number): string {
  let acc = 0
  for (const [state, p] of STATES) {
    acc += p
    if (r < acc) return state
  }
  return 'done'
}

const RESOURCE_STATE: Record<string, string> = {
  done: 'OK',
  executing: 'Creating',
  erred: 'Erred',
  canceled: 'Terminated',
  rejected: 'Terminated',
}

/** Orders with their resources, in transactions of CHUNK orders. */
export async function seedOrders(
  db: Kysely<DB>,
  o: {
    orders: number
    projects: Ref[]
    customers: Ref[]
    offerings: Ref[]
    plans: Ref[]
    random: () => number
    now: number
    creatorId: number
  },
): Promise<{ orderUuids: string[]; pendingOrderUuids: string[] }> {
  const CHUNK = 20000
  const orderUuids: string[] = []
  const pendingOrderUuids: string[] = []
  const offeringCustomer = new Map<number, number>()
  for (const row of await db.selectFrom('offerings').select(['id', 'customer_id']).execute()) {
    offeringCustomer.set(row.id, row.customer_id)
  }
  const projectCustomer = new Map<number, number>()
  for (const row of await db.selectFrom('projects').select(['id', 'customer_id']).execute()) {
    projectCustomer.set(row.id, row.customer_id)
  }
  let nextResourceId =
    Number(
      (
        await db
          .selectFrom('resources')
          .select((eb) => eb.fn.max('id').as('m'))
          .executeTakeFirst()
      )?.m ?? 0,
    ) + 1
  for (let start = 0; start < o.orders; start += CHUNK) {
    const n = Math.min(CHUNK, o.orders - start)
    const resources: Row[] = []
    const orders: Row[] = []
    for (let k = 0; k < n; k++) {
      const i = start + k
      const project = o.projects[Math.floor(o.random() * o.projects.length)]!
      const oi = Math.floor(o.random() * o.offerings.length)
      const offering = o.offerings[oi]!
      const plan = o.plans[oi]!
      const state = pickState(o.random())
      const created = new Date(o.now - (o.orders - i) * 1000).toISOString()
      const uuid = randomUUID()
      const resourceId = nextResourceId++
      const customerId = projectCustomer.get(project.id)!
      resources.push({
        id: resourceId,
        uuid: randomUUID(),
        name: `resource-${i}`,
        // Unique, as the server's own are (`<name>-<n>`).
        slug: `resource-${i}-1`,
        last_sync: created,
        offering_id: offering.id,
        plan_id: plan.id,
        project_id: project.id,
        customer_id: customerId,
        state: RESOURCE_STATE[state] ?? 'Creating',
        attributes: `{"name":"resource-${i}"}`,
        limits: '{}',
        backend_id: '',
        resource_type: 'Marketplace.Basic',
        scope_type: null,
        scope_id: null,
        end_date: null,
        created,
        modified: created,
      })
      const reviewed = state !== 'pending-consumer'
      orders.push({
        uuid,
        slug: `resource-${i}`,
        type: 'Create',
        state,
        offering_id: offering.id,
        provider_customer_id: offeringCustomer.get(offering.id)!,
        plan_id: plan.id,
        old_plan_id: null,
        project_id: project.id,
        customer_id: customerId,
        resource_id: resourceId,
        attributes: `{"name":"resource-${i}"}`,
        limits: '{}',
        cost: 10 + oi,
        callback_url: null,
        request_comment: null,
        start_date: null,
        output: '',
        error_message: '',
        error_traceback: '',
        backend_id: '',
        attachment: null,
        termination_comment: null,
        consumer_reviewed_by_id: reviewed ? o.creatorId : null,
        consumer_reviewed_at: reviewed ? created : null,
        provider_reviewed_by_id: null,
        provider_reviewed_at: null,
        created_by_id: o.creatorId,
        completed_at: ['done', 'erred', 'canceled', 'rejected'].includes(state) ? created : null,
        created,
        modified: created,
      })
      if (i % 97 === 0) orderUuids.push(uuid)
      if (state === 'pending-consumer' && pendingOrderUuids.length < 60000) pendingOrderUuids.push(uuid)
    }
    await db.transaction().execute(async (trx) => {
      await insertMany(trx, 'resources', resources)
      await insertMany(trx, 'orders', orders)
    })
  }
  return { orderUuids, pendingOrderUuids }
}

/** One cloudB tenant per customer (in its first project) with 10 floating IPs each, half attached-free. */
export async function seedFloatingIps(
  db: Kysely<DB>,
  _projects: Ref[],
  _customers: Ref[],
  iso: string,
): Promise<string[]> {
  const settings = await db
    .insertInto('service_settings')
    .values({
      uuid: randomUUID(),
      name: 'cloudB bench',
      type: 'cloudB',
      shared: 1,
      customer_id: null,
      options: JSON.stringify({ driver: 'emulator' }),
      created: iso,
      modified: iso,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  const firstProjects = await db
    .selectFrom('projects')
    .select((eb) => ['customer_id', eb.fn.min('id').as('project_id')])
    .groupBy('customer_id')
    .execute()
  const resource = (type: string, name: string, projectId: number, backendId: string) => ({
    uuid: randomUUID(),
    resource_type: type,
    name,
    service_settings_id: settings.id,
    project_id: projectId,
    state: 'OK',
    backend_id: backendId,
    created: iso,
    modified: iso,
  })
  await insertMany(
    db,
    'cloud_resources',
    firstProjects.map((p, i) =>
      resource('cloudB.Tenant', `tenant-${i}`, Number(p.project_id), `tenant-${i}`),
    ),
  )
  const tenants = await db
    .selectFrom('cloud_resources')
    .select(['id', 'project_id'])
    .where('resource_type', '=', 'cloudB.Tenant')
    .where('service_settings_id', '=', settings.id)
    .orderBy('id')
    .execute()
  await insertMany(
    db,
    'cloud_b_tenants',
    tenants.map((t) => ({ resource_id: t.id, limits: '{}', external_network_id: 'ext-net-1' })),
  )
  const ips: Row[] = []
  let n = 0
  for (const t of tenants) {
    for (let k = 0; k < 10; k++, n++) {
      ips.push(resource('cloudB.FloatingIP', `fip-${n}`, t.project_id, `fip-${n}`))
    }
  }
  await insertMany(db, 'cloud_resources', ips)
  const rows = await db
    .selectFrom('cloud_resources')
    .select(['id', 'uuid', 'project_id'])
    .where('resource_type', '=', 'cloudB.FloatingIP')
    .where('service_settings_id', '=', settings.id)
    .orderBy('id')
    .execute()
  const tenantOf = new Map(tenants.map((t) => [t.project_id, t.id]))
  await insertMany(
    db,
    'cloud_b_floating_ips',
    rows.map((r, i) => ({
      resource_id: r.id,
      tenant_id: tenantOf.get(r.project_id)!,
      address: `203.0.${Math.floor(i / 250)}.${(i % 250) + 1}`,
      backend_network_id: 'ext-net-1',
      port_id: null,
      external_address: null,
    })),
  )
  return rows.map((r) => r.uuid)
}

/** Site agent identities and services: 4 identities per offering, 25 services each, a third stale. */
export async function seedSiteAgents(db: Kysely<DB>, offerings: Ref[], now: number): Promise<boolean> {
  const iso = (ms: number) => new Date(ms).toISOString()
  const identities: Row[] = []
  for (const o of offerings) {
    for (let k = 0; k < 4; k++) {
      identities.push({
        uuid: randomUUID(),
        name: `agent-${o.id}-${k}`,
        offering_id: o.id,
        version: '1.0.0',
        last_polled_at: iso(now),
        created_by_id: null,
        created: iso(now - 86_400_000 * 30),
        modified: iso(now),
      })
    }
  }
  await insertMany(db, 'site_agent_identities', identities)
  const ids = await db.selectFrom('site_agent_identities').select('id').orderBy('id').execute()
  const services: Row[] = []
  let n = 0
  for (const { id } of ids) {
    for (let k = 0; k < 25; k++, n++) {
      services.push({
        uuid: randomUUID(),
        identity_id: id,
        name: `service-${id}-${k}`,
        mode: k % 2 ? 'order_process' : 'report',
        state: 1 + (n % 3),
        statistics: JSON.stringify({}),
        created: iso(now - 86_400_000 * 30),
        modified: iso(now),
      })
    }
  }
  await insertMany(db, 'site_agent_services', services)
  return true
}
