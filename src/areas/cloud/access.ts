// Who sees and who manages a cloud resource, the common list filters (spec 4.8), and the lookups
// every cloud operation starts with (the visible or manageable resource, the managed project).
import type { Kysely, Transaction } from 'kysely'
import type { AppContext } from '../../context.js'
import type { DB } from '../../db/tables.js'
import { fieldError, forbidden } from '../../http/errors.js'
import { filter, type FilterValues } from '../../http/filters.js'
import { can, customerIds, projectIds, scopesWith, seesAll, type Actor } from '../../http/permissions.js'
import { values, type Query } from '../../http/query.js'
import { Type } from '@sinclair/typebox'
import { foundByUuid } from '../../http/uuid.js'
import { resolveProjectLink } from '../directory/service.js'
import { CLOUD_STATE_LABELS, CLOUD_STATES, cloudResourceType, type CloudState } from './lifecycle.js'
import {
  cloudResourcesRepository,
  visibleResources,
  type CloudResourcesQuery,
  type CommonFilters,
  type CommonRow,
  type ManageScopes,
  type ResourceVisibility,
} from './repository.js'

export function resourceVisibility(actor: Actor): ResourceVisibility {
  if (seesAll(actor)) return { all: true }
  return { all: false, customerIds: customerIds(actor), projectIds: projectIds(actor) }
}

function manageScopes(actor: Actor): ManageScopes {
  if (actor.isStaff) return { all: true }
  const s = scopesWith(actor, 'RESOURCE.MANAGE')
  return { all: false, customerIds: s.customer, projectIds: s.project }
}

/** May the actor change this resource: staff, customer owner, project admin or manager. */
export function canManage(actor: Actor, r: { customer_id: number; project_id: number }): boolean {
  return can(actor, 'RESOURCE.MANAGE', { customerId: r.customer_id, projectId: r.project_id })
}

/** Accepts the tokens and the older labels ("Creation Scheduled"); unknown → 400 on `state`. */
function stateFilter(q: Query, name: string): CloudState[] | undefined {
  const out: CloudState[] = []
  for (const v of values(q, name)) {
    if (v === '') continue
    const token = (CLOUD_STATES as readonly string[]).includes(v)
      ? (v as CloudState)
      : CLOUD_STATES.find((s) => CLOUD_STATE_LABELS[s].toLowerCase() === v.toLowerCase())
    if (!token) throw fieldError(name, `Select a valid choice. ${v} is not one of the available choices.`)
    out.push(token)
  }
  return out.length ? out : undefined
}

/**
 * The common filters of every cloud resource list, in the order they are checked (the first
 * malformed one answers 400). Their values reach the service (`commonFiltersOf`), which hands
 * them to the common query.
 */
export const commonFilters = {
  customer: filter.uuid(undefined, { description: 'customer uuid' }),
  customer_uuid: filter.uuid(),
  customer_name: filter.exact(),
  customer_native_name: filter.exact(),
  customer_abbreviation: filter.exact(),
  project: filter.uuid(undefined, { description: 'project uuid' }),
  project_uuid: filter.uuid(),
  project_name: filter.exact(),
  service_settings_name: filter.exact(),
  service_settings_uuid: filter.uuid(),
  name: filter.exact(),
  name_exact: filter.exact(),
  description: filter.exact(),
  backend_id: filter.exact(),
  state: filter.custom(Type.Array(Type.String({ enum: [...CLOUD_STATES] })), stateFilter, undefined, {
    repeatable: true,
    op: 'in',
  }),
  uuid: filter.uuid(),
  can_manage: filter.boolean(undefined, { description: 'true: only resources the caller may manage' }),
}

export type CommonFilterValues = FilterValues<typeof commonFilters>

/** Two uuid filters naming the same thing: both must agree, else nothing matches. */
function agree(a: string | null | undefined, b: string | null | undefined): string | null | undefined {
  if (a && b && a !== b) return null
  return a ?? b
}

/** The common filters the common query takes as they are given. */
const PASSED_AS_GIVEN = [
  'customer_name',
  'customer_native_name',
  'customer_abbreviation',
  'project_name',
  'service_settings_name',
  'service_settings_uuid',
  'name',
  'name_exact',
  'description',
  'backend_id',
  'uuid',
] as const

/** The common filters' values as the common query takes them. */
export function commonFiltersOf(v: CommonFilterValues, actor: Actor): CommonFilters {
  const f: CommonFilters = {
    customer_uuid: agree(v.customer, v.customer_uuid),
    project_uuid: agree(v.project, v.project_uuid),
    states: v.state ?? undefined,
    can_manage: v.can_manage ? manageScopes(actor) : undefined,
  }
  for (const name of PASSED_AS_GIVEN) f[name] = v[name] ?? undefined
  return f
}

/** The visible, filtered resources of one type: add the type's joins, then select. */
export function cloudResourcesQuery(
  db: Kysely<DB> | Transaction<DB>,
  type: string,
  actor: Actor,
  f: CommonFilters,
): CloudResourcesQuery {
  return visibleResources(db, type, resourceVisibility(actor), f)
}

/** The visible resource (common row) or 404 in the reference's wording. */
export async function findVisibleResource(
  ctx: AppContext,
  actor: Actor,
  type: string,
  uuid: string,
): Promise<CommonRow> {
  const def = cloudResourceType(type)
  const vis = resourceVisibility(actor)
  const find = (u: string) => cloudResourcesRepository(ctx.db).findCommon(type, { uuid: u }, vis)
  return foundByUuid(uuid, find, def.modelName)
}

/** 404 when not visible, then 403 when the actor may not manage it. */
export async function findManageableResource(
  ctx: AppContext,
  actor: Actor,
  type: string,
  uuid: string,
): Promise<CommonRow> {
  const row = await findVisibleResource(ctx, actor, type, uuid)
  if (!canManage(actor, row)) throw forbidden()
  return row
}

/**
 * The project a create request names: visible to the actor (else 400 "Invalid hyperlink") and one
 * the actor may manage resources in (else 400 on the field).
 */
export async function resolveManagedProject(
  ctx: AppContext,
  actor: Actor,
  field: string,
  value: unknown,
): Promise<{ id: number; uuid: string; customer_id: number }> {
  const p = await resolveProjectLink(ctx, actor, field, value)
  if (!can(actor, 'RESOURCE.MANAGE', { projectId: p.id, customerId: p.customer_id })) {
    throw fieldError(field, 'You do not have permission to manage resources in this project.')
  }
  return { id: p.id, uuid: p.uuid, customer_id: p.customer_id }
}
