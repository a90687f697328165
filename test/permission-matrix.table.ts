// THE PERMISSION MATRIX. Each row: an endpoint and the status every caller gets.
// Column order of e(...) and v(...):
//   anon, outsider, member, manager, admin, owner, provider, offeringManager, support, staff
// anon = no token; member/manager/admin = PROJECT.* on the consumer project; owner = CUSTOMER.OWNER
// of the consumer customer; provider = CUSTOMER.OWNER of the provider customer; offeringManager =
// OFFERING.MANAGER of the provider's offering; support = global support; staff = staff.
import type { TestApp } from './support/app.js'
import { call, type Method } from './support/client.js'
import { roleUuid, type Ref, type UserRef } from './support/fixtures.js'
import { eventsHead } from '../src/areas/events/service.js'

export const CALLERS = [
  'anon',
  'outsider',
  'member',
  'manager',
  'admin',
  'owner',
  'provider',
  'offeringManager',
  'support',
  'staff',
] as const
export type Caller = (typeof CALLERS)[number]

export interface World {
  t: TestApp
  users: Record<Exclude<Caller, 'anon'>, UserRef>
  customer: Ref
  project: Ref
  provider: Ref
  offering: { id: number; uuid: string; url: string }
  plan: { id: number; uuid: string; url: string }
  /** Helpers for rows that need fresh objects. */
  /** A marketplace resource of the offering in the consumer project. */
  resource: { id: number; uuid: string }
  fresh: {
    customer(): Promise<Ref>
    project(): Promise<Ref>
    user(): Promise<UserRef>
    /** A provider offering in this state, managed by the offeringManager caller. */
    offering(state?: string): Promise<{ id: number; uuid: string; url: string }>
    /** An active payment profile of the consumer customer; returns its uuid. */
    paymentProfile(): Promise<string>
    /** A usage component of the offering `offeringUuid`, created by staff; returns its uuid. */
    component(offeringUuid: string): Promise<string>
    /** A cost policy on the provider's offering; returns its uuid. */
    costPolicy(): Promise<string>
    /** An order of the world offering in the consumer project: by the project manager it waits
     * for the consumer (pending-consumer); by the owner it waits for the provider. */
    order(by: 'manager' | 'owner'): Promise<string>
    /** A site agent identity of the world offering, created by staff; returns its uuid. */
    agentIdentity(): Promise<string>
    /** A service registered under a fresh identity; returns its uuid. */
    agentService(): Promise<string>
    /** An event subscription of the offeringManager caller, through a fresh identity; its uuid. */
    eventSubscription(): Promise<string>
    /** A marketplace resource of the world offering in the consumer project (state OK). */
    resource(state?: string): Promise<string>
    /** A backend resource request for the world offering, created by staff (state Sent). */
    backendRequest(state?: 'Sent' | 'Processing'): Promise<string>
    /** An active invitation to the consumer customer (or project) created by staff. */
    invitation(scope?: 'customer' | 'project', opts?: { public?: boolean }): Promise<string>
    /** A pending permission request of a fresh user for a consumer-customer invitation. */
    permissionRequest(): Promise<string>
    /** Shared cloudA settings with a location and a resource group of the consumer project. */
    cloudA(): Promise<{ settings: string; location: string; group: string }>
    /** A cloudA public IP in the consumer project, in state OK; returns its uuid. */
    publicIp(): Promise<string>
    /** A cloudB tenant in the consumer project, in state OK; returns its url. */
    tenant(): Promise<string>
    /** A floating IP of a fresh tenant, in state OK; returns its uuid. */
    floatingIp(): Promise<string>
    /** A router of a fresh tenant, in state OK; returns its uuid. */
    router(): Promise<string>
  }
}

export interface Row {
  /** e.g. "GET /api/customers/{uuid}/" */
  endpoint: string
  method: Method
  /** Path to call; called once per caller, so it can create a fresh target. */
  path: string | ((w: World) => Promise<string> | string)
  body?: unknown
  expect: Record<Caller, number>
}

export interface ListRow {
  endpoint: string
  /** The list URL and the uuid of a target object that lives in the consumer project/customer. */
  setup: (w: World) => Promise<{ url: string; uuid: string }>
  /** Does this caller's list contain the target? */
  sees: Record<Caller, boolean>
}

function e(...codes: number[]): Record<Caller, number> {
  if (codes.length !== CALLERS.length) throw new Error('a row needs one status per caller')
  return Object.fromEntries(CALLERS.map((c, i) => [c, codes[i]!])) as Record<Caller, number>
}

function v(...seen: (0 | 1)[]): Record<Caller, boolean> {
  if (seen.length !== CALLERS.length) throw new Error('a row needs one value per caller')
  return Object.fromEntries(CALLERS.map((c, i) => [c, seen[i] === 1])) as Record<Caller, boolean>
}

/** Gives the uuid of a row's target; called once per caller, so it can make a fresh one. */
type Target = (w: World) => Promise<string> | string

/**
 * The row of `endpoint` ("METHOD /path/", a note after it in parentheses where one endpoint has
 * several rows): the path called is the endpoint's, its `{uuid}` the uuid of the target `on` gives.
 */
function row(
  expect: Record<Caller, number>,
  endpoint: string,
  opts: { on?: Target; body?: object | ((w: World) => unknown) } = {},
): Row {
  const [method, template] = endpoint.split(' ') as [Method, string]
  const { on, body } = opts
  const path = on ? async (w: World) => template.replace('{uuid}', await on(w)) : template
  return { endpoint, method, path, ...(body === undefined ? {} : { body }), expect }
}

/** The list row of `endpoint` ("GET /path/", maybe a note): the list read with `query` and the
 * object `on` gives. */
function list(sees: Record<Caller, boolean>, endpoint: string, on: Target, query = 'page_size=300'): ListRow {
  const path = endpoint.split(' ')[1]!
  return { endpoint, setup: async (w) => ({ url: `${path}?${query}`, uuid: await on(w) }), sees }
}

/** The component the remove row's path just made (see that row). */
let removable = ''

const newUserBody = async (w: World) => ({ username: `m-${(await w.fresh.user()).uuid.slice(0, 8)}-x` })
const memberGrant = async (w: World) => ({ user: (await w.fresh.user()).uuid, role: 'PROJECT.MEMBER' })

// ---- offering users, keys, accounts and per-user limits: their targets ----
const KEEPS = JSON.stringify({ service_provider_can_create_offering_user: true })

/** A fresh offering of the provider (managed by offeringManager) that keeps user accounts. */
async function keepingOffering(w: World) {
  const o = await w.fresh.offering()
  await w.t.ctx.db.updateTable('offerings').set({ plugin_options: KEEPS }).where('id', '=', o.id).execute()
  return o
}

/** An account (Requested) of the member on a fresh offering of the provider; its uuid. */
async function memberAccount(w: World): Promise<string> {
  const o = await keepingOffering(w)
  const r = await call(w.t.app, 'POST', '/api/marketplace-offering-users/', {
    token: w.users.staff.token,
    body: { offering: o.url, user_uuid: w.users.member.uuid },
  })
  if (r.status !== 201) throw new Error(`offering user fixture: ${r.status} ${r.text}`)
  return r.body.uuid as string
}

/** An account of a fresh user on the world offering: its URL. */
async function worldAccount(w: World): Promise<string> {
  const now = w.t.ctx.clock().toISOString()
  const user = await w.fresh.user()
  const uuid = w.t.ctx.newUuid()
  await w.t.ctx.db
    .insertInto('offering_users')
    .values({
      uuid,
      offering_id: w.offering.id,
      user_id: user.id,
      username: `acct-${uuid.slice(-12)}`,
      state: 'OK',
      created: now,
      modified: now,
    })
    .execute()
  return `http://localhost:80/api/marketplace-offering-users/${uuid}/`
}

/** A body of a new per-user limit on the world resource: a fresh account, the offering's `cpu`. */
const limitBody = async (w: World) => ({
  resource: `/api/marketplace-resources/${w.resource.uuid}/`,
  component: 'cpu',
  user: await worldAccount(w),
  limit: '10',
})

/** A per-user limit on the world resource, made by staff; its uuid. */
async function worldLimit(w: World): Promise<string> {
  const r = await call(w.t.app, 'POST', '/api/component-user-usage-limits/', {
    token: w.users.staff.token,
    body: await limitBody(w),
  })
  if (r.status !== 201) throw new Error(`limit fixture: ${r.status} ${r.text}`)
  return r.body.uuid as string
}

/** The world resource's usage of `cpu` this month, reported by staff; its uuid. */
async function worldUsage(w: World): Promise<string> {
  const r = await call(w.t.app, 'POST', '/api/marketplace-component-usages/set_usage/', {
    token: w.users.staff.token,
    body: { usages: [{ type: 'cpu', amount: '1.00' }], resource: w.resource.uuid },
  })
  if (r.status !== 201) throw new Error(`usage fixture: ${r.status} ${r.text}`)
  const l = await call(
    w.t.app,
    'GET',
    `/api/marketplace-component-usages/?resource_uuid=${w.resource.uuid}&type=cpu`,
    {
      token: w.users.staff.token,
    },
  )
  return l.body[0].uuid as string
}

/** A fresh account's share of the world usage, reported by staff; its uuid. */
async function worldUserUsage(w: World): Promise<string> {
  const username = `u-${w.t.ctx.newUuid().slice(-12)}`
  const r = await call(
    w.t.app,
    'POST',
    `/api/marketplace-component-usages/${await worldUsage(w)}/set_user_usages/`,
    {
      token: w.users.staff.token,
      body: { usages: [{ username, usage: '1.00' }] },
    },
  )
  if (r.status !== 201) throw new Error(`user usage fixture: ${r.status} ${r.text}`)
  const l = await call(w.t.app, 'GET', `/api/marketplace-component-user-usages/?username=${username}`, {
    token: w.users.staff.token,
  })
  return l.body[0].uuid as string
}

/** A key of the member; its uuid. */
async function memberKey(w: World): Promise<string> {
  const k = ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDXdfpu1exevZTxz/b4+ECblTgZGandW7yStuEctNvhT m']
  const r = await call(w.t.app, 'POST', '/api/keys/', {
    token: w.users.member.token,
    body: { name: `k-${w.t.ctx.newUuid()}`, public_key: k[0] },
  })
  if (r.status !== 201) throw new Error(`key fixture: ${r.status} ${r.text}`)
  return r.body.uuid as string
}

/** The service provider of the provider organization (made on first use); its uuid. */
async function serviceProvider(w: World): Promise<string> {
  const db = w.t.ctx.db
  const found = await db
    .selectFrom('service_providers')
    .select('uuid')
    .where('customer_id', '=', w.provider.id)
    .executeTakeFirst()
  if (found) return found.uuid
  const now = w.t.ctx.clock().toISOString()
  const uuid = w.t.ctx.newUuid()
  await db
    .insertInto('service_providers')
    .values({ uuid, customer_id: w.provider.id, image: null, created: now, modified: now })
    .execute()
  return uuid
}

/** A project service account of the consumer project; its uuid. */
async function serviceAccount(w: World): Promise<string> {
  const now = w.t.ctx.clock().toISOString()
  const uuid = w.t.ctx.newUuid()
  await w.t.ctx.db
    .insertInto('project_service_accounts')
    .values({ uuid, project_id: w.project.id, username: 'robot', created: now, modified: now })
    .execute()
  return uuid
}

//      anon outs memb mngr admn ownr prov ofmg supp staf
// prettier-ignore
export const rows: Row[] = [
  // ---- directory ----
  row(e(401, 200, 200, 200, 200, 200, 200, 200, 200, 200), 'GET /api/users/'),
  row(e(401, 200, 200, 200, 200, 200, 200, 200, 200, 200), 'GET /api/users/me/'),
  row(e(401, 200, 200, 200, 200, 200, 200, 200, 200, 200), 'GET /api/version/'),
  row(e(401, 403, 403, 403, 403, 403, 403, 403, 403, 201), 'POST /api/users/', { body: newUserBody }),
  // Another user's pending e-mail: only staff confirm it (without a token); the user itself needs
  // the token sent to the address (test/http/email-confirmation.test.ts).
  row(e(401, 404, 404, 404, 404, 404, 404, 404, 403, 200), 'POST /api/users/{uuid}/confirm_email/', { on: async (w) => {
      const u = await w.fresh.user()
      await w.t.ctx.db.updateTable('users').set({ pending_email: 'new@matrix.example' }).where('id', '=', u.id).execute()
      return u.uuid
    } }),
  row(e(401, 404, 200, 200, 200, 200, 404, 404, 200, 200), 'GET /api/customers/{uuid}/', { on: (w) => w.customer.uuid }),
  row(e(401, 404, 403, 403, 403, 200, 404, 404, 403, 200), 'PATCH /api/customers/{uuid}/', { on: (w) => w.customer.uuid, body: { email: 'matrix@example.com' } }),
  row(e(401, 403, 403, 403, 403, 403, 403, 403, 403, 201), 'POST /api/customers/', { body: { name: 'Matrix new' } }),
  row(e(401, 404, 404, 404, 404, 404, 404, 404, 403, 204), 'DELETE /api/customers/{uuid}/', { on: async (w) => (await w.fresh.customer()).uuid }),
  row(e(401, 404, 200, 200, 200, 200, 404, 404, 200, 200), 'GET /api/projects/{uuid}/', { on: (w) => w.project.uuid }),
  row(e(401, 404, 403, 200, 403, 200, 404, 404, 403, 200), 'PATCH /api/projects/{uuid}/', { on: (w) => w.project.uuid, body: { description: 'matrix' } }),
  row(e(401, 400, 403, 403, 403, 201, 400, 400, 403, 201), 'POST /api/projects/', { body: (w) => ({ name: 'Matrix new project', customer: w.customer.url }) }),
  row(e(401, 404, 404, 404, 404, 204, 404, 404, 403, 204), 'DELETE /api/projects/{uuid}/', { on: async (w) => (await w.fresh.project()).uuid }),
  row(e(401, 404, 403, 201, 201, 201, 404, 404, 403, 201), 'POST /api/projects/{uuid}/add_user/', { on: (w) => w.project.uuid, body: memberGrant }),
  row(e(401, 404, 403, 400, 400, 400, 404, 404, 403, 400), 'POST /api/projects/{uuid}/add_user/ (role already held)', { on: (w) => w.project.uuid, body: (w) => ({ user: w.users.member.uuid, role: 'PROJECT.MEMBER' }) }),
  row(e(401, 404, 200, 200, 200, 200, 404, 404, 200, 200), 'GET /api/customers/{uuid}/list_users/', { on: (w) => w.customer.uuid }),
  row(e(401, 200, 200, 200, 200, 200, 200, 200, 200, 200), 'GET /api/roles/'),
  row(e(401, 403, 403, 403, 403, 403, 403, 403, 403, 201), 'POST /api/organization-groups/', { body: { name: 'Matrix group' } }),

  // ---- catalog ----
  row(e(401, 200, 200, 200, 200, 200, 200, 200, 200, 200), 'GET /api/marketplace-categories/'),
  row(e(401, 403, 403, 403, 403, 403, 403, 403, 403, 201), 'POST /api/marketplace-categories/', { body: { title: 'Matrix' } }),
  row(e(401, 200, 200, 200, 200, 200, 200, 200, 200, 200), 'GET /api/marketplace-provider-offerings/{uuid}/ (active, shared)', { on: (w) => w.offering.uuid }),
  row(e(401, 404, 404, 404, 404, 404, 200, 200, 200, 200), 'GET /api/marketplace-provider-offerings/{uuid}/ (draft)', { on: async (w) => (await w.fresh.offering('Draft')).uuid }),
  row(e(401, 403, 403, 403, 403, 403, 200, 200, 403, 200), 'PATCH /api/marketplace-provider-offerings/{uuid}/', { on: async (w) => (await w.fresh.offering()).uuid, body: { description: 'matrix' } }),
  row(e(401, 403, 403, 403, 403, 403, 200, 200, 403, 200), 'POST /api/marketplace-provider-offerings/{uuid}/pause/', { on: async (w) => (await w.fresh.offering()).uuid }),
  row(e(401, 403, 403, 403, 403, 403, 201, 403, 403, 201), 'POST /api/marketplace-provider-offerings/{uuid}/add_user/', { on: async (w) => (await w.fresh.offering()).uuid, body: async (w) => ({ user: (await w.fresh.user()).uuid, role: 'OFFERING.MANAGER' }) }),
  row(e(401, 403, 403, 403, 403, 403, 201, 201, 403, 201), 'POST /api/marketplace-provider-offerings/{uuid}/create_offering_component/', { on: async (w) => (await w.fresh.offering()).uuid, body: { billing_type: 'usage', type: 'cpu', name: 'CPU' } }),
  row(e(401, 403, 403, 403, 403, 403, 200, 200, 403, 200), 'POST /api/marketplace-provider-offerings/{uuid}/update_offering_component/', { on: (w) => w.offering.uuid, body: async (w) => ({ uuid: await w.fresh.component(w.offering.uuid), name: 'Matrix' }) }),
  // The path is made before the body for each caller: the body names the component of the offering just made.
  row(e(401, 403, 403, 403, 403, 403, 200, 200, 403, 200), 'POST /api/marketplace-provider-offerings/{uuid}/remove_offering_component/', { on: async (w) => { const o = await w.fresh.offering(); removable = await w.fresh.component(o.uuid); return o.uuid }, body: () => ({ uuid: removable }) }),
  row(e(401, 403, 403, 403, 403, 403, 400, 400, 403, 400), 'POST /api/marketplace-provider-offerings/{uuid}/remove_offering_component/ (offering with resources)', { on: (w) => w.offering.uuid, body: async (w) => ({ uuid: await w.fresh.component(w.offering.uuid) }) }),
  row(e(401, 200, 200, 200, 200, 200, 200, 200, 200, 200), 'GET /api/marketplace-plans/{uuid}/', { on: (w) => w.plan.uuid }),
  row(e(401, 403, 403, 403, 403, 403, 200, 200, 403, 200), 'POST /api/marketplace-plans/{uuid}/update_prices/', { on: (w) => w.plan.uuid, body: { prices: {} } }),
  row(e(401, 403, 403, 403, 403, 403, 200, 200, 403, 200), 'POST /api/marketplace-plans/{uuid}/update_quotas/', { on: (w) => w.plan.uuid, body: { quotas: {} } }),
  row(e(401, 403, 403, 403, 403, 403, 200, 200, 403, 200), 'POST /api/marketplace-plans/{uuid}/update_organization_groups/', { on: (w) => w.plan.uuid, body: { organization_groups: [] } }),
  row(e(401, 403, 403, 403, 403, 403, 200, 200, 403, 200), 'POST /api/marketplace-plans/{uuid}/delete_organization_groups/', { on: (w) => w.plan.uuid }),
  row(e(401, 200, 200, 200, 200, 200, 200, 200, 200, 200), 'GET /api/marketplace-plan-components/'),
  row(e(401, 404, 200, 200, 200, 200, 200, 200, 200, 200), 'GET /api/marketplace-resources/{uuid}/', { on: (w) => w.resource.uuid }),

  // ---- the provider's view of resources: the provider organization's people and the offering's
  // managers act (support only reads); consumers do not see it; flags and slug are staff's ----
  row(e(401, 404, 404, 404, 404, 404, 200, 200, 200, 200), 'GET /api/marketplace-provider-resources/{uuid}/', { on: (w) => w.resource.uuid }),
  row(e(401, 404, 404, 404, 404, 404, 200, 200, 200, 200), 'GET /api/marketplace-provider-resources/{uuid}/team/', { on: (w) => w.resource.uuid }),
  row(e(401, 404, 404, 404, 404, 404, 200, 200, 403, 200), 'POST /api/marketplace-provider-resources/{uuid}/set_backend_id/', { on: (w) => w.fresh.resource(), body: (w) => ({ backend_id: `matrix-${w.t.ctx.newUuid()}` }) }),
  row(e(401, 404, 404, 404, 404, 404, 200, 200, 403, 200), 'POST /api/marketplace-provider-resources/{uuid}/set_effective_id/', { on: (w) => w.fresh.resource(), body: { effective_id: 'matrix-1' } }),
  row(e(401, 404, 404, 404, 404, 404, 200, 200, 403, 200), 'POST /api/marketplace-provider-resources/{uuid}/set_limits/', { on: (w) => w.fresh.resource(), body: { limits: { cpu: 1 } } }),
  row(e(401, 404, 404, 404, 404, 404, 200, 200, 403, 200), 'POST /api/marketplace-provider-resources/{uuid}/set_backend_metadata/', { on: (w) => w.fresh.resource(), body: { backend_metadata: { qos: 'normal' } } }),
  row(e(401, 404, 404, 404, 404, 404, 200, 200, 403, 200), 'POST /api/marketplace-provider-resources/{uuid}/set_endpoints/', { on: (w) => w.fresh.resource(), body: { endpoints: [] } }),
  row(e(401, 404, 404, 404, 404, 404, 200, 200, 403, 200), 'POST /api/marketplace-provider-resources/{uuid}/submit_report/', { on: (w) => w.fresh.resource(), body: { report: [] } }),
  row(e(401, 404, 404, 404, 404, 404, 200, 200, 403, 200), 'POST /api/marketplace-provider-resources/{uuid}/refresh_last_sync/', { on: (w) => w.fresh.resource() }),
  row(e(401, 404, 404, 404, 404, 404, 200, 200, 403, 200), 'POST /api/marketplace-provider-resources/{uuid}/set_as_ok/', { on: (w) => w.fresh.resource('Erred') }),
  row(e(401, 404, 404, 404, 404, 404, 200, 200, 403, 200), 'POST /api/marketplace-provider-resources/{uuid}/set_state_ok/', { on: (w) => w.fresh.resource('Creating') }),
  row(e(401, 404, 404, 404, 404, 404, 409, 409, 403, 409), 'POST /api/marketplace-provider-resources/{uuid}/set_state_ok/ (already OK)', { on: (w) => w.fresh.resource() }),
  row(e(401, 404, 404, 404, 404, 404, 200, 200, 403, 200), 'POST /api/marketplace-provider-resources/{uuid}/set_as_erred/', { on: (w) => w.fresh.resource(), body: { error_message: 'down' } }),
  row(e(401, 404, 404, 404, 404, 404, 409, 409, 403, 409), 'POST /api/marketplace-provider-resources/{uuid}/set_membership_sync_statuses/ (offering not opted in)', { on: (w) => w.fresh.resource(), body: { statuses: [] } }),
  row(e(401, 404, 404, 404, 404, 404, 200, 200, 200, 200), 'POST /api/marketplace-provider-resources/{uuid}/set_end_date_by_provider/', { on: (w) => w.fresh.resource(), body: { end_date: null } }),
  row(e(401, 403, 403, 403, 403, 403, 403, 403, 403, 200), 'POST /api/marketplace-provider-resources/{uuid}/set_paused/', { on: (w) => w.fresh.resource(), body: { paused: true } }),
  row(e(401, 403, 403, 403, 403, 403, 403, 403, 403, 200), 'POST /api/marketplace-provider-resources/{uuid}/set_downscaled/', { on: (w) => w.fresh.resource(), body: { downscaled: true } }),
  row(e(401, 403, 403, 403, 403, 403, 403, 403, 403, 200), 'POST /api/marketplace-provider-resources/{uuid}/set_restrict_member_access/', { on: (w) => w.fresh.resource(), body: { restrict_member_access: true } }),
  row(e(401, 403, 403, 403, 403, 403, 403, 403, 403, 200), 'POST /api/marketplace-provider-resources/{uuid}/set_slug/', { on: (w) => w.fresh.resource(), body: { slug: `matrix-slug` } }),

  // ---- payment profiles, support, cost policies ----
  row(e(401, 403, 403, 403, 403, 403, 403, 403, 403, 201), 'POST /api/payment-profiles/', { body: (w) => ({ name: 'Matrix profile', organization: w.customer.url, payment_type: 'invoices' }) }),
  row(e(401, 404, 404, 404, 404, 200, 404, 404, 200, 200), 'GET /api/payment-profiles/{uuid}/ (active)', { on: (w) => w.fresh.paymentProfile() }),
  row(e(401, 403, 403, 403, 403, 403, 403, 403, 403, 200), 'POST /api/payment-profiles/{uuid}/enable/', { on: (w) => w.fresh.paymentProfile() }),
  row(e(401, 403, 403, 403, 403, 403, 403, 403, 201, 201), 'POST /api/support-issues/', { body: (w) => ({ summary: 'Matrix issue', customer: w.customer.url }) }),
  row(e(401, 403, 403, 403, 403, 403, 403, 403, 200, 200), 'GET /api/support-feedbacks/'),
  row(e(401, 400, 400, 400, 400, 400, 201, 201, 400, 201), 'POST /api/marketplace-offering-estimated-cost-policies/', { body: (w) => ({ scope: w.offering.url, actions: 'notify_organization_owners', limit_cost: 100, apply_to_all: true }) }),
  row(e(401, 200, 200, 200, 200, 200, 200, 200, 200, 200), 'GET /api/marketplace-offering-estimated-cost-policies/actions/'),

  // ---- orders ----
  row(e(401, 400, 201, 201, 201, 201, 400, 400, 403, 201), 'POST /api/marketplace-orders/', { body: (w) => ({ offering: w.offering.url, plan: w.plan.url, project: w.project.url }) }),
  row(e(401, 404, 200, 200, 200, 200, 200, 200, 200, 200), 'GET /api/marketplace-orders/{uuid}/', { on: (w) => w.fresh.order('manager') }),
  row(e(401, 404, 403, 403, 403, 200, 403, 403, 403, 200), 'POST /api/marketplace-orders/{uuid}/approve_by_consumer/', { on: (w) => w.fresh.order('manager') }),
  row(e(401, 404, 403, 403, 403, 403, 200, 200, 403, 200), 'POST /api/marketplace-orders/{uuid}/approve_by_provider/', { on: (w) => w.fresh.order('owner') }),
  row(e(401, 404, 403, 403, 403, 403, 200, 200, 403, 200), 'POST /api/marketplace-orders/{uuid}/reject_by_provider/', { on: (w) => w.fresh.order('owner') }),
  row(e(401, 404, 403, 403, 403, 403, 200, 200, 403, 200), 'POST /api/marketplace-orders/{uuid}/set_backend_id/', { on: (w) => w.fresh.order('owner'), body: { backend_id: 'b-1' } }),
  row(e(401, 404, 403, 204, 204, 204, 403, 403, 403, 204), 'DELETE /api/marketplace-orders/{uuid}/', { on: (w) => w.fresh.order('manager') }),
  row(e(401, 403, 403, 403, 403, 403, 403, 403, 403, 204), 'POST /api/marketplace-orders/{uuid}/unlink/', { on: (w) => w.fresh.order('manager') }),

  // ---- site agents: the offering's owners and managers manage; consumers do not see ----
  row(e(401, 403, 403, 403, 403, 403, 201, 201, 403, 201), 'POST /api/marketplace-site-agent-identities/', { body: (w) => ({ name: `m-${w.t.ctx.newUuid().slice(0, 8)}`, offering: w.offering.url }) }),
  row(e(401, 404, 404, 404, 404, 404, 200, 200, 200, 200), 'GET /api/marketplace-site-agent-services/{uuid}/', { on: (w) => w.fresh.agentService() }),
  row(e(401, 404, 404, 404, 404, 404, 200, 200, 403, 200), 'POST /api/marketplace-site-agent-services/{uuid}/set_statistics/', { on: (w) => w.fresh.agentService(), body: { statistics: { jobs: 1 } } }),
  row(e(401, 404, 404, 404, 404, 404, 201, 201, 403, 201), 'POST /api/marketplace-site-agent-services/{uuid}/register_processor/', { on: (w) => w.fresh.agentService(), body: { name: 'p', backend_type: 'SLURM' } }),
  row(e(401, 404, 404, 404, 404, 404, 204, 204, 403, 204), 'DELETE /api/marketplace-site-agent-services/{uuid}/', { on: (w) => w.fresh.agentService() }),
  row(e(401, 403, 403, 403, 403, 403, 403, 403, 403, 200), 'POST /api/marketplace-site-agent-services/cleanup_stale/', { body: { dry_run: true } }),
  row(e(401, 403, 403, 403, 403, 403, 403, 403, 200, 200), 'GET /api/marketplace-site-agent-stats/'),
  row(e(401, 404, 404, 404, 404, 404, 201, 201, 403, 201), 'POST /api/marketplace-site-agent-identities/{uuid}/register_event_subscription/', { on: (w) => w.fresh.agentIdentity(), body: { observable_object_type: 'order' } }),

  // ---- event subscriptions: their user's; staff and support read all; only the user makes queues
  // (503 here: the matrix runs without RabbitMQ) ----
  row(e(401, 404, 404, 404, 404, 404, 404, 200, 200, 200), 'GET /api/event-subscriptions/{uuid}/', { on: (w) => w.fresh.eventSubscription() }),
  row(e(401, 404, 404, 404, 404, 404, 404, 503, 403, 403), 'POST /api/event-subscriptions/{uuid}/create_queue/', { on: (w) => w.fresh.eventSubscription(), body: (w) => ({ offering_uuid: w.offering.uuid, object_type: 'order' }) }),
  row(e(401, 404, 404, 404, 404, 404, 404, 204, 403, 204), 'DELETE /api/event-subscriptions/{uuid}/', { on: (w) => w.fresh.eventSubscription() }),

  // ---- backend resource requests: staff create; the offering's side acts; others 403 ----
  row(e(401, 403, 403, 403, 403, 403, 403, 403, 403, 201), 'POST /api/backend-resource-requests/', { body: (w) => ({ offering: w.offering.uuid }) }),
  row(e(401, 403, 403, 403, 403, 403, 200, 200, 403, 200), 'POST /api/backend-resource-requests/{uuid}/start_processing/', { on: (w) => w.fresh.backendRequest() }),
  row(e(401, 403, 403, 403, 403, 403, 200, 200, 403, 200), 'POST /api/backend-resource-requests/{uuid}/set_done/', { on: (w) => w.fresh.backendRequest('Processing') }),

  // ---- invitations and permission requests: managing needs the scope's create-permission right
  // (customer owner, staff); others get 404 on an invitation's actions (reference §5.3). Private
  // invitations are listed to those who manage their scope; requests to the requester and managers.
  row(e(401, 403, 403, 403, 403, 201, 403, 403, 403, 201), 'POST /api/user-group-invitations/ (customer scope)', { body: async (w) => ({ role: await roleUuid(w.t.ctx, 'CUSTOMER.MANAGER'), scope: w.customer.url }) }),
  row(e(401, 403, 403, 403, 403, 400, 403, 403, 403, 201), 'POST /api/user-group-invitations/ (public)', { body: async (w) => ({ role: await roleUuid(w.t.ctx, 'PROJECT.MEMBER'), scope: w.customer.url, is_public: true, auto_create_project: true }) }),
  row(e(404, 404, 200, 200, 200, 200, 404, 404, 200, 200), 'GET /api/user-group-invitations/{uuid}/ (private)', { on: (w) => w.fresh.invitation() }),
  row(e(404, 404, 200, 200, 200, 200, 404, 404, 200, 200), 'GET /api/user-group-invitations/{uuid}/ (private, project scope)', { on: (w) => w.fresh.invitation('project') }),
  row(e(404, 404, 200, 200, 200, 200, 404, 404, 200, 200), 'GET /api/user-group-invitations/{uuid}/projects/ (private)', { on: (w) => w.fresh.invitation() }),
  row(e(200, 200, 200, 200, 200, 200, 200, 200, 200, 200), 'GET /api/user-group-invitations/{uuid}/ (public)', { on: (w) => w.fresh.invitation('project', { public: true }) }),
  row(e(401, 404, 404, 404, 404, 200, 404, 404, 404, 200), 'POST /api/user-group-invitations/{uuid}/cancel/', { on: (w) => w.fresh.invitation() }),
  row(e(401, 200, 400, 200, 200, 200, 200, 200, 200, 200), 'POST /api/user-group-invitations/{uuid}/submit_request/', { on: (w) => w.fresh.invitation('project') }),
  row(e(401, 404, 404, 404, 404, 200, 404, 404, 404, 200), 'POST /api/user-permission-requests/{uuid}/approve/', { on: (w) => w.fresh.permissionRequest() }),

  // ---- cloud: staff run the settings; the consumer project's managers, admins and owner manage
  // its resources, members see them; routers follow reference §11: whoever sees the tenant or
  // router may act on it; unlink is staff only ----
  row(e(401, 403, 403, 403, 403, 403, 403, 403, 403, 201), 'POST /api/service-settings/', { body: { name: 'Matrix settings', type: 'cloudA', shared: true } }),
  row(e(401, 400, 400, 201, 201, 201, 400, 400, 400, 201), 'POST /api/cloudA-public-ips/', { body: async (w) => {
      const a = await w.fresh.cloudA()
      return { name: 'matrix-ip', service_settings: a.settings, project: w.project.url, location: a.location, resource_group: a.group }
    } }),
  row(e(401, 404, 200, 200, 200, 200, 404, 404, 200, 200), 'GET /api/cloudA-public-ips/{uuid}/', { on: (w) => w.fresh.publicIp() }),
  row(e(401, 404, 403, 200, 200, 200, 404, 404, 403, 200), 'PATCH /api/cloudA-public-ips/{uuid}/', { on: (w) => w.fresh.publicIp(), body: { description: 'matrix' } }),
  row(e(401, 404, 403, 204, 204, 204, 404, 404, 403, 204), 'DELETE /api/cloudA-public-ips/{uuid}/', { on: (w) => w.fresh.publicIp() }),
  row(e(401, 403, 403, 403, 403, 403, 403, 403, 403, 204), 'POST /api/cloudA-public-ips/{uuid}/unlink/', { on: (w) => w.fresh.publicIp() }),
  row(e(401, 404, 200, 200, 200, 200, 404, 404, 200, 200), 'GET /api/cloudB-floating-ips/{uuid}/', { on: (w) => w.fresh.floatingIp() }),
  row(e(401, 404, 403, 200, 200, 200, 404, 404, 403, 200), 'POST /api/cloudB-floating-ips/{uuid}/update_description/', { on: (w) => w.fresh.floatingIp(), body: { description: 'matrix' } }),
  row(e(401, 400, 201, 201, 201, 201, 400, 400, 201, 201), 'POST /api/cloudB-routers/', { body: async (w) => ({ tenant: await w.fresh.tenant(), name: 'matrix-router' }) }),
  row(e(401, 404, 200, 200, 200, 200, 404, 404, 200, 200), 'POST /api/cloudB-routers/{uuid}/set_routes/', { on: (w) => w.fresh.router(), body: { routes: [] } }),

  // ---- offering users: the user sees its own account; the provider side (customer roles of the
  // offering's organization, offering managers) sees and manages it; support reads ----
  row(e(401, 404, 200, 404, 404, 404, 200, 200, 200, 200), 'GET /api/marketplace-offering-users/{uuid}/', { on: memberAccount }),
  row(e(401, 403, 403, 403, 403, 403, 201, 201, 403, 201), 'POST /api/marketplace-offering-users/', { body: async (w) => ({ offering: (await keepingOffering(w)).url, user_uuid: (await w.fresh.user()).uuid }) }),
  row(e(401, 404, 403, 404, 404, 404, 200, 200, 403, 200), 'PATCH /api/marketplace-offering-users/{uuid}/', { on: memberAccount, body: { username: 'matrix' } }),
  row(e(401, 404, 403, 404, 404, 404, 204, 204, 403, 204), 'DELETE /api/marketplace-offering-users/{uuid}/', { on: memberAccount }),
  row(e(401, 404, 403, 404, 404, 404, 200, 200, 403, 200), 'POST /api/marketplace-offering-users/{uuid}/begin_creating/', { on: memberAccount }),
  row(e(401, 404, 403, 404, 404, 404, 200, 200, 403, 200), 'POST /api/marketplace-offering-users/{uuid}/set_error_creating/', { on: memberAccount }),
  row(e(401, 404, 403, 404, 404, 404, 200, 200, 403, 200), 'POST /api/marketplace-offering-users/{uuid}/update_restricted/', { on: memberAccount, body: { is_restricted: true } }),
  row(e(401, 404, 403, 404, 404, 404, 200, 200, 403, 200), 'PATCH /api/marketplace-offering-users/{uuid}/update_comments/', { on: memberAccount, body: { service_provider_comment: 'm' } }),
  row(e(401, 200, 200, 200, 200, 200, 200, 200, 200, 200), 'GET /api/marketplace-provider-offerings/{uuid}/user-attribute-config/', { on: (w) => w.offering.uuid }),
  row(e(401, 403, 403, 403, 403, 403, 200, 200, 403, 200), 'POST /api/marketplace-provider-offerings/{uuid}/update-user-attribute-config/', { on: async (w) => (await w.fresh.offering()).uuid, body: { expose_email: false } }),
  row(e(401, 403, 403, 403, 403, 403, 204, 204, 403, 204), 'DELETE /api/marketplace-provider-offerings/{uuid}/delete-user-attribute-config/', { on: async (w) => (await w.fresh.offering()).uuid }),
  row(e(401, 403, 403, 403, 403, 403, 200, 200, 200, 200), 'GET /api/marketplace-provider-offerings/{uuid}/list_project_service_accounts/', { on: (w) => w.offering.uuid }),
  row(e(401, 403, 403, 403, 403, 403, 200, 200, 200, 200), 'GET /api/marketplace-provider-offerings/{uuid}/list_course_accounts/', { on: (w) => w.offering.uuid }),
  row(e(401, 404, 200, 200, 200, 200, 200, 200, 200, 200), 'GET /api/marketplace-project-service-accounts/{uuid}/', { on: serviceAccount }),

  // ---- SSH keys: each user its own; the provider side reads its resources' users' keys ----
  row(e(401, 201, 201, 201, 201, 201, 201, 201, 201, 201), 'POST /api/keys/', { body: (w) => ({ name: `m-${w.t.ctx.newUuid().slice(0, 8)}`, public_key: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDXdfpu1exevZTxz/b4+ECblTgZGandW7yStuEctNvhT m' }) }),
  row(e(401, 404, 200, 404, 404, 404, 404, 404, 200, 200), 'GET /api/keys/{uuid}/', { on: memberKey }),
  row(e(401, 404, 204, 404, 404, 404, 404, 404, 403, 204), 'DELETE /api/keys/{uuid}/', { on: memberKey }),
  row(e(401, 403, 403, 403, 403, 403, 200, 200, 200, 200), 'GET /api/marketplace-service-providers/{uuid}/keys/', { on: serviceProvider }),

  // ---- per-user component limits: the resource's sides see them; project managers, owners of
  // the consumer or of the provider set them ----
  row(e(401, 404, 200, 200, 200, 200, 200, 200, 200, 200), 'GET /api/component-user-usage-limits/{uuid}/', { on: worldLimit }),
  row(e(401, 400, 403, 201, 403, 201, 201, 403, 403, 201), 'POST /api/component-user-usage-limits/', { body: limitBody }),
  row(e(401, 404, 403, 200, 403, 200, 200, 403, 403, 200), 'PATCH /api/component-user-usage-limits/{uuid}/', { on: worldLimit, body: { limit: '5' } }),
  row(e(401, 404, 403, 204, 403, 204, 204, 403, 403, 204), 'DELETE /api/component-user-usage-limits/{uuid}/', { on: worldLimit }),

  // ---- reported usage: the resource's sides read it; its provider side (owners and managers of
  // the offering's organization, the offering's managers) and staff report it ----
  row(e(401, 404, 200, 200, 200, 200, 200, 200, 200, 200), 'GET /api/marketplace-component-usages/{uuid}/', { on: worldUsage }),
  row(e(401, 403, 403, 403, 403, 403, 201, 201, 403, 201), 'POST /api/marketplace-component-usages/set_usage/', { body: (w) => ({ usages: [{ type: 'cpu', amount: '2.00', recurring: false }], resource: w.resource.uuid.replace(/-/g, '') }) }),
  row(e(401, 404, 403, 403, 403, 403, 201, 201, 403, 201), 'POST /api/marketplace-component-usages/{uuid}/set_user_usages/', { on: worldUsage, body: { usages: [{ username: 'matrix', usage: '1.00' }] } }),
  row(e(401, 404, 403, 403, 403, 403, 201, 201, 403, 201), 'POST /api/marketplace-component-usages/{uuid}/set_user_usage/', { on: worldUsage, body: { username: 'matrix', usage: '1.00' } }),
  row(e(401, 404, 200, 200, 200, 200, 200, 200, 200, 200), 'GET /api/marketplace-component-user-usages/{uuid}/', { on: worldUserUsage }),
  // ---- events: everyone signed in reads them (each only those of what it sees: see the lists) ----
  row(e(401, 200, 200, 200, 200, 200, 200, 200, 200, 200), 'GET /api/events/'),
  row(e(401, 200, 200, 200, 200, 200, 200, 200, 200, 200), 'GET /api/events/stream/'),
]

/** The events list past the events there are now, and the object `on` gives (whose events it lists). */
function eventsOf(on: Target) {
  return async (w: World) => {
    const from = await eventsHead(w.t.ctx)
    return { url: `/api/events/?after=${from}&page_size=300`, uuid: await on(w) }
  }
}

/** A project member granted on the consumer project just now: the grant's event is about the project. */
async function freshGrant(w: World): Promise<string> {
  const user = await w.fresh.user()
  const r = await call(w.t.app, 'POST', `/api/projects/${w.project.uuid}/add_user/`, {
    token: w.users.staff.token,
    body: { user: user.uuid, role: 'PROJECT.MEMBER' },
  })
  if (r.status !== 201) throw new Error(`add_user: ${r.status} ${r.text}`)
  return String(r.body.uuid)
}

// v(...) columns: anon outs memb mngr admn ownr prov ofmg supp staf
// prettier-ignore
export const lists: ListRow[] = [
  list(v(0, 0, 1, 1, 1, 1, 0, 0, 1, 1), 'GET /api/customers/', (w) => w.customer.uuid, 'name=Matrix consumer'),
  list(v(0, 0, 1, 1, 1, 1, 0, 0, 1, 1), 'GET /api/projects/', (w) => w.project.uuid, 'name=Matrix project'),
  list(v(0, 0, 1, 1, 1, 1, 1, 1, 1, 1), 'GET /api/marketplace-resources/', (w) => w.resource.uuid),
  list(v(0, 0, 0, 0, 0, 0, 1, 1, 1, 1), 'GET /api/marketplace-provider-resources/', (w) => w.resource.uuid),
  list(v(0, 0, 0, 0, 0, 0, 1, 1, 1, 1), 'GET /api/marketplace-provider-offerings/ (draft)', async (w) => (await w.fresh.offering('Draft')).uuid),
  list(v(0, 0, 0, 0, 0, 1, 0, 0, 1, 1), 'GET /api/payment-profiles/', (w) => w.fresh.paymentProfile()),
  list(v(0, 0, 0, 0, 0, 0, 1, 1, 1, 1), 'GET /api/marketplace-offering-estimated-cost-policies/', (w) => w.fresh.costPolicy()),
  list(v(0, 0, 1, 1, 1, 1, 1, 1, 1, 1), 'GET /api/marketplace-orders/', (w) => w.fresh.order('manager')),
  list(v(0, 0, 0, 0, 0, 0, 1, 1, 1, 1), 'GET /api/marketplace-site-agent-services/', (w) => w.fresh.agentService()),
  list(v(0, 0, 0, 0, 0, 0, 0, 1, 1, 1), 'GET /api/event-subscriptions/', (w) => w.fresh.eventSubscription()),
  list(v(0, 0, 0, 0, 0, 0, 1, 1, 1, 1), 'GET /api/backend-resource-requests/', (w) => w.fresh.backendRequest()),
  list(v(0, 0, 0, 0, 0, 1, 0, 0, 1, 1), 'GET /api/user-group-invitations/ (private, customer scope)', (w) => w.fresh.invitation()),
  list(v(1, 1, 1, 1, 1, 1, 1, 1, 1, 1), 'GET /api/user-group-invitations/ (public)', (w) => w.fresh.invitation('project', { public: true })),
  list(v(0, 0, 0, 0, 0, 1, 0, 0, 1, 1), 'GET /api/user-permission-requests/', (w) => w.fresh.permissionRequest()),
  list(v(0, 0, 1, 1, 1, 1, 0, 0, 1, 1), 'GET /api/cloudA-public-ips/', (w) => w.fresh.publicIp()),
  list(v(0, 0, 1, 1, 1, 1, 0, 0, 1, 1), 'GET /api/cloudB-floating-ips/', (w) => w.fresh.floatingIp()),
  list(v(0, 0, 1, 1, 1, 1, 0, 0, 1, 1), 'GET /api/cloudB-routers/', (w) => w.fresh.router()),
  list(v(0, 0, 1, 0, 0, 0, 1, 1, 1, 1), 'GET /api/marketplace-offering-users/', memberAccount),
  list(v(0, 0, 1, 0, 0, 0, 0, 0, 1, 1), 'GET /api/keys/', memberKey),
  list(v(0, 0, 1, 1, 1, 1, 1, 1, 1, 1), 'GET /api/component-user-usage-limits/', worldLimit),
  list(v(0, 0, 1, 1, 1, 1, 1, 1, 1, 1), 'GET /api/marketplace-project-service-accounts/', serviceAccount),
  list(v(0, 0, 1, 1, 1, 1, 1, 1, 1, 1), 'GET /api/marketplace-component-usages/', worldUsage),
  list(v(0, 0, 1, 1, 1, 1, 1, 1, 1, 1), 'GET /api/marketplace-component-user-usages/', worldUserUsage),
  { endpoint: 'GET /api/events/ (of an order)', setup: eventsOf((w) => w.fresh.order('manager')), sees: v(0, 0, 1, 1, 1, 1, 1, 1, 1, 1) },
  { endpoint: 'GET /api/events/ (of a project role grant)', setup: eventsOf(freshGrant), sees: v(0, 0, 1, 1, 1, 1, 0, 0, 1, 1) },
  { endpoint: 'GET /api/events/ (of a private invitation)', setup: eventsOf((w) => w.fresh.invitation()), sees: v(0, 0, 1, 1, 1, 1, 0, 0, 1, 1) },
  { endpoint: 'GET /api/events/ (of a public invitation)', setup: eventsOf((w) => w.fresh.invitation('project', { public: true })), sees: v(0, 1, 1, 1, 1, 1, 1, 1, 1, 1) },
  { endpoint: 'GET /api/events/ (of a cloudA public IP)', setup: eventsOf((w) => w.fresh.publicIp()), sees: v(0, 0, 1, 1, 1, 1, 0, 0, 1, 1) },
  { endpoint: 'GET /api/events/ (of a cloudB floating IP)', setup: eventsOf((w) => w.fresh.floatingIp()), sees: v(0, 0, 1, 1, 1, 1, 0, 0, 1, 1) },
  { endpoint: 'GET /api/events/ (of a cloudB router)', setup: eventsOf((w) => w.fresh.router()), sees: v(0, 0, 1, 1, 1, 1, 0, 0, 1, 1) },
  { endpoint: 'GET /api/events/ (of an offering user)', setup: eventsOf(memberAccount), sees: v(0, 0, 1, 0, 0, 0, 1, 1, 1, 1) },
]
