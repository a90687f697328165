// Catalog rows the cost policy tests need, inserted directly (the catalog area owns the endpoints).
import type { AppContext } from '../../src/context.js'
import { toJson } from '../../src/db/values.js'
import type { Ref } from './fixtures.js'

const BASE = 'http://localhost:80'
let seq = 0

export async function makeOffering(ctx: AppContext, provider: Ref, name = `Offering ${++seq}`): Promise<Ref> {
  const now = ctx.clock().toISOString()
  const uuid = ctx.newUuid()
  const row = await ctx.db
    .insertInto('offerings')
    .values({
      uuid,
      name,
      slug: `offering-${++seq}`,
      customer_id: provider.id,
      type: 'Marketplace.Basic',
      state: 'Active',
      plugin_options: toJson({}),
      category_id: null,
      parent_id: null,
      image: null,
      thumbnail: null,
      service_settings_id: null,
      project_id: null,
      created: now,
      modified: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  return { id: row.id, uuid, name, url: `${BASE}/api/marketplace-provider-offerings/${uuid}/` }
}

export async function makePlan(
  ctx: AppContext,
  offering: Ref,
  prices: { unit?: string; unitPrice?: number; fixedPrice?: number } = {},
): Promise<Ref> {
  const now = ctx.clock().toISOString()
  const uuid = ctx.newUuid()
  const name = `Plan ${++seq}`
  const row = await ctx.db
    .insertInto('plans')
    .values({
      uuid,
      offering_id: offering.id,
      name,
      unit: prices.unit ?? 'month',
      unit_price: prices.unitPrice ?? 0,
      fixed_price: prices.fixedPrice ?? 0,
      activation_price: 0,
      created: now,
      modified: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  return { id: row.id, uuid, name, url: `${BASE}/api/marketplace-plans/${uuid}/` }
}

export async function makeResource(
  ctx: AppContext,
  o: { offering: Ref; plan: Ref | null; project: Ref; customer: Ref; state?: string; created?: string },
): Promise<Ref> {
  const now = o.created ?? ctx.clock().toISOString()
  const uuid = ctx.newUuid()
  const name = `Resource ${++seq}`
  const row = await ctx.db
    .insertInto('resources')
    .values({
      uuid,
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
      created: now,
      modified: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  return { id: row.id, uuid, name, url: `${BASE}/api/marketplace-resources/${uuid}/` }
}

export async function makeOrganizationGroup(ctx: AppContext, customers: Ref[] = []): Promise<Ref> {
  const now = ctx.clock().toISOString()
  const uuid = ctx.newUuid()
  const name = `Group ${++seq}`
  const row = await ctx.db
    .insertInto('organization_groups')
    .values({ uuid, name, parent_id: null, created: now, modified: now })
    .returning('id')
    .executeTakeFirstOrThrow()
  for (const c of customers) {
    await ctx.db
      .insertInto('customer_organization_groups')
      .values({ customer_id: c.id, organization_group_id: row.id })
      .execute()
  }
  return { id: row.id, uuid, name, url: `${BASE}/api/organization-groups/${uuid}/` }
}
