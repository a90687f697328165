// HTTP for the cloudB endpoints, declared for the resource kit: tenants, networks, subnets,
// ports, security groups, floating IPs (4.9), routers (4.10) and migrations (4.11).
import { Type, type TObject } from '@sinclair/typebox'
import type { AppContext } from '../../context.js'
import { filter } from '../../http/filters.js'
import { boolFilter, single, uuidFilter, type Query } from '../../http/query.js'
import { defineAction, defineResource, resourceRoutes, type ActionSpec } from '../../http/resource.js'
import { errors, NoContent } from '../../http/schemas.js'
import { registerResourceScope } from '../catalog/service.js'
import { registerOfferingProcessor } from '../orders/processors.js'
import {
  COMMON_ORDERING,
  commonFilters,
  commonFiltersOf,
  scheduleDeletion,
  schedulePull,
  stateActions,
  unlinkResource,
} from '../cloud/common.js'
import * as mig from './migrations.js'
import { completeTenantOrders, tenantProcessor } from './processor.js'
import type { ExtFilters } from './repository.js'
import * as svc from './service.js'
import * as s from './schema.js'

type Kind = keyof typeof s.TYPES
const LIST_PARAMS = ['page', 'page_size', 'field', 'o']

/**
 * The filters a cloud list declares: the common ones, which the kit parses (first, as the
 * reference does), then the tenant's and the kind's own from its query schema, which the list's
 * call parses after them (`extra`), so the first malformed one answers; those are declared here
 * for the documentation, the `Link` header and the check that a single-valued parameter arrives
 * once.
 */
function declaredFilters(query: TObject) {
  const own = Object.fromEntries(
    Object.entries(query.properties)
      .filter(([name]) => !LIST_PARAMS.includes(name) && !(name in commonFilters))
      .map(([name, doc]) => [
        name,
        filter.custom<undefined>(doc, () => undefined, undefined, {
          repeatable: doc.type === 'array',
        }),
      ]),
  )
  return { ...commonFilters, ...own }
}

const nameOrder = [{ column: 'cloud_resources.name', desc: false }]

/**
 * One kind of cloud object: list (the common filters, the tenant's and the kind's own), retrieve,
 * DELETE (204, then a job), pull (202 / 409, no bodies) when the backend can be read, unlink
 * (staff, 204) and, where given, the staff state actions.
 */
function cloudKind(
  kind: Kind,
  noun: string,
  record: TObject,
  opts: {
    query?: TObject
    ordering?: Record<string, string>
    defaultOrder?: { column: string; desc: boolean }[]
    extra?: (q: Query) => Omit<ExtFilters, 'tenant_uuid'>
    pull: boolean
    setState?: boolean
    unlink?: (ctx: AppContext, uuid: string) => Promise<void>
    actions?: ActionSpec<any>[]
  },
) {
  const type = s.TYPES[kind]
  const def = svc.KINDS[kind] as svc.KindDef<any>
  const query = opts.query ?? (kind === 'tenant' ? s.TenantListQuery : s.TenantScopedListQuery)
  const actions: ActionSpec<any>[] = []
  if (opts.setState) actions.push(...stateActions(type, 'resource'))
  if (opts.pull) {
    actions.push(
      defineAction({
        name: 'pull',
        summary: `Bring the ${noun} in line with the backend (a job)`,
        status: 202,
        response: null,
        errors: { ...errors, 409: NoContent },
        run: async (c) => {
          await schedulePull(c.ctx, c.actor, type, c.uuid)
          c.ctx.jobs.wake()
        },
      }),
    )
  }
  actions.push(
    defineAction({
      name: 'unlink',
      summary: `Staff only: forget the ${noun} without touching the backend`,
      status: 204,
      response: null,
      run: async (c) => {
        if (opts.unlink && c.actor.isStaff) await opts.unlink(c.ctx, c.uuid)
        await unlinkResource(c.ctx, c.actor, type, c.uuid)
      },
    }),
    ...(opts.actions ?? []),
  )
  return {
    path: s.PATHS[kind],
    noun,
    record,
    list: {
      filters: declaredFilters(query),
      ordering: { fields: opts.ordering ?? COMMON_ORDERING, default: opts.defaultOrder ?? nameOrder },
      run: (c: any) => {
        const q = c.request.query as Query
        const f = commonFiltersOf(c.filters, c.actor)
        // Tenants themselves take no tenant filter (their query does not declare one).
        const x = {
          ...(opts.extra?.(q) ?? {}),
          ...(kind === 'tenant'
            ? {}
            : { tenant_uuid: svc.tenantFilter(single(q, 'tenant'), uuidFilter(q, 'tenant_uuid')) }),
        }
        return svc.listKind(c.ctx, c.actor, def, f, x, c.listing.order, c.base, c.page)
      },
    },
    retrieve: { run: (c: any) => svc.getKind(c.ctx, c.actor, def, c.uuid, c.base) },
    destroy: {
      run: async (c: any) => {
        await scheduleDeletion(c.ctx, c.actor, type, c.uuid)
        c.ctx.jobs.wake()
      },
    },
    actions,
  }
}

export const tenants = defineResource({
  ...cloudKind('tenant', 'tenant', s.TenantSchema, {
    pull: true,
    unlink: svc.unlinkTenantChildren,
    actions: [
      defineAction({
        name: 'create_floating_ip',
        summary: 'Allocate a new floating IP in the tenant (created by a job)',
        body: Type.Optional(s.CreateFloatingIpBody),
        status: 201,
        response: s.FloatingIpSchema,
        run: (c) => svc.createFloatingIp(c.ctx, c.actor, c.uuid, c.body ?? {}, c.base),
      }),
      defineAction({
        name: 'pull_floating_ips',
        summary: 'Bring the tenant floating IPs in line with the backend (a job)',
        status: 202,
        response: null,
        run: (c) => svc.schedulePullFloatingIps(c.ctx, c.actor, c.uuid),
      }),
    ],
  }),
  create: { body: s.TenantCreateBody, run: (c) => svc.createTenant(c.ctx, c.actor, c.body, c.base) },
  update: {
    body: s.TenantPutBody,
    patch: s.TenantPatchBody,
    run: (c) => svc.updateTenant(c.ctx, c.actor, c.uuid, c.body, c.base),
  },
})

export const networks = defineResource({
  ...cloudKind('network', 'network', s.NetworkSchema, { pull: false }),
  create: { body: s.NetworkCreateBody, run: (c) => svc.createNetwork(c.ctx, c.actor, c.body, c.base) },
})

export const subnets = defineResource({
  ...cloudKind('subnet', 'subnet', s.SubnetSchema, { pull: false }),
  create: { body: s.SubnetCreateBody, run: (c) => svc.createSubnet(c.ctx, c.actor, c.body, c.base) },
})

export const securityGroups = defineResource({
  ...cloudKind('securityGroup', 'security group', s.SecurityGroupSchema, { pull: false }),
  create: {
    body: s.SecurityGroupCreateBody,
    run: (c) => svc.createSecurityGroup(c.ctx, c.actor, c.body, c.base),
  },
})

export const ports = defineResource({
  ...cloudKind('port', 'port', s.PortSchema, { pull: true }),
  create: { body: s.PortCreateBody, run: (c) => svc.createPort(c.ctx, c.actor, c.body, c.base) },
})

export const floatingIps = defineResource({
  ...cloudKind('floatingIp', 'floating IP', s.FloatingIpSchema, {
    query: s.FloatingIpListQuery,
    ordering: { ...COMMON_ORDERING, address: 'x.address', runtime_state: 'cloud_resources.runtime_state' },
    defaultOrder: [{ column: 'x.address', desc: false }],
    extra: (q) => ({
      address: single(q, 'address'),
      runtime_state: single(q, 'runtime_state'),
      free: boolFilter(q, 'free'),
      // A placeholder upstream: any value matches nothing (reference §0.5).
      nothing: single(q, 'external_ip') !== undefined,
    }),
    pull: true,
    setState: true,
    actions: [
      defineAction({
        name: 'update_description',
        summary: 'Change the description of the floating IP (pushed by a job)',
        body: s.DescriptionBody,
        response: null,
        run: (c) => svc.updateFloatingIpDescription(c.ctx, c.actor, c.uuid, c.body?.description ?? ''),
      }),
      defineAction({
        name: 'attach_to_port',
        summary: 'Attach the floating IP to a port of its tenant (a job)',
        body: s.AttachBody,
        response: null,
        run: (c) => svc.attachToPort(c.ctx, c.actor, c.uuid, c.body.port),
      }),
      defineAction({
        name: 'detach_from_port',
        summary: 'Detach the floating IP from its port (a job)',
        response: null,
        run: (c) => svc.detachFromPort(c.ctx, c.actor, c.uuid),
      }),
    ],
  }),
})

export const routers = defineResource({
  ...cloudKind('router', 'router', s.RouterSchema, {
    ordering: { ...COMMON_ORDERING, tenant_name: 't.name' },
    defaultOrder: [
      { column: 't.name', desc: false },
      { column: 'cloud_resources.name', desc: false },
    ],
    pull: true,
    setState: true,
    actions: [
      defineAction({
        name: 'add_router_interface',
        summary: 'Connect a subnet or a port of the tenant to the router (a job)',
        body: s.InterfaceBody,
        response: null,
        run: (c) => svc.addRouterInterface(c.ctx, c.actor, c.uuid, c.body ?? {}),
      }),
      defineAction({
        name: 'remove_router_interface',
        summary: 'Disconnect a subnet or a port from the router (a job)',
        body: s.InterfaceBody,
        response: null,
        run: (c) => svc.removeRouterInterface(c.ctx, c.actor, c.uuid, c.body ?? {}),
      }),
      defineAction({
        name: 'set_routes',
        summary: "Replace the router's static routes (pushed by a job)",
        body: s.SetRoutesBody,
        response: s.RoutesResult,
        run: (c) => svc.setRoutes(c.ctx, c.actor, c.uuid, c.body.routes),
      }),
    ],
  }),
  create: {
    body: s.RouterCreateBody,
    response: s.RouterCreateResult,
    run: (c) => svc.createRouter(c.ctx, c.actor, c.body, c.base),
  },
})

export const migrations = defineResource({
  path: s.PATHS.migration,
  noun: 'migration',
  record: s.MigrationSchema,
  list: {
    filters: {
      src_resource_uuid: filter.custom(Type.String(), uuidFilter, 'src.uuid'),
      dst_resource_uuid: filter.custom(Type.String(), uuidFilter, 'dst.uuid'),
    },
    ordering: {
      fields: s.MIGRATION_ORDERING,
      default: [{ column: 'cloud_b_migrations.created', desc: false }],
    },
    run: (c) => mig.listMigrations(c.ctx, c.actor, c.listing, c.base, c.page),
  },
  retrieve: { run: (c) => mig.getMigration(c.ctx, c.actor, c.uuid, c.base) },
  create: {
    body: s.MigrationCreateBody,
    response: s.MigrationCreateResult,
    run: async (c) => {
      const m = await mig.createMigration(c.ctx, c.actor, c.body, c.base)
      c.ctx.jobs.wake()
      return { url: m.url, uuid: m.uuid, mappings: m.mappings, src_resource: m.src_resource_uuid }
    },
  },
  update: {
    body: s.MigrationPutBody,
    patch: s.MigrationPatchBody,
    run: (c) => mig.updateMigration(c.ctx, c.actor, c.uuid, c.body, c.base),
  },
  destroy: { run: (c) => mig.deleteMigration(c.ctx, c.actor, c.uuid) },
})

export const cloudBRoutes = resourceRoutes(
  [tenants, networks, subnets, securityGroups, ports, floatingIps, routers, migrations],
  (_app, ctx) => {
    registerResourceScope(s.TYPES.tenant, { path: s.PATHS.tenant, table: 'cloud_resources' })
    registerOfferingProcessor('CloudB.Tenant', tenantProcessor)
    ctx.jobs.define<svc.ActionPayload>(svc.ACTION_JOB, { maxAttempts: 1, run: (p) => svc.runAction(ctx, p) })
    ctx.jobs.define<{ tenantId: number }>(svc.PULL_FLOATING_IPS_JOB, {
      maxAttempts: 1,
      run: (p) => svc.pullFloatingIps(ctx, p.tenantId),
    })
    for (const [job, run] of [
      [mig.MIGRATION_JOBS.start, mig.startMigration],
      [mig.MIGRATION_JOBS.apply, mig.applyMigration],
    ] as const)
      ctx.jobs.define<{ id: number }>(job, { maxAttempts: 1, run: (p) => run(ctx, p) })
    completeTenantOrders()
    mig.followDestinationTenants()
  },
)
