// Customers (organizations) and the organization groups they belong to.
import type { AppContext } from '../../context.js'
import type { Listing } from '../../db/listing.js'
import { fromBool } from '../../db/values.js'
import { AppError, fieldError, forbidden } from '../../http/errors.js'
import { foundByUuid } from '../../http/uuid.js'
import {
  invalidHyperlink,
  linkedRow,
  ownLink,
  recordRenderer,
  relatedLink,
  urlOf,
  uuidFromLink,
} from '../../http/links.js'
import { can, requireStaff, type Actor } from '../../http/permissions.js'
import { pageOf, type Pager } from '../../http/resource.js'
import { pageOfRows } from '../../http/resource-calls.js'
import { slugify } from '../../http/slug.js'
import { visibilityOf } from './access.js'
import { customersRepository, organizationGroupsRepository, type Visibility } from './repository.js'
import { PATHS, type Customer, type CustomerWrite, type OrganizationGroup } from './schema.js'

type CustomerRow = NonNullable<Awaited<ReturnType<ReturnType<typeof customersRepository>['findRecordById']>>>
/** A customer row with the uuids of its organization groups. */
type CustomerWithGroups = CustomerRow & { group_uuids: string[] }
const toCustomer = recordRenderer<CustomerWithGroups, Customer>({
  ...ownLink(PATHS.customers),
  name: 'copy',
  abbreviation: 'copy',
  native_name: 'copy',
  slug: 'copy',
  email: 'copy',
  image: 'copy',
  blocked: 'flag',
  archived: 'flag',
  organization_groups: (r, base) => r.group_uuids.map((g) => urlOf(base, PATHS.organizationGroups, g)!),
  projects_count: 'count',
  created: 'copy',
  modified: 'copy',
})

/** The records of customer rows, their organization groups read in one query. */
async function toCustomers(ctx: AppContext, base: string, rows: CustomerRow[]): Promise<Customer[]> {
  const groups = await customersRepository(ctx.db).groupUuids(rows.map((r) => r.id))
  return rows.map((r) => toCustomer(base, { ...r, group_uuids: groups.get(r.id) ?? [] }))
}

// ---- organization groups ----

type GroupRow = NonNullable<
  Awaited<ReturnType<ReturnType<typeof organizationGroupsRepository>['findByUuid']>>
>
const toGroup = recordRenderer<GroupRow, OrganizationGroup>({
  ...ownLink(PATHS.organizationGroups),
  name: 'copy',
  ...relatedLink('parent', PATHS.organizationGroups, 'uuid', 'name'),
  customers_count: 'count',
  created: 'copy',
})

/** Every group, for any authenticated caller. */
export function listOrganizationGroups(
  ctx: AppContext,
  listing: Listing,
  base: string,
  page: Pager<OrganizationGroup>,
) {
  return pageOf(page, organizationGroupsRepository(ctx.db), undefined, listing, (r) => toGroup(base, r))
}

function findGroup(ctx: AppContext, uuid: string): Promise<GroupRow> {
  return foundByUuid(uuid, (id) => organizationGroupsRepository(ctx.db).findByUuid(id), 'OrganizationGroup')
}

/** Any authenticated caller may read a group (the actor is not checked). */
export async function getOrganizationGroup(ctx: AppContext, _actor: Actor, uuid: string, base: string) {
  return toGroup(base, await findGroup(ctx, uuid))
}

/** The records of organization groups by their ids (for records that embed their groups). */
export async function organizationGroupsByIds(
  ctx: AppContext,
  base: string,
  ids: readonly number[],
): Promise<Map<number, OrganizationGroup>> {
  const rows = await organizationGroupsRepository(ctx.db).findByIds([...new Set(ids)])
  return new Map(rows.map((r) => [r.id, toGroup(base, r)]))
}

async function resolveGroupLink(ctx: AppContext, field: string, value: unknown): Promise<number> {
  const uuid = uuidFromLink(value, PATHS.organizationGroups)
  if (!uuid) throw fieldError(field, 'Invalid hyperlink - Incorrect URL match.')
  const row = await organizationGroupsRepository(ctx.db).findByUuid(uuid)
  if (!row) throw invalidHyperlink(field)
  return row.id
}

/** Resolves organization group links (used by customers and cost policies). */
export async function resolveOrganizationGroups(
  ctx: AppContext,
  field: string,
  links: unknown[],
): Promise<number[]> {
  const ids: number[] = []
  for (const l of links) ids.push(await resolveGroupLink(ctx, field, l))
  return ids
}

export async function createOrganizationGroup(
  ctx: AppContext,
  actor: Actor,
  body: { name: string; parent?: string | null },
  base: string,
) {
  requireStaff(actor)
  const repo = organizationGroupsRepository(ctx.db)
  const parentId = body.parent ? await resolveGroupLink(ctx, 'parent', body.parent) : null
  const now = ctx.clock().toISOString()
  const uuid = ctx.newUuid()
  await repo.insert({ uuid, name: body.name, parent_id: parentId, created: now, modified: now })
  return toGroup(base, (await repo.findByUuid(uuid))!)
}

export async function updateOrganizationGroup(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: { name?: string; parent?: string | null },
  base: string,
) {
  const row = await findGroup(ctx, uuid)
  requireStaff(actor)
  const repo = organizationGroupsRepository(ctx.db)
  const values: Record<string, unknown> = { modified: ctx.clock().toISOString() }
  if (body.name !== undefined) values.name = body.name
  if (body.parent !== undefined) {
    const parentId = body.parent ? await resolveGroupLink(ctx, 'parent', body.parent) : null
    if (parentId !== null && (parentId === row.id || (await repo.ancestorIds(parentId)).includes(row.id))) {
      throw fieldError('parent', 'A group cannot be its own ancestor.')
    }
    values.parent_id = parentId
  }
  await repo.update(row.id, values)
  return toGroup(base, (await repo.findByUuid(row.uuid))!)
}

export async function deleteOrganizationGroup(ctx: AppContext, actor: Actor, uuid: string) {
  const row = await findGroup(ctx, uuid)
  requireStaff(actor)
  await organizationGroupsRepository(ctx.db).delete(row.id)
}

// ---- customers ----

export function listCustomers(
  ctx: AppContext,
  vis: Visibility,
  listing: Listing,
  base: string,
  page: Pager<Customer>,
) {
  return pageOfRows(page, customersRepository(ctx.db), vis, listing, (rows) => toCustomers(ctx, base, rows))
}

/** The customer of a path's uuid if the actor may see it, else 404. */
export function findVisibleCustomer(ctx: AppContext, actor: Actor, uuid: string) {
  const repo = customersRepository(ctx.db)
  return foundByUuid(uuid, (id) => repo.findVisibleByUuid(visibilityOf(actor), id), 'Customer')
}

/** The record of the customer `id`, as a write answers it. */
async function customerRecord(ctx: AppContext, id: number, base: string): Promise<Customer> {
  const row = (await customersRepository(ctx.db).findRecordById(id))!
  return (await toCustomers(ctx, base, [row]))[0]!
}

export async function getCustomer(ctx: AppContext, actor: Actor, uuid: string, base: string) {
  return (await toCustomers(ctx, base, [await findVisibleCustomer(ctx, actor, uuid)]))[0]!
}

export async function createCustomer(
  ctx: AppContext,
  actor: Actor,
  body: CustomerWrite & { name: string },
  base: string,
) {
  requireStaff(actor)
  const groupIds = body.organization_groups
    ? await resolveOrganizationGroups(ctx, 'organization_groups', body.organization_groups)
    : []
  const now = ctx.clock().toISOString()
  const id = await ctx.db.transaction().execute(async (trx) => {
    const repo = customersRepository(trx)
    const newId = await repo.insert({
      uuid: ctx.newUuid(),
      name: body.name,
      abbreviation: body.abbreviation ?? '',
      native_name: body.native_name ?? '',
      slug: body.slug || slugify(body.name, 'item'),
      email: body.email ?? '',
      image: body.image ?? null,
      blocked: fromBool(body.blocked),
      archived: fromBool(body.archived),
      created: now,
      modified: now,
    })
    await repo.setGroups(newId, groupIds)
    return newId
  })
  return customerRecord(ctx, id, base)
}

export async function updateCustomer(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: CustomerWrite,
  base: string,
) {
  const row = await findVisibleCustomer(ctx, actor, uuid)
  if (!can(actor, 'CUSTOMER.UPDATE', { customerId: row.id })) throw forbidden()
  for (const staffOnly of ['blocked', 'archived', 'organization_groups'] as const) {
    if (body[staffOnly] !== undefined && !actor.isStaff)
      throw fieldError(staffOnly, 'Only staff can change this field.')
  }
  const groupIds =
    body.organization_groups !== undefined
      ? await resolveOrganizationGroups(ctx, 'organization_groups', body.organization_groups)
      : null
  await ctx.db.transaction().execute(async (trx) => {
    const repo = customersRepository(trx)
    const values: Record<string, unknown> = { modified: ctx.clock().toISOString() }
    for (const k of ['name', 'abbreviation', 'native_name', 'slug', 'email', 'image'] as const) {
      if (body[k] !== undefined) values[k] = body[k]
    }
    if (body.blocked !== undefined) values.blocked = fromBool(body.blocked)
    if (body.archived !== undefined) values.archived = fromBool(body.archived)
    await repo.update(row.id, values)
    if (groupIds) await repo.setGroups(row.id, groupIds)
  })
  return customerRecord(ctx, row.id, base)
}

export async function deleteCustomer(ctx: AppContext, actor: Actor, uuid: string) {
  const row = await findVisibleCustomer(ctx, actor, uuid)
  requireStaff(actor)
  if (Number(row.projects_count ?? 0) > 0) {
    throw new AppError('conflict', 'Cannot delete organization with existing projects')
  }
  await customersRepository(ctx.db).delete(row.id)
  ctx.actorsChanged()
}

/** The customer row behind a link, or 400 on `field` when unknown or not visible to the actor. */
export async function resolveCustomerLink(
  ctx: AppContext,
  actor: Actor | null,
  field: string,
  value: unknown,
) {
  const repo = customersRepository(ctx.db)
  return linkedRow(field, value, PATHS.customers, (uuid) =>
    actor ? repo.findVisibleByUuid(visibilityOf(actor), uuid) : repo.findByUuid(uuid),
  )
}

export async function findCustomerById(ctx: AppContext, id: number) {
  return customersRepository(ctx.db).findById(id)
}
