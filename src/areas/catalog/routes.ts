// HTTP for the catalog: service providers, categories, offerings (+ state actions and managers),
// offering types, plans and the read side of marketplace resources.
import type { FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppContext } from '../../context.js'
import { actorOf } from '../../http/auth.js'
import { fieldErrorsOf } from '../../http/errors.js'
import { errors, FieldQuery, NoContent, StatusBody, UuidParams } from '../../http/schemas.js'
import {
  boolFilter,
  choiceFilter,
  pager,
  parseOrdering,
  single,
  uuidFilter,
  values,
  withFields,
  type Query,
} from '../../http/query.js'
import { GRANT_FIELDS, GrantBody, GrantListQuery, GrantSchema, RevokeBody } from '../directory/schema.js'
import * as svc from './service.js'
import * as s from './schema.js'
import type { OfferingAction } from './state-machine.js'

const tag = (name: string) => ({ tags: [name] })

export async function catalogRoutes(fastify: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  // ---- service providers ----
  {
    const path = `/api/${s.PATHS.providers}/`
    const item = `${path}:uuid/`
    const t = tag(s.PATHS.providers)
    app.get(
      path,
      {
        schema: {
          ...t,
          querystring: s.ServiceProviderListQuery,
          response: { 200: Type.Array(Type.Partial(s.ServiceProviderSchema)), ...errors },
        },
      },
      async (request, reply) => {
        actorOf(request)
        const q = request.query as Query
        const order = parseOrdering(q, s.SERVICE_PROVIDER_ORDERING, [
          { column: 'customers.name', desc: false },
        ])
        const f = { customer_uuid: uuidFilter(q, 'customer_uuid'), name: single(q, 'name') }
        return svc.listServiceProviders(
          ctx,
          f,
          order,
          request.baseUrl,
          pager(request, reply, s.SERVICE_PROVIDER_FIELDS),
        )
      },
    )
    app.get(
      item,
      {
        schema: {
          ...t,
          params: UuidParams,
          querystring: FieldQuery,
          response: { 200: Type.Partial(s.ServiceProviderSchema), ...errors },
        },
      },
      async (request) => {
        actorOf(request)
        return withFields(
          request,
          s.SERVICE_PROVIDER_FIELDS,
          await svc.getServiceProvider(ctx, request.params.uuid, request.baseUrl),
        )
      },
    )
    app.post(
      path,
      {
        schema: {
          ...t,
          body: s.ServiceProviderCreateBody,
          response: { 201: s.ServiceProviderSchema, ...errors },
        },
      },
      async (request, reply) => {
        const p = await svc.createServiceProvider(ctx, actorOf(request), request.body, request.baseUrl)
        return reply.code(201).send(p)
      },
    )
    for (const method of ['PUT', 'PATCH'] as const) {
      app.route({
        method,
        url: item,
        schema: {
          ...t,
          params: UuidParams,
          body: s.ServiceProviderUpdateBody,
          response: { 200: s.ServiceProviderSchema, ...errors },
        },
        handler: async (request) =>
          svc.updateServiceProvider(
            ctx,
            actorOf(request),
            request.params.uuid,
            request.body,
            request.baseUrl,
          ),
      })
    }
    app.delete(
      item,
      { schema: { ...t, params: UuidParams, response: { 204: NoContent, ...errors } } },
      async (request, reply) => {
        await svc.deleteServiceProvider(ctx, actorOf(request), request.params.uuid)
        return reply.code(204).send()
      },
    )
  }

  // ---- categories ----
  {
    const path = `/api/${s.PATHS.categories}/`
    const item = `${path}:uuid/`
    const t = tag(s.PATHS.categories)
    app.get(
      path,
      {
        schema: {
          ...t,
          querystring: s.CategoryListQuery,
          response: { 200: Type.Array(Type.Partial(s.CategorySchema)), ...errors },
        },
      },
      async (request, reply) => {
        actorOf(request)
        const q = request.query as Query
        const order = parseOrdering(q, s.CATEGORY_ORDERING, [{ column: 'categories.title', desc: false }])
        return svc.listCategories(
          ctx,
          { title: single(q, 'title') },
          order,
          request.baseUrl,
          pager(request, reply, s.CATEGORY_FIELDS),
        )
      },
    )
    app.get(
      item,
      {
        schema: {
          ...t,
          params: UuidParams,
          querystring: FieldQuery,
          response: { 200: Type.Partial(s.CategorySchema), ...errors },
        },
      },
      async (request) => {
        actorOf(request)
        return withFields(
          request,
          s.CATEGORY_FIELDS,
          await svc.getCategory(ctx, request.params.uuid, request.baseUrl),
        )
      },
    )
    app.post(
      path,
      { schema: { ...t, body: s.CategoryBody, response: { 201: s.CategorySchema, ...errors } } },
      async (request, reply) => {
        const c = await svc.createCategory(ctx, actorOf(request), request.body, request.baseUrl)
        return reply.code(201).send(c)
      },
    )
    for (const method of ['PUT', 'PATCH'] as const) {
      app.route({
        method,
        url: item,
        schema: {
          ...t,
          params: UuidParams,
          body: method === 'PUT' ? s.CategoryBody : s.CategoryPatchBody,
          response: { 200: s.CategorySchema, ...errors },
        },
        handler: async (request) =>
          svc.updateCategory(
            ctx,
            actorOf(request),
            request.params.uuid,
            request.body as s.CategoryWrite,
            request.baseUrl,
          ),
      })
    }
    app.delete(
      item,
      { schema: { ...t, params: UuidParams, response: { 204: NoContent, ...errors } } },
      async (request, reply) => {
        await svc.deleteCategory(ctx, actorOf(request), request.params.uuid)
        return reply.code(204).send()
      },
    )
  }

  // ---- offering types ----
  app.get(
    '/api/marketplace-offering-types/',
    {
      schema: {
        ...tag('marketplace-offering-types'),
        response: { 200: Type.Array(s.OfferingTypeSchema), 401: errors[401] },
      },
    },
    async (request) => {
      actorOf(request)
      return svc.offeringTypes()
    },
  )

  // ---- offerings ----
  {
    const path = `/api/${s.PATHS.offerings}/`
    const item = `${path}:uuid/`
    const t = tag(s.PATHS.offerings)
    app.get(
      path,
      {
        schema: {
          ...t,
          querystring: s.OfferingListQuery,
          response: { 200: Type.Array(Type.Partial(s.OfferingSchema)), ...errors },
        },
      },
      async (request, reply) => {
        const actor = actorOf(request)
        const q = request.query as Query
        const order = parseOrdering(q, s.OFFERING_ORDERING, [{ column: 'offerings.name', desc: false }])
        const f = {
          name: single(q, 'name'),
          name_exact: single(q, 'name_exact'),
          customer_uuid: uuidFilter(q, 'customer_uuid'),
          category_uuid: uuidFilter(q, 'category_uuid'),
          type: values(q, 'type').filter(Boolean),
          state: choiceFilter(q, 'state', s.OFFERING_STATES),
          shared: boolFilter(q, 'shared'),
          billable: boolFilter(q, 'billable'),
          uuid: uuidFilter(q, 'uuid'),
          slug: single(q, 'slug'),
          scope_uuid: uuidFilter(q, 'scope_uuid'),
          parent_uuid: uuidFilter(q, 'parent_uuid'),
        }
        return svc.listOfferings(
          ctx,
          actor,
          f,
          order,
          request.baseUrl,
          pager(request, reply, s.OFFERING_FIELDS),
        )
      },
    )
    app.get(
      item,
      {
        schema: {
          ...t,
          params: UuidParams,
          querystring: FieldQuery,
          response: { 200: Type.Partial(s.OfferingSchema), ...errors },
        },
      },
      async (request) =>
        withFields(
          request,
          s.OFFERING_FIELDS,
          await svc.getOffering(ctx, actorOf(request), request.params.uuid, request.baseUrl),
        ),
    )
    app.post(
      path,
      { schema: { ...t, body: s.OfferingCreateBody, response: { 201: s.OfferingSchema, ...errors } } },
      async (request, reply) => {
        const o = await svc.createOffering(ctx, actorOf(request), request.body, request.baseUrl)
        return reply.code(201).send(o)
      },
    )
    for (const method of ['PUT', 'PATCH'] as const) {
      app.route({
        method,
        url: item,
        schema: {
          ...t,
          params: UuidParams,
          body: method === 'PUT' ? s.OfferingUpdateBody : s.OfferingPatchBody,
          response: { 200: s.OfferingSchema, ...errors },
        },
        handler: async (request) =>
          svc.updateOffering(
            ctx,
            actorOf(request),
            request.params.uuid,
            request.body as s.OfferingWrite,
            request.baseUrl,
          ),
      })
    }
    app.delete(
      item,
      { schema: { ...t, params: UuidParams, response: { 204: NoContent, ...errors } } },
      async (request, reply) => {
        await svc.deleteOffering(ctx, actorOf(request), request.params.uuid)
        return reply.code(204).send()
      },
    )
    for (const action of ['activate', 'pause', 'unpause', 'archive'] as const satisfies OfferingAction[]) {
      app.post(
        `${item}${action}/`,
        { schema: { ...t, params: UuidParams, response: { 200: StatusBody, ...errors } } },
        async (request) => svc.changeOfferingState(ctx, actorOf(request), request.params.uuid, action),
      )
    }
    app.post(
      `${item}add_user/`,
      {
        schema: {
          ...t,
          description: 'Grants OFFERING.MANAGER on the offering.',
          params: UuidParams,
          body: GrantBody,
          response: { 201: GrantSchema, ...errors },
        },
      },
      async (request, reply) => {
        const g = await svc.addOfferingUser(
          ctx,
          actorOf(request),
          request.params.uuid,
          request.body,
          request.baseUrl,
        )
        return reply.code(201).send(g)
      },
    )
    app.post(
      `${item}delete_user/`,
      { schema: { ...t, params: UuidParams, body: RevokeBody, response: { 204: NoContent, ...errors } } },
      async (request, reply) => {
        await svc.deleteOfferingUser(ctx, actorOf(request), request.params.uuid, request.body)
        return reply.code(204).send()
      },
    )
    app.get(
      `${item}list_users/`,
      {
        schema: {
          ...t,
          params: UuidParams,
          querystring: GrantListQuery,
          response: { 200: Type.Array(Type.Partial(GrantSchema)), ...errors },
        },
      },
      async (request, reply) => {
        const q = request.query as Query
        const f = {
          role: single(q, 'role'),
          user_uuid: uuidFilter(q, 'user_uuid'),
          user_username: single(q, 'user_username'),
        }
        return svc.listOfferingUsers(
          ctx,
          actorOf(request),
          request.params.uuid,
          f,
          request.baseUrl,
          pager(request, reply, GRANT_FIELDS),
        )
      },
    )
  }

  // ---- plans ----
  {
    const path = `/api/${s.PATHS.plans}/`
    const item = `${path}:uuid/`
    const t = tag(s.PATHS.plans)
    app.get(
      path,
      {
        schema: {
          ...t,
          querystring: s.PlanListQuery,
          response: { 200: Type.Array(Type.Partial(s.PlanSchema)), ...errors },
        },
      },
      async (request, reply) => {
        const actor = actorOf(request)
        const q = request.query as Query
        const order = parseOrdering(q, s.PLAN_ORDERING, [{ column: 'plans.name', desc: false }])
        const f = { offering_uuid: uuidFilter(q, 'offering_uuid'), archived: boolFilter(q, 'archived') }
        return svc.listPlans(ctx, actor, f, order, request.baseUrl, pager(request, reply, s.PLAN_FIELDS))
      },
    )
    app.get(
      item,
      {
        schema: {
          ...t,
          params: UuidParams,
          querystring: FieldQuery,
          response: { 200: Type.Partial(s.PlanSchema), ...errors },
        },
      },
      async (request) =>
        withFields(
          request,
          s.PLAN_FIELDS,
          await svc.getPlan(ctx, actorOf(request), request.params.uuid, request.baseUrl),
        ),
    )
    app.post(
      path,
      {
        schema: { ...t, body: s.PlanCreateBody, response: { 201: s.PlanSchema, ...errors } },
        // The body's schema errors and the plan's rules answer in one 400.
        attachValidation: true,
      },
      async (request, reply) => {
        const fieldErrors = fieldErrorsOf(request)
        const p = await fieldErrors.guard(() =>
          svc.createPlan(ctx, actorOf(request), request.body, request.baseUrl, fieldErrors),
        )
        return reply.code(201).send(p)
      },
    )
    for (const method of ['PUT', 'PATCH'] as const) {
      app.route({
        method,
        url: item,
        schema: {
          ...t,
          params: UuidParams,
          body: method === 'PUT' ? s.PlanUpdateBody : s.PlanPatchBody,
          response: { 200: s.PlanSchema, ...errors },
        },
        attachValidation: true,
        handler: async (request) => {
          const fieldErrors = fieldErrorsOf(request)
          return fieldErrors.guard(() =>
            svc.updatePlan(
              ctx,
              actorOf(request),
              request.params.uuid,
              request.body,
              request.baseUrl,
              fieldErrors,
            ),
          )
        },
      })
    }
    app.delete(
      item,
      {
        schema: {
          ...t,
          description: 'Deletes the plan, or archives it while resources use it.',
          params: UuidParams,
          response: { 204: NoContent, ...errors },
        },
      },
      async (request, reply) => {
        await svc.deletePlan(ctx, actorOf(request), request.params.uuid)
        return reply.code(204).send()
      },
    )
  }

  // ---- marketplace resources (read-only here) ----
  {
    const path = `/api/${s.PATHS.resources}/`
    const t = tag(s.PATHS.resources)
    app.get(
      path,
      {
        schema: {
          ...t,
          querystring: s.ResourceListQuery,
          response: { 200: Type.Array(Type.Partial(s.ResourceSchema)), ...errors },
        },
      },
      async (request, reply) => {
        const actor = actorOf(request)
        const q = request.query as Query
        const order = parseOrdering(q, s.RESOURCE_ORDERING, [{ column: 'resources.created', desc: true }])
        const f = {
          project_uuid: uuidFilter(q, 'project_uuid'),
          customer_uuid: uuidFilter(q, 'customer_uuid'),
          offering_uuid: uuidFilter(q, 'offering_uuid'),
          provider_uuid: uuidFilter(q, 'provider_uuid'),
          category_uuid: uuidFilter(q, 'category_uuid'),
          state: choiceFilter(q, 'state', s.RESOURCE_STATES),
          name: single(q, 'name'),
          query: single(q, 'query'),
          backend_id: single(q, 'backend_id'),
        }
        return svc.listResources(
          ctx,
          actor,
          f,
          order,
          request.baseUrl,
          pager(request, reply, s.RESOURCE_FIELDS),
        )
      },
    )
    app.get(
      `${path}:uuid/`,
      {
        schema: {
          ...t,
          params: UuidParams,
          querystring: FieldQuery,
          response: { 200: Type.Partial(s.ResourceSchema), ...errors },
        },
      },
      async (request) =>
        withFields(
          request,
          s.RESOURCE_FIELDS,
          await svc.getResource(ctx, actorOf(request), request.params.uuid, request.baseUrl),
        ),
    )
  }
}
