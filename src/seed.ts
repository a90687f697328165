// Users with tokens from the command line, and a small demo data set for trying the API.
import type { AppContext } from './context.js'
import { hashPassword } from './http/auth.js'
import { toJson } from './db/values.js'
import { grantRole, insertProject, issueToken, resolveRole } from './areas/directory/service.js'
import type { RoleName } from './http/permissions.js'

export interface NewUser {
  username: string
  isStaff?: boolean
  isSupport?: boolean
  password?: string
  email?: string
  fullName?: string
}

/** Creates a user (or reuses one with that username) and returns a new API token for it. */
export async function createUserWithToken(ctx: AppContext, u: NewUser): Promise<string> {
  const id = await ensureUser(ctx, u)
  return issueToken(ctx, id)
}

async function ensureUser(ctx: AppContext, u: NewUser): Promise<number> {
  const existing = await ctx.db
    .selectFrom('users')
    .select('id')
    .where('username', '=', u.username)
    .executeTakeFirst()
  if (existing) return existing.id
  const now = ctx.clock().toISOString()
  const row = await ctx.db
    .insertInto('users')
    .values({
      uuid: ctx.newUuid(),
      username: u.username,
      email: u.email ?? `${u.username}@example.com`,
      full_name: u.fullName ?? u.username,
      is_staff: u.isStaff ? 1 : 0,
      is_support: u.isSupport ? 1 : 0,
      is_active: 1,
      affiliations: toJson([]),
      password_hash: u.password ? await hashPassword(u.password) : null,
      created: now,
      modified: now,
      civil_number: null,
      image: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  return row.id
}

async function ensureCustomer(ctx: AppContext, name: string): Promise<{ id: number; uuid: string }> {
  const existing = await ctx.db
    .selectFrom('customers')
    .select(['id', 'uuid'])
    .where('name', '=', name)
    .executeTakeFirst()
  if (existing) return existing
  const now = ctx.clock().toISOString()
  const uuid = ctx.newUuid()
  const row = await ctx.db
    .insertInto('customers')
    .values({
      uuid,
      name,
      slug: name.toLowerCase().replace(/[^a-z0-9]+/g, '-'),
      created: now,
      modified: now,
      image: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  return { id: row.id, uuid }
}

async function grant(
  ctx: AppContext,
  userId: number,
  role: RoleName,
  scope: { type: 'customer' | 'project'; id: number },
) {
  const r = await resolveRole(ctx, 'role', role)
  await grantRole(ctx, ctx.db, {
    userId,
    roleId: r.id,
    scope: { type: scope.type, id: scope.id, uuid: '', name: '' },
    createdById: null,
    expiration: null,
  })
}

/** A consumer organization with a project and its team, and a provider organization. */
export async function seedDemo(ctx: AppContext): Promise<Record<string, unknown>> {
  const consumer = await ensureCustomer(ctx, 'Demo University')
  const provider = await ensureCustomer(ctx, 'Demo Cloud Provider')
  let project = await ctx.db
    .selectFrom('projects')
    .select(['id', 'uuid'])
    .where('name', '=', 'Demo research project')
    .where('customer_id', '=', consumer.id)
    .executeTakeFirst()
  if (!project) {
    const id = await insertProject(ctx, ctx.db, { name: 'Demo research project', customerId: consumer.id })
    project = await ctx.db
      .selectFrom('projects')
      .select(['id', 'uuid'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow()
  }
  const users: Record<string, string> = {}
  const make = async (username: string, extra: Partial<NewUser> = {}) => {
    const id = await ensureUser(ctx, { username, password: 'demo-password', ...extra })
    users[username] = await issueToken(ctx, id)
    return id
  }
  await make('demo-staff', { isStaff: true })
  await grant(ctx, await make('demo-owner'), 'CUSTOMER.OWNER', { type: 'customer', id: consumer.id })
  await grant(ctx, await make('demo-manager'), 'PROJECT.MANAGER', { type: 'project', id: project.id })
  await grant(ctx, await make('demo-member'), 'PROJECT.MEMBER', { type: 'project', id: project.id })
  await grant(ctx, await make('demo-provider'), 'CUSTOMER.OWNER', { type: 'customer', id: provider.id })
  const catalog = await seedCatalog(ctx, provider.id)
  return {
    customers: { consumer: consumer.uuid, provider: provider.uuid },
    project: project.uuid,
    ...catalog,
    tokens: users,
    password: 'demo-password',
  }
}

/**
 * The demo provider's catalog: it becomes a service provider with one category, an Active
 * `Marketplace.Basic` offering and an Active `Marketplace.Slurm` offering, each with a plan.
 * Idempotent: rows found by name are reused.
 */
async function seedCatalog(ctx: AppContext, providerId: number) {
  const now = ctx.clock().toISOString()
  let sp = await ctx.db
    .selectFrom('service_providers')
    .select('uuid')
    .where('customer_id', '=', providerId)
    .executeTakeFirst()
  if (!sp) {
    sp = { uuid: ctx.newUuid() }
    await ctx.db
      .insertInto('service_providers')
      .values({
        uuid: sp.uuid,
        customer_id: providerId,
        description: 'Demo provider',
        image: null,
        created: now,
        modified: now,
      })
      .execute()
  }
  let category = await ctx.db
    .selectFrom('categories')
    .select(['id', 'uuid'])
    .where('title', '=', 'Demo services')
    .executeTakeFirst()
  if (!category) {
    const uuid = ctx.newUuid()
    const row = await ctx.db
      .insertInto('categories')
      .values({ uuid, title: 'Demo services', description: '', icon: null, created: now, modified: now })
      .returning('id')
      .executeTakeFirstOrThrow()
    category = { id: row.id, uuid }
  }
  const offering = async (name: string, type: string, planName: string, unitPrice: string) => {
    let o = await ctx.db
      .selectFrom('offerings')
      .select(['id', 'uuid'])
      .where('name', '=', name)
      .where('customer_id', '=', providerId)
      .executeTakeFirst()
    if (!o) {
      const uuid = ctx.newUuid()
      const row = await ctx.db
        .insertInto('offerings')
        .values({
          uuid,
          name,
          description: `${name} (demo)`,
          slug: name.toLowerCase().replace(/[^a-z0-9]+/g, '-'),
          category_id: category.id,
          customer_id: providerId,
          parent_id: null,
          type,
          state: 'Active',
          shared: 1,
          billable: 1,
          plugin_options: toJson({}),
          image: null,
          thumbnail: null,
          service_settings_id: null,
          project_id: null,
          created: now,
          modified: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow()
      o = { id: row.id, uuid }
    }
    let plan = await ctx.db
      .selectFrom('plans')
      .select('uuid')
      .where('offering_id', '=', o.id)
      .where('name', '=', planName)
      .executeTakeFirst()
    if (!plan) {
      plan = { uuid: ctx.newUuid() }
      await ctx.db
        .insertInto('plans')
        .values({
          uuid: plan.uuid,
          offering_id: o.id,
          name: planName,
          unit: 'month',
          unit_price: unitPrice,
          created: now,
          modified: now,
        })
        .execute()
    }
    return { offering: o.uuid, plan: plan.uuid }
  }
  return {
    service_provider: sp.uuid,
    category: category.uuid,
    offerings: {
      basic: await offering('Demo basic service', 'Marketplace.Basic', 'Standard', '10'),
      slurm: await offering('Demo HPC allocation', 'Marketplace.Slurm', 'CPU hours', '0.05'),
    },
  }
}
