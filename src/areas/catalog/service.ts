// Catalog use cases: service providers, categories and the offering types. Offerings, plans and
// the read side of marketplace resources have their own files; this module also gathers what
// other areas (orders, cloud, policies) call instead of touching the catalog's tables.
import type { AppContext } from '../../context.js'
import { foundByUuid } from '../../http/uuid.js'
import type { Listing } from '../../db/listing.js'
import { isoNow } from '../../db/values.js'
import { AppError, fieldError, forbidden } from '../../http/errors.js'
import { ownLink, recordRenderer, relatedLink } from '../../http/links.js'
import type { Actor } from '../../http/permissions.js'
import { pageOf, type Pager, type ScopedRows } from '../../http/resource.js'
import { resolveCustomerLink } from '../directory/service.js'
import { canManageProvider, canWriteCategories } from './access.js'
import { OFFERING_TYPE_RULES, OFFERING_TYPES } from './offering-types.js'
import { categoriesRepository, serviceProvidersRepository } from './repository.js'
import { offeringsRepository } from './repository-offerings.js'
import {
  PATHS,
  type Category,
  type CategoryWrite,
  type OfferingTypeRecord,
  type ServiceProvider,
  type ServiceProviderWrite,
} from './schema.js'

export { catalogVisibility } from './access.js'
export { resolveOfferingLink, resolvePlanLink, type OfferingRow, type PlanRow } from './service-links.js'
export { findOfferingById, findOfferingByUuid, offeringRecord } from './service-offerings.js'
export { findPlanById } from './service-plans.js'
export { getResource, registerResourceScope, resourceRecord } from './service-resources.js'

/** The columns every write of a catalog row sets itself: its uuid and its times. */
type Stamped = 'uuid' | 'created' | 'modified'

/**
 * The list and the record of a catalog table everybody sees whole (404 when not found), and its
 * writes: a new row (a new uuid, created and modified now) and a change (modified now), each
 * answering the row's record.
 */
function openRecords<Row, T, V extends Record<Stamped, string>>(
  repositoryOf: (db: AppContext['db']) => ScopedRows<undefined, Row> & {
    findByUuid(uuid: string): Promise<Row | undefined>
    insert(values: V): Promise<void>
    update(id: number, values: Record<string, unknown>): Promise<void>
  },
  render: (base: string, row: Row) => T,
  model: string,
) {
  const find = (ctx: AppContext, uuid: string): Promise<Row> =>
    foundByUuid(uuid, (id) => repositoryOf(ctx.db).findByUuid(id), model)
  const record = async (ctx: AppContext, base: string, uuid: string): Promise<T> =>
    render(base, (await repositoryOf(ctx.db).findByUuid(uuid))!)
  return {
    find,
    record,
    list: (ctx: AppContext, listing: Listing, base: string, page: Pager<T>) =>
      pageOf(page, repositoryOf(ctx.db), undefined, listing, (r) => render(base, r)),
    /** Any caller may read it: the actor is taken only so that the record's operations are alike. */
    get: async (ctx: AppContext, _actor: Actor, uuid: string, base: string) =>
      render(base, await find(ctx, uuid)),
    /** Stores a new row; its uuid. */
    insert: async (ctx: AppContext, values: Omit<V, Stamped>): Promise<string> => {
      const t = isoNow(ctx.clock)
      const uuid = ctx.newUuid()
      await repositoryOf(ctx.db).insert({ uuid, ...values, created: t, modified: t } as V)
      return uuid
    },
    /** Changes the row and answers its record. */
    update: async (ctx: AppContext, base: string, row: { id: number; uuid: string }, values: object) => {
      await repositoryOf(ctx.db).update(row.id, { modified: isoNow(ctx.clock), ...values })
      return record(ctx, base, row.uuid)
    },
  }
}

// ---- service providers ----

type ProviderRow = NonNullable<
  Awaited<ReturnType<ReturnType<typeof serviceProvidersRepository>['findByUuid']>>
>

const toProvider = recordRenderer<ProviderRow, ServiceProvider>({
  ...ownLink(PATHS.providers),
  ...relatedLink('customer', PATHS.customers, 'uuid', 'name'),
  description: 'copy',
  image: 'copy',
  created: 'copy',
})

const providers = openRecords(serviceProvidersRepository, toProvider, 'ServiceProvider')
export const listServiceProviders = providers.list
export const getServiceProvider = providers.get

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
  let uuid: string
  try {
    uuid = await providers.insert(ctx, {
      customer_id: customer.id,
      description: body.description ?? '',
      image: body.image ?? null,
    })
  } catch (e) {
    // A concurrent request registered the same customer first (unique customer_id).
    if (await repo.findByCustomer(customer.id)) {
      throw fieldError('customer', 'service provider with this customer already exists.')
    }
    throw e
  }
  return providers.record(ctx, base, uuid)
}

export async function updateServiceProvider(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: ServiceProviderWrite,
  base: string,
): Promise<ServiceProvider> {
  const row = await providers.find(ctx, uuid)
  if (!canManageProvider(actor, row.customer_id)) throw forbidden()
  if (body.customer !== undefined) {
    const c = await resolveCustomerLink(ctx, actor, 'customer', body.customer)
    if (c.id !== row.customer_id)
      throw fieldError('customer', 'The customer of a provider cannot be changed.')
  }
  const values: Record<string, unknown> = {}
  if (body.description !== undefined) values.description = body.description
  if (body.image !== undefined) values.image = body.image
  return providers.update(ctx, base, row, values)
}

/** Removes provider status; refused (409) while the provider has offerings that are not archived. */
export async function deleteServiceProvider(ctx: AppContext, actor: Actor, uuid: string) {
  const row = await providers.find(ctx, uuid)
  if (!canManageProvider(actor, row.customer_id)) throw forbidden()
  if ((await offeringsRepository(ctx.db).countByCustomer(row.customer_id, ['Archived'])) > 0) {
    throw new AppError('conflict', 'Cannot delete service provider with existing offerings')
  }
  await serviceProvidersRepository(ctx.db).delete(row.id)
}

// ---- categories ----

type CategoryRow = NonNullable<Awaited<ReturnType<ReturnType<typeof categoriesRepository>['findByUuid']>>>

const toCategory = recordRenderer<CategoryRow, Category>({
  ...ownLink(PATHS.categories),
  title: 'copy',
  description: 'copy',
  icon: 'copy',
  offering_count: 'count',
  created: 'copy',
})

const categoryRecords = openRecords(categoriesRepository, toCategory, 'Category')
export const listCategories = categoryRecords.list
export const getCategory = categoryRecords.get

export async function createCategory(
  ctx: AppContext,
  actor: Actor,
  body: CategoryWrite & { title: string },
  base: string,
) {
  if (!canWriteCategories(actor)) throw forbidden()
  const uuid = await categoryRecords.insert(ctx, {
    title: body.title,
    description: body.description ?? '',
    icon: body.icon ?? null,
  })
  return categoryRecords.record(ctx, base, uuid)
}

export async function updateCategory(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: CategoryWrite,
  base: string,
) {
  const row = await categoryRecords.find(ctx, uuid)
  if (!canWriteCategories(actor)) throw forbidden()
  const values: Record<string, unknown> = {}
  for (const k of ['title', 'description', 'icon'] as const) if (body[k] !== undefined) values[k] = body[k]
  return categoryRecords.update(ctx, base, row, values)
}

/** Staff only; refused (409) while offerings are in the category. */
export async function deleteCategory(ctx: AppContext, actor: Actor, uuid: string) {
  const row = await categoryRecords.find(ctx, uuid)
  if (!canWriteCategories(actor)) throw forbidden()
  const repo = categoriesRepository(ctx.db)
  if ((await repo.offeringCount(row.id)) > 0) {
    throw new AppError('conflict', 'Cannot delete category with existing offerings')
  }
  await repo.delete(row.id)
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
