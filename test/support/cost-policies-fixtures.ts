// Catalog rows the cost policy tests need, inserted directly (the catalog area owns the endpoints).
import type { AppContext } from '../../src/context.js'
import * as catalog from './catalog-fixtures.js'
import { insertRef, type Ref } from './fixtures.js'

let seq = 0

export function makePlan(
  ctx: AppContext,
  offering: Ref,
  prices: { unit?: string; unitPrice?: number; fixedPrice?: number } = {},
): Promise<Ref> {
  return catalog.makePlan(ctx, offering, { ...prices, unitPrice: prices.unitPrice ?? 0 })
}

export function makeResource(
  ctx: AppContext,
  o: { offering: Ref; plan: Ref | null; project: Ref; customer: Ref; state?: string; created?: string },
): Promise<Ref> {
  return catalog.makeResource(
    ctx,
    o.offering,
    { ...o.project, customerId: o.customer.id },
    {
      planId: o.plan?.id ?? null,
      state: o.state,
      attributes: {},
      created: o.created,
    },
  )
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
