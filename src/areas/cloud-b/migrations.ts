// cloudB migrations (spec 2.13 / 4.11, reference §12): copying a tenant into a new tenant of
// another offering. States: CREATION_SCHEDULED → CREATING → OK | ERRED.
//   1. `cloudB.migration.start` (job): a Create order for dst_offering/dst_plan is placed on
//      behalf of the migration's creator in the source resource's project; the order's resource
//      is the destination resource, and its processing creates the destination tenant.
//   2. when that tenant settles, `cloudB.migration.apply` (job) copies the source tenant's
//      networks and subnets (CIDRs remapped by `mappings.subnets`, only `mappings.networks` when
//      given) and security groups into it; the migration ends OK, or ERRED with the error.
// dst_resource_state is the destination marketplace resource's state, read at render time.
import type { AppContext } from '../../context.js'
import type { Listing } from '../../db/listing.js'
import { loadActor } from '../../http/auth.js'
import { parseJson, toJson } from '../../db/values.js'
import { AppError, fieldError, nonFieldError } from '../../http/errors.js'
import { copied, recordRenderer } from '../../http/links.js'
import { can, seesAll, type Actor } from '../../http/permissions.js'
import { pageOf, type Pager } from '../../http/resource.js'
import { foundByUuid, normalizeUuid } from '../../http/uuid.js'
import { findOfferingByUuid, getResource, resolvePlanLink } from '../catalog/service.js'
import { createOrder } from '../orders/service.js'
import { emitEvent } from '../events/service.js'
import { migrationsRepository, type MigrationEventRow, type MigrationRow } from './migrations-repository.js'
import type { Db } from './objects.js'
import { cloudBRepository } from './repository.js'
import { PATHS, TYPES, type Migration } from './schema.js'
import { cloudBDriver, importTenantObjects, onTenantSettled } from './service.js'
import { settingsInfo } from '../cloud/common.js'
import { EMPTY_MAPPINGS, parseCidr, validateMappings, type Mappings } from './validators.js'

export const MIGRATION_JOBS = { start: 'cloudB.migration.start', apply: 'cloudB.migration.apply' } as const

function visibility(actor: Actor) {
  return seesAll(actor) ? ({ all: true } as const) : ({ all: false, userId: actor.id } as const)
}

export const toMigration = recordRenderer<MigrationRow, Migration>({
  url: { link: PATHS.migration, from: 'uuid' },
  ...copied('uuid', 'created', 'modified', 'name', 'description'),
  mappings: (r) => parseJson<Mappings>(r.mappings, EMPTY_MAPPINGS),
  ...copied(
    'created_by_uuid',
    'created_by_full_name',
    'src_offering_uuid',
    'src_offering_name',
    'dst_offering_uuid',
    'dst_offering_name',
    'dst_plan_uuid',
    'src_resource_uuid',
    'src_resource_name',
    'dst_resource_uuid',
    'dst_resource_name',
    'dst_resource_state',
    'state',
    'error_message',
    'error_traceback',
  ),
})

export function listMigrations(
  ctx: AppContext,
  actor: Actor,
  listing: Listing,
  base: string,
  page: Pager<Migration>,
): Promise<Migration[]> {
  return pageOf(page, migrationsRepository(ctx.db), visibility(actor), listing, (r) => toMigration(base, r))
}

// ---- the one path of a migration's state: each write tells its change, in its transaction ----

async function tellMigration(
  ctx: AppContext,
  db: Db,
  change: 'created' | 'state_changed' | 'deleted',
  m: MigrationEventRow,
  before: string | null,
  after: string | null,
): Promise<void> {
  await emitEvent(ctx, db, {
    type: `cloudB.migration.${change}`,
    objectType: 'migration',
    objectUuid: m.uuid,
    path: `/api/${PATHS.migration}/${m.uuid}/`,
    offeringUuid: m.offering_uuid,
    projectUuid: m.project_uuid,
    customerUuid: m.customer_uuid,
    data: { state_before: before, state_after: after },
  })
}

/** Moves the migration `id` to `to` if its state is one of `from`, and tells it; false when it was elsewhere. */
async function moveMigration(
  ctx: AppContext,
  id: number,
  from: readonly string[],
  to: string,
  values: Record<string, unknown> = {},
): Promise<boolean> {
  return ctx.db.transaction().execute(async (trx) => {
    const moved = await migrationsRepository(trx).moveState(id, from, to, values)
    if (moved && moved.before !== to)
      await tellMigration(ctx, trx, 'state_changed', moved.after, moved.before, to)
    return !!moved
  })
}

async function findVisible(ctx: AppContext, actor: Actor, uuid: string): Promise<MigrationRow> {
  return foundByUuid(
    uuid,
    (u) => migrationsRepository(ctx.db).findVisibleByUuid(visibility(actor), u),
    'Migration',
  )
}

/** The migration as the REST API lets the actor see it (404 otherwise): the events' rule. */
export const findVisibleMigration = findVisible

export async function getMigration(ctx: AppContext, actor: Actor, uuid: string, base: string) {
  return toMigration(base, await findVisible(ctx, actor, uuid))
}

/** POST: validates the source tenant, destination offering and plan and the mappings; 201. */
export async function createMigration(
  ctx: AppContext,
  actor: Actor,
  body: {
    name?: string
    description?: string
    mappings?: Record<string, unknown>
    src_resource: string
    dst_offering: string
    dst_plan: string
  },
  base: string,
): Promise<Migration> {
  const srcUuid = normalizeUuid(body.src_resource)
  if (!srcUuid) throw fieldError('src_resource', 'Must be a valid UUID.')
  let src
  try {
    src = await getResource(ctx, actor, srcUuid, base)
  } catch (e) {
    if (e instanceof AppError && e.kind === 'not_found')
      throw fieldError('src_resource', `Object with uuid=${srcUuid} does not exist.`)
    throw e
  }
  const srcRow = (await cloudBRepository(ctx.db).marketplaceResource(
    (await cloudBRepository(ctx.db).marketplaceResourceByUuid(srcUuid))!.id,
  ))!
  if (srcRow.scope_type !== TYPES.tenant || srcRow.scope_id == null)
    throw fieldError('src_resource', 'The resource is not a cloudB tenant.')
  const dstOfferingUuid = normalizeUuid(body.dst_offering)
  const offering = dstOfferingUuid ? await findOfferingByUuid(ctx, dstOfferingUuid) : undefined
  if (!dstOfferingUuid) throw fieldError('dst_offering', 'Must be a valid UUID.')
  if (!offering) throw fieldError('dst_offering', `Object with uuid=${dstOfferingUuid} does not exist.`)
  if (offering.type !== 'CloudB.Tenant')
    throw fieldError('dst_offering', 'The offering must be of type CloudB.Tenant.')
  const planUuid = normalizeUuid(body.dst_plan)
  if (!planUuid) throw fieldError('dst_plan', 'Must be a valid UUID.')
  let plan
  try {
    plan = await resolvePlanLink(ctx, 'dst_plan', `/api/marketplace-plans/${planUuid}/`)
  } catch {
    throw fieldError('dst_plan', `Object with uuid=${planUuid} does not exist.`)
  }
  if (plan.offering_id !== offering.id)
    throw fieldError('dst_plan', 'The plan does not belong to the destination offering.')
  const mappings = validateMappings(body.mappings)
  if (!mappings.ok) throw new AppError('invalid', mappings.errors)
  // The implied Create order must not wait for consumer review (reference §12).
  if (!can(actor, 'ORDER.APPROVE', { customerId: srcRow.customer_id, projectId: srcRow.project_id }))
    throw nonFieldError('User does not have enough permissions to migrate resource.')
  const now = ctx.clock().toISOString()
  const id = await ctx.db.transaction().execute(async (trx) => {
    const id = await migrationsRepository(trx).insert({
      uuid: ctx.newUuid(),
      name: body.name || src.name,
      description: body.description ?? '',
      mappings: toJson(mappings.value),
      created_by_id: actor.id,
      src_resource_id: srcRow.id,
      dst_offering_id: offering.id,
      dst_plan_id: plan.id,
      created: now,
      modified: now,
    })
    await tellMigration(
      ctx,
      trx,
      'created',
      (await migrationsRepository(trx).told(id))!,
      null,
      'CREATION_SCHEDULED',
    )
    await ctx.jobs.enqueue(trx, MIGRATION_JOBS.start, { id }, { maxAttempts: 1 })
    return id
  })
  return toMigration(base, (await migrationsRepository(ctx.db).findById(id))!)
}

/** PUT/PATCH: mappings (validated), error_message, error_traceback. */
export async function updateMigration(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: { mappings?: Record<string, unknown>; error_message?: string; error_traceback?: string },
  base: string,
): Promise<Migration> {
  const row = await findVisible(ctx, actor, uuid)
  const changes: Record<string, unknown> = { modified: ctx.clock().toISOString() }
  if (body.mappings !== undefined) {
    const m = validateMappings(body.mappings)
    if (!m.ok) throw new AppError('invalid', m.errors)
    changes.mappings = toJson(m.value)
  }
  if (body.error_message !== undefined) changes.error_message = body.error_message
  if (body.error_traceback !== undefined) changes.error_traceback = body.error_traceback
  await migrationsRepository(ctx.db).update(row.id, changes)
  return toMigration(base, (await migrationsRepository(ctx.db).findById(row.id))!)
}

/** DELETE: the record only; the destination tenant and resource stay. */
export async function deleteMigration(ctx: AppContext, actor: Actor, uuid: string): Promise<void> {
  const row = await findVisible(ctx, actor, uuid)
  await ctx.db.transaction().execute(async (trx) => {
    const gone = await migrationsRepository(trx).deleteTold(row.id)
    if (gone) await tellMigration(ctx, trx, 'deleted', gone, gone.state, null)
  })
}

async function fail(ctx: AppContext, id: number, error: unknown): Promise<void> {
  const message =
    error instanceof AppError && typeof error.body === 'object'
      ? JSON.stringify(error.body)
      : error instanceof Error
        ? error.message
        : String(error)
  const traceback = error instanceof Error ? (error.stack ?? message) : message
  await moveMigration(ctx, id, ['CREATION_SCHEDULED', 'CREATING'], 'ERRED', {
    error_message: message.slice(0, 2000),
    error_traceback: traceback.slice(0, 10000),
    modified: ctx.clock().toISOString(),
  })
}

/** Job: CREATING, and the destination's Create order placed on behalf of the creator. */
export async function startMigration(ctx: AppContext, p: { id: number }): Promise<void> {
  const repo = migrationsRepository(ctx.db)
  if (
    !(await moveMigration(ctx, p.id, ['CREATION_SCHEDULED'], 'CREATING', {
      modified: ctx.clock().toISOString(),
    }))
  )
    return
  const m = (await repo.findById(p.id))!
  try {
    const actor = m.created_by_id ? await loadActor(ctx.db, m.created_by_id, ctx.clock().toISOString()) : null
    if (!actor) throw new Error('The user who created the migration no longer exists.')
    const src = (await cloudBRepository(ctx.db).marketplaceResource(m.src_resource_id))!
    const project = await ctx.db
      .selectFrom('projects')
      .select('uuid')
      .where('id', '=', src.project_id)
      .executeTakeFirstOrThrow()
    const { resourceId } = await createOrder(ctx, actor, {
      offering: `/api/marketplace-provider-offerings/${m.dst_offering_uuid}/`,
      project: `/api/projects/${project.uuid}/`,
      plan: m.dst_plan_uuid ? `/api/marketplace-plans/${m.dst_plan_uuid}/` : null,
      attributes: { name: m.name, description: m.description },
      limits: parseJson<Record<string, number>>(src.limits, {}),
    })
    await repo.update(p.id, { dst_resource_id: resourceId, modified: ctx.clock().toISOString() })
  } catch (e) {
    await fail(ctx, p.id, e)
  }
}

/** Job: copies the source tenant's networking into the destination tenant, then OK. */
export async function applyMigration(ctx: AppContext, p: { id: number }): Promise<void> {
  const repo = migrationsRepository(ctx.db)
  const m = await repo.findById(p.id)
  if (!m || m.state !== 'CREATING') return
  try {
    const b = cloudBRepository(ctx.db)
    const src = (await b.marketplaceResource(m.src_resource_id))!
    const dst = (await b.marketplaceResource(m.dst_resource_id!))!
    const srcTenant = (await b.resource(src.scope_id!))!
    const dstTenant = (await b.resource(dst.scope_id!))!
    if (dstTenant.state !== 'OK')
      throw new Error(`The destination tenant is ${dstTenant.state}: ${dstTenant.error_message}`)
    const mappings = parseJson<Mappings>(m.mappings, {} as Mappings)
    const settings = (await settingsInfo(ctx, dstTenant.service_settings_id))!
    const d = cloudBDriver({ ctx, settings })
    const srcSettings = (await settingsInfo(ctx, srcTenant.service_settings_id))!
    const s = cloudBDriver({ ctx, settings: srcSettings })
    const remap = new Map((mappings.subnets ?? []).map((x) => [x.src_cidr, x.dst_cidr]))
    const wanted = new Set(mappings.networks ?? [])
    const srcNets = await b.backendIds('cloud_b_networks', srcTenant.id)
    const netUuids = new Map<string, string>()
    for (const [backendId, id] of srcNets) netUuids.set(backendId, (await b.resource(id))!.uuid)
    const subnets = await s.listSubnets(srcTenant.backend_id)
    for (const net of await s.listNetworks(srcTenant.backend_id)) {
      if (wanted.size && !wanted.has(netUuids.get(net.backend_id) ?? '')) continue
      const copy = await d.createNetwork(dstTenant.backend_id, { name: net.name })
      for (const sub of subnets.filter((x) => x.network_id === net.backend_id)) {
        const cidr = remap.get(parseCidr(sub.cidr)?.text ?? sub.cidr) ?? sub.cidr
        await d.createSubnet(copy.backend_id, { name: sub.name, cidr, dns_nameservers: sub.dns_nameservers })
      }
    }
    for (const g of await s.listSecurityGroups(srcTenant.backend_id)) {
      if (g.name === 'default') continue
      await d.createSecurityGroup(dstTenant.backend_id, {
        name: g.name,
        description: g.description,
        rules: g.rules,
      })
    }
    await importTenantObjects(ctx, dstTenant.id)
    await moveMigration(ctx, p.id, ['CREATING'], 'OK', { modified: ctx.clock().toISOString() })
  } catch (e) {
    await fail(ctx, p.id, e)
  }
}

/** When a destination tenant settles, the migrations waiting on it go on (or fail). */
export function followDestinationTenants(): void {
  onTenantSettled(async (ctx, tenantId, op, outcome) => {
    if (op !== 'create') return
    const rows = await cloudBRepository(ctx.db).marketplaceResourcesOf(TYPES.tenant, tenantId)
    for (const r of rows) {
      for (const m of await migrationsRepository(ctx.db).waitingOn(r.id)) {
        if (outcome === 'OK')
          await ctx.jobs.enqueue(ctx.db, MIGRATION_JOBS.apply, { id: m.id }, { maxAttempts: 1 })
        else {
          const t = await cloudBRepository(ctx.db).resource(tenantId)
          await fail(
            ctx,
            m.id,
            new Error(`The destination tenant could not be created: ${t?.error_message ?? ''}`),
          )
        }
      }
    }
  })
}
