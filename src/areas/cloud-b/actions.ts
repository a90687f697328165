// The actions of floating IPs (attach, detach) and routers (interfaces, static routes). Each
// moves the object OK → UPDATE_SCHEDULED at once and a job (`cloudB.action`) makes the backend
// call: UPDATING → OK, or ERRED with the error recorded.
import type { Transaction } from 'kysely'
import type { AppContext } from '../../context.js'
import type { DB } from '../../db/tables.js'
import { parseJson, toJson } from '../../db/values.js'
import { AppError, fieldError, invalidState, nonFieldError } from '../../http/errors.js'
import type { Actor } from '../../http/permissions.js'
import { normalizeUuid } from '../../http/uuid.js'
import { findVisibleResource, scheduleUpdate, type CommonRow } from '../cloud/common.js'
import type { CloudBDriver } from './driver.js'
import { insertPortRow } from './importing.js'
import { backendIdOf, driverOf, ext, requireManage, requireOk, resolveObject, tenantIdOf } from './objects.js'
import { KINDS, renderById } from './render.js'
import { cloudBRepository } from './repository.js'
import { afterInterfaceRemoved } from './resource-types.js'
import { moveCloudResource, removeCloudResources } from '../cloud/states.js'
import { TYPES } from './schema.js'
import { validateRoutes, type Route } from './validators.js'

export const ACTION_JOB = 'cloudB.action'

export type ActionPayload =
  | { id: number; action: 'attach'; portId: number }
  | { id: number; action: 'detach' }
  | { id: number; action: 'add_interface'; subnetId?: number; portId?: number }
  | { id: number; action: 'remove_interface'; portId: number; subnetId?: number }
  | { id: number; action: 'set_routes' }

/**
 * Moves the resource from one of `from` to UPDATE_SCHEDULED, saves `changes` and queues the
 * backend action, in one transaction, then wakes the jobs. 409 when another caller moved it first.
 */
async function scheduleAction(
  ctx: AppContext,
  row: CommonRow,
  from: readonly string[],
  payload: ActionPayload,
  changes?: (trx: Transaction<DB>) => Promise<void>,
): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const moved = await moveCloudResource(ctx, trx, row.id, from, 'UPDATE_SCHEDULED', {
      modified: ctx.clock().toISOString(),
    })
    if (!moved) throw invalidState(from)
    if (changes) await changes(trx)
    await ctx.jobs.enqueue(trx, ACTION_JOB, payload, { maxAttempts: 1 })
  })
  ctx.jobs.wake()
}

/** The visible object of `type`: manageable when `manage` (403), in one of `states` (409). */
async function actionTarget(
  ctx: AppContext,
  actor: Actor,
  type: string,
  uuid: string,
  states: readonly string[],
  manage: boolean,
): Promise<CommonRow> {
  const row = await findVisibleResource(ctx, actor, type, uuid)
  if (manage) requireManage(actor, row)
  if (!states.includes(row.state)) throw invalidState(states)
  return row
}

/** Runs one queued backend action: UPDATE_SCHEDULED → UPDATING → OK, or ERRED on failure. */
export async function runAction(ctx: AppContext, p: ActionPayload): Promise<void> {
  const repo = cloudBRepository(ctx.db)
  const now = () => ctx.clock().toISOString()
  if (!(await moveCloudResource(ctx, ctx.db, p.id, ['UPDATE_SCHEDULED'], 'UPDATING', { modified: now() })))
    return
  const row = (await repo.resource(p.id))!
  try {
    const d = await driverOf(ctx, row.service_settings_id)
    await performAction(ctx, d, row, p)
    await moveCloudResource(ctx, ctx.db, p.id, ['UPDATING'], 'OK', {
      error_message: '',
      error_traceback: '',
      modified: now(),
    })
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    const traceback = error instanceof Error ? (error.stack ?? message) : message
    await moveCloudResource(ctx, ctx.db, p.id, ['UPDATING'], 'ERRED', {
      error_message: message.slice(0, 2000),
      error_traceback: traceback.slice(0, 10000),
      modified: now(),
    })
  }
}

async function performAction(
  ctx: AppContext,
  d: CloudBDriver,
  row: { id: number; backend_id: string; service_settings_id: number; project_id: number },
  p: ActionPayload,
): Promise<void> {
  switch (p.action) {
    case 'attach':
    case 'detach': {
      const f =
        p.action === 'attach'
          ? await d.attachFloatingIp(row.backend_id, await backendIdOf(ctx.db, p.portId))
          : await d.detachFloatingIp(row.backend_id)
      const portId = p.action === 'attach' ? p.portId : null
      await ctx.db.transaction().execute(async (trx) => {
        await cloudBRepository(trx).updateExt('cloud_b_floating_ips', row.id, { port_id: portId })
        await cloudBRepository(trx).updateResource(row.id, { runtime_state: f.status })
      })
      return
    }
    case 'add_interface': {
      const target =
        p.subnetId !== undefined
          ? { subnet_id: await backendIdOf(ctx.db, p.subnetId) }
          : { port_id: await backendIdOf(ctx.db, p.portId) }
      const port = await d.addRouterInterface(row.backend_id, target)
      const tenantId = (await ext(ctx.db, 'cloud_b_routers', row.id)).tenant_id as number
      await ctx.db.transaction().execute(async (trx) => {
        const r = cloudBRepository(trx)
        let portId = p.portId
        if (portId === undefined) {
          const subnetExt = await ext(trx, 'cloud_b_subnets', p.subnetId!)
          portId = await insertPortRow(
            ctx,
            trx,
            row,
            tenantId,
            port,
            new Map([[port.network_id, subnetExt.network_id as number]]),
            new Map([[target.subnet_id!, p.subnetId!]]),
          )
        } else {
          await r.updateExt('cloud_b_ports', portId, {
            device_id: port.device_id,
            device_owner: port.device_owner,
            fixed_ips: toJson(port.fixed_ips),
          })
          await r.updateResource(portId, { runtime_state: port.status })
        }
        await r.addInterface(row.id, portId)
      })
      return
    }
    case 'remove_interface': {
      const out = await d.removeRouterInterface(row.backend_id, {
        port_id: await backendIdOf(ctx.db, p.portId),
      })
      await ctx.db.transaction().execute((trx) => afterInterfaceRemoved(ctx, trx, p.portId, out.deleted))
      return
    }
    case 'set_routes': {
      const routes = parseJson<Route[]>((await ext(ctx.db, 'cloud_b_routers', row.id)).routes, [])
      await d.setRoutes(row.backend_id, routes)
      return
    }
  }
}

// ---- floating IP actions ----

/** POST attach_to_port: the port must be OK and of the floating IP's tenant. */
export async function attachToPort(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  portLink: string,
): Promise<void> {
  const fip = await actionTarget(ctx, actor, TYPES.floatingIp, uuid, ['OK'], true)
  const port = await resolveObject(ctx, actor, 'port', portLink, 'port')
  if (port.state !== 'OK') {
    throw new AppError(
      'conflict',
      `The port [${port.name || port.uuid}] is expected to have [OK] state, but actual one is [${port.state}]`,
    )
  }
  const fipTenant = await tenantIdOf(ctx, 'cloud_b_floating_ips', fip.id)
  const portTenant = await tenantIdOf(ctx, 'cloud_b_ports', port.id)
  if (fipTenant !== portTenant) {
    const names = async (id: number) => (await cloudBRepository(ctx.db).resource(id))?.name ?? ''
    throw nonFieldError(
      `The port [${port.name || port.uuid}] is expected to belong to the same tenant [${await names(fipTenant)}] , but actual one is [${await names(portTenant)}]`,
    )
  }
  await scheduleAction(ctx, fip, ['OK'], { id: fip.id, action: 'attach', portId: port.id })
}

/** POST detach_from_port: 400 when the floating IP is not attached. */
export async function detachFromPort(ctx: AppContext, actor: Actor, uuid: string): Promise<void> {
  const fip = await actionTarget(ctx, actor, TYPES.floatingIp, uuid, ['OK'], true)
  const e = await ext(ctx.db, 'cloud_b_floating_ips', fip.id)
  if (e.port_id == null) {
    throw fieldError('port', `Floating IP [${fip.name || fip.uuid}] is not attached to any port.`)
  }
  await scheduleAction(ctx, fip, ['OK'], { id: fip.id, action: 'detach' })
}

// ---- routers ----

type InterfaceTarget = { subnet?: CommonRow; port?: CommonRow }

/** Exactly one of subnet or port (400 otherwise); returns the resolved object. */
async function interfaceTarget(
  ctx: AppContext,
  actor: Actor,
  body: { subnet?: string; port?: string },
): Promise<InterfaceTarget> {
  const hasSubnet = body.subnet !== undefined && body.subnet !== null && body.subnet !== ''
  const hasPort = body.port !== undefined && body.port !== null && body.port !== ''
  if (hasSubnet === hasPort) throw nonFieldError('Either subnet or port must be specified, but not both.')
  if (hasSubnet) return { subnet: await resolveObject(ctx, actor, 'subnet', body.subnet, 'subnet') }
  return { port: await resolveObject(ctx, actor, 'port', body.port, 'port') }
}

/**
 * A router interface action: the router OK (409), exactly one of subnet or port, then `check`
 * answers the action to queue (400 when the target does not fit).
 */
function interfaceAction(
  check: (ctx: AppContext, router: CommonRow, target: InterfaceTarget) => Promise<ActionPayload>,
) {
  return async (
    ctx: AppContext,
    actor: Actor,
    uuid: string,
    body: { subnet?: string; port?: string },
  ): Promise<void> => {
    const router = await actionTarget(ctx, actor, TYPES.router, uuid, ['OK'], false)
    const target = await interfaceTarget(ctx, actor, body)
    await scheduleAction(ctx, router, ['OK'], await check(ctx, router, target))
  }
}

/** POST add_router_interface: router OK (409); the subnet or a free port of the router's tenant. */
export const addRouterInterface = interfaceAction(async (ctx, router, target) => {
  const tenantId = await tenantIdOf(ctx, 'cloud_b_routers', router.id)
  if (target.subnet) {
    if ((await tenantIdOf(ctx, 'cloud_b_subnets', target.subnet.id)) !== tenantId)
      throw fieldError('subnet', 'The subnet must belong to the tenant of the router.')
    requireOk(target.subnet, 'subnet', 'Subnet')
    const links = await cloudBRepository(ctx.db).interfacePorts([router.id])
    if (links.some((l) => l.subnet_id === target.subnet!.id))
      throw fieldError('subnet', 'The router already has an interface on this subnet.')
    return { id: router.id, action: 'add_interface', subnetId: target.subnet.id }
  }
  const port = target.port!
  if ((await tenantIdOf(ctx, 'cloud_b_ports', port.id)) !== tenantId)
    throw fieldError('port', 'The port must belong to the tenant of the router.')
  const pe = await ext(ctx.db, 'cloud_b_ports', port.id)
  if (pe.device_owner)
    throw fieldError('port', `Port cannot have an owner. Currently owner is ${pe.device_owner}`)
  if (port.runtime_state !== 'DOWN')
    throw fieldError(
      'port',
      `Port should be in DOWN status for attachment. Current status is ${port.runtime_state}`,
    )
  return { id: router.id, action: 'add_interface', portId: port.id }
})

/** POST remove_router_interface: the subnet or port must be one of the router's interfaces. */
export const removeRouterInterface = interfaceAction(async (ctx, router, target) => {
  const links = await cloudBRepository(ctx.db).interfacePorts([router.id])
  let portId: number | undefined
  if (target.port) portId = links.find((l) => l.port_id === target.port!.id)?.port_id
  else portId = links.filter((l) => l.subnet_id === target.subnet!.id).at(-1)?.port_id
  if (portId === undefined) {
    const field = target.port ? 'port' : 'subnet'
    throw fieldError(field, `The router has no interface on this ${field}.`)
  }
  return { id: router.id, action: 'remove_interface', portId }
})

/** POST set_routes: validated, saved at once, then pushed by a job; answers the saved routes. */
export async function setRoutes(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  routes: unknown,
): Promise<{ routes: Route[] }> {
  const router = await actionTarget(ctx, actor, TYPES.router, uuid, ['OK', 'ERRED'], false)
  const rendered = await renderById(ctx, KINDS.router, router.id, '')
  const checked = validateRoutes(
    routes,
    rendered.fixed_ips.map((f) => String(f.ip_address)),
  )
  if (!checked.ok) throw new AppError('invalid', checked.errors)
  await scheduleAction(ctx, router, ['OK', 'ERRED'], { id: router.id, action: 'set_routes' }, async (trx) =>
    cloudBRepository(trx).updateExt('cloud_b_routers', router.id, { routes: toJson(checked.value) }),
  )
  return { routes: checked.value }
}

/** Tenant unlink: the tenant's own objects go with it (no backend calls). */
export async function unlinkTenantChildren(ctx: AppContext, uuid: string): Promise<void> {
  const u = normalizeUuid(uuid)
  const t = u ? await cloudBRepository(ctx.db).resourceByUuid(TYPES.tenant, u) : undefined
  if (t) await removeCloudResources(ctx, ctx.db, await cloudBRepository(ctx.db).tenantChildren(t.id))
}

// ---- updates through the cloud base (a job pushes them) ----

/** PUT/PATCH of a tenant: name and description, and its limits merged into the saved ones. */
export async function updateTenant(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: { name?: string; description?: string; limits?: Record<string, number> },
  base: string,
) {
  const id = await scheduleUpdate(
    ctx,
    actor,
    TYPES.tenant,
    uuid,
    async () => null,
    async (trx, row) => {
      if (body.limits !== undefined) {
        const repo = cloudBRepository(trx)
        const cur = await repo.extOf('cloud_b_tenants', row.id)
        const limits = { ...parseJson<Record<string, number>>(cur?.limits, {}), ...body.limits }
        await repo.updateExt('cloud_b_tenants', row.id, { limits: toJson(limits) })
      }
      const common: Record<string, unknown> = {}
      if (body.name !== undefined) common.name = body.name
      if (body.description !== undefined) common.description = body.description
      return common
    },
  )
  ctx.jobs.wake()
  return renderById(ctx, KINDS.tenant, id, base)
}

/** POST update_description of a floating IP: saved, then pushed by the update step. */
export async function updateFloatingIpDescription(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  description: string,
): Promise<void> {
  await scheduleUpdate(
    ctx,
    actor,
    TYPES.floatingIp,
    uuid,
    async () => null,
    async () => ({ description }),
  )
  ctx.jobs.wake()
}
