// Catalog use cases: service providers, categories and the offering types. Offerings, plans and
// marketplace resources have their own files; this module also gathers what
// other areas (orders, cloud, policies) call instead of touching the catalog's tables.
import type { AppContext } from '../../context.js'
import { isoNow } from '../../db/values.js'
import { AppError, fieldError, forbidden } from '../../http/errors.js'
import { ownLink, recordRenderer, relatedLink } from '../../http/links.js'
import type { Actor } from '../../http/permissions.js'
import { eachRow, visibleRecords, type VisibleRows } from '../../http/visible-records.js'
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
export {
  offeringLinkPart,
  planLinkPart,
  resolveOfferingLink,
  resolvePlanLink,
  type OfferingLinkRow,
  type OfferingRow,
  type PlanLinkRow,
  type PlanRow,
} from './service-links.js'
export {
  findOfferingById,
  findOfferingByUuid,
  findVisibleOffering,
  offeringRecord,
} from './service-offerings.js'
export { findPlanById, planHasRoom } from './service-plans.js'
export { checkLimits, componentsOf, insertBuiltinComponents } from './service-components.js'
export { builtinComponents } from './offering-types.js'
export { priceOn } from './pricing.js'
export {
  changeResource,
  findVisibleResource,
  getResource,
  insertResource,
  moveResource,
  newResourceRow,
  registerResourceOrderRecord,
  registerResourceScope,
  resourceRecord,
} from './service-resources.js'
export type { ResourceState } from './state-machine.js'

/** A new catalog row: a new uuid, created and modified now. */
function stamped<V extends object>(ctx: AppContext, values: V) {
  const t = isoNow(ctx.clock)
  return { uuid: ctx.newUuid(), ...values, created: t, modified: t }
}

/** The list, record and 404 lookup of a catalog table everybody sees whole. */
function openRecords<Row, T>(
  rows: (db: AppContext['db']) => VisibleRows<undefined, Row>,
  render: (base: string, row: Row) => T,
  model: string,
) {
  return visibleRecords({ rows, visibility: () => undefined, model, render: eachRow(render) })
}

// ---- service providers ----

type ProviderRow = NonNullable<Awaited<ReturnType<ReturnType<typeof serviceProvidersRepository>['findById']>>>

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
  let id: number
  try {
    id = await repo.insert(
      stamped(ctx, {
        customer_id: customer.id,
        description: body.description ?? '',
        image: body.image ?? null,
      }),
    )
  } catch (e) {
    // A concurrent request registered the same customer first (unique customer_id).
    if (await repo.findByCustomer(customer.id)) {
      throw fieldError('customer', 'service provider with this customer already exists.')
    }
    throw e
  }
  return providers.record(ctx, id, base)
}

export async function updateServiceProvider(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: ServiceProviderWrite,
  base: string,
): Promise<ServiceProvider> {
  const row = await providers.find(ctx, actor, uuid)
  if (!canManageProvider(actor, row.customer_id)) throw forbidden()
  if (body.customer !== undefined) {
    const c = await resolveCustomerLink(ctx, actor, 'customer', body.customer)
    if (c.id !== row.customer_id)
      throw fieldError('customer', 'The customer of a provider cannot be changed.')
  }
  const values: Record<string, unknown> = { modified: isoNow(ctx.clock) }
  if (body.description !== undefined) values.description = body.description
  if (body.image !== undefined) values.image = body.image
  await serviceProvidersRepository(ctx.db).update(row.id, values)
  return providers.record(ctx, row.id, base)
}

/** Removes provider status; refused (409) while the provider has offerings that are not archived. */
export async function deleteServiceProvider(ctx: AppContext, actor: Actor, uuid: string) {
  const row = await providers.find(ctx, actor, uuid)
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
  const id = await categoriesRepository(ctx.db).insert(
    stamped(ctx, { title: body.title, description: body.description ?? '', icon: body.icon ?? null }),
  )
  return categoryRecords.record(ctx, id, base)
}

export async function updateCategory(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: CategoryWrite,
  base: string,
) {
  const row = await categoryRecords.find(ctx, actor, uuid)
  if (!canWriteCategories(actor)) throw forbidden()
  const values: Record<string, unknown> = { modified: isoNow(ctx.clock) }
  for (const k of ['title', 'description', 'icon'] as const) if (body[k] !== undefined) values[k] = body[k]
  await categoriesRepository(ctx.db).update(row.id, values)
  return categoryRecords.record(ctx, row.id, base)
}

/** Staff only; refused (409) while offerings are in the category. */
export async function deleteCategory(ctx: AppContext, actor: Actor, uuid: string) {
  const row = await categoryRecords.find(ctx, actor, uuid)
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
