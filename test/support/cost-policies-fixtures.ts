// Catalog rows the cost policy tests need, inserted directly (the catalog area owns the endpoints).
import type { AppContext } from '../../src/context.js'
import { toJson } from '../../src/db/values.js'
import * as catalog from './catalog-fixtures.js'
import { insertRef, type Ref } from './fixtures.js'

let seq = 0

export function makeOffering(ctx: AppContext, provider: Ref, name = `Offering ${++seq}`): Promise<Ref> {
  return catalog.makeOffering(ctx, provider, { name })
}

export async function makePlan(
  ctx: AppContext,
  offering: Ref,
  prices: { unit?: string; unitPrice?: number; fixedPrice?: number } = {},
): Promise<Ref> {
  const name = `Plan ${++seq}`
  const plan = await insertRef(ctx, 'plans', 'marketplace-plans', {
    offering_id: offering.id,
    name,
    unit: prices.unit ?? 'month',
    unit_price: prices.unitPrice ?? 0,
    fixed_price: prices.fixedPrice ?? 0,
    activation_price: 0,
  })
  return { ...plan, name }
}

export async function makeResource(
  ctx: AppContext,
  o: { offering: Ref; plan: Ref | null; project: Ref; customer: Ref; state?: string; created?: string },
): Promise<Ref> {
  const name = `Resource ${++seq}`
  const resource = await insertRef(ctx, 'resources', 'marketplace-resources', {
    name,
    offering_id: o.offering.id,
    plan_id: o.plan?.id ?? null,
    project_id: o.project.id,
    customer_id: o.customer.id,
    state: o.state ?? 'OK',
    attributes: toJson({}),
    limits: toJson({}),
    scope_type: null,
    scope_id: null,
    end_date: null,
    created: o.created,
  })
  return { ...resource, name }
}

export async function makeOrganizationGroup(ctx: AppContext, customers: Ref[] = []): Promise<Ref> {
  const name = `Group ${++seq}`
  const group = await insertRef(ctx, 'organization_groups', 'organization-groups', { name, parent_id: null })
  for (const c of customers) {
    await ctx.db
      .insertInto('customer_organization_groups')
      .values({ customer_id: c.id, organization_group_id: group.id })
      .execute()
  }
  return { ...group, name }
}
