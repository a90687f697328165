// Catalog use cases: service providers, categories, offerings (with their state machine and
// managers), plans, offering types and the read side of marketplace resources.
//
// Other areas (orders, cloud, policies) call the exported helpers in the last section
// (`resolveOfferingLink`, `resolvePlanLink`, `findOfferingById`, `findOfferingByUuid`,
// `offeringRecord`, `resourceRecord`, `registerResourceScope`) instead of touching these tables.
import type { Kysely, Transaction } from 'kysely'
import type { AppContext } from '../../context.js'
import type { DB } from '../../db/tables.js'
import { fromBool, parseJson, toBool, toJson, decimalString } from '../../db/values.js'
import { AppError, FieldErrorSet, fieldError, forbidden, invalidState, notFound } from '../../http/errors.js'
import { invalidHyperlink, urlOf, uuidFromLink } from '../../http/links.js'
import {
  connectedCustomerIds,
  customerIds,
  offeringIds,
  projectIds,
  seesAll,
  type Actor,
} from '../../http/permissions.js'
import type { OrderTerm } from '../../http/query.js'
import { normalizeUuid } from '../../http/uuid.js'
import {
  addUser,
  deleteUserGrant,
  listGrants,
  resolveCustomerLink,
  resolveOrganizationGroups,
  resolveProjectLink,
  type GrantScope,
} from '../directory/service.js'
import { scheduleCostPolicyEvaluation } from '../cost-policies/service.js'
import type { GrantRecord } from '../directory/schema.js'
import {
  canCreateOffering,
  canDeleteOffering,
  canListOfferingUsers,
  canManageOfferingUsers,
  canManageProvider,
  canUpdateOffering,
  canWriteCategories,
} from './access.js'
import { OFFERING_TYPE_RULES, OFFERING_TYPES, isOfferingType } from './offering-types.js'
import {
  categoriesRepository,
  offeringsRepository,
  plansRepository,
  resourcesRepository,
  serviceProvidersRepository,
  uuidsOf,
  type CatalogVisibility,
  type OfferingFilters,
  type ResourceFilters,
  type ServiceProviderFilters,
} from './repository.js'
import {
  PATHS,
  PLAN_UNITS,
  type Category,
  type CategoryWrite,
  type Offering,
  type OfferingTypeRecord,
  type OfferingWrite,
  type Plan,
  type PlanWrite,
  type Resource,
  type ServiceProvider,
  type ServiceProviderWrite,
} from './schema.js'
import { parsePrice } from './prices.js'
import { DELETABLE_OFFERING_STATES, offeringTransition, type OfferingAction } from './state-machine.js'
import { slugify } from '../../http/slug.js'

type Db = Kysely<DB> | Transaction<DB>
type Page<T> = (count: () => Promise<number>, fetch: (l: number, o: number) => Promise<T[]>) => Promise<T[]>

/** Decimal places plan prices are rendered with. */
const PRICE_PLACES = 7

/** What the actor may see in the catalog. */
export function catalogVisibility(actor: Actor): CatalogVisibility {
  if (seesAll(actor)) return { all: true }
  return {
    all: false,
    customerIds: customerIds(actor),
    connectedCustomerIds: connectedCustomerIds(actor),
    projectIds: projectIds(actor),
    offeringIds: offeringIds(actor),
  }
}

function now(ctx: AppContext): string {
  return ctx.clock().toISOString()
}

// ---- service providers ----

type ProviderRow = NonNullable<
  Awaited<ReturnType<ReturnType<typeof serviceProvidersRepository>['findByUuid']>>
>

function toProvider(base: string, r: ProviderRow): ServiceProvider {
  return {
    url: urlOf(base, PATHS.providers, r.uuid)!,
    uuid: r.uuid,
    customer: urlOf(base, PATHS.customers, r.customer_uuid)!,
    customer_uuid: r.customer_uuid,
    customer_name: r.customer_name,
    description: r.description,
    image: r.image,
    created: r.created,
  }
}

export async function listServiceProviders(
  ctx: AppContext,
  f: ServiceProviderFilters,
  order: OrderTerm[],
  base: string,
  page: Page<ServiceProvider>,
) {
  const repo = serviceProvidersRepository(ctx.db)
  return page(
    () => repo.count(f),
    async (l, o) => (await repo.list(f, order, l, o)).map((r) => toProvider(base, r)),
  )
}

async function findProvider(ctx: AppContext, uuid: string): Promise<ProviderRow> {
  const id = normalizeUuid(uuid)
  const row = id ? await serviceProvidersRepository(ctx.db).findByUuid(id) : undefined
  if (!row) throw notFound('No ServiceProvider matches the given query.')
  return row
}

export async function getServiceProvider(ctx: AppContext, uuid: string, base: string) {
  return toProvider(base, await findProvider(ctx, uuid))
}

/** A customer becomes a service provider: staff or the customer's owner; one per customer. */
export async function createServiceProvider(
  ctx: AppContext,
  actor: Actor,
  body: ServiceProviderWrite & { customer: string },
  base: string,
): Promise<ServiceProvider> {
  const customer = await resolveCustomerLink(ctx, actor, 'customer', body.customer)
  if (!canManageProvider(actor, customer.id)) throw forbidden()
  const repo = serviceProvidersRepository(ctx.db)
  if (await repo.findByCustomer(customer.id)) {
    throw fieldError('customer', 'service provider with this customer already exists.')
  }
  const t = now(ctx)
  const uuid = ctx.newUuid()
  try {
    await repo.insert({
      uuid,
      customer_id: customer.id,
      description: body.description ?? '',
      image: body.image ?? null,
      created: t,
      modified: t,
    })
  } catch (e) {
    // A concurrent request registered the same customer first (unique customer_id).
    if (await repo.findByCustomer(customer.id)) {
      throw fieldError('customer', 'service provider with this customer already exists.')
    }
    throw e
  }
  return toProvider(base, (await repo.findByUuid(uuid))!)
}

export async function updateServiceProvider(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: ServiceProviderWrite,
  base: string,
): Promise<ServiceProvider> {
  const row = await findProvider(ctx, uuid)
  if (!canManageProvider(actor, row.customer_id)) throw forbidden()
  if (body.customer !== undefined) {
    const c = await resolveCustomerLink(ctx, actor, 'customer', body.customer)
    if (c.id !== row.customer_id)
      throw fieldError('customer', 'The customer of a provider cannot be changed.')
  }
  const values: Record<string, unknown> = { modified: now(ctx) }
  if (body.description !== undefined) values.description = body.description
  if (body.image !== undefined) values.image = body.image
  const repo = serviceProvidersRepository(ctx.db)
  await repo.update(row.id, values)
  return toProvider(base, (await repo.findByUuid(row.uuid))!)
}

/** Removes provider status; refused (409) while the provider has offerings that are not archived. */
export async function deleteServiceProvider(ctx: AppContext, actor: Actor, uuid: string) {
  const row = await findProvider(ctx, uuid)
  if (!canManageProvider(actor, row.customer_id)) throw forbidden()
  if ((await offeringsRepository(ctx.db).countByCustomer(row.customer_id, ['Archived'])) > 0) {
    throw new AppError('conflict', 'Cannot delete service provider with existing offerings')
  }
  await serviceProvidersRepository(ctx.db).delete(row.id)
}

// ---- categories ----

type CategoryRow = NonNullable<Awaited<ReturnType<ReturnType<typeof categoriesRepository>['findByUuid']>>>

function toCategory(base: string, r: CategoryRow): Category {
  return {
    url: urlOf(base, PATHS.categories, r.uuid)!,
    uuid: r.uuid,
    title: r.title,
    description: r.description,
    icon: r.icon,
    offering_count: Number(r.offering_count ?? 0),
    created: r.created,
  }
}

export async function listCategories(
  ctx: AppContext,
  f: { title?: string },
  order: OrderTerm[],
  base: string,
  page: Page<Category>,
) {
  const repo = categoriesRepository(ctx.db)
  return page(
    () => repo.count(f),
    async (l, o) => (await repo.list(f, order, l, o)).map((r) => toCategory(base, r)),
  )
}

async function findCategory(ctx: AppContext, uuid: string): Promise<CategoryRow> {
  const id = normalizeUuid(uuid)
  const row = id ? await categoriesRepository(ctx.db).findByUuid(id) : undefined
  if (!row) throw notFound('No Category matches the given query.')
  return row
}

export async function getCategory(ctx: AppContext, uuid: string, base: string) {
  return toCategory(base, await findCategory(ctx, uuid))
}

export async function createCategory(
  ctx: AppContext,
  actor: Actor,
  body: CategoryWrite & { title: string },
  base: string,
) {
  if (!canWriteCategories(actor)) throw forbidden()
  const t = now(ctx)
  const uuid = ctx.newUuid()
  const repo = categoriesRepository(ctx.db)
  await repo.insert({
    uuid,
    title: body.title,
    description: body.description ?? '',
    icon: body.icon ?? null,
    created: t,
    modified: t,
  })
  return toCategory(base, (await repo.findByUuid(uuid))!)
}

export async function updateCategory(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: CategoryWrite,
  base: string,
) {
  const row = await findCategory(ctx, uuid)
  if (!canWriteCategories(actor)) throw forbidden()
  const values: Record<string, unknown> = { modified: now(ctx) }
  for (const k of ['title', 'description', 'icon'] as const) if (body[k] !== undefined) values[k] = body[k]
  const repo = categoriesRepository(ctx.db)
  await repo.update(row.id, values)
  return toCategory(base, (await repo.findByUuid(row.uuid))!)
}

/** Staff only; refused (409) while offerings are in the category. */
export async function deleteCategory(ctx: AppContext, actor: Actor, uuid: string) {
  const row = await findCategory(ctx, uuid)
  if (!canWriteCategories(actor)) throw forbidden()
  const repo = categoriesRepository(ctx.db)
  if ((await repo.offeringCount(row.id)) > 0) {
    throw new AppError('conflict', 'Cannot delete category with existing offerings')
  }
  await repo.delete(row.id)
}

// ---- plans ----

export type PlanRow = NonNullable<Awaited<ReturnType<ReturnType<typeof plansRepository>['findByUuid']>>>

function toPlan(base: string, r: PlanRow): Plan {
  return {
    url: urlOf(base, PATHS.plans, r.uuid)!,
    uuid: r.uuid,
    offering: urlOf(base, PATHS.offerings, r.offering_uuid)!,
    offering_uuid: r.offering_uuid,
    offering_name: r.offering_name,
    name: r.name,
    description: r.description,
    unit: r.unit,
    unit_price: decimalString(r.unit_price, PRICE_PLACES) ?? '0.0000000',
    fixed_price: decimalString(r.fixed_price, PRICE_PLACES) ?? '0.0000000',
    activation_price: decimalString(r.activation_price, PRICE_PLACES) ?? '0.0000000',
    archived: toBool(r.archived),
    created: r.created,
  }
}

function parseUnit(v: unknown): string {
  if (typeof v !== 'string' || !(PLAN_UNITS as readonly string[]).includes(v)) {
    throw fieldError('unit', `"${String(v)}" is not a valid choice.`)
  }
  return v
}

/**
 * Validated column values of a plan body (only the keys given); every bad field is named in one
 * 400, with the errors already gathered (a field that has one is not checked again).
 */
function planValues(body: PlanWrite, errors = new FieldErrorSet()): Record<string, unknown> {
  const values: Record<string, unknown> = {}
  if (body.name !== undefined) values.name = body.name
  if (body.description !== undefined) values.description = body.description
  if (body.unit !== undefined) errors.checkSync('unit', () => (values.unit = parseUnit(body.unit)))
  for (const k of ['unit_price', 'fixed_price', 'activation_price'] as const) {
    if (body[k] !== undefined) errors.checkSync(k, () => (values[k] = parsePrice(k, body[k])))
  }
  if (body.archived !== undefined) values.archived = fromBool(body.archived)
  errors.throwIfAny()
  return values
}

/** Inline plans of an offering: errors are nested as DRF does, `{"plans": [{}, {"unit": [...]}]}`. */
function inlinePlanValues(plans: PlanWrite[]): Record<string, unknown>[] {
  return plans.map((p, i) => {
    try {
      return planValues(p)
    } catch (e) {
      if (e instanceof AppError && e.kind === 'invalid' && e.body && typeof e.body === 'object') {
        const nested: unknown[] = plans.map(() => ({}))
        nested[i] = e.body
        throw new AppError('invalid', { plans: nested })
      }
      throw e
    }
  })
}

async function insertPlan(
  ctx: AppContext,
  db: Db,
  offeringId: number,
  values: Record<string, unknown>,
): Promise<number> {
  const t = now(ctx)
  return plansRepository(db).insert({
    uuid: ctx.newUuid(),
    offering_id: offeringId,
    name: values.name,
    description: values.description ?? '',
    unit: values.unit ?? 'month',
    unit_price: values.unit_price ?? '0',
    fixed_price: values.fixed_price ?? '0',
    activation_price: values.activation_price ?? '0',
    archived: values.archived ?? 0,
    created: t,
    modified: t,
  })
}

export async function listPlans(
  ctx: AppContext,
  actor: Actor,
  f: { offering_uuid?: string; archived?: boolean },
  order: OrderTerm[],
  base: string,
  page: Page<Plan>,
) {
  const repo = plansRepository(ctx.db)
  const vis = catalogVisibility(actor)
  return page(
    () => repo.count(vis, f),
    async (l, o) => (await repo.list(vis, f, order, l, o)).map((r) => toPlan(base, r)),
  )
}

async function findVisiblePlan(ctx: AppContext, actor: Actor, uuid: string): Promise<PlanRow> {
  const id = normalizeUuid(uuid)
  const row = id ? await plansRepository(ctx.db).findVisibleByUuid(catalogVisibility(actor), id) : undefined
  if (!row) throw notFound('No Plan matches the given query.')
  return row
}

export async function getPlan(ctx: AppContext, actor: Actor, uuid: string, base: string) {
  return toPlan(base, await findVisiblePlan(ctx, actor, uuid))
}

/** Plans are created by whoever may update the offering (OFFERING.UPDATE) or staff. */
export async function createPlan(
  ctx: AppContext,
  actor: Actor,
  body: PlanWrite & { offering: string; name: string },
  base: string,
  errors = new FieldErrorSet(),
): Promise<Plan> {
  const offering = await errors.check('offering', () =>
    resolveOfferingLink(ctx, actor, 'offering', body.offering),
  )
  if (offering && !canUpdateOffering(actor, offering)) throw forbidden()
  const values = planValues(body, errors)
  const id = await insertPlan(ctx, ctx.db, offering!.id, values)
  return toPlan(base, (await plansRepository(ctx.db).findById(id))!)
}

export async function updatePlan(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: PlanWrite,
  base: string,
  errors = new FieldErrorSet(),
): Promise<Plan> {
  const row = await findVisiblePlan(ctx, actor, uuid)
  if (!canUpdateOffering(actor, { id: row.offering_id, customer_id: row.offering_customer_id })) {
    throw forbidden()
  }
  if (body.offering !== undefined) {
    await errors.check('offering', async () => {
      const o = await resolveOfferingLink(ctx, actor, 'offering', body.offering)
      if (o.id !== row.offering_id) throw fieldError('offering', 'The offering of a plan cannot be changed.')
    })
  }
  const values = planValues(body, errors)
  values.modified = now(ctx)
  await ctx.db.transaction().execute(async (trx) => {
    await plansRepository(trx).update(row.id, values)
    // New prices change the estimated cost of the offering's resources.
    await scheduleCostPolicyEvaluation(ctx, trx, row.offering_id)
  })
  return toPlan(base, (await plansRepository(ctx.db).findById(row.id))!)
}

/** Deletes a plan, or archives it when resources still use it (their history keeps the link). */
export async function deletePlan(ctx: AppContext, actor: Actor, uuid: string): Promise<void> {
  const row = await findVisiblePlan(ctx, actor, uuid)
  if (!canUpdateOffering(actor, { id: row.offering_id, customer_id: row.offering_customer_id })) {
    throw forbidden()
  }
  await ctx.db.transaction().execute(async (trx) => {
    const repo = plansRepository(trx)
    if ((await repo.resourceCount(row.id)) > 0) await repo.update(row.id, { archived: 1, modified: now(ctx) })
    else await repo.delete(row.id)
  })
}

// ---- offerings ----

export type OfferingRow = NonNullable<Awaited<ReturnType<ReturnType<typeof offeringsRepository>['findById']>>>

async function toOfferings(ctx: AppContext, base: string, rows: OfferingRow[]): Promise<Offering[]> {
  const ids = rows.map((r) => r.id)
  const groups = await offeringsRepository(ctx.db).groupUuids(ids)
  const plans = new Map<number, Plan[]>()
  for (const p of await plansRepository(ctx.db).listByOfferings(ids)) {
    plans.set(p.offering_id, [...(plans.get(p.offering_id) ?? []), toPlan(base, p)])
  }
  return rows.map((r) => ({
    url: urlOf(base, PATHS.offerings, r.uuid)!,
    uuid: r.uuid,
    name: r.name,
    description: r.description,
    slug: r.slug,
    category: urlOf(base, PATHS.categories, r.category_uuid),
    category_uuid: r.category_uuid ?? null,
    category_title: r.category_title ?? null,
    customer: urlOf(base, PATHS.customers, r.customer_uuid)!,
    customer_uuid: r.customer_uuid,
    customer_name: r.customer_name,
    type: r.type,
    state: r.state,
    shared: toBool(r.shared),
    billable: toBool(r.billable),
    plugin_options: parseJson<Record<string, unknown>>(r.plugin_options, {}),
    terms_of_service: r.terms_of_service,
    image: r.image,
    thumbnail: r.thumbnail,
    scope: urlOf(base, PATHS.serviceSettings, r.scope_uuid),
    scope_uuid: r.scope_uuid ?? null,
    organization_groups: (groups.get(r.id) ?? []).map((g) => urlOf(base, PATHS.organizationGroups, g)!),
    project: urlOf(base, PATHS.projects, r.project_uuid),
    parent: urlOf(base, PATHS.offerings, r.parent_uuid),
    plans: plans.get(r.id) ?? [],
    created: r.created,
    modified: r.modified,
  }))
}

export async function listOfferings(
  ctx: AppContext,
  actor: Actor,
  f: OfferingFilters,
  order: OrderTerm[],
  base: string,
  page: Page<Offering>,
) {
  const repo = offeringsRepository(ctx.db)
  const vis = catalogVisibility(actor)
  return page(
    () => repo.count(vis, f),
    async (l, o) => toOfferings(ctx, base, await repo.list(vis, f, order, l, o)),
  )
}

async function findVisibleOffering(ctx: AppContext, actor: Actor, uuid: string): Promise<OfferingRow> {
  const id = normalizeUuid(uuid)
  const row = id
    ? await offeringsRepository(ctx.db).findVisibleByUuid(catalogVisibility(actor), id)
    : undefined
  if (!row) throw notFound('No Offering matches the given query.')
  return row
}

export async function getOffering(ctx: AppContext, actor: Actor, uuid: string, base: string) {
  return (await toOfferings(ctx, base, [await findVisibleOffering(ctx, actor, uuid)]))[0]!
}

function checkType(v: unknown): string {
  if (!isOfferingType(v)) throw fieldError('type', `"${String(v)}" is not a valid choice.`)
  return v
}

async function resolveCategoryLink(ctx: AppContext, value: string | null): Promise<number | null> {
  if (value === null) return null
  const uuid = uuidFromLink(value, PATHS.categories)
  if (!uuid) throw fieldError('category', 'Invalid hyperlink - Incorrect URL match.')
  const row = await categoriesRepository(ctx.db).findByUuid(uuid)
  if (!row) throw invalidHyperlink('category')
  return row.id
}

/**
 * The service settings an offering's `scope` names. Cloud types (with a scope kind) need one of
 * that kind; the settings must be shared or belong to the provider (staff may use any).
 */
async function resolveScope(
  ctx: AppContext,
  actor: Actor,
  type: string,
  customerId: number,
  value: string | null | undefined,
): Promise<number | null> {
  const kind = isOfferingType(type) ? OFFERING_TYPE_RULES[type].scopeKind : null
  if (value === null || value === undefined) {
    if (kind)
      throw fieldError('scope', `Service settings of kind ${kind} are required for ${type} offerings.`)
    return null
  }
  const uuid = uuidFromLink(value, PATHS.serviceSettings)
  if (!uuid) throw fieldError('scope', 'Invalid hyperlink - Incorrect URL match.')
  const row = await offeringsRepository(ctx.db).findServiceSettingsByUuid(uuid)
  if (!row || (!actor.isStaff && !toBool(row.shared) && row.customer_id !== customerId)) {
    throw invalidHyperlink('scope')
  }
  if (kind && row.type !== kind) {
    throw fieldError('scope', `Service settings of kind ${kind} are required for ${type} offerings.`)
  }
  return row.id
}

/** Column values shared by create and update, resolved and validated. */
async function offeringValues(
  ctx: AppContext,
  actor: Actor,
  body: OfferingWrite,
  current: { type: string; customerId: number; id: number | null; scopeGiven: boolean },
): Promise<{ values: Record<string, unknown>; groupIds: number[] | undefined }> {
  const values: Record<string, unknown> = {}
  for (const k of ['name', 'description', 'terms_of_service', 'image', 'thumbnail', 'slug'] as const) {
    if (body[k] !== undefined) values[k] = body[k]
  }
  if (body.shared !== undefined) values.shared = fromBool(body.shared)
  if (body.billable !== undefined) values.billable = fromBool(body.billable)
  if (body.plugin_options !== undefined) values.plugin_options = toJson(body.plugin_options)
  if (body.category !== undefined) values.category_id = await resolveCategoryLink(ctx, body.category)
  if (current.scopeGiven) {
    values.service_settings_id = await resolveScope(ctx, actor, current.type, current.customerId, body.scope)
  }
  if (body.project !== undefined) {
    values.project_id =
      body.project === null ? null : (await resolveProjectLink(ctx, actor, 'project', body.project)).id
  }
  if (body.parent !== undefined) {
    if (body.parent === null) values.parent_id = null
    else {
      const parent = await resolveOfferingLink(ctx, actor, 'parent', body.parent)
      if (parent.id === current.id) throw fieldError('parent', 'An offering cannot be its own parent.')
      values.parent_id = parent.id
    }
  }
  const groupIds =
    body.organization_groups === undefined
      ? undefined
      : await resolveOrganizationGroups(ctx, 'organization_groups', body.organization_groups)
  return { values, groupIds }
}

/**
 * Creates an offering in Draft. Staff or `OFFERING.CREATE` on the provider customer, which must be
 * a service provider. Plans may be given inline.
 */
export async function createOffering(
  ctx: AppContext,
  actor: Actor,
  body: OfferingWrite & { name: string; customer: string; type: string },
  base: string,
): Promise<Offering> {
  const customer = await resolveCustomerLink(ctx, actor, 'customer', body.customer)
  if (!canCreateOffering(actor, customer.id)) throw forbidden()
  const type = checkType(body.type)
  if (!(await serviceProvidersRepository(ctx.db).findByCustomer(customer.id))) {
    throw fieldError('customer', 'Organization is not a service provider.')
  }
  const { values, groupIds } = await offeringValues(ctx, actor, body, {
    type,
    customerId: customer.id,
    id: null,
    scopeGiven: true,
  })
  const plans = inlinePlanValues(body.plans ?? [])
  const t = now(ctx)
  const id = await ctx.db.transaction().execute(async (trx) => {
    const id = await offeringsRepository(trx).insert({
      uuid: ctx.newUuid(),
      description: '',
      terms_of_service: '',
      image: null,
      thumbnail: null,
      category_id: null,
      project_id: null,
      parent_id: null,
      plugin_options: toJson({}),
      ...values,
      slug: body.slug ?? slugify(body.name, 'offering'),
      name: body.name,
      customer_id: customer.id,
      type,
      state: 'Draft',
      created: t,
      modified: t,
    })
    if (groupIds) await offeringsRepository(trx).setGroups(id, groupIds)
    for (const p of plans) await insertPlan(ctx, trx, id, p)
    return id
  })
  return offeringRecord(ctx, base, id)
}

/** PUT/PATCH: `OFFERING.UPDATE` holders or staff. The type and the provider cannot change. */
export async function updateOffering(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: OfferingWrite,
  base: string,
): Promise<Offering> {
  const row = await findVisibleOffering(ctx, actor, uuid)
  if (!canUpdateOffering(actor, row)) throw forbidden()
  if (body.type !== undefined && body.type !== row.type) {
    throw fieldError('type', 'The type of an offering cannot be changed.')
  }
  if (body.customer !== undefined && uuidFromLink(body.customer, PATHS.customers) !== row.customer_uuid) {
    throw fieldError('customer', 'The provider of an offering cannot be changed.')
  }
  const { values, groupIds } = await offeringValues(ctx, actor, body, {
    type: row.type,
    customerId: row.customer_id,
    id: row.id,
    scopeGiven: body.scope !== undefined,
  })
  values.modified = now(ctx)
  await ctx.db.transaction().execute(async (trx) => {
    await offeringsRepository(trx).update(row.id, values)
    if (groupIds) await offeringsRepository(trx).setGroups(row.id, groupIds)
  })
  return offeringRecord(ctx, base, row.id)
}

/** Deletes a Draft offering without resources (staff or provider owner); otherwise 409. */
export async function deleteOffering(ctx: AppContext, actor: Actor, uuid: string): Promise<void> {
  const row = await findVisibleOffering(ctx, actor, uuid)
  if (!canDeleteOffering(actor, row)) throw forbidden()
  if (!(DELETABLE_OFFERING_STATES as readonly string[]).includes(row.state)) {
    throw invalidState(DELETABLE_OFFERING_STATES)
  }
  // Resources (and their history) would go with the offering: refuse instead.
  if ((await offeringsRepository(ctx.db).resourceCount(row.id)) > 0) {
    throw new AppError('conflict', 'Cannot delete offering with existing resources')
  }
  const deleted = await offeringsRepository(ctx.db).deleteIfState(row.id, DELETABLE_OFFERING_STATES)
  if (!deleted) throw invalidState(DELETABLE_OFFERING_STATES)
}

/**
 * activate / pause / unpause / archive: `OFFERING.UPDATE` holders or staff. The write is
 * conditional on the state read, so of two racing calls one wins and the other gets 409.
 */
export async function changeOfferingState(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  action: OfferingAction,
): Promise<{ status: string }> {
  const row = await findVisibleOffering(ctx, actor, uuid)
  if (!canUpdateOffering(actor, row)) throw forbidden()
  const t = offeringTransition(row.state, action)
  const won = await offeringsRepository(ctx.db).updateStateIfCurrent(row.id, t.from, t.to, now(ctx))
  if (!won) throw invalidState(t.from)
  return { status: t.status }
}

async function offeringGrantScope(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  write: boolean,
): Promise<GrantScope> {
  const row = await findVisibleOffering(ctx, actor, uuid)
  if (write ? !canManageOfferingUsers(actor, row) : !canListOfferingUsers(actor, row)) throw forbidden()
  return { type: 'offering', id: row.id, uuid: row.uuid, name: row.name }
}

/** `add_user`: grants OFFERING.MANAGER on the offering. */
export async function addOfferingUser(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: { user: string; role: string; expiration_time?: string | null },
  base: string,
): Promise<GrantRecord> {
  return addUser(ctx, actor, await offeringGrantScope(ctx, actor, uuid, true), body, base)
}

export async function deleteOfferingUser(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: { user: string; role: string },
): Promise<void> {
  await deleteUserGrant(ctx, await offeringGrantScope(ctx, actor, uuid, true), body)
}

export async function listOfferingUsers(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  f: { role?: string; user_uuid?: string; user_username?: string },
  base: string,
  page: Page<GrantRecord>,
) {
  return listGrants(ctx, await offeringGrantScope(ctx, actor, uuid, false), f, base, page)
}

// ---- offering types ----

/** Order actions every offering type supports. */
const COMMON_ORDER_ACTIONS = [
  'approve_by_consumer',
  'approve_by_provider',
  'reject_by_consumer',
  'reject_by_provider',
  'set_state_erred',
]

/** The offering type table as the API shows it. */
export function offeringTypes(): OfferingTypeRecord[] {
  return OFFERING_TYPES.map((type) => {
    const r = OFFERING_TYPE_RULES[type]
    const actions = [...COMMON_ORDER_ACTIONS]
    if (r.cancel) actions.push('cancel')
    if (r.setStateExecuting) actions.push('set_state_executing')
    if (r.setStateDone) actions.push('set_state_done')
    return {
      type,
      label: r.label,
      description: r.description,
      provider_approval_required: r.providerApprovalRequired,
      processed_by: r.processedBy,
      allowed_actions: actions,
    }
  })
}

// ---- marketplace resources (read side) ----

/**
 * How a resource's `scope_type` maps to a hyperlink: the API path and the table holding the
 * backend object (a table with `id` and `uuid`). Areas that link backend objects to resources
 * register their kinds once at plugin registration; unregistered kinds render `scope: null`.
 */
const RESOURCE_SCOPES = new Map<string, { path: string; table: string }>()

export function registerResourceScope(scopeType: string, target: { path: string; table: string }): void {
  RESOURCE_SCOPES.set(scopeType, target)
}

type ResourceRow = NonNullable<Awaited<ReturnType<ReturnType<typeof resourcesRepository>['findById']>>>

async function toResources(ctx: AppContext, base: string, rows: ResourceRow[]): Promise<Resource[]> {
  // Backend objects' uuids, one query per scope kind on the page.
  const byKind = new Map<string, number[]>()
  for (const r of rows) {
    if (r.scope_type && r.scope_id != null && RESOURCE_SCOPES.has(r.scope_type)) {
      byKind.set(r.scope_type, [...(byKind.get(r.scope_type) ?? []), r.scope_id])
    }
  }
  const scopeUuids = new Map<string, Map<number, string>>()
  for (const [kind, ids] of byKind) {
    scopeUuids.set(kind, await uuidsOf(ctx.db, RESOURCE_SCOPES.get(kind)!.table, ids))
  }
  return rows.map((r) => {
    const kind = r.scope_type ? RESOURCE_SCOPES.get(r.scope_type) : undefined
    const scopeUuid =
      kind && r.scope_id != null ? (scopeUuids.get(r.scope_type!)?.get(r.scope_id) ?? null) : null
    return {
      url: urlOf(base, PATHS.resources, r.uuid)!,
      uuid: r.uuid,
      name: r.name,
      offering: urlOf(base, PATHS.offerings, r.offering_uuid)!,
      offering_uuid: r.offering_uuid,
      offering_name: r.offering_name,
      offering_type: r.offering_type,
      plan: urlOf(base, PATHS.plans, r.plan_uuid),
      plan_uuid: r.plan_uuid ?? null,
      plan_name: r.plan_name ?? null,
      project: urlOf(base, PATHS.projects, r.project_uuid)!,
      project_uuid: r.project_uuid,
      project_name: r.project_name,
      customer: urlOf(base, PATHS.customers, r.customer_uuid)!,
      customer_uuid: r.customer_uuid,
      customer_name: r.customer_name,
      provider_uuid: r.provider_uuid,
      provider_name: r.provider_name,
      category_uuid: r.category_uuid ?? null,
      category_title: r.category_title ?? null,
      state: r.state,
      attributes: parseJson<unknown>(r.attributes, {}),
      limits: parseJson<Record<string, unknown>>(r.limits, {}),
      backend_id: r.backend_id,
      resource_type: r.resource_type,
      end_date: r.end_date,
      created: r.created,
      modified: r.modified,
      scope: kind && scopeUuid ? urlOf(base, kind.path, scopeUuid) : null,
      resource_uuid: scopeUuid,
    }
  })
}

export async function listResources(
  ctx: AppContext,
  actor: Actor,
  f: ResourceFilters,
  order: OrderTerm[],
  base: string,
  page: Page<Resource>,
) {
  const repo = resourcesRepository(ctx.db)
  const vis = catalogVisibility(actor)
  const filters = { ...f, queryUuid: f.query ? normalizeUuid(f.query.trim()) : null }
  return page(
    () => repo.count(vis, filters),
    async (l, o) => toResources(ctx, base, await repo.list(vis, filters, order, l, o)),
  )
}

export async function getResource(ctx: AppContext, actor: Actor, uuid: string, base: string) {
  const id = normalizeUuid(uuid)
  const row = id
    ? await resourcesRepository(ctx.db).findVisibleByUuid(catalogVisibility(actor), id)
    : undefined
  if (!row) throw notFound('No Resource matches the given query.')
  return (await toResources(ctx, base, [row]))[0]!
}

// ---- for other areas ----

/**
 * The offering a request's hyperlink names, if the actor may see it.
 * 400 on `field` when the value is not an offering URL, unknown, or not visible.
 */
export async function resolveOfferingLink(
  ctx: AppContext,
  actor: Actor,
  field: string,
  value: unknown,
): Promise<OfferingRow> {
  if (typeof value !== 'string') throw fieldError(field, 'Incorrect type. Expected URL string.')
  const uuid = uuidFromLink(value, PATHS.offerings)
  if (!uuid) throw fieldError(field, 'Invalid hyperlink - Incorrect URL match.')
  const row = await offeringsRepository(ctx.db).findVisibleByUuid(catalogVisibility(actor), uuid)
  if (!row) throw invalidHyperlink(field)
  return row
}

/**
 * The plan a request's hyperlink names (no visibility check: callers check that it belongs to
 * the offering they resolved). 400 on `field` when not a plan URL or unknown.
 */
export async function resolvePlanLink(ctx: AppContext, field: string, value: unknown): Promise<PlanRow> {
  if (typeof value !== 'string') throw fieldError(field, 'Incorrect type. Expected URL string.')
  const uuid = uuidFromLink(value, PATHS.plans)
  if (!uuid) throw fieldError(field, 'Invalid hyperlink - Incorrect URL match.')
  const row = await plansRepository(ctx.db).findByUuid(uuid)
  if (!row) throw invalidHyperlink(field)
  return row
}

/** The offering row (with provider and category columns), or undefined. */
export async function findOfferingById(ctx: AppContext, id: number): Promise<OfferingRow | undefined> {
  return offeringsRepository(ctx.db).findById(id)
}

/** The offering row by uuid (hyphenated or 32 hex digits), or undefined. No visibility check. */
export async function findOfferingByUuid(ctx: AppContext, uuid: string): Promise<OfferingRow | undefined> {
  const id = normalizeUuid(uuid)
  return id ? offeringsRepository(ctx.db).findByUuid(id) : undefined
}

/** The plan row by id, or undefined. */
export async function findPlanById(ctx: AppContext, id: number): Promise<PlanRow | undefined> {
  return plansRepository(ctx.db).findById(id)
}

/** The public offering detail object (as GET /api/marketplace-provider-offerings/{uuid}/ answers). */
export async function offeringRecord(ctx: AppContext, base: string, offeringId: number): Promise<Offering> {
  const row = await offeringsRepository(ctx.db).findById(offeringId)
  if (!row) throw notFound('No Offering matches the given query.')
  return (await toOfferings(ctx, base, [row]))[0]!
}

/** The marketplace resource record (as GET /api/marketplace-resources/{uuid}/ answers). */
export async function resourceRecord(ctx: AppContext, base: string, resourceId: number): Promise<Resource> {
  const row = await resourcesRepository(ctx.db).findById(resourceId)
  if (!row) throw notFound('No Resource matches the given query.')
  return (await toResources(ctx, base, [row]))[0]!
}
