// cloudA use cases for locations (staff-managed, visible with their service settings) and
// resource groups (managed by those who manage the project); public IPs are in public-ips.ts.
import type { AppContext } from '../../context.js'
import { conflict, FieldErrorSet, fieldError, forbidden } from '../../http/errors.js'
import { copied, invalidHyperlink, recordRenderer, uuidFromLink } from '../../http/links.js'
import { requireStaff, type Actor } from '../../http/permissions.js'
import { pageOf, type Pager, type ScopedRows } from '../../http/resource.js'
import type { Listing } from '../../db/listing.js'
import { foundByUuid } from '../../http/uuid.js'
import {
  canManage,
  resolveManagedProject,
  resolveSettingsLink,
  resourceVisibility,
  settingsVisibility,
} from '../cloud/common.js'
import {
  locationsRepository,
  resourceGroupsRepository,
  type LocationRow,
  type ResourceGroupRow,
} from './repository.js'
import {
  PATHS,
  type Location,
  type LocationWrite,
  type ResourceGroup,
  type ResourceGroupWrite,
} from './schema.js'

/** Runs field checks independently and reports every failing field at once, as DRF does. */
export async function collect<T extends Record<string, () => Promise<unknown>>>(
  checks: T,
): Promise<{ [K in keyof T]: Awaited<ReturnType<T[K]>> }> {
  const errors = new FieldErrorSet()
  const out: Record<string, unknown> = {}
  for (const [k, check] of Object.entries(checks)) out[k] = await errors.check([], check)
  errors.throwIfAny()
  return out as { [K in keyof T]: Awaited<ReturnType<T[K]>> }
}

/** What one kind of record needs from its repository. */
interface Records<V, Row> extends ScopedRows<V, Row> {
  findVisibleByUuid(vis: V, uuid: string): Promise<Row | undefined>
  findById(id: number): Promise<Row | undefined>
  insert(values: any): Promise<number>
  update(id: number, values: Record<string, unknown>): Promise<void>
  delete(id: number): Promise<void>
  /** How many records use this one (a delete answers 409 while any do). */
  usage(id: number): Promise<number>
}

/** A kind of cloudA record kept in a service settings (locations, resource groups). */
interface RecordKind<V, Row, T> {
  path: string
  /** In the messages of a link's 400: `The <noun> must belong to the given service settings.` */
  noun: string
  /** In a 404: `No <model> matches the given query.` */
  model: string
  repository: (db: AppContext['db']) => Records<V, Row>
  visibility: (actor: Actor) => V
  render: (base: string, row: Row) => T
  /** Who changes and deletes a record; without it staff only, checked before the lookup. */
  manages?: (actor: Actor, row: Row) => boolean
  /** The fields PUT and PATCH change. */
  editable: readonly string[]
  /** The 409 of a delete while other records use it. */
  inUse: string
}

/** The list, retrieve, update, delete and link lookup of a kind of record, written once. */
function recordsOf<V, Row extends { id: number; service_settings_id: number }, T>(
  kind: RecordKind<V, Row, T>,
) {
  const { repository, render } = kind
  function find(ctx: AppContext, actor: Actor, uuid: string): Promise<Row> {
    const vis = kind.visibility(actor)
    return foundByUuid(uuid, (u) => repository(ctx.db).findVisibleByUuid(vis, u), kind.model)
  }
  /** 404 → 403, or 403 first for staff-only records. */
  async function findWritable(ctx: AppContext, actor: Actor, uuid: string): Promise<Row> {
    if (!kind.manages) requireStaff(actor)
    const row = await find(ctx, actor, uuid)
    if (kind.manages && !kind.manages(actor, row)) throw forbidden()
    return row
  }
  async function rendered(ctx: AppContext, base: string, id: number): Promise<T> {
    return render(base, (await repository(ctx.db).findById(id))!)
  }
  /**
   * The record a request's hyperlink names: of this kind, visible, and in the given service
   * settings (when not null); else 400 on `field`.
   */
  async function resolveLink(
    ctx: AppContext,
    actor: Actor,
    field: string,
    value: unknown,
    settingsId: number | null,
  ): Promise<Row> {
    if (typeof value !== 'string') throw fieldError(field, 'Incorrect type. Expected URL string.')
    const uuid = uuidFromLink(value, kind.path)
    if (!uuid) throw fieldError(field, 'Invalid hyperlink - Incorrect URL match.')
    const row = await repository(ctx.db).findVisibleByUuid(kind.visibility(actor), uuid)
    if (!row) throw invalidHyperlink(field)
    if (settingsId !== null && row.service_settings_id !== settingsId) {
      throw fieldError(field, `The ${kind.noun} must belong to the given service settings.`)
    }
    return row
  }
  return {
    list(ctx: AppContext, vis: V, listing: Listing, base: string, page: Pager<T>) {
      return pageOf(page, repository(ctx.db), vis, listing, (r) => render(base, r))
    },
    async get(ctx: AppContext, actor: Actor, uuid: string, base: string): Promise<T> {
      return render(base, await find(ctx, actor, uuid))
    },
    /** Inserts a new record (its uuid and timestamps added) and renders it. */
    async insert(ctx: AppContext, base: string, values: Record<string, unknown>): Promise<T> {
      const now = ctx.clock().toISOString()
      const row = { uuid: ctx.newUuid(), ...values, created: now, modified: now }
      return rendered(ctx, base, await repository(ctx.db).insert(row))
    },
    /** PUT/PATCH: the editable fields given. */
    async update(ctx: AppContext, actor: Actor, uuid: string, body: object, base: string): Promise<T> {
      const current = await findWritable(ctx, actor, uuid)
      const changes: Record<string, unknown> = { modified: ctx.clock().toISOString() }
      for (const field of kind.editable) {
        const value = (body as Record<string, unknown>)[field]
        if (value !== undefined) changes[field] = value
      }
      await repository(ctx.db).update(current.id, changes)
      return rendered(ctx, base, current.id)
    },
    async destroy(ctx: AppContext, actor: Actor, uuid: string): Promise<void> {
      const current = await findWritable(ctx, actor, uuid)
      const repo = repository(ctx.db)
      if ((await repo.usage(current.id)) > 0) throw conflict(kind.inUse)
      await repo.delete(current.id)
    },
    resolveLink,
  }
}

// ---- locations ----
/** The service settings a location or resource group is in: its link, uuid and name. */
const settingsFields = {
  service_settings: { link: 'service-settings' },
  ...copied('service_settings_uuid', 'service_settings_name'),
} as const

export const toLocation = recordRenderer<LocationRow, Location>({
  url: { link: PATHS.locations, from: 'uuid' },
  ...copied('uuid', 'name'),
  ...settingsFields,
  ...copied('backend_id', 'created', 'modified'),
})

/** Locations: staff-managed; a location stays in its service settings. */
const locations = recordsOf({
  path: PATHS.locations,
  noun: 'location',
  model: 'Location',
  repository: locationsRepository,
  visibility: settingsVisibility,
  render: toLocation,
  editable: ['name', 'backend_id'],
  inUse: 'Cannot delete location with existing resource groups or public IPs',
})

export async function createLocation(ctx: AppContext, actor: Actor, body: LocationWrite, base: string) {
  requireStaff(actor)
  const settings = await resolveSettingsLink(ctx, actor, 'service_settings', body.service_settings, 'cloudA')
  return locations.insert(ctx, base, {
    name: body.name!,
    service_settings_id: settings.id,
    backend_id: body.backend_id ?? '',
  })
}

/** A location hyperlink of a request: known, visible, and in the given service settings. */
export const resolveLocationLink = locations.resolveLink

export const locationService = { ...locations, create: createLocation }

// ---- resource groups ----

export const toResourceGroup = recordRenderer<ResourceGroupRow, ResourceGroup>({
  url: { link: PATHS.resourceGroups, from: 'uuid' },
  ...copied('uuid', 'name'),
  location: { link: PATHS.locations },
  ...copied('location_uuid', 'location_name'),
  ...settingsFields,
  project: { link: 'projects' },
  ...copied('project_uuid', 'project_name', 'customer_uuid', 'created', 'modified'),
})

/**
 * Resource groups: managed by those who manage the project; PUT/PATCH change the name only
 * (location, settings and project are fixed at creation).
 */
const resourceGroups = recordsOf({
  path: PATHS.resourceGroups,
  noun: 'resource group',
  model: 'ResourceGroup',
  repository: resourceGroupsRepository,
  visibility: resourceVisibility,
  render: toResourceGroup,
  manages: canManage,
  editable: ['name'],
  inUse: 'Cannot delete resource group with existing public IPs',
})

/** POST: whoever manages resources in the project; the location must be in the settings. */
export async function createResourceGroup(
  ctx: AppContext,
  actor: Actor,
  body: ResourceGroupWrite,
  base: string,
) {
  const { settings, project } = await collect({
    settings: () => resolveSettingsLink(ctx, actor, 'service_settings', body.service_settings, 'cloudA'),
    project: () => resolveManagedProject(ctx, actor, 'project', body.project),
  })
  const location = await resolveLocationLink(ctx, actor, 'location', body.location, settings.id)
  return resourceGroups.insert(ctx, base, {
    name: body.name!,
    location_id: location.id,
    service_settings_id: settings.id,
    project_id: project.id,
  })
}

/** A resource group hyperlink of a request: known, visible, and in the given service settings. */
export const resolveResourceGroupLink = resourceGroups.resolveLink

export const resourceGroupService = { ...resourceGroups, create: createResourceGroup }
