// HTTP for /api/marketplace-site-agent-identities/ and /api/marketplace-site-agent-services/.
import type { FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppContext } from '../../context.js'
import { actorOf, staffOnly } from '../../http/auth.js'
import { errors, FieldQuery, NoContent, UuidParams } from '../../http/schemas.js'
import {
  boolFilter,
  choiceFilter,
  dateTimeFilter,
  pager,
  single,
  uuidFilter,
  withFields,
  type Query,
} from '../../http/query.js'
import * as svc from './service.js'
import * as s from './schema.js'

const IDENTITIES = '/api/marketplace-site-agent-identities/'
const SERVICES = '/api/marketplace-site-agent-services/'
const PROCESSORS = `/api/${s.PROCESSOR_PATH}/`
const STATS = `/api/${s.STATS_PATH}/`

export async function siteAgentsRoutes(fastify: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  ctx.jobs.define(svc.MARK_IDLE_JOB, {
    run: async () => {
      await svc.markIdle(ctx)
    },
    maxAttempts: 3,
  })

  // ---- identities ----
  const itags = ['marketplace-site-agent-identities']
  const IdentityRecord = Type.Partial(s.IdentitySchema)

  app.get(
    IDENTITIES,
    {
      schema: {
        tags: itags,
        querystring: s.IdentityListQuery,
        response: { 200: Type.Array(IdentityRecord), ...errors },
      },
    },
    async (request, reply) => {
      const q = request.query as Query
      return svc.listIdentities(
        ctx,
        actorOf(request),
        { offering_uuid: uuidFilter(q, 'offering_uuid'), name: single(q, 'name') },
        request.baseUrl,
        pager(request, reply, s.IDENTITY_FIELDS),
      )
    },
  )

  app.get(
    `${IDENTITIES}:uuid/`,
    {
      schema: {
        tags: itags,
        params: UuidParams,
        querystring: FieldQuery,
        response: { 200: IdentityRecord, ...errors },
      },
    },
    async (request) =>
      withFields(
        request,
        s.IDENTITY_FIELDS,
        await svc.getIdentity(ctx, actorOf(request), request.params.uuid, request.baseUrl),
      ),
  )

  app.post(
    IDENTITIES,
    { schema: { tags: itags, body: s.IdentityCreateBody, response: { 201: s.IdentitySchema, ...errors } } },
    async (request, reply) =>
      reply.code(201).send(await svc.createIdentity(ctx, actorOf(request), request.body, request.baseUrl)),
  )

  for (const method of ['PUT', 'PATCH'] as const) {
    app.route({
      method,
      url: `${IDENTITIES}:uuid/`,
      schema: {
        tags: itags,
        params: UuidParams,
        body: method === 'PUT' ? s.IdentityCreateBody : s.IdentityPatchBody,
        response: { 200: s.IdentitySchema, ...errors },
      },
      handler: async (request) =>
        svc.updateIdentity(ctx, actorOf(request), request.params.uuid, request.body, request.baseUrl),
    })
  }

  app.delete(
    `${IDENTITIES}:uuid/`,
    { schema: { tags: itags, params: UuidParams, response: { 204: NoContent, ...errors } } },
    async (request, reply) => {
      await svc.deleteIdentity(ctx, actorOf(request), request.params.uuid)
      return reply.code(204).send()
    },
  )

  app.post(
    `${IDENTITIES}:uuid/register_service/`,
    {
      schema: {
        tags: itags,
        summary: 'Create (201) or update (200) a service of this identity; it becomes Active',
        params: UuidParams,
        body: s.RegisterServiceBody,
        response: { 200: s.ServiceSchema, 201: s.ServiceSchema, ...errors },
      },
    },
    async (request, reply) => {
      const r = await svc.registerService(
        ctx,
        actorOf(request),
        request.params.uuid,
        request.body,
        request.baseUrl,
      )
      return reply.code(r.created ? 201 : 200).send(r.service)
    },
  )

  // ---- services ----
  const tags = ['marketplace-site-agent-services']
  const ServiceRecord = Type.Partial(s.ServiceSchema)

  app.get(
    SERVICES,
    {
      schema: {
        tags,
        querystring: s.ServiceListQuery,
        response: { 200: Type.Array(ServiceRecord), ...errors },
      },
    },
    async (request, reply) => {
      const q = request.query as Query
      const f: svc.ServiceFilters = {
        identity_uuid: uuidFilter(q, 'identity_uuid'),
        mode: single(q, 'mode'),
        modified_after: dateTimeFilter(q, 'modified_after'),
        modified_before: dateTimeFilter(q, 'modified_before'),
        stale: boolFilter(q, 'stale'),
        states: choiceFilter(q, 'state', s.STATE_CHOICES).map(s.stateCode),
      }
      return svc.listServices(
        ctx,
        actorOf(request),
        f,
        request.baseUrl,
        pager(request, reply, s.SERVICE_FIELDS),
      )
    },
  )

  app.get(
    `${SERVICES}:uuid/`,
    {
      schema: {
        tags,
        params: UuidParams,
        querystring: FieldQuery,
        response: { 200: ServiceRecord, ...errors },
      },
    },
    async (request) =>
      withFields(
        request,
        s.SERVICE_FIELDS,
        await svc.getService(ctx, actorOf(request), request.params.uuid, request.baseUrl),
      ),
  )

  app.delete(
    `${SERVICES}:uuid/`,
    { schema: { tags, params: UuidParams, response: { 204: NoContent, ...errors } } },
    async (request, reply) => {
      await svc.deleteService(ctx, actorOf(request), request.params.uuid)
      return reply.code(204).send()
    },
  )

  app.post(
    `${SERVICES}cleanup_stale/`,
    {
      schema: {
        tags,
        summary:
          'Staff only: report (dry_run, the default) or delete services not modified for older_than_hours',
        body: s.CleanupBody,
        response: { 200: s.CleanupResult, ...errors },
      },
      // Staff only, checked before the body is looked at (reference §3.4).
      preValidation: async (request) => {
        await staffOnly(request)
        if (request.body === undefined || request.body === null) request.body = {}
      },
    },
    async (request) => svc.cleanupStale(ctx, request.body),
  )

  app.post(
    `${SERVICES}:uuid/register_processor/`,
    {
      schema: {
        tags,
        summary: 'Create (201) or update (200) a processor of this service; last_run becomes now',
        params: UuidParams,
        body: s.RegisterProcessorBody,
        response: { 200: s.ProcessorSchema, 201: s.ProcessorSchema, ...errors },
      },
    },
    async (request, reply) => {
      const r = await svc.registerProcessor(
        ctx,
        actorOf(request),
        request.params.uuid,
        request.body,
        request.baseUrl,
      )
      return reply.code(r.created ? 201 : 200).send(r.processor)
    },
  )

  app.post(
    `${SERVICES}:uuid/set_statistics/`,
    {
      schema: {
        tags,
        summary: 'Replace the statistics object',
        params: UuidParams,
        body: s.StatisticsBody,
        response: { 200: s.ServiceSchema, ...errors },
      },
    },
    async (request) =>
      svc.setStatistics(ctx, actorOf(request), request.params.uuid, request.body.statistics, request.baseUrl),
  )

  // ---- processors and stats ----
  app.get(
    PROCESSORS,
    {
      schema: {
        tags: [s.PROCESSOR_PATH],
        summary: 'List the processors of the site agent services the caller sees',
        querystring: s.ProcessorListQuery,
        response: { 200: Type.Array(Type.Partial(s.ProcessorSchema)), ...errors },
      },
    },
    async (request, reply) => {
      const q = request.query as Query
      return svc.listProcessors(
        ctx,
        actorOf(request),
        { service_uuid: uuidFilter(q, 'service_uuid'), offering_uuid: uuidFilter(q, 'offering_uuid') },
        request.baseUrl,
        pager(request, reply, s.PROCESSOR_FIELDS),
      )
    },
  )

  app.get(
    STATS,
    {
      schema: {
        tags: [s.STATS_PATH],
        summary:
          'Staff and support: identities by offering, services by state and stale, processors by backend type and stale',
        response: { 200: s.StatsSchema, ...errors },
      },
    },
    async (request) => svc.stats(ctx, actorOf(request)),
  )
}
