// Factories insert rows directly; the lazy role graph gives each test the users it names.
import type { Insertable } from 'kysely'
import type { AppContext } from '../../src/context.js'
import { grantRole, insertProject, issueToken, resolveRole } from '../../src/areas/directory/service.js'
import { insertReturningId } from '../../src/db/compiled.js'
import type { DB } from '../../src/db/tables.js'
import { toJson } from '../../src/db/values.js'
import type { RoleName } from '../../src/http/permissions.js'
import { BASE } from './client.js'

export interface UserRef {
  id: number
  uuid: string
  username: string
  token: string
  url: string
}

export interface Ref {
  id: number
  uuid: string
  url: string
  name: string
}

let seq = 0

/** A row's columns less the uuid and the times, which `insertRef` sets (`created` may be given). */
export type RefValues<T extends keyof DB> = Omit<Insertable<DB[T]>, 'uuid' | 'created' | 'modified'> & {
  created?: string
}

/**
 * Inserts a row of `table` with a new uuid, created and modified at the clock's time (or at
 * `values.created`): its id, uuid and URL under `/api/<path>/`.
 */
export async function insertRef<T extends keyof DB>(
  ctx: AppContext,
  table: T,
  path: string,
  values: RefValues<T>,
): Promise<{ id: number; uuid: string; url: string }> {
  const now = values.created ?? ctx.clock().toISOString()
  const uuid = ctx.newUuid()
  const id = await insertReturningId(ctx.db, table, { ...values, uuid, created: now, modified: now })
  return { id, uuid, url: `${BASE}/api/${path}/${uuid}/` }
}

/**
 * A name no other call in this process gets: `prefix-` and a counter in five base-36 digits, so
 * names are deterministic and none is a substring of another.
 */
export function uniqueName(prefix: string): string {
  return `${prefix}-${(++seq).toString(36).padStart(5, '0')}`
}

export async function makeUser(
  ctx: AppContext,
  opts: {
    username?: string
    staff?: boolean
    support?: boolean
    email?: string
    fullName?: string
    affiliations?: string[]
    identitySource?: string
    active?: boolean
  } = {},
): Promise<UserRef> {
  const username = opts.username ?? uniqueName('user')
  const user = await insertRef(ctx, 'users', 'users', {
    username,
    email: opts.email ?? `${username}@example.com`,
    full_name: opts.fullName ?? `Full ${username}`,
    is_staff: opts.staff ? 1 : 0,
    is_support: opts.support ? 1 : 0,
    is_active: opts.active === false ? 0 : 1,
    affiliations: toJson(opts.affiliations ?? []),
    identity_source: opts.identitySource ?? '',
    civil_number: null,
    image: null,
    password_hash: null,
  })
  return { ...user, username, token: await issueToken(ctx, user.id) }
}

export async function makeCustomer(ctx: AppContext, name = `Org ${++seq}`): Promise<Ref> {
  const customer = await insertRef(ctx, 'customers', 'customers', { name, slug: `org-${seq}`, image: null })
  return { ...customer, name }
}

export async function makeProject(
  ctx: AppContext,
  customer: Ref,
  opts: { name?: string; startDate?: string | null; endDate?: string | null } = {},
): Promise<Ref> {
  const name = opts.name ?? `Project ${++seq}`
  const id = await insertProject(ctx, ctx.db, {
    name,
    customerId: customer.id,
    start_date: opts.startDate ?? null,
    end_date: opts.endDate ?? null,
  })
  const row = await ctx.db
    .selectFrom('projects')
    .select('uuid')
    .where('id', '=', id)
    .executeTakeFirstOrThrow()
  return { id, uuid: row.uuid, name, url: `${BASE}/api/projects/${row.uuid}/` }
}

export async function grant(
  ctx: AppContext,
  user: UserRef,
  role: RoleName,
  scope: { type: 'customer' | 'project' | 'offering'; id: number },
): Promise<void> {
  const r = await resolveRole(ctx, 'role', role)
  await grantRole(ctx, ctx.db, {
    userId: user.id,
    roleId: r.id,
    scope,
    createdById: null,
    expiration: null,
  })
}

/** A new customer and a new user holding `role` on it. */
export async function customerWithRole(
  ctx: AppContext,
  role: RoleName,
): Promise<{ customer: Ref; user: UserRef }> {
  const customer = await makeCustomer(ctx)
  const user = await makeUser(ctx)
  await grant(ctx, user, role, { type: 'customer', id: customer.id })
  return { customer, user }
}

/**
 * The consumer-side role graph, created on first use: a customer with a project and its owner,
 * project admin/manager/member, plus staff, support and an outsider.
 */
export function roleGraph(ctx: AppContext) {
  const memo = new Map<string, Promise<unknown>>()
  const once = <T>(key: string, make: () => Promise<T>): Promise<T> => {
    if (!memo.has(key)) memo.set(key, make())
    return memo.get(key) as Promise<T>
  }
  const g = {
    customer: () => once('customer', () => makeCustomer(ctx)),
    project: () => once('project', async () => makeProject(ctx, await g.customer())),
    staff: () => once('staff', () => makeUser(ctx, { staff: true })),
    support: () => once('support', () => makeUser(ctx, { support: true })),
    outsider: () => once('outsider', () => makeUser(ctx)),
    owner: () =>
      once('owner', async () => {
        const u = await makeUser(ctx)
        await grant(ctx, u, 'CUSTOMER.OWNER', { type: 'customer', id: (await g.customer()).id })
        return u
      }),
    projectRole: (role: 'PROJECT.ADMIN' | 'PROJECT.MANAGER' | 'PROJECT.MEMBER') =>
      once(role, async () => {
        const u = await makeUser(ctx)
        await grant(ctx, u, role, { type: 'project', id: (await g.project()).id })
        return u
      }),
    admin: () => g.projectRole('PROJECT.ADMIN'),
    manager: () => g.projectRole('PROJECT.MANAGER'),
    member: () => g.projectRole('PROJECT.MEMBER'),
  }
  return g
}

/** A `sharedTestApp` setup: the staff user the file's tests act as. */
export async function withStaff(t: { ctx: AppContext }): Promise<{ staff: UserRef }> {
  return { staff: await makeUser(t.ctx, { staff: true }) }
}

/** The uuid of the role named `name` (e.g. PROJECT.MEMBER), as the API's role links carry it. */
export async function roleUuid(ctx: AppContext, name: RoleName): Promise<string> {
  const role = await ctx.db
    .selectFrom('roles')
    .select('uuid')
    .where('name', '=', name)
    .executeTakeFirstOrThrow()
  return role.uuid
}
