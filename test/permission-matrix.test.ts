// The permission matrix: every endpoint × caller → expected status, for reads and writes, plus
// what each caller's lists contain. One table a reviewer can read; each cell runs against a
// fresh target where the call changes state.
//
// Callers: anon (no token), outsider (no roles), member / manager / admin (PROJECT.* on the
// consumer project), owner (CUSTOMER.OWNER of the consumer customer), provider (CUSTOMER.OWNER of
// the provider customer), offeringManager (OFFERING.MANAGER of the provider's offering), support
// (global support), staff.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { TestApp } from './support/app.js'
import { sharedTestWorld } from './support/shared-world.js'
import { call } from './support/client.js'
import { grant, makeCustomer, makeProject, makeUser, roleUuid, uniqueName } from './support/fixtures.js'
import {
  makeComponent,
  makeOffering,
  makePlan,
  makeResource,
  type OfferingState,
} from './support/catalog-fixtures.js'
import { CALLERS, lists, rows, type Caller, type World } from './permission-matrix.table.js'

async function buildWorld(t: TestApp): Promise<World> {
  const ctx = t.ctx
  const customer = await makeCustomer(ctx, 'Matrix consumer')
  const project = await makeProject(ctx, customer, { name: 'Matrix project' })
  const provider = await makeCustomer(ctx, 'Matrix provider')
  const off = await makeOffering(ctx, provider, { name: 'Matrix offering' })
  // The component the per-user limits and the provider's set_limits name.
  await makeComponent(ctx, off, { type: 'cpu' })
  const plan = await makePlan(ctx, off, { name: 'Matrix plan' })
  const users = {
    outsider: await makeUser(ctx),
    member: await makeUser(ctx),
    manager: await makeUser(ctx),
    admin: await makeUser(ctx),
    owner: await makeUser(ctx),
    provider: await makeUser(ctx),
    offeringManager: await makeUser(ctx),
    support: await makeUser(ctx, { support: true }),
    staff: await makeUser(ctx, { staff: true }),
  }
  await grant(ctx, users.member, 'PROJECT.MEMBER', { type: 'project', id: project.id })
  await grant(ctx, users.manager, 'PROJECT.MANAGER', { type: 'project', id: project.id })
  await grant(ctx, users.admin, 'PROJECT.ADMIN', { type: 'project', id: project.id })
  await grant(ctx, users.owner, 'CUSTOMER.OWNER', { type: 'customer', id: customer.id })
  await grant(ctx, users.provider, 'CUSTOMER.OWNER', { type: 'customer', id: provider.id })
  await grant(ctx, users.offeringManager, 'OFFERING.MANAGER', { type: 'offering', id: off.id })
  let cloudA: { settings: string; location: string; group: string } | undefined
  let cloudBSettings: string | undefined
  const insertOffering = async (state: string) => {
    const row = await makeOffering(ctx, provider, { name: `Matrix ${state}`, state: state as OfferingState })
    await grant(ctx, users.offeringManager, 'OFFERING.MANAGER', { type: 'offering', id: row.id })
    return { id: row.id, uuid: row.uuid, url: row.url }
  }
  const resource = await makeResource(ctx, off, project, {
    name: 'Matrix resource',
    planId: plan.id,
    attributes: {},
  })
  return {
    resource: { id: resource.id, uuid: resource.uuid },
    t,
    users,
    customer,
    project,
    provider,
    offering: { id: off.id, uuid: off.uuid, url: off.url },
    plan: { id: plan.id, uuid: plan.uuid, url: plan.url },
    fresh: {
      customer: () => makeCustomer(ctx),
      project: () => makeProject(ctx, customer),
      user: () => makeUser(ctx),
      offering: (state = 'Active') => insertOffering(state),
      paymentProfile: async () => {
        const r = await call(t.app, 'POST', '/api/payment-profiles/', {
          token: users.staff.token,
          body: {
            name: 'Matrix profile',
            organization: customer.url,
            payment_type: 'invoices',
            is_active: true,
          },
        })
        if (r.status !== 201) throw new Error(`payment profile fixture: ${r.status} ${r.text}`)
        return r.body.uuid as string
      },
      order: async (by: 'manager' | 'owner') => {
        const r = await call(t.app, 'POST', '/api/marketplace-orders/', {
          token: users[by].token,
          body: {
            offering: off.url,
            plan: plan.url,
            project: project.url,
          },
        })
        if (r.status !== 201) throw new Error(`order fixture: ${r.status} ${r.text}`)
        return r.body.uuid as string
      },
      agentIdentity: async () => {
        const r = await call(t.app, 'POST', '/api/marketplace-site-agent-identities/', {
          token: users.staff.token,
          body: { name: `matrix-agent-${ctx.newUuid().slice(0, 8)}`, offering: off.url, version: '1.0' },
        })
        if (r.status !== 201) throw new Error(`identity fixture: ${r.status} ${r.text}`)
        return r.body.uuid as string
      },
      eventSubscription: async () => {
        const r = await call(t.app, 'POST', '/api/marketplace-site-agent-identities/', {
          token: users.staff.token,
          body: { name: `matrix-agent-${ctx.newUuid().slice(0, 8)}`, offering: off.url },
        })
        if (r.status !== 201) throw new Error(`identity fixture: ${r.status} ${r.text}`)
        const s = await call(
          t.app,
          'POST',
          `/api/marketplace-site-agent-identities/${r.body.uuid}/register_event_subscription/`,
          { token: users.offeringManager.token, body: { observable_object_type: 'order' } },
        )
        if (s.status !== 201) throw new Error(`event subscription fixture: ${s.status} ${s.text}`)
        return s.body.uuid as string
      },
      agentService: async () => {
        const r = await call(t.app, 'POST', '/api/marketplace-site-agent-identities/', {
          token: users.staff.token,
          body: { name: `matrix-agent-${ctx.newUuid().slice(0, 8)}`, offering: off.url },
        })
        if (r.status !== 201) throw new Error(`identity fixture: ${r.status} ${r.text}`)
        const s = await call(
          t.app,
          'POST',
          `/api/marketplace-site-agent-identities/${r.body.uuid}/register_service/`,
          {
            token: users.staff.token,
            body: { name: 'matrix-service', mode: 'order_process' },
          },
        )
        if (s.status !== 201) throw new Error(`service fixture: ${s.status} ${s.text}`)
        return s.body.uuid as string
      },
      resource: async (state = 'OK') =>
        (await makeResource(ctx, off, project, { planId: plan.id, state, attributes: {} })).uuid,
      backendRequest: async (state = 'Sent') => {
        const r = await call(t.app, 'POST', '/api/backend-resource-requests/', {
          token: users.staff.token,
          body: { offering: off.uuid },
        })
        if (r.status !== 201) throw new Error(`backend request fixture: ${r.status} ${r.text}`)
        if (state === 'Processing') {
          const p = await call(
            t.app,
            'POST',
            `/api/backend-resource-requests/${r.body.uuid}/start_processing/`,
            {
              token: users.staff.token,
            },
          )
          if (p.status !== 200) throw new Error(`start_processing fixture: ${p.status} ${p.text}`)
        }
        return r.body.uuid as string
      },
      invitation: async (scope = 'customer', opts = {}) => {
        const role = scope === 'customer' && !opts.public ? 'CUSTOMER.MANAGER' : 'PROJECT.MEMBER'
        const r = await call(t.app, 'POST', '/api/user-group-invitations/', {
          token: users.staff.token,
          body: {
            role: await roleUuid(ctx, role),
            scope: scope === 'customer' ? customer.url : project.url,
            ...(opts.public ? { is_public: true, auto_create_project: true } : {}),
          },
        })
        if (r.status !== 201) throw new Error(`invitation fixture: ${r.status} ${r.text}`)
        return r.body.uuid as string
      },
      permissionRequest: async () => {
        const inv = await call(t.app, 'POST', '/api/user-group-invitations/', {
          token: users.staff.token,
          body: { role: await roleUuid(ctx, 'CUSTOMER.MANAGER'), scope: customer.url },
        })
        if (inv.status !== 201) throw new Error(`invitation fixture: ${inv.status} ${inv.text}`)
        const requester = await makeUser(ctx)
        const r = await call(t.app, 'POST', `/api/user-group-invitations/${inv.body.uuid}/submit_request/`, {
          token: requester.token,
        })
        if (r.status !== 200) throw new Error(`permission request fixture: ${r.status} ${r.text}`)
        return r.body.uuid as string
      },
      cloudA: async () => {
        if (cloudA) return cloudA
        const post = async (path: string, body: unknown) => {
          const r = await call(t.app, 'POST', path, { token: users.staff.token, body })
          if (r.status !== 201) throw new Error(`cloud fixture ${path}: ${r.status} ${r.text}`)
          return r.body.url as string
        }
        const settings = await post('/api/service-settings/', {
          name: 'Matrix A',
          type: 'cloudA',
          shared: true,
        })
        const location = await post('/api/cloudA-locations/', {
          name: 'matrix-west',
          service_settings: settings,
        })
        const group = await post('/api/cloudA-resource-groups/', {
          name: 'matrix-rg',
          service_settings: settings,
          location,
          project: project.url,
        })
        cloudA = { settings, location, group }
        return cloudA
      },
      publicIp: async () => {
        const a = await world.fresh.cloudA()
        const r = await call(t.app, 'POST', '/api/cloudA-public-ips/', {
          token: users.staff.token,
          body: {
            name: 'matrix-ip',
            service_settings: a.settings,
            project: project.url,
            location: a.location,
            resource_group: a.group,
          },
        })
        if (r.status !== 201) throw new Error(`public IP fixture: ${r.status} ${r.text}`)
        await ctx.jobs.drain()
        return r.body.uuid as string
      },
      tenant: async () => {
        if (!cloudBSettings) {
          const s = await call(t.app, 'POST', '/api/service-settings/', {
            token: users.staff.token,
            body: { name: 'Matrix B', type: 'cloudB', shared: true },
          })
          if (s.status !== 201) throw new Error(`cloudB settings fixture: ${s.status} ${s.text}`)
          cloudBSettings = s.body.url as string
        }
        const r = await call(t.app, 'POST', '/api/cloudB-tenants/', {
          token: users.staff.token,
          body: { name: 'matrix-tenant', service_settings: cloudBSettings, project: project.url },
        })
        if (r.status !== 201) throw new Error(`tenant fixture: ${r.status} ${r.text}`)
        await ctx.jobs.drain()
        return r.body.url as string
      },
      floatingIp: async () => {
        const tenant = await world.fresh.tenant()
        const uuid = tenant.replace(/\/$/, '').split('/').pop()
        const r = await call(t.app, 'POST', `/api/cloudB-tenants/${uuid}/create_floating_ip/`, {
          token: users.staff.token,
          body: {},
        })
        if (r.status !== 201) throw new Error(`floating IP fixture: ${r.status} ${r.text}`)
        await ctx.jobs.drain()
        return r.body.uuid as string
      },
      router: async () => {
        const r = await call(t.app, 'POST', '/api/cloudB-routers/', {
          token: users.staff.token,
          body: { tenant: await world.fresh.tenant(), name: 'matrix-router' },
        })
        if (r.status !== 201) throw new Error(`router fixture: ${r.status} ${r.text}`)
        await ctx.jobs.drain()
        return r.body.uuid as string
      },
      component: async (offeringUuid: string) => {
        const r = await call(
          t.app,
          'POST',
          `/api/marketplace-provider-offerings/${offeringUuid}/create_offering_component/`,
          {
            token: users.staff.token,
            body: { billing_type: 'usage', type: uniqueName('matrix'), name: 'Matrix component' },
          },
        )
        if (r.status !== 201) throw new Error(`component fixture: ${r.status} ${r.text}`)
        return r.body.uuid as string
      },
      costPolicy: async () => {
        const r = await call(t.app, 'POST', '/api/marketplace-offering-estimated-cost-policies/', {
          token: users.staff.token,
          body: {
            scope: off.url,
            actions: 'notify_organization_owners',
            limit_cost: 100,
            apply_to_all: true,
          },
        })
        if (r.status !== 201) throw new Error(`cost policy fixture: ${r.status} ${r.text}`)
        return r.body.uuid as string
      },
    },
  }
}

const { t, world } = sharedTestWorld(buildWorld)

function tokenOf(caller: Caller): string | null {
  return caller === 'anon' ? null : world.users[caller].token
}

describe('permission matrix: status per endpoint and caller', () => {
  for (const row of rows) {
    test(`${row.endpoint}`, async () => {
      const got: Partial<Record<Caller, number>> = {}
      for (const caller of CALLERS) {
        const path = typeof row.path === 'string' ? row.path : await row.path(world)
        const body =
          typeof row.body === 'function' ? await (row.body as (w: World) => unknown)(world) : row.body
        const r = await call(t.app, row.method, path, { token: tokenOf(caller), body })
        got[caller] = r.status
      }
      assert.deepEqual(got, row.expect)
    })
  }
})

describe('permission matrix: list visibility per caller', () => {
  for (const row of lists) {
    test(`${row.endpoint}`, async () => {
      const { url, uuid } = await row.setup(world)
      const got: Partial<Record<Caller, boolean>> = {}
      for (const caller of CALLERS) {
        const r = await call(t.app, 'GET', url, { token: tokenOf(caller) })
        got[caller] =
          r.status === 200 &&
          Array.isArray(r.body) &&
          r.body.some((x: { uuid?: string; data?: { uuid?: string } }) => (x.uuid ?? x.data?.uuid) === uuid)
      }
      assert.deepEqual(got, row.sees)
    })
  }
})
