// Catalog rows inserted directly, for tests of the catalog and of the areas built on it, and the
// orders placed on them.
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import type { AppContext } from '../../src/context.js'
import { toJson } from '../../src/db/values.js'
import { insertBuiltinComponents } from '../../src/areas/catalog/service.js'
import { slugify } from '../../src/http/slug.js'
import { grant, insertRef, makeCustomer, makeProject, makeUser, type Ref, type UserRef } from './fixtures.js'
import { call } from './client.js'

let seq = 0

export type OfferingState = 'Draft' | 'Active' | 'Paused' | 'Archived'

export interface OfferingRef extends Ref {
  customerId: number
}

export async function makeServiceProvider(ctx: AppContext, customer: Ref): Promise<Ref> {
  const sp = await insertRef(ctx, 'service_providers', 'marketplace-service-providers', {
    customer_id: customer.id,
    description: '',
    image: null,
  })
  return { ...sp, name: customer.name }
}

export async function makeCategory(ctx: AppContext, title = `Category ${++seq}`): Promise<Ref> {
  const category = await insertRef(ctx, 'categories', 'marketplace-categories', {
    title,
    description: '',
    icon: null,
  })
  return { ...category, name: title }
}

export async function makeServiceSettings(
  ctx: AppContext,
  opts: { type?: 'cloudA' | 'cloudB'; shared?: boolean; customerId?: number | null } = {},
): Promise<Ref> {
  const name = `Settings ${++seq}`
  const settings = await insertRef(ctx, 'service_settings', 'service-settings', {
    name,
    type: opts.type ?? 'cloudB',
    shared: opts.shared === false ? 0 : 1,
    customer_id: opts.customerId ?? null,
    options: toJson({}),
  })
  return { ...settings, name }
}

export async function makeOffering(
  ctx: AppContext,
  customer: Ref,
  opts: {
    name?: string
    type?: string
    state?: OfferingState
    shared?: boolean
    categoryId?: number | null
    projectId?: number | null
    serviceSettingsId?: number | null
    pluginOptions?: Record<string, unknown>
  } = {},
): Promise<OfferingRef> {
  const name = opts.name ?? `Offering ${++seq}`
  const offering = await insertRef(ctx, 'offerings', 'marketplace-provider-offerings', {
    name,
    slug: name.toLowerCase().replace(/[^a-z0-9]+/g, '-'),
    customer_id: customer.id,
    category_id: opts.categoryId ?? null,
    parent_id: null,
    type: opts.type ?? 'Marketplace.Basic',
    state: opts.state ?? 'Active',
    shared: opts.shared === false ? 0 : 1,
    billable: 1,
    plugin_options: toJson(opts.pluginOptions ?? {}),
    image: null,
    thumbnail: null,
    service_settings_id: opts.serviceSettingsId ?? null,
    project_id: opts.projectId ?? null,
  })
  // As an offering created through the API: with the built-in components of its type.
  await insertBuiltinComponents(ctx, ctx.db, offering.id, opts.type ?? 'Marketplace.Basic')
  return { ...offering, name, customerId: customer.id }
}

/**
 * A component of an offering, billed by limit unless told (`cpu` by default). Plans made before
 * it have no price of it (the API's create_offering_component prices it 0 in each).
 */
export async function makeComponent(
  ctx: AppContext,
  offering: Ref,
  opts: {
    type?: string
    name?: string
    billingType?: 'usage' | 'limit' | 'fixed' | 'one' | 'few'
    minValue?: number | null
    maxValue?: number | null
    maxAvailableLimit?: number | null
    isPrepaid?: boolean
    measuredUnit?: string
  } = {},
): Promise<{ id: number; uuid: string; type: string }> {
  const type = opts.type ?? 'cpu'
  const now = ctx.clock().toISOString()
  const uuid = ctx.newUuid()
  const row = await ctx.db
    .insertInto('offering_components')
    .values({
      uuid,
      offering_id: offering.id,
      type,
      name: opts.name ?? type.toUpperCase(),
      measured_unit: opts.measuredUnit ?? '',
      billing_type: opts.billingType ?? 'limit',
      min_value: opts.minValue ?? null,
      max_value: opts.maxValue ?? null,
      max_available_limit: opts.maxAvailableLimit ?? null,
      is_prepaid: opts.isPrepaid ? 1 : 0,
      limit_period: null,
      limit_amount: null,
      default_limit: null,
      overage_component_id: null,
      min_prepaid_duration: null,
      max_prepaid_duration: null,
      prepaid_duration_step: null,
      min_renewal_duration: null,
      max_renewal_duration: null,
      renewal_duration_step: null,
      created: now,
      modified: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  return { id: row.id, uuid, type }
}

export async function makePlan(
  ctx: AppContext,
  offering: Ref,
  opts: {
    name?: string
    unit?: string
    unitPrice?: string | number
    fixedPrice?: number
    archived?: boolean
  } = {},
): Promise<Ref> {
  const name = opts.name ?? `Plan ${++seq}`
  const plan = await insertRef(ctx, 'plans', 'marketplace-plans', {
    offering_id: offering.id,
    name,
    unit: opts.unit ?? 'month',
    unit_price: opts.unitPrice ?? '10',
    fixed_price: opts.fixedPrice ?? 0,
    archived: opts.archived ? 1 : 0,
  })
  return { ...plan, name }
}

export async function makeResource(
  ctx: AppContext,
  offering: Ref,
  project: Ref & { customerId?: number },
  opts: {
    name?: string
    planId?: number | null
    state?: string
    backendId?: string
    scopeType?: string | null
    scopeId?: number | null
    attributes?: unknown
    limits?: Record<string, number>
    /** When it was created, if not at the clock's time. */
    created?: string
    slug?: string
  } = {},
): Promise<Ref> {
  const name = opts.name ?? `Resource ${++seq}`
  const customerId =
    project.customerId ??
    (
      await ctx.db
        .selectFrom('projects')
        .select('customer_id')
        .where('id', '=', project.id)
        .executeTakeFirstOrThrow()
    ).customer_id
  const resource = await insertRef(ctx, 'resources', 'marketplace-resources', {
    name,
    // Not of the form `<name>-<n>`, so never one the server generates.
    slug: opts.slug ?? `${slugify(name, 'resource')}-f${++seq}`,
    last_sync: opts.created ?? ctx.clock().toISOString(),
    offering_id: offering.id,
    plan_id: opts.planId ?? null,
    project_id: project.id,
    customer_id: customerId,
    state: opts.state ?? 'OK',
    attributes: toJson(opts.attributes ?? { name }),
    limits: toJson(opts.limits ?? {}),
    backend_id: opts.backendId ?? '',
    scope_type: opts.scopeType ?? null,
    scope_id: opts.scopeId ?? null,
    end_date: null,
    created: opts.created,
  })
  return { ...resource, name }
}

/**
 * The provider-side role graph, created on first use: a service provider organization with its
 * owner, service provider manager (CUSTOMER.MANAGER) and customer support user.
 */
export function providerGraph(ctx: AppContext) {
  const memo = new Map<string, Promise<unknown>>()
  const once = <T>(key: string, make: () => Promise<T>): Promise<T> => {
    if (!memo.has(key)) memo.set(key, make())
    return memo.get(key) as Promise<T>
  }
  const role = (r: 'CUSTOMER.OWNER' | 'CUSTOMER.MANAGER' | 'CUSTOMER.SUPPORT') =>
    once(r, async () => {
      const u = await makeUser(ctx)
      await grant(ctx, u, r, { type: 'customer', id: (await g.customer()).id })
      return u
    })
  const g = {
    customer: () =>
      once('customer', async () => {
        const c = await makeCustomer(ctx)
        await makeServiceProvider(ctx, c)
        return c
      }),
    owner: () => role('CUSTOMER.OWNER'),
    manager: () => role('CUSTOMER.MANAGER'),
    support: () => role('CUSTOMER.SUPPORT'),
  }
  return g
}

/** A user holding OFFERING.MANAGER on the offering. */
export async function makeOfferingManager(ctx: AppContext, offering: Ref): Promise<UserRef> {
  const u = await makeUser(ctx)
  await grant(ctx, u, 'OFFERING.MANAGER', { type: 'offering', id: offering.id })
  return u
}

/**
 * What placing orders needs: a consumer organization's project, a provider's Marketplace.Basic
 * offering with a plan, and a staff user.
 */
/** An organization with a project and a Basic offering of its own: the rows orders point at. */
export async function ownOfferingWorld(
  ctx: AppContext,
): Promise<{ customer: Ref; project: Ref; offering: OfferingRef }> {
  const customer = await makeCustomer(ctx)
  const project = await makeProject(ctx, customer)
  const offering = await makeOffering(ctx, customer, { type: 'Marketplace.Basic' })
  return { customer, project, offering }
}

/** The columns of a Create order awaiting its consumer on that world's offering, for a row made directly. */
export function createOrderColumns(
  world: { customer: Ref; project: Ref; offering: OfferingRef },
  slug: string,
) {
  return {
    slug,
    type: 'Create',
    state: 'pending-consumer',
    offering_id: world.offering.id,
    provider_customer_id: world.customer.id,
    project_id: world.project.id,
    customer_id: world.customer.id,
    attributes: toJson({}),
    limits: toJson({}),
  }
}

/**
 * Places a Create order for a resource named `name` on the ordering world's offering and plan, as
 * the token's user, through the API: the new order's record.
 */
export async function placeOrder(
  app: FastifyInstance,
  token: string,
  world: { project: Ref; offering: OfferingRef; plan: Ref },
  name: string,
): Promise<any> {
  const r = await call(app, 'POST', '/api/marketplace-orders/', {
    token,
    body: {
      project: world.project.url,
      offering: world.offering.url,
      plan: world.plan.url,
      attributes: { name },
    },
  })
  assert.equal(r.status, 201, r.text)
  return r.body
}

export async function orderingWorld(
  ctx: AppContext,
  name: string,
): Promise<{ project: Ref; offering: OfferingRef; plan: Ref; staff: UserRef }> {
  const consumer = await makeCustomer(ctx, 'Consumer org')
  const project = await makeProject(ctx, consumer, { name: `${name} project` })
  const provider = await makeCustomer(ctx, 'Provider org')
  const offering = await makeOffering(ctx, provider, { type: 'Marketplace.Basic', name: `${name} offering` })
  const plan = await makePlan(ctx, offering, { unitPrice: '10' })
  const staff = await makeUser(ctx, { staff: true })
  return { project, offering, plan, staff }
}
