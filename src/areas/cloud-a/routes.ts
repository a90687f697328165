// HTTP for /api/cloudA-locations/, /api/cloudA-resource-groups/ and /api/cloudA-public-ips/.
import type { FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppContext } from '../../context.js'
import { actorOf } from '../../http/auth.js'
import { fieldErrorsOf } from '../../http/errors.js'
import { uuidFromLink } from '../../http/links.js'
import { errors, FieldQuery, NoContent, UuidParams } from '../../http/schemas.js'
import { pager, parseOrdering, single, uuidFilter, withFields, type Query } from '../../http/query.js'
import {
  parseCommonFilters,
  scheduleDeletion,
  schedulePull,
  registerStateActions,
  unlinkResource,
} from '../cloud/common.js'
import * as svc from './service.js'
import * as s from './schema.js'

export async function cloudARoutes(fastify: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  svc.registerScopes()

  // ---- locations ----
  {
    const tags = ['cloudA-locations']
    const base = '/api/cloudA-locations/'
    const Record = Type.Partial(s.LocationSchema)
    app.get(
      base,
      {
        schema: { tags, querystring: s.LocationListQuery, response: { 200: Type.Array(Record), ...errors } },
      },
      async (request, reply) => {
        const q = request.query as Query
        const order = parseOrdering(q, s.LOCATION_ORDERING, [
          { column: 'cloud_a_locations.name', desc: false },
        ])
        const f = {
          name: single(q, 'name'),
          name_exact: single(q, 'name_exact'),
          service_settings_uuid: uuidFilter(q, 'service_settings_uuid'),
          uuid: uuidFilter(q, 'uuid'),
        }
        return svc.listLocations(
          ctx,
          actorOf(request),
          f,
          order,
          request.baseUrl,
          pager(request, reply, s.LOCATION_FIELDS),
        )
      },
    )
    app.get(
      `${base}:uuid/`,
      { schema: { tags, params: UuidParams, querystring: FieldQuery, response: { 200: Record, ...errors } } },
      async (request) =>
        withFields(
          request,
          s.LOCATION_FIELDS,
          await svc.getLocation(ctx, actorOf(request), request.params.uuid, request.baseUrl),
        ),
    )
    app.post(
      base,
      { schema: { tags, body: s.LocationCreateBody, response: { 201: s.LocationSchema, ...errors } } },
      async (request, reply) =>
        reply.code(201).send(await svc.createLocation(ctx, actorOf(request), request.body, request.baseUrl)),
    )
    for (const method of ['PUT', 'PATCH'] as const) {
      app.route({
        method,
        url: `${base}:uuid/`,
        schema: {
          tags,
          params: UuidParams,
          body: method === 'PUT' ? s.LocationCreateBody : s.LocationPatchBody,
          response: { 200: s.LocationSchema, ...errors },
        },
        handler: async (request) =>
          svc.updateLocation(ctx, actorOf(request), request.params.uuid, request.body, request.baseUrl),
      })
    }
    app.delete(
      `${base}:uuid/`,
      { schema: { tags, params: UuidParams, response: { 204: NoContent, ...errors } } },
      async (request, reply) => {
        await svc.deleteLocation(ctx, actorOf(request), request.params.uuid)
        return reply.code(204).send()
      },
    )
  }

  // ---- resource groups ----
  {
    const tags = ['cloudA-resource-groups']
    const base = '/api/cloudA-resource-groups/'
    const Record = Type.Partial(s.ResourceGroupSchema)
    app.get(
      base,
      {
        schema: {
          tags,
          querystring: s.ResourceGroupListQuery,
          response: { 200: Type.Array(Record), ...errors },
        },
      },
      async (request, reply) => {
        const q = request.query as Query
        const order = parseOrdering(q, s.RESOURCE_GROUP_ORDERING, [
          { column: 'cloud_a_resource_groups.name', desc: false },
        ])
        const f = {
          name: single(q, 'name'),
          name_exact: single(q, 'name_exact'),
          location_uuid: uuidFilter(q, 'location_uuid'),
          service_settings_uuid: uuidFilter(q, 'service_settings_uuid'),
          project_uuid: uuidFilter(q, 'project_uuid'),
          customer_uuid: uuidFilter(q, 'customer_uuid'),
          uuid: uuidFilter(q, 'uuid'),
        }
        return svc.listResourceGroups(
          ctx,
          actorOf(request),
          f,
          order,
          request.baseUrl,
          pager(request, reply, s.RESOURCE_GROUP_FIELDS),
        )
      },
    )
    app.get(
      `${base}:uuid/`,
      { schema: { tags, params: UuidParams, querystring: FieldQuery, response: { 200: Record, ...errors } } },
      async (request) =>
        withFields(
          request,
          s.RESOURCE_GROUP_FIELDS,
          await svc.getResourceGroup(ctx, actorOf(request), request.params.uuid, request.baseUrl),
        ),
    )
    app.post(
      base,
      {
        schema: {
          tags,
          body: s.ResourceGroupCreateBody,
          response: { 201: s.ResourceGroupSchema, ...errors },
        },
      },
      async (request, reply) =>
        reply
          .code(201)
          .send(await svc.createResourceGroup(ctx, actorOf(request), request.body, request.baseUrl)),
    )
    for (const method of ['PUT', 'PATCH'] as const) {
      app.route({
        method,
        url: `${base}:uuid/`,
        schema: {
          tags,
          params: UuidParams,
          body: method === 'PUT' ? s.ResourceGroupCreateBody : s.ResourceGroupPatchBody,
          response: { 200: s.ResourceGroupSchema, ...errors },
        },
        handler: async (request) =>
          svc.updateResourceGroup(ctx, actorOf(request), request.params.uuid, request.body, request.baseUrl),
      })
    }
    app.delete(
      `${base}:uuid/`,
      { schema: { tags, params: UuidParams, response: { 204: NoContent, ...errors } } },
      async (request, reply) => {
        await svc.deleteResourceGroup(ctx, actorOf(request), request.params.uuid)
        return reply.code(204).send()
      },
    )
  }

  // ---- public IPs ----
  {
    const tags = ['cloudA-public-ips']
    const base = '/api/cloudA-public-ips/'
    const Record = Type.Partial(s.PublicIpSchema)
    app.get(
      base,
      {
        schema: { tags, querystring: s.PublicIpListQuery, response: { 200: Type.Array(Record), ...errors } },
      },
      async (request, reply) => {
        const actor = actorOf(request)
        const q = request.query as Query
        const order = parseOrdering(q, s.PUBLIC_IP_ORDERING, [
          { column: 'cloud_resources.name', desc: false },
        ])
        const common = parseCommonFilters(q, actor)
        // A resource group URL of another kind matches nothing (reference §0.5), not 400.
        const groupLink = single(q, 'resource_group')
        const byLink = groupLink === undefined ? undefined : uuidFromLink(groupLink, s.PATHS.resourceGroups)
        const byUuid = uuidFilter(q, 'resource_group_uuid')
        const own = {
          external_ip: single(q, 'external_ip'),
          resource_group_uuid:
            byLink === null || (byLink && byUuid && byLink !== byUuid) ? null : (byLink ?? byUuid),
        }
        return svc.listPublicIps(
          ctx,
          actor,
          common,
          own,
          order,
          request.baseUrl,
          pager(request, reply, s.PUBLIC_IP_FIELDS),
        )
      },
    )
    app.get(
      `${base}:uuid/`,
      { schema: { tags, params: UuidParams, querystring: FieldQuery, response: { 200: Record, ...errors } } },
      async (request) =>
        withFields(
          request,
          s.PUBLIC_IP_FIELDS,
          await svc.getPublicIp(ctx, actorOf(request), request.params.uuid, request.baseUrl),
        ),
    )
    app.post(
      base,
      {
        schema: {
          tags,
          summary: 'Create a public IP; the backend allocates it asynchronously (state CREATION_SCHEDULED)',
          body: s.PublicIpCreateBody,
          response: { 201: s.PublicIpSchema, ...errors },
        },
        // The body's schema errors and the links' rules answer in one 400.
        attachValidation: true,
      },
      async (request, reply) => {
        const fieldErrors = fieldErrorsOf(request)
        const ip = await fieldErrors.guard(() =>
          svc.createPublicIp(ctx, actorOf(request), request.body, request.baseUrl, fieldErrors),
        )
        return reply.code(201).send(ip)
      },
    )
    for (const method of ['PUT', 'PATCH'] as const) {
      app.route({
        method,
        url: `${base}:uuid/`,
        schema: {
          tags,
          params: UuidParams,
          body: method === 'PUT' ? s.PublicIpPutBody : s.PublicIpPatchBody,
          response: { 200: s.PublicIpSchema, ...errors },
        },
        handler: async (request) =>
          svc.updatePublicIp(ctx, actorOf(request), request.params.uuid, request.body, request.baseUrl),
      })
    }
    app.delete(
      `${base}:uuid/`,
      {
        schema: {
          tags,
          summary: 'Schedule deletion (DELETION_SCHEDULED); the backend deletion then runs as a job',
          params: UuidParams,
          response: { 204: NoContent, ...errors },
        },
      },
      async (request, reply) => {
        await scheduleDeletion(ctx, actorOf(request), s.PUBLIC_IP_TYPE, request.params.uuid)
        return reply.code(204).send()
      },
    )
    app.post(
      `${base}:uuid/pull/`,
      {
        schema: {
          tags,
          summary:
            'Schedule a synchronization from the backend: 202 no body; 409 no body when the driver has no pull',
          params: UuidParams,
          response: { 202: NoContent, ...errors },
        },
      },
      async (request, reply) => {
        await schedulePull(ctx, actorOf(request), s.PUBLIC_IP_TYPE, request.params.uuid)
        return reply.code(202).send()
      },
    )
    app.post(
      `${base}:uuid/unlink/`,
      {
        schema: {
          tags,
          summary: 'Staff only: remove the record without any backend call, whatever its state',
          params: UuidParams,
          response: { 204: NoContent, ...errors },
        },
      },
      async (request, reply) => {
        await unlinkResource(ctx, actorOf(request), s.PUBLIC_IP_TYPE, request.params.uuid)
        return reply.code(204).send()
      },
    )
    registerStateActions(app, ctx, {
      path: 'cloudA-public-ips',
      type: s.PUBLIC_IP_TYPE,
      tags,
      noun: 'public IP',
    })
  }
}
