// HTTP for the cloudB endpoints: tenants, networks, subnets, ports, security groups, floating IPs
// (4.9), routers (4.10) and migrations (4.11). Registered after the cloud base plugin.
import type { FastifyInstance } from 'fastify'
import { Type, type TSchema } from '@sinclair/typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppContext } from '../../context.js'
import { actorOf } from '../../http/auth.js'
import { errors, FieldQuery, NoContent, UuidParams } from '../../http/schemas.js'
import {
  boolFilter,
  pager,
  parseOrdering,
  single,
  uuidFilter,
  withFields,
  type Query,
} from '../../http/query.js'
import { registerResourceScope } from '../catalog/service.js'
import { registerOfferingProcessor } from '../orders/processors.js'
import {
  COMMON_ORDERING,
  parseCommonFilters,
  scheduleDeletion,
  schedulePull,
  scheduleUpdate,
  registerStateActions,
  unlinkResource,
} from '../cloud/common.js'
import * as mig from './migrations.js'
import { completeTenantOrders, tenantProcessor } from './processor.js'
import * as svc from './service.js'
import * as s from './schema.js'
import { cloudBRepository } from './repository.js'
import { parseJson, toJson } from '../../db/values.js'

const tags = ['cloudB']

export async function cloudBRoutes(fastify: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  registerResourceScope(s.TYPES.tenant, { path: s.PATHS.tenant, table: 'cloud_resources' })
  registerOfferingProcessor('CloudB.Tenant', tenantProcessor)
  ctx.jobs.define<svc.ActionPayload>(svc.ACTION_JOB, { maxAttempts: 1, run: (p) => svc.runAction(ctx, p) })
  ctx.jobs.define<{ tenantId: number }>(svc.PULL_FLOATING_IPS_JOB, {
    maxAttempts: 1,
    run: (p) => svc.pullFloatingIps(ctx, p.tenantId),
  })
  ctx.jobs.define<{ id: number }>(mig.MIGRATION_JOBS.start, {
    maxAttempts: 1,
    run: (p) => mig.startMigration(ctx, p),
  })
  ctx.jobs.define<{ id: number }>(mig.MIGRATION_JOBS.apply, {
    maxAttempts: 1,
    run: (p) => mig.applyMigration(ctx, p),
  })
  completeTenantOrders()
  mig.followDestinationTenants()

  /** list + retrieve of one kind, with the common filters, tenant filters and the kind's own. */
  function readRoutes<T extends object>(
    path: string,
    kind: svc.KindDef<T>,
    schema: TSchema & { properties: Record<string, TSchema> },
    fields: string[],
    query: TSchema,
    ordering: Record<string, string>,
    defaultOrder: { column: string; desc: boolean }[],
    extra: (q: Query) => Omit<import('./repository.js').ExtFilters, 'tenant_uuid'> = () => ({}),
  ) {
    const Record = Type.Partial(schema)
    app.get(
      `/api/${path}/`,
      { schema: { tags, querystring: query, response: { 200: Type.Array(Record), ...errors } } },
      async (request, reply) => {
        const actor = actorOf(request)
        const q = request.query as Query
        const order = parseOrdering(q, ordering, defaultOrder)
        const f = parseCommonFilters(q, actor)
        // Tenants themselves take no tenant filter (their query does not declare one).
        const x = {
          ...extra(q),
          ...(kind === svc.KINDS.tenant
            ? {}
            : { tenant_uuid: svc.tenantFilter(single(q, 'tenant'), uuidFilter(q, 'tenant_uuid')) }),
        }
        return svc.listKind(ctx, actor, kind, f, x, order, request.baseUrl, pager(request, reply, fields))
      },
    )
    app.get(
      `/api/${path}/:uuid/`,
      { schema: { tags, params: UuidParams, querystring: FieldQuery, response: { 200: Record, ...errors } } },
      async (request) =>
        withFields(
          request,
          fields,
          await svc.getKind(ctx, actorOf(request), kind, request.params.uuid, request.baseUrl),
        ),
    )
  }

  /** DELETE (204, then a job), pull (202 / 409, no bodies) and unlink (staff, 204). */
  function commonActions(
    path: string,
    type: string,
    opts: { pull: boolean; unlink?: (uuid: string) => Promise<void>; setState?: boolean },
  ) {
    if (opts.setState) registerStateActions(app, ctx, { path, type, tags, noun: 'resource' })
    app.delete(
      `/api/${path}/:uuid/`,
      { schema: { tags, params: UuidParams, response: { 204: NoContent, ...errors } } },
      async (request, reply) => {
        await scheduleDeletion(ctx, actorOf(request), type, request.params.uuid)
        ctx.jobs.wake()
        return reply.code(204).send()
      },
    )
    if (opts.pull) {
      app.post(
        `/api/${path}/:uuid/pull/`,
        { schema: { tags, params: UuidParams, response: { 202: NoContent, ...errors, 409: NoContent } } },
        async (request, reply) => {
          await schedulePull(ctx, actorOf(request), type, request.params.uuid)
          ctx.jobs.wake()
          return reply.code(202).send()
        },
      )
    }
    app.post(
      `/api/${path}/:uuid/unlink/`,
      { schema: { tags, params: UuidParams, response: { 204: NoContent, ...errors } } },
      async (request, reply) => {
        const actor = actorOf(request)
        if (opts.unlink && actor.isStaff) await opts.unlink(request.params.uuid)
        await unlinkResource(ctx, actor, type, request.params.uuid)
        return reply.code(204).send()
      },
    )
  }

  const nameOrder = [{ column: 'cloud_resources.name', desc: false }]

  // ---- tenants ----
  readRoutes(
    s.PATHS.tenant,
    svc.KINDS.tenant,
    s.TenantSchema,
    s.TENANT_FIELDS,
    s.TenantListQuery,
    COMMON_ORDERING,
    nameOrder,
  )
  app.post(
    `/api/${s.PATHS.tenant}/`,
    { schema: { tags, body: s.TenantCreateBody, response: { 201: s.TenantSchema, ...errors } } },
    async (request, reply) =>
      reply.code(201).send(await svc.createTenant(ctx, actorOf(request), request.body, request.baseUrl)),
  )
  for (const method of ['PUT', 'PATCH'] as const) {
    app.route({
      method,
      url: `/api/${s.PATHS.tenant}/:uuid/`,
      schema: {
        tags,
        params: UuidParams,
        body: method === 'PUT' ? s.TenantPutBody : s.TenantPatchBody,
        response: { 200: s.TenantSchema, ...errors },
      },
      handler: async (request) => {
        const body = request.body
        const id = await scheduleUpdate(
          ctx,
          actorOf(request),
          s.TYPES.tenant,
          request.params.uuid,
          async () => null,
          async (trx, row) => {
            if (body.limits !== undefined) {
              const cur = await cloudBRepository(trx).extOf('cloud_b_tenants', row.id)
              const limits = { ...parseJson<Record<string, number>>(cur?.limits, {}), ...body.limits }
              await cloudBRepository(trx).updateExt('cloud_b_tenants', row.id, { limits: toJson(limits) })
            }
            const common: Record<string, unknown> = {}
            if (body.name !== undefined) common.name = body.name
            if (body.description !== undefined) common.description = body.description
            return common
          },
        )
        ctx.jobs.wake()
        return svc.renderById(ctx, svc.KINDS.tenant, id, request.baseUrl)
      },
    })
  }
  commonActions(s.PATHS.tenant, s.TYPES.tenant, {
    pull: true,
    unlink: (uuid) => svc.unlinkTenantChildren(ctx, uuid),
  })
  app.post(
    `/api/${s.PATHS.tenant}/:uuid/create_floating_ip/`,
    {
      schema: {
        tags,
        summary: 'Allocate a new floating IP in the tenant (created by a job)',
        params: UuidParams,
        body: Type.Optional(s.CreateFloatingIpBody),
        response: { 201: s.FloatingIpSchema, ...errors },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(
          await svc.createFloatingIp(
            ctx,
            actorOf(request),
            request.params.uuid,
            request.body ?? {},
            request.baseUrl,
          ),
        ),
  )
  app.post(
    `/api/${s.PATHS.tenant}/:uuid/pull_floating_ips/`,
    {
      schema: {
        tags,
        summary: 'Bring the tenant floating IPs in line with the backend (a job)',
        params: UuidParams,
        response: { 202: NoContent, ...errors },
      },
    },
    async (request, reply) => {
      await svc.schedulePullFloatingIps(ctx, actorOf(request), request.params.uuid)
      return reply.code(202).send()
    },
  )

  // ---- networks, subnets, security groups, ports ----
  const scoped = s.TenantScopedListQuery
  readRoutes(
    s.PATHS.network,
    svc.KINDS.network,
    s.NetworkSchema,
    s.NETWORK_FIELDS,
    scoped,
    COMMON_ORDERING,
    nameOrder,
  )
  readRoutes(
    s.PATHS.subnet,
    svc.KINDS.subnet,
    s.SubnetSchema,
    s.SUBNET_FIELDS,
    scoped,
    COMMON_ORDERING,
    nameOrder,
  )
  readRoutes(
    s.PATHS.securityGroup,
    svc.KINDS.securityGroup,
    s.SecurityGroupSchema,
    s.SECURITY_GROUP_FIELDS,
    scoped,
    COMMON_ORDERING,
    nameOrder,
  )
  readRoutes(s.PATHS.port, svc.KINDS.port, s.PortSchema, s.PORT_FIELDS, scoped, COMMON_ORDERING, nameOrder)
  app.post(
    `/api/${s.PATHS.network}/`,
    { schema: { tags, body: s.NetworkCreateBody, response: { 201: s.NetworkSchema, ...errors } } },
    async (request, reply) =>
      reply.code(201).send(await svc.createNetwork(ctx, actorOf(request), request.body, request.baseUrl)),
  )
  app.post(
    `/api/${s.PATHS.subnet}/`,
    { schema: { tags, body: s.SubnetCreateBody, response: { 201: s.SubnetSchema, ...errors } } },
    async (request, reply) =>
      reply.code(201).send(await svc.createSubnet(ctx, actorOf(request), request.body, request.baseUrl)),
  )
  app.post(
    `/api/${s.PATHS.securityGroup}/`,
    {
      schema: { tags, body: s.SecurityGroupCreateBody, response: { 201: s.SecurityGroupSchema, ...errors } },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(await svc.createSecurityGroup(ctx, actorOf(request), request.body, request.baseUrl)),
  )
  app.post(
    `/api/${s.PATHS.port}/`,
    { schema: { tags, body: s.PortCreateBody, response: { 201: s.PortSchema, ...errors } } },
    async (request, reply) =>
      reply.code(201).send(await svc.createPort(ctx, actorOf(request), request.body, request.baseUrl)),
  )
  commonActions(s.PATHS.network, s.TYPES.network, { pull: false })
  commonActions(s.PATHS.subnet, s.TYPES.subnet, { pull: false })
  commonActions(s.PATHS.securityGroup, s.TYPES.securityGroup, { pull: false })
  commonActions(s.PATHS.port, s.TYPES.port, { pull: true })

  // ---- floating IPs (4.9) ----
  readRoutes(
    s.PATHS.floatingIp,
    svc.KINDS.floatingIp,
    s.FloatingIpSchema,
    s.FLOATING_IP_FIELDS,
    s.FloatingIpListQuery,
    { ...COMMON_ORDERING, address: 'x.address', runtime_state: 'cloud_resources.runtime_state' },
    [{ column: 'x.address', desc: false }],
    (q) => ({
      address: single(q, 'address'),
      runtime_state: single(q, 'runtime_state'),
      free: boolFilter(q, 'free'),
      // A placeholder upstream: any value matches nothing (reference §0.5).
      nothing: single(q, 'external_ip') !== undefined,
    }),
  )
  commonActions(s.PATHS.floatingIp, s.TYPES.floatingIp, { pull: true, setState: true })
  app.post(
    `/api/${s.PATHS.floatingIp}/:uuid/update_description/`,
    {
      schema: { tags, params: UuidParams, body: s.DescriptionBody, response: { 200: NoContent, ...errors } },
    },
    async (request, reply) => {
      const description = request.body?.description ?? ''
      await scheduleUpdate(
        ctx,
        actorOf(request),
        s.TYPES.floatingIp,
        request.params.uuid,
        async () => null,
        async () => ({ description }),
      )
      ctx.jobs.wake()
      return reply.code(200).send()
    },
  )
  app.post(
    `/api/${s.PATHS.floatingIp}/:uuid/attach_to_port/`,
    { schema: { tags, params: UuidParams, body: s.AttachBody, response: { 200: NoContent, ...errors } } },
    async (request, reply) => {
      await svc.attachToPort(ctx, actorOf(request), request.params.uuid, request.body.port)
      return reply.code(200).send()
    },
  )
  app.post(
    `/api/${s.PATHS.floatingIp}/:uuid/detach_from_port/`,
    { schema: { tags, params: UuidParams, response: { 200: NoContent, ...errors } } },
    async (request, reply) => {
      await svc.detachFromPort(ctx, actorOf(request), request.params.uuid)
      return reply.code(200).send()
    },
  )

  // ---- routers (4.10) ----
  readRoutes(
    s.PATHS.router,
    svc.KINDS.router,
    s.RouterSchema,
    s.ROUTER_FIELDS,
    scoped,
    { ...COMMON_ORDERING, tenant_name: 't.name' },
    [
      { column: 't.name', desc: false },
      { column: 'cloud_resources.name', desc: false },
    ],
  )
  app.post(
    `/api/${s.PATHS.router}/`,
    { schema: { tags, body: s.RouterCreateBody, response: { 201: s.RouterCreateResult, ...errors } } },
    async (request, reply) =>
      reply.code(201).send(await svc.createRouter(ctx, actorOf(request), request.body, request.baseUrl)),
  )
  commonActions(s.PATHS.router, s.TYPES.router, { pull: true, setState: true })
  for (const [action, fn] of [
    ['add_router_interface', svc.addRouterInterface],
    ['remove_router_interface', svc.removeRouterInterface],
  ] as const) {
    app.post(
      `/api/${s.PATHS.router}/:uuid/${action}/`,
      {
        schema: { tags, params: UuidParams, body: s.InterfaceBody, response: { 200: NoContent, ...errors } },
      },
      async (request, reply) => {
        await fn(ctx, actorOf(request), request.params.uuid, request.body ?? {})
        return reply.code(200).send()
      },
    )
  }
  app.post(
    `/api/${s.PATHS.router}/:uuid/set_routes/`,
    {
      schema: {
        tags,
        params: UuidParams,
        body: s.SetRoutesBody,
        response: { 200: s.RoutesResult, ...errors },
      },
    },
    async (request) => svc.setRoutes(ctx, actorOf(request), request.params.uuid, request.body.routes),
  )

  // ---- migrations (4.11) ----
  const MigrationRecord = Type.Partial(s.MigrationSchema)
  const migrationFields = Object.keys(s.MigrationSchema.properties)
  app.get(
    `/api/${s.PATHS.migration}/`,
    {
      schema: {
        tags,
        querystring: s.MigrationListQuery,
        response: { 200: Type.Array(MigrationRecord), ...errors },
      },
    },
    async (request, reply) => {
      const q = request.query as Query
      const order = parseOrdering(q, s.MIGRATION_ORDERING, [
        { column: 'cloud_b_migrations.created', desc: false },
      ])
      const f = {
        src_resource_uuid: uuidFilter(q, 'src_resource_uuid'),
        dst_resource_uuid: uuidFilter(q, 'dst_resource_uuid'),
      }
      return mig.listMigrations(
        ctx,
        actorOf(request),
        f,
        order,
        request.baseUrl,
        pager(request, reply, migrationFields),
      )
    },
  )
  app.get(
    `/api/${s.PATHS.migration}/:uuid/`,
    {
      schema: {
        tags,
        params: UuidParams,
        querystring: FieldQuery,
        response: { 200: MigrationRecord, ...errors },
      },
    },
    async (request) =>
      withFields(
        request,
        migrationFields,
        await mig.getMigration(ctx, actorOf(request), request.params.uuid, request.baseUrl),
      ),
  )
  app.post(
    `/api/${s.PATHS.migration}/`,
    {
      schema: { tags, body: s.MigrationCreateBody, response: { 201: s.MigrationCreateResult, ...errors } },
    },
    async (request, reply) => {
      const m = await mig.createMigration(ctx, actorOf(request), request.body, request.baseUrl)
      ctx.jobs.wake()
      return reply
        .code(201)
        .send({ url: m.url, uuid: m.uuid, mappings: m.mappings, src_resource: m.src_resource_uuid })
    },
  )
  for (const method of ['PUT', 'PATCH'] as const) {
    app.route({
      method,
      url: `/api/${s.PATHS.migration}/:uuid/`,
      schema: {
        tags,
        params: UuidParams,
        body: method === 'PUT' ? s.MigrationPutBody : s.MigrationPatchBody,
        response: { 200: s.MigrationSchema, ...errors },
      },
      handler: async (request) =>
        mig.updateMigration(ctx, actorOf(request), request.params.uuid, request.body, request.baseUrl),
    })
  }
  app.delete(
    `/api/${s.PATHS.migration}/:uuid/`,
    { schema: { tags, params: UuidParams, response: { 204: NoContent, ...errors } } },
    async (request, reply) => {
      await mig.deleteMigration(ctx, actorOf(request), request.params.uuid)
      return reply.code(204).send()
    },
  )
}
