// Projects of customers.
import type { AppContext } from '../../context.js'
import type { Condition, Listing } from '../../db/listing.js'
import { fieldError, forbidden } from '../../http/errors.js'
import { foundByUuid } from '../../http/uuid.js'
import { linkedRow, ownLink, recordRenderer, relatedLink } from '../../http/links.js'
import { can, type Actor } from '../../http/permissions.js'
import { pageOf, type Pager } from '../../http/resource.js'
import { slugify } from '../../http/slug.js'
import { visibilityOf } from './access.js'
import type { PartRow, ReadPartOf } from '../../db/read-parts.js'
import { resolveCustomerLink } from './customer-service.js'
import { PROJECT_LINK_COLUMNS, projectsRepository, type Db, type Visibility } from './repository.js'
import { PATHS, type Project, type ProjectWrite } from './schema.js'

export type ProjectRow = NonNullable<Awaited<ReturnType<ReturnType<typeof projectsRepository>['findById']>>>
export const toProject = recordRenderer<ProjectRow, Project>({
  ...ownLink(PATHS.projects),
  name: 'copy',
  ...relatedLink('customer', PATHS.customers, 'uuid', 'name', 'abbreviation', 'native_name'),
  description: 'copy',
  slug: 'copy',
  start_date: 'copy',
  end_date: 'copy',
  created: 'copy',
  modified: 'copy',
})

// ---- projects ----

/**
 * The projects the caller may see. The customer is named by its uuid or its URL; given both, the
 * URL wins (a URL of another kind matches nothing).
 */
export function listProjects(
  ctx: AppContext,
  vis: Visibility,
  customer: { customer_uuid?: string | null; customer?: string | null },
  listing: Listing,
  base: string,
  page: Pager<Project>,
) {
  const uuid = customer.customer !== undefined ? customer.customer : customer.customer_uuid
  const byCustomer: Condition[] =
    uuid === undefined
      ? []
      : [uuid === null ? { op: 'none' } : { op: '=', column: 'customers.uuid', value: uuid }]
  const where = [...listing.where, ...byCustomer]
  return pageOf(page, projectsRepository(ctx.db), vis, { ...listing, where }, (r) => toProject(base, r))
}

/** The project of a path's uuid if the actor may see it, else 404. */
export function findVisibleProject(ctx: AppContext, actor: Actor, uuid: string) {
  const repo = projectsRepository(ctx.db)
  return foundByUuid(uuid, (id) => repo.findVisibleByUuid(visibilityOf(actor), id), 'Project')
}

export async function getProject(ctx: AppContext, actor: Actor, uuid: string, base: string) {
  return toProject(base, await findVisibleProject(ctx, actor, uuid))
}

function checkDates(start: string | null | undefined, end: string | null | undefined) {
  if (start && end && end < start)
    throw fieldError('end_date', 'End date must not be earlier than start date.')
}

export async function createProject(
  ctx: AppContext,
  actor: Actor,
  body: ProjectWrite & { name: string; customer: string },
  base: string,
) {
  const customer = await resolveCustomerLink(ctx, actor, 'customer', body.customer)
  if (!can(actor, 'PROJECT.CREATE', { customerId: customer.id })) throw forbidden()
  checkDates(body.start_date, body.end_date)
  const id = await insertProject(ctx, ctx.db, { ...body, customerId: customer.id })
  return toProject(base, (await projectsRepository(ctx.db).findById(id))!)
}

/** Inserts a project (also used when an invitation auto-creates one). */
export async function insertProject(
  ctx: AppContext,
  db: Db,
  p: {
    name: string
    customerId: number
    description?: string
    slug?: string
    start_date?: string | null
    end_date?: string | null
  },
): Promise<number> {
  const now = ctx.clock().toISOString()
  return projectsRepository(db).insert({
    uuid: ctx.newUuid(),
    name: p.name,
    customer_id: p.customerId,
    description: p.description ?? '',
    slug: p.slug || slugify(p.name, 'item'),
    start_date: p.start_date ?? null,
    end_date: p.end_date ?? null,
    created: now,
    modified: now,
  })
}

/** Longest name given to a new project before a number is added to make it unique. */
const MAX_BASE_NAME = 480

/**
 * A new project in the customer, named `name` or, when a project of that name exists,
 * `name 2`, `name 3`… (the first free one). Never an existing project.
 */
export async function createProjectWithFreeName(
  ctx: AppContext,
  db: Db,
  name: string,
  customerId: number,
): Promise<number> {
  const base = name.slice(0, MAX_BASE_NAME)
  await projectsRepository(db).lockNames(customerId)
  const taken = new Set(await projectsRepository(db).namesStartingWith(base, customerId))
  let free = base
  for (let n = 2; taken.has(free); n++) free = `${base} ${n}`
  return insertProject(ctx, db, { name: free, customerId })
}

export async function updateProject(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: ProjectWrite,
  base: string,
) {
  const row = await findVisibleProject(ctx, actor, uuid)
  if (!can(actor, 'PROJECT.UPDATE', { customerId: row.customer_id, projectId: row.id })) throw forbidden()
  const values: Record<string, unknown> = { modified: ctx.clock().toISOString() }
  if (body.customer !== undefined) {
    const customer = await resolveCustomerLink(ctx, actor, 'customer', body.customer)
    if (customer.id !== row.customer_id) {
      if (!actor.isStaff)
        throw fieldError('customer', 'Only staff can move a project to another organization.')
      values.customer_id = customer.id
    }
  }
  for (const k of ['name', 'description', 'slug', 'start_date', 'end_date'] as const) {
    if (body[k] !== undefined) values[k] = body[k]
  }
  checkDates(
    body.start_date !== undefined ? body.start_date : row.start_date,
    body.end_date !== undefined ? body.end_date : row.end_date,
  )
  await projectsRepository(ctx.db).update(row.id, values)
  ctx.actorsChanged()
  return toProject(base, (await projectsRepository(ctx.db).findById(row.id))!)
}

export async function deleteProject(ctx: AppContext, actor: Actor, uuid: string) {
  const row = await findVisibleProject(ctx, actor, uuid)
  if (!can(actor, 'PROJECT.DELETE', { customerId: row.customer_id })) throw forbidden()
  await projectsRepository(ctx.db).delete(row.id)
  ctx.actorsChanged()
}

/** The project behind a link if the actor may see it; else 400 "Invalid hyperlink" on `field`. */
export function resolveProjectLink(ctx: AppContext, actor: Actor, field: string, value: unknown) {
  return linkedRow(field, value, PATHS.projects, (uuid) =>
    projectsRepository(ctx.db).findVisibleByUuid(visibilityOf(actor), uuid),
  )
}

/** What `projectLinkPart` answers of a project. */
export type ProjectLinkRow = PartRow<ProjectRow, typeof PROJECT_LINK_COLUMNS>

/**
 * `resolveProjectLink`'s read, as part `project` of a read made of several (a new order's): the
 * project `uuid` names if the actor may see it (`uuid` null: none).
 */
export function projectLinkPart(
  ctx: AppContext,
  actor: Actor,
  uuid: string | null,
): ReadPartOf<ProjectLinkRow> {
  return (from) => projectsRepository(ctx.db).visiblePart(visibilityOf(actor), uuid, from)
}

export async function findProjectById(ctx: AppContext, id: number) {
  return projectsRepository(ctx.db).findById(id)
}

/** Every project of a customer (invitation `projects/`). */
export async function projectsOfCustomer(ctx: AppContext, customerId: number) {
  return projectsRepository(ctx.db).uuidsOfCustomer(customerId)
}
