// THE PERMISSION MATRIX. Each row: an endpoint and the status every caller gets.
// Column order of e(...) and v(...):
//   anon, outsider, member, manager, admin, owner, provider, offeringManager, support, staff
// anon = no token; member/manager/admin = PROJECT.* on the consumer project; owner = CUSTOMER.OWNER
// of the consumer customer; provider = CUSTOMER.OWNER of the provider customer; offeringManager =
// OFFERING.MANAGER of the provider's offering; support = global support; staff = staff.
import type { TestApp } from './support/app.js'
import type { Method } from './support/client.js'
import type { Ref, UserRef } from './support/fixtures.js'

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
    /** A cost policy on the provider's offering; returns its uuid. */
    costPolicy(): Promise<string>
    /** An order of the world offering in the consumer project: by the project manager it waits
     * for the consumer (pending-consumer); by the owner it waits for the provider. */
    order(by: 'manager' | 'owner'): Promise<string>
    /** A site agent identity of the world offering, created by staff; returns its uuid. */
    agentIdentity(): Promise<string>
    /** A service registered under a fresh identity; returns its uuid. */
    agentService(): Promise<string>
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

const roleUuid = async (w: World, name: string) =>
  (await w.t.ctx.db.selectFrom('roles').select('uuid').where('name', '=', name).executeTakeFirstOrThrow())
    .uuid

const newUserBody = async (w: World) => ({ username: `m-${(await w.fresh.user()).uuid.slice(0, 8)}-x` })
const memberGrant = async (w: World) => ({ user: (await w.fresh.user()).uuid, role: 'PROJECT.MEMBER' })

//                                                     anon outs memb mngr admn ownr prov ofmg supp staf
// prettier-ignore
export const rows: Row[] = [
  // ---- directory ----
  { endpoint: 'GET /api/users/', method: 'GET', path: '/api/users/',
    expect: e(401, 200, 200, 200, 200, 200, 200, 200, 200, 200) },
  { endpoint: 'GET /api/users/me/', method: 'GET', path: '/api/users/me/',
    expect: e(401, 200, 200, 200, 200, 200, 200, 200, 200, 200) },
  { endpoint: 'POST /api/users/', method: 'POST', path: '/api/users/', body: newUserBody,
    expect: e(401, 403, 403, 403, 403, 403, 403, 403, 403, 201) },
  // Another user's pending e-mail: only staff confirm it (without a token); the user itself needs
  // the token sent to the address (test/http/email-confirmation.test.ts).
  { endpoint: 'POST /api/users/{uuid}/confirm_email/', method: 'POST',
    path: async (w) => {
      const u = await w.fresh.user()
      await w.t.ctx.db.updateTable('users').set({ pending_email: 'new@matrix.example' }).where('id', '=', u.id).execute()
      return `/api/users/${u.uuid}/confirm_email/`
    },
    expect: e(401, 404, 404, 404, 404, 404, 404, 404, 403, 200) },
  { endpoint: 'GET /api/customers/{uuid}/', method: 'GET', path: (w) => `/api/customers/${w.customer.uuid}/`,
    expect: e(401, 404, 200, 200, 200, 200, 404, 404, 200, 200) },
  { endpoint: 'PATCH /api/customers/{uuid}/', method: 'PATCH', path: (w) => `/api/customers/${w.customer.uuid}/`,
    body: { email: 'matrix@example.com' },
    expect: e(401, 404, 403, 403, 403, 200, 404, 404, 403, 200) },
  { endpoint: 'POST /api/customers/', method: 'POST', path: '/api/customers/', body: { name: 'Matrix new' },
    expect: e(401, 403, 403, 403, 403, 403, 403, 403, 403, 201) },
  { endpoint: 'DELETE /api/customers/{uuid}/', method: 'DELETE', path: async (w) => `/api/customers/${(await w.fresh.customer()).uuid}/`,
    expect: e(401, 404, 404, 404, 404, 404, 404, 404, 403, 204) },
  { endpoint: 'GET /api/projects/{uuid}/', method: 'GET', path: (w) => `/api/projects/${w.project.uuid}/`,
    expect: e(401, 404, 200, 200, 200, 200, 404, 404, 200, 200) },
  { endpoint: 'PATCH /api/projects/{uuid}/', method: 'PATCH', path: (w) => `/api/projects/${w.project.uuid}/`,
    body: { description: 'matrix' },
    expect: e(401, 404, 403, 200, 403, 200, 404, 404, 403, 200) },
  { endpoint: 'POST /api/projects/', method: 'POST', path: '/api/projects/',
    body: (w: World) => ({ name: 'Matrix new project', customer: w.customer.url }),
    expect: e(401, 400, 403, 403, 403, 201, 400, 400, 403, 201) },
  { endpoint: 'DELETE /api/projects/{uuid}/', method: 'DELETE', path: async (w) => `/api/projects/${(await w.fresh.project()).uuid}/`,
    expect: e(401, 404, 404, 404, 404, 204, 404, 404, 403, 204) },
  { endpoint: 'POST /api/projects/{uuid}/add_user/', method: 'POST', path: (w) => `/api/projects/${w.project.uuid}/add_user/`,
    body: memberGrant,
    expect: e(401, 404, 403, 201, 201, 201, 404, 404, 403, 201) },
  { endpoint: 'POST /api/projects/{uuid}/add_user/ (role already held)', method: 'POST', path: (w) => `/api/projects/${w.project.uuid}/add_user/`,
    body: (w: World) => ({ user: w.users.member.uuid, role: 'PROJECT.MEMBER' }),
    expect: e(401, 404, 403, 400, 400, 400, 404, 404, 403, 400) },
  { endpoint: 'GET /api/customers/{uuid}/list_users/', method: 'GET', path: (w) => `/api/customers/${w.customer.uuid}/list_users/`,
    expect: e(401, 404, 200, 200, 200, 200, 404, 404, 200, 200) },
  { endpoint: 'GET /api/roles/', method: 'GET', path: '/api/roles/',
    expect: e(401, 200, 200, 200, 200, 200, 200, 200, 200, 200) },
  { endpoint: 'POST /api/organization-groups/', method: 'POST', path: '/api/organization-groups/', body: { name: 'Matrix group' },
    expect: e(401, 403, 403, 403, 403, 403, 403, 403, 403, 201) },

  // ---- catalog ----
  { endpoint: 'GET /api/marketplace-categories/', method: 'GET', path: '/api/marketplace-categories/',
    expect: e(401, 200, 200, 200, 200, 200, 200, 200, 200, 200) },
  { endpoint: 'POST /api/marketplace-categories/', method: 'POST', path: '/api/marketplace-categories/', body: { title: 'Matrix' },
    expect: e(401, 403, 403, 403, 403, 403, 403, 403, 403, 201) },
  { endpoint: 'GET /api/marketplace-provider-offerings/{uuid}/ (active, shared)', method: 'GET',
    path: (w) => `/api/marketplace-provider-offerings/${w.offering.uuid}/`,
    expect: e(401, 200, 200, 200, 200, 200, 200, 200, 200, 200) },
  { endpoint: 'GET /api/marketplace-provider-offerings/{uuid}/ (draft)', method: 'GET',
    path: async (w) => `/api/marketplace-provider-offerings/${(await w.fresh.offering('Draft')).uuid}/`,
    expect: e(401, 404, 404, 404, 404, 404, 200, 200, 200, 200) },
  { endpoint: 'PATCH /api/marketplace-provider-offerings/{uuid}/', method: 'PATCH',
    path: async (w) => `/api/marketplace-provider-offerings/${(await w.fresh.offering()).uuid}/`, body: { description: 'matrix' },
    expect: e(401, 403, 403, 403, 403, 403, 200, 200, 403, 200) },
  { endpoint: 'POST /api/marketplace-provider-offerings/{uuid}/pause/', method: 'POST',
    path: async (w) => `/api/marketplace-provider-offerings/${(await w.fresh.offering()).uuid}/pause/`,
    expect: e(401, 403, 403, 403, 403, 403, 200, 200, 403, 200) },
  { endpoint: 'POST /api/marketplace-provider-offerings/{uuid}/add_user/', method: 'POST',
    path: async (w) => `/api/marketplace-provider-offerings/${(await w.fresh.offering()).uuid}/add_user/`,
    body: async (w: World) => ({ user: (await w.fresh.user()).uuid, role: 'OFFERING.MANAGER' }),
    expect: e(401, 403, 403, 403, 403, 403, 201, 403, 403, 201) },
  { endpoint: 'GET /api/marketplace-plans/{uuid}/', method: 'GET', path: (w) => `/api/marketplace-plans/${w.plan.uuid}/`,
    expect: e(401, 200, 200, 200, 200, 200, 200, 200, 200, 200) },
  { endpoint: 'GET /api/marketplace-resources/{uuid}/', method: 'GET', path: (w) => `/api/marketplace-resources/${w.resource.uuid}/`,
    expect: e(401, 404, 200, 200, 200, 200, 200, 200, 200, 200) },

  // ---- payment profiles, support, cost policies ----
  { endpoint: 'POST /api/payment-profiles/', method: 'POST', path: '/api/payment-profiles/',
    body: (w: World) => ({ name: 'Matrix profile', organization: w.customer.url, payment_type: 'invoices' }),
    expect: e(401, 403, 403, 403, 403, 403, 403, 403, 403, 201) },
  { endpoint: 'GET /api/payment-profiles/{uuid}/ (active)', method: 'GET', path: async (w) => `/api/payment-profiles/${await w.fresh.paymentProfile()}/`,
    expect: e(401, 404, 404, 404, 404, 200, 404, 404, 200, 200) },
  { endpoint: 'POST /api/payment-profiles/{uuid}/enable/', method: 'POST', path: async (w) => `/api/payment-profiles/${await w.fresh.paymentProfile()}/enable/`,
    expect: e(401, 403, 403, 403, 403, 403, 403, 403, 403, 200) },
  { endpoint: 'POST /api/support-issues/', method: 'POST', path: '/api/support-issues/',
    body: (w: World) => ({ summary: 'Matrix issue', customer: w.customer.url }),
    expect: e(401, 403, 403, 403, 403, 403, 403, 403, 201, 201) },
  { endpoint: 'GET /api/support-feedbacks/', method: 'GET', path: '/api/support-feedbacks/',
    expect: e(401, 403, 403, 403, 403, 403, 403, 403, 200, 200) },
  { endpoint: 'POST /api/marketplace-offering-estimated-cost-policies/', method: 'POST',
    path: '/api/marketplace-offering-estimated-cost-policies/',
    body: (w: World) => ({ scope: w.offering.url, actions: 'notify_organization_owners', limit_cost: 100, apply_to_all: true }),
    expect: e(401, 400, 400, 400, 400, 400, 201, 201, 400, 201) },
  { endpoint: 'GET /api/marketplace-offering-estimated-cost-policies/actions/', method: 'GET',
    path: '/api/marketplace-offering-estimated-cost-policies/actions/',
    expect: e(401, 200, 200, 200, 200, 200, 200, 200, 200, 200) },

  // ---- orders ----
  { endpoint: 'POST /api/marketplace-orders/', method: 'POST', path: '/api/marketplace-orders/',
    body: (w: World) => ({ offering: w.offering.url, plan: w.plan.url, project: w.project.url }),
    expect: e(401, 400, 201, 201, 201, 201, 400, 400, 201, 201) },
  { endpoint: 'GET /api/marketplace-orders/{uuid}/', method: 'GET', path: async (w) => `/api/marketplace-orders/${await w.fresh.order('manager')}/`,
    expect: e(401, 404, 200, 200, 200, 200, 200, 200, 200, 200) },
  { endpoint: 'POST /api/marketplace-orders/{uuid}/approve_by_consumer/', method: 'POST',
    path: async (w) => `/api/marketplace-orders/${await w.fresh.order('manager')}/approve_by_consumer/`,
    expect: e(401, 404, 403, 403, 403, 200, 403, 403, 403, 200) },
  { endpoint: 'POST /api/marketplace-orders/{uuid}/approve_by_provider/', method: 'POST',
    path: async (w) => `/api/marketplace-orders/${await w.fresh.order('owner')}/approve_by_provider/`,
    expect: e(401, 404, 403, 403, 403, 403, 200, 200, 403, 200) },
  { endpoint: 'POST /api/marketplace-orders/{uuid}/reject_by_provider/', method: 'POST',
    path: async (w) => `/api/marketplace-orders/${await w.fresh.order('owner')}/reject_by_provider/`,
    expect: e(401, 404, 403, 403, 403, 403, 200, 200, 403, 200) },
  { endpoint: 'POST /api/marketplace-orders/{uuid}/set_backend_id/', method: 'POST',
    path: async (w) => `/api/marketplace-orders/${await w.fresh.order('owner')}/set_backend_id/`, body: { backend_id: 'b-1' },
    expect: e(401, 404, 403, 403, 403, 403, 200, 200, 403, 200) },
  { endpoint: 'DELETE /api/marketplace-orders/{uuid}/', method: 'DELETE',
    path: async (w) => `/api/marketplace-orders/${await w.fresh.order('manager')}/`,
    expect: e(401, 404, 403, 204, 204, 204, 403, 403, 403, 204) },
  { endpoint: 'POST /api/marketplace-orders/{uuid}/unlink/', method: 'POST',
    path: async (w) => `/api/marketplace-orders/${await w.fresh.order('manager')}/unlink/`,
    expect: e(401, 403, 403, 403, 403, 403, 403, 403, 403, 204) },

  // ---- site agents: the offering's owners and managers manage; consumers do not see ----
  { endpoint: 'POST /api/marketplace-site-agent-identities/', method: 'POST', path: '/api/marketplace-site-agent-identities/',
    body: (w: World) => ({ name: `m-${w.t.ctx.newUuid().slice(0, 8)}`, offering: w.offering.url }),
    expect: e(401, 403, 403, 403, 403, 403, 201, 201, 403, 201) },
  { endpoint: 'GET /api/marketplace-site-agent-services/{uuid}/', method: 'GET',
    path: async (w) => `/api/marketplace-site-agent-services/${await w.fresh.agentService()}/`,
    expect: e(401, 404, 404, 404, 404, 404, 200, 200, 200, 200) },
  { endpoint: 'POST /api/marketplace-site-agent-services/{uuid}/set_statistics/', method: 'POST',
    path: async (w) => `/api/marketplace-site-agent-services/${await w.fresh.agentService()}/set_statistics/`,
    body: { statistics: { jobs: 1 } },
    expect: e(401, 404, 404, 404, 404, 404, 200, 200, 403, 200) },
  { endpoint: 'POST /api/marketplace-site-agent-services/{uuid}/register_processor/', method: 'POST',
    path: async (w) => `/api/marketplace-site-agent-services/${await w.fresh.agentService()}/register_processor/`,
    body: { name: 'p', backend_type: 'SLURM' },
    expect: e(401, 404, 404, 404, 404, 404, 201, 201, 403, 201) },
  { endpoint: 'DELETE /api/marketplace-site-agent-services/{uuid}/', method: 'DELETE',
    path: async (w) => `/api/marketplace-site-agent-services/${await w.fresh.agentService()}/`,
    expect: e(401, 404, 404, 404, 404, 404, 204, 204, 403, 204) },
  { endpoint: 'POST /api/marketplace-site-agent-services/cleanup_stale/', method: 'POST',
    path: '/api/marketplace-site-agent-services/cleanup_stale/', body: { dry_run: true },
    expect: e(401, 403, 403, 403, 403, 403, 403, 403, 403, 200) },

  // ---- backend resource requests: staff create; the offering's side acts; others 403 ----
  { endpoint: 'POST /api/backend-resource-requests/', method: 'POST', path: '/api/backend-resource-requests/',
    body: (w: World) => ({ offering: w.offering.uuid }),
    expect: e(401, 403, 403, 403, 403, 403, 403, 403, 403, 201) },
  { endpoint: 'POST /api/backend-resource-requests/{uuid}/start_processing/', method: 'POST',
    path: async (w) => `/api/backend-resource-requests/${await w.fresh.backendRequest()}/start_processing/`,
    expect: e(401, 403, 403, 403, 403, 403, 200, 200, 403, 200) },
  { endpoint: 'POST /api/backend-resource-requests/{uuid}/set_done/', method: 'POST',
    path: async (w) => `/api/backend-resource-requests/${await w.fresh.backendRequest('Processing')}/set_done/`,
    expect: e(401, 403, 403, 403, 403, 403, 200, 200, 403, 200) },

  // ---- invitations and permission requests: managing needs the scope's create-permission right
  // (customer owner, staff); others get 404 on an invitation's actions (reference §5.3). Private
  // invitations are listed to those who manage their scope; requests to the requester and managers.
  { endpoint: 'POST /api/user-group-invitations/ (customer scope)', method: 'POST', path: '/api/user-group-invitations/',
    body: async (w: World) => ({ role: await roleUuid(w, 'CUSTOMER.MANAGER'), scope: w.customer.url }),
    expect: e(401, 403, 403, 403, 403, 201, 403, 403, 403, 201) },
  { endpoint: 'POST /api/user-group-invitations/ (public)', method: 'POST', path: '/api/user-group-invitations/',
    body: async (w: World) => ({ role: await roleUuid(w, 'PROJECT.MEMBER'), scope: w.customer.url, is_public: true, auto_create_project: true }),
    expect: e(401, 403, 403, 403, 403, 400, 403, 403, 403, 201) },
  { endpoint: 'GET /api/user-group-invitations/{uuid}/ (private)', method: 'GET',
    path: async (w) => `/api/user-group-invitations/${await w.fresh.invitation()}/`,
    expect: e(404, 404, 200, 200, 200, 200, 404, 404, 200, 200) },
  { endpoint: 'GET /api/user-group-invitations/{uuid}/ (private, project scope)', method: 'GET',
    path: async (w) => `/api/user-group-invitations/${await w.fresh.invitation('project')}/`,
    expect: e(404, 404, 200, 200, 200, 200, 404, 404, 200, 200) },
  { endpoint: 'GET /api/user-group-invitations/{uuid}/projects/ (private)', method: 'GET',
    path: async (w) => `/api/user-group-invitations/${await w.fresh.invitation()}/projects/`,
    expect: e(404, 404, 200, 200, 200, 200, 404, 404, 200, 200) },
  { endpoint: 'GET /api/user-group-invitations/{uuid}/ (public)', method: 'GET',
    path: async (w) => `/api/user-group-invitations/${await w.fresh.invitation('project', { public: true })}/`,
    expect: e(200, 200, 200, 200, 200, 200, 200, 200, 200, 200) },
  { endpoint: 'POST /api/user-group-invitations/{uuid}/cancel/', method: 'POST',
    path: async (w) => `/api/user-group-invitations/${await w.fresh.invitation()}/cancel/`,
    expect: e(401, 404, 404, 404, 404, 200, 404, 404, 404, 200) },
  { endpoint: 'POST /api/user-group-invitations/{uuid}/submit_request/', method: 'POST',
    path: async (w) => `/api/user-group-invitations/${await w.fresh.invitation('project')}/submit_request/`,
    expect: e(401, 200, 400, 200, 200, 200, 200, 200, 200, 200) },
  { endpoint: 'POST /api/user-permission-requests/{uuid}/approve/', method: 'POST',
    path: async (w) => `/api/user-permission-requests/${await w.fresh.permissionRequest()}/approve/`,
    expect: e(401, 404, 404, 404, 404, 200, 404, 404, 404, 200) },

  // ---- cloud: staff run the settings; the consumer project's managers, admins and owner manage
  // its resources, members see them; routers follow reference §11: whoever sees the tenant or
  // router may act on it; unlink is staff only ----
  { endpoint: 'POST /api/service-settings/', method: 'POST', path: '/api/service-settings/',
    body: { name: 'Matrix settings', type: 'cloudA', shared: true },
    expect: e(401, 403, 403, 403, 403, 403, 403, 403, 403, 201) },
  { endpoint: 'POST /api/cloudA-public-ips/', method: 'POST', path: '/api/cloudA-public-ips/',
    body: async (w: World) => {
      const a = await w.fresh.cloudA()
      return { name: 'matrix-ip', service_settings: a.settings, project: w.project.url, location: a.location, resource_group: a.group }
    },
    expect: e(401, 400, 400, 201, 201, 201, 400, 400, 400, 201) },
  { endpoint: 'GET /api/cloudA-public-ips/{uuid}/', method: 'GET',
    path: async (w) => `/api/cloudA-public-ips/${await w.fresh.publicIp()}/`,
    expect: e(401, 404, 200, 200, 200, 200, 404, 404, 200, 200) },
  { endpoint: 'PATCH /api/cloudA-public-ips/{uuid}/', method: 'PATCH',
    path: async (w) => `/api/cloudA-public-ips/${await w.fresh.publicIp()}/`, body: { description: 'matrix' },
    expect: e(401, 404, 403, 200, 200, 200, 404, 404, 403, 200) },
  { endpoint: 'DELETE /api/cloudA-public-ips/{uuid}/', method: 'DELETE',
    path: async (w) => `/api/cloudA-public-ips/${await w.fresh.publicIp()}/`,
    expect: e(401, 404, 403, 204, 204, 204, 404, 404, 403, 204) },
  { endpoint: 'POST /api/cloudA-public-ips/{uuid}/unlink/', method: 'POST',
    path: async (w) => `/api/cloudA-public-ips/${await w.fresh.publicIp()}/unlink/`,
    expect: e(401, 403, 403, 403, 403, 403, 403, 403, 403, 204) },
  { endpoint: 'GET /api/cloudB-floating-ips/{uuid}/', method: 'GET',
    path: async (w) => `/api/cloudB-floating-ips/${await w.fresh.floatingIp()}/`,
    expect: e(401, 404, 200, 200, 200, 200, 404, 404, 200, 200) },
  { endpoint: 'POST /api/cloudB-floating-ips/{uuid}/update_description/', method: 'POST',
    path: async (w) => `/api/cloudB-floating-ips/${await w.fresh.floatingIp()}/update_description/`, body: { description: 'matrix' },
    expect: e(401, 404, 403, 200, 200, 200, 404, 404, 403, 200) },
  { endpoint: 'POST /api/cloudB-routers/', method: 'POST', path: '/api/cloudB-routers/',
    body: async (w: World) => ({ tenant: await w.fresh.tenant(), name: 'matrix-router' }),
    expect: e(401, 400, 201, 201, 201, 201, 400, 400, 201, 201) },
  { endpoint: 'POST /api/cloudB-routers/{uuid}/set_routes/', method: 'POST',
    path: async (w) => `/api/cloudB-routers/${await w.fresh.router()}/set_routes/`, body: { routes: [] },
    expect: e(401, 404, 200, 200, 200, 200, 404, 404, 200, 200) },
]

//                                                     anon outs memb mngr admn ownr prov ofmg supp staf
// prettier-ignore
export const lists: ListRow[] = [
  { endpoint: 'GET /api/customers/', setup: async (w) => ({ url: '/api/customers/?name=Matrix consumer', uuid: w.customer.uuid }),
    sees: v(0, 0, 1, 1, 1, 1, 0, 0, 1, 1) },
  { endpoint: 'GET /api/projects/', setup: async (w) => ({ url: '/api/projects/?name=Matrix project', uuid: w.project.uuid }),
    sees: v(0, 0, 1, 1, 1, 1, 0, 0, 1, 1) },
  { endpoint: 'GET /api/marketplace-resources/', setup: async (w) => ({ url: '/api/marketplace-resources/?page_size=300', uuid: w.resource.uuid }),
    sees: v(0, 0, 1, 1, 1, 1, 1, 1, 1, 1) },
  { endpoint: 'GET /api/marketplace-provider-offerings/ (draft)',
    setup: async (w) => ({ url: '/api/marketplace-provider-offerings/?page_size=300', uuid: (await w.fresh.offering('Draft')).uuid }),
    sees: v(0, 0, 0, 0, 0, 0, 1, 1, 1, 1) },
  { endpoint: 'GET /api/payment-profiles/',
    setup: async (w) => ({ url: '/api/payment-profiles/?page_size=300', uuid: await w.fresh.paymentProfile() }),
    sees: v(0, 0, 0, 0, 0, 1, 0, 0, 1, 1) },
  { endpoint: 'GET /api/marketplace-offering-estimated-cost-policies/',
    setup: async (w) => ({ url: '/api/marketplace-offering-estimated-cost-policies/?page_size=300', uuid: await w.fresh.costPolicy() }),
    sees: v(0, 0, 0, 0, 0, 0, 1, 1, 1, 1) },
  { endpoint: 'GET /api/marketplace-orders/',
    setup: async (w) => ({ url: '/api/marketplace-orders/?page_size=300', uuid: await w.fresh.order('manager') }),
    sees: v(0, 0, 1, 1, 1, 1, 1, 1, 1, 1) },
  { endpoint: 'GET /api/marketplace-site-agent-services/',
    setup: async (w) => ({ url: '/api/marketplace-site-agent-services/?page_size=300', uuid: await w.fresh.agentService() }),
    sees: v(0, 0, 0, 0, 0, 0, 1, 1, 1, 1) },
  { endpoint: 'GET /api/backend-resource-requests/',
    setup: async (w) => ({ url: '/api/backend-resource-requests/?page_size=300', uuid: await w.fresh.backendRequest() }),
    sees: v(0, 0, 0, 0, 0, 0, 1, 1, 1, 1) },
  { endpoint: 'GET /api/user-group-invitations/ (private, customer scope)',
    setup: async (w) => ({ url: '/api/user-group-invitations/?page_size=300', uuid: await w.fresh.invitation() }),
    sees: v(0, 0, 0, 0, 0, 1, 0, 0, 1, 1) },
  { endpoint: 'GET /api/user-group-invitations/ (public)',
    setup: async (w) => ({ url: '/api/user-group-invitations/?page_size=300', uuid: await w.fresh.invitation('project', { public: true }) }),
    sees: v(1, 1, 1, 1, 1, 1, 1, 1, 1, 1) },
  { endpoint: 'GET /api/user-permission-requests/',
    setup: async (w) => ({ url: '/api/user-permission-requests/?page_size=300', uuid: await w.fresh.permissionRequest() }),
    sees: v(0, 0, 0, 0, 0, 1, 0, 0, 1, 1) },
  { endpoint: 'GET /api/cloudA-public-ips/',
    setup: async (w) => ({ url: '/api/cloudA-public-ips/?page_size=300', uuid: await w.fresh.publicIp() }),
    sees: v(0, 0, 1, 1, 1, 1, 0, 0, 1, 1) },
  { endpoint: 'GET /api/cloudB-floating-ips/',
    setup: async (w) => ({ url: '/api/cloudB-floating-ips/?page_size=300', uuid: await w.fresh.floatingIp() }),
    sees: v(0, 0, 1, 1, 1, 1, 0, 0, 1, 1) },
  { endpoint: 'GET /api/cloudB-routers/',
    setup: async (w) => ({ url: '/api/cloudB-routers/?page_size=300', uuid: await w.fresh.router() }),
    sees: v(0, 0, 1, 1, 1, 1, 0, 0, 1, 1) },
]
