// The pieces every cloudB use case shares: the backend driver of a resource, the extension row of
// an object and its tenant, the backend id of a row, links in request bodies resolved to visible
// objects, and the permission and state checks the writes make.
import type { Kysely, Transaction } from 'kysely'
import type { AppContext } from '../../context.js'
import type { DB } from '../../db/tables.js'
import { AppError, fieldError, forbidden } from '../../http/errors.js'
import { uuidFromLink } from '../../http/links.js'
import type { Actor } from '../../http/permissions.js'
import { canManage, findVisibleResource, settingsInfo, type CommonRow } from '../cloud/common.js'
import { BackendError, driverFor, type DriverCall } from '../cloud/driver.js'
import type { CloudBDriver } from './driver.js'
import './emulator.js'
import { cloudBRepository, type ExtTable } from './repository.js'
import { PATHS, TYPES } from './schema.js'

export type Db = Kysely<DB> | Transaction<DB>

/** Used for rendering inside jobs and after writes (visibility was checked by the caller). */
export const SYSTEM: Actor = {
  id: 0,
  uuid: '',
  username: 'system',
  fullName: '',
  email: '',
  civilNumber: null,
  isStaff: true,
  isSupport: false,
  affiliations: [],
  identitySource: '',
  image: null,
  grants: [],
}

export function cloudBDriver(call: DriverCall): CloudBDriver {
  return driverFor<CloudBDriver>('cloudB', call)
}

export async function driverOf(ctx: AppContext, settingsId: number): Promise<CloudBDriver> {
  const settings = await settingsInfo(ctx, settingsId)
  if (!settings) throw new BackendError('The service settings of this resource no longer exist.')
  return cloudBDriver({ ctx, settings })
}

/** The extension table of each kind of object. */
export const EXT: Record<keyof typeof TYPES, ExtTable> = {
  tenant: 'cloud_b_tenants',
  network: 'cloud_b_networks',
  subnet: 'cloud_b_subnets',
  port: 'cloud_b_ports',
  securityGroup: 'cloud_b_security_groups',
  floatingIp: 'cloud_b_floating_ips',
  router: 'cloud_b_routers',
}

export async function backendIdOf(db: Db, id: number | null | undefined): Promise<string> {
  if (id == null) return ''
  return (await cloudBRepository(db).resource(id))?.backend_id ?? ''
}

export async function ext(db: Db, table: ExtTable, id: number): Promise<Record<string, any>> {
  const e = await cloudBRepository(db).extOf(table, id)
  if (!e) throw new BackendError('The resource has no cloudB details.')
  return e
}

export async function tenantIdOf(ctx: AppContext, table: ExtTable, id: number): Promise<number> {
  return (await ext(ctx.db, table, id)).tenant_id as number
}

/** A cloudB object of `kind` named by a hyperlink: must exist and be visible, else 400 on `field`. */
export async function resolveObject(
  ctx: AppContext,
  actor: Actor,
  field: string,
  value: unknown,
  kind: keyof typeof TYPES,
): Promise<CommonRow> {
  if (typeof value !== 'string') throw fieldError(field, 'Incorrect type. Expected URL string.')
  const uuid = uuidFromLink(value, PATHS[kind])
  if (!uuid) throw fieldError(field, 'Invalid hyperlink - Incorrect URL match.')
  try {
    return await findVisibleResource(ctx, actor, TYPES[kind], uuid)
  } catch (e) {
    if (e instanceof AppError && e.kind === 'not_found')
      throw fieldError(field, 'Invalid hyperlink - Object does not exist.')
    throw e
  }
}

export function requireManage(actor: Actor, row: CommonRow): void {
  if (!canManage(actor, row)) throw forbidden()
}

/** 400 on `field` unless the object named there is OK. */
export function requireOk(row: CommonRow, field: string, what: string): void {
  if (row.state !== 'OK') throw fieldError(field, `${what} must be in OK state.`)
}
