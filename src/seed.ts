// Users with tokens from the command line, and a small demo data set for trying the API.
import type { Kysely } from 'kysely'
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

/**
 * The row of `table` matching `match` (its id and uuid), inserted with `match`, `values`, a new
 * uuid and timestamps when there is none: the demo data is created once and reused after.
 */
async function findOrInsert(
  ctx: AppContext,
  table: 'customers' | 'service_providers' | 'categories' | 'offerings' | 'plans',
  match: Record<string, string | number>,
  values: Record<string, unknown>,
): Promise<{ id: number; uuid: string }> {
  const db = ctx.db as unknown as Kysely<any>
  let q = db.selectFrom(table).select(['id', 'uuid'])
  for (const [column, value] of Object.entries(match)) q = q.where(column, '=', value)
  const existing = await q.executeTakeFirst()
  if (existing) return existing
  const now = ctx.clock().toISOString()
  const uuid = ctx.newUuid()
  const row = await db
    .insertInto(table)
    .values({ uuid, ...match, ...values, created: now, modified: now })
    .returning('id')
    .executeTakeFirstOrThrow()
  return { id: row.id, uuid }
}

function ensureCustomer(ctx: AppContext, name: string): Promise<{ id: number; uuid: string }> {
  return findOrInsert(ctx, 'customers', { name }, { slug: slugOf(name), image: null })
}

function slugOf(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, '-')
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
    scope,
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
  const sp = await findOrInsert(
    ctx,
    'service_providers',
    { customer_id: providerId },
    { description: 'Demo provider', image: null },
  )
  const category = await findOrInsert(
    ctx,
    'categories',
    { title: 'Demo services' },
    { description: '', icon: null },
  )
  const offering = async (
    name: string,
    type: string,
    planName: string,
    unitPrice: string,
    pluginOptions: Record<string, unknown> = {},
  ) => {
    const o = await findOrInsert(
      ctx,
      'offerings',
      { name, customer_id: providerId },
      {
        description: `${name} (demo)`,
        slug: slugOf(name),
        category_id: category.id,
        parent_id: null,
        type,
        state: 'Active',
        shared: 1,
        billable: 1,
        plugin_options: toJson(pluginOptions),
        image: null,
        thumbnail: null,
        service_settings_id: null,
        project_id: null,
      },
    )
    const plan = await findOrInsert(
      ctx,
      'plans',
      { offering_id: o.id, name: planName },
      { unit: 'month', unit_price: unitPrice },
    )
    return { offering: o.uuid, plan: plan.uuid }
  }
  return {
    service_provider: sp.uuid,
    category: category.uuid,
    offerings: {
      basic: await offering('Demo basic service', 'Marketplace.Basic', 'Standard', '10'),
      // Its members get accounts (offering users) on the cluster named after their usernames,
      // which its site agent adds to the allocations.
      slurm: await offering('Demo HPC allocation', 'Marketplace.Slurm', 'CPU hours', '0.05', {
        service_provider_can_create_offering_user: true,
        username_generation_policy: 'waldur_username',
      }),
    },
  }
}
