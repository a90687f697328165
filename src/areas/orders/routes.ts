// HTTP for /api/marketplace-orders/ and the order-creating actions of marketplace resources.
import type { FastifyInstance } from 'fastify'
import { Type, type TSchema } from '@sinclair/typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppContext } from '../../context.js'
import { actorOf } from '../../http/auth.js'
import { fieldError, fieldErrorsOf, forbiddenNoBody } from '../../http/errors.js'
import { uuidFromLink } from '../../http/links.js'
import {
  boolFilter,
  choiceFilter,
  dateTimeFilter,
  jsonPager,
  parseOrdering,
  sendJson,
  sendRendered,
  single,
  uuidFilter,
  values,
  type Query,
} from '../../http/query.js'
import {
  DetailBody,
  errors,
  FieldQuery,
  FreeObject,
  NoContent,
  StatusBody,
  UuidParams,
} from '../../http/schemas.js'
import { normalizeUuid } from '../../http/uuid.js'
import * as svc from './service.js'
import * as s from './schema.js'
import { ORDER_STATES, ORDER_TYPES } from './state-machine.js'
import type { OrderFilters } from './repository.js'

const tags = ['marketplace-orders']
const R = '/api/marketplace-orders'
const err405 = { 405: DetailBody }

/** Size limits keep their 413; any other failure to read the form (cut short, no boundary, a
 * malformed part) is the client's: 400 on the field the file goes in, as a body that fails its
 * schema is 400 before anything else is looked at. */
function unreadableUpload(e: unknown): unknown {
  const code = (e as { code?: unknown } | null)?.code
  if (code === 'FST_REQ_FILE_TOO_LARGE' || code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT') return e
  if (code === 'FST_FILES_LIMIT') return fieldError('attachment', 'Only one file may be submitted.')
  return fieldError('attachment', 'The submitted data was not a file. Check the encoding type on the form.')
}

export async function ordersRoutes(fastify: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const jobs = svc.defineOrderJobs(ctx)
  app.addHook('onClose', jobs.close)

  app.get(
    `${R}/`,
    {
      schema: {
        tags,
        querystring: s.OrderListQuery,
        response: { 200: Type.Array(Type.Partial(s.OrderSchema)), ...errors },
      },
    },
    async (request, reply) => {
      const actor = actorOf(request)
      const q = request.query as Query
      const order = parseOrdering(q, s.ORDER_ORDERING, [{ column: 'orders.created', desc: false }])
      const f: OrderFilters = {
        ...svc.approvalFilters(
          actor,
          boolOrAny(q, 'can_approve_as_consumer'),
          boolOrAny(q, 'can_approve_as_provider'),
        ),
        category_uuid: uuidFilter(q, 'category_uuid'),
        created: dateTimeFilter(q, 'created'),
        customer_uuid: uuidFilter(q, 'customer_uuid'),
        modified: dateTimeFilter(q, 'modified'),
        offering_slugs: values(q, 'offering_slug')
          .flatMap((v) => v.split(','))
          .map((x) => x.trim())
          .filter(Boolean),
        offering_types: values(q, 'offering_type')
          .flatMap((v) => v.split(','))
          .filter(Boolean),
        parent_offering_uuid: uuidFilter(q, 'parent_offering_uuid'),
        project_uuid: uuidFilter(q, 'project_uuid'),
        provider_uuid: uuidFilter(q, 'provider_uuid'),
        resource_uuid: uuidFilter(q, 'resource_uuid'),
        resource_name: single(q, 'resource_name'),
        service_manager_uuid: uuidFilter(q, 'service_manager_uuid'),
        states: choiceFilter(q, 'state', ORDER_STATES),
        types: choiceFilter(q, 'type', ORDER_TYPES),
      }
      const offeringUuid = uuidFilter(q, 'offering_uuid')
      const offering = single(q, 'offering')
      const offeringUuids = [
        offeringUuid,
        offering
          ? (normalizeUuid(offering) ?? uuidFromLink(offering, 'marketplace-provider-offerings'))
          : undefined,
      ]
      if (offering && !offeringUuids[1]) f.none = true
      f.offering_uuids = offeringUuids.filter((x): x is string => !!x)
      if (f.offering_uuids.length === 2 && f.offering_uuids[0] !== f.offering_uuids[1]) f.none = true
      const resource = single(q, 'resource')
      if (resource !== undefined) {
        const r = uuidFromLink(resource, 'marketplace-resources')
        if (!r) f.none = true
        else f.resource_uuid = r
      }
      const text = single(q, 'query')
      if (text) f.query = { text, uuid: normalizeUuid(text.trim()) }
      const body = await svc.listOrders(ctx, actor, f, order, request.baseUrl, jsonPager(request, reply))
      return sendRendered(request, reply, s.ORDER_FIELDS, body)
    },
  )

  app.get(
    `${R}/:uuid/`,
    {
      schema: {
        tags,
        params: UuidParams,
        querystring: FieldQuery,
        response: { 200: Type.Partial(s.OrderSchema), ...errors },
      },
    },
    async (request, reply) => {
      const body = await svc.getOrder(ctx, actorOf(request), request.params.uuid, request.baseUrl)
      return sendRendered(request, reply, s.ORDER_FIELDS, body)
    },
  )

  app.post(
    `${R}/`,
    {
      schema: { tags, body: s.OrderCreateBody, response: { 201: s.OrderSchema, ...errors } },
      // The body's schema errors and the order's rules answer in one 400.
      attachValidation: true,
    },
    async (request, reply) => {
      const actor = actorOf(request)
      const fieldErrors = fieldErrorsOf(request)
      const { orderId } = await fieldErrors.guard(() =>
        svc.createOrder(ctx, actor, request.body, fieldErrors),
      )
      return sendJson(reply.code(201), await svc.orderRecord(ctx, actor, orderId, request.baseUrl))
    },
  )

  app.delete(
    `${R}/:uuid/`,
    { schema: { tags, params: UuidParams, response: { 204: NoContent, ...errors } } },
    async (request, reply) => {
      await svc.deleteOrder(ctx, actorOf(request), request.params.uuid)
      return reply.code(204).send()
    },
  )

  app.post(
    `${R}/:uuid/unlink/`,
    { schema: { tags, params: UuidParams, response: { 204: NoContent, 403: NoContent, 404: DetailBody } } },
    async (request, reply) => {
      const actor = actorOf(request)
      // Staff only, decided before the order is looked up; the refusal has no body.
      if (!actor.isStaff) throw forbiddenNoBody()
      await svc.unlinkOrder(ctx, actor, request.params.uuid)
      return reply.code(204).send()
    },
  )

  const emptyAction = (
    name: string,
    run: (
      actor: ReturnType<typeof actorOf>,
      uuid: string,
      body: Record<string, string | undefined>,
    ) => Promise<void>,
    code: 200 | 202 = 200,
    body?: TSchema,
  ) =>
    app.post(
      `${R}/:uuid/${name}/`,
      {
        schema: {
          tags,
          params: UuidParams,
          ...(body ? { body } : {}),
          response: { [code]: NoContent, ...errors, ...err405 },
        },
      },
      async (request, reply) => {
        await run(
          actorOf(request),
          request.params.uuid,
          (request.body ?? {}) as Record<string, string | undefined>,
        )
        return (reply.code(code) as unknown as { send: () => unknown }).send()
      },
    )
  // An approval answers a detail message (the newest clients read it); the rejections have no body.
  const approval = (name: string, run: (actor: ReturnType<typeof actorOf>, uuid: string) => Promise<void>) =>
    app.post(
      `${R}/:uuid/${name}/`,
      { schema: { tags, params: UuidParams, response: { 200: s.DetailResponse, ...errors, ...err405 } } },
      async (request) => {
        await run(actorOf(request), request.params.uuid)
        return { detail: 'Order has been approved.' }
      },
    )
  approval('approve_by_consumer', (a, u) => svc.approveByConsumer(ctx, a, u))
  approval('approve_by_provider', (a, u) => svc.approveByProvider(ctx, a, u))
  emptyAction(
    'reject_by_consumer',
    (a, u, b) => svc.rejectByConsumer(ctx, a, u, b),
    200,
    s.ConsumerRejectionBody,
  )
  emptyAction(
    'reject_by_provider',
    (a, u, b) => svc.rejectByProvider(ctx, a, u, b),
    200,
    s.ProviderRejectionBody,
  )
  emptyAction('cancel', (a, u) => svc.cancelOrder(ctx, a, u), 202)
  emptyAction('set_state_executing', (a, u) => svc.setStateExecuting(ctx, a, u))
  emptyAction('set_state_done', (a, u) => svc.setStateDone(ctx, a, u))
  emptyAction('set_state_erred', (a, u, b) => svc.setStateErred(ctx, a, u, b), 200, s.ErrorFieldsBody)

  app.post(
    `${R}/:uuid/set_backend_id/`,
    { schema: { tags, params: UuidParams, body: s.BackendIdBody, response: { 200: StatusBody, ...errors } } },
    async (request) => {
      await svc.setBackendId(ctx, actorOf(request), request.params.uuid, request.body.backend_id)
      return { status: 'Backend ID has been set.' }
    },
  )

  app.post(
    `${R}/:uuid/update_attachment/`,
    {
      schema: {
        tags,
        params: UuidParams,
        consumes: ['multipart/form-data'],
        description: 'multipart/form-data with a PDF file in the field `attachment`',
        response: { 200: s.AttachmentResponse, ...errors },
      },
    },
    async (request) => {
      const actor = actorOf(request)
      let file: { mimetype: string; data: Buffer } | null = null
      if (request.isMultipart()) {
        try {
          for await (const part of request.parts()) {
            if (part.type === 'file' && part.fieldname === 'attachment') {
              file = { mimetype: part.mimetype, data: await part.toBuffer() }
            } else if (part.type === 'file') {
              await part.toBuffer()
            }
          }
        } catch (e) {
          throw unreadableUpload(e)
        }
      }
      return svc.updateAttachment(ctx, actor, request.params.uuid, file, request.baseUrl)
    },
  )

  app.post(
    `${R}/:uuid/delete_attachment/`,
    { schema: { tags, params: UuidParams, response: { 204: NoContent, ...errors } } },
    async (request, reply) => {
      await svc.deleteAttachment(ctx, actorOf(request), request.params.uuid)
      return reply.code(204).send()
    },
  )

  app.get(
    `${R}/:uuid/attachment/`,
    {
      schema: {
        tags,
        params: UuidParams,
        description: 'The attachment file (application/pdf)',
        response: {
          200: {
            description: 'PDF file',
            content: { 'application/pdf': { schema: { type: 'string', format: 'binary' } } },
          },
          ...errors,
        },
      },
    },
    async (request, reply) => {
      const stream = await svc.openAttachment(ctx, actorOf(request), request.params.uuid)
      return reply
        .type('application/pdf')
        .header('content-disposition', 'attachment; filename="attachment.pdf"')
        .send(stream)
    },
  )

  app.get(
    `${R}/:uuid/offering/`,
    { schema: { tags, params: UuidParams, response: { 200: FreeObject, ...errors } } },
    async (request) => svc.getOrderOffering(ctx, actorOf(request), request.params.uuid, request.baseUrl),
  )

  // ---- marketplace resource actions that create orders ----
  const rtags = ['marketplace-resources']
  app.post(
    '/api/marketplace-resources/:uuid/terminate/',
    {
      schema: {
        tags: rtags,
        params: UuidParams,
        body: s.TerminateBody,
        response: { 200: s.OrderUuidResponse, ...errors },
      },
    },
    async (request) =>
      svc.terminateResource(
        ctx,
        actorOf(request),
        request.params.uuid,
        (request.body?.attributes ?? undefined) as Record<string, unknown> | undefined,
      ),
  )
  app.post(
    '/api/marketplace-resources/:uuid/switch_plan/',
    {
      schema: {
        tags: rtags,
        params: UuidParams,
        body: s.SwitchPlanBody,
        response: { 200: s.OrderUuidResponse, ...errors },
      },
    },
    async (request) => svc.switchPlan(ctx, actorOf(request), request.params.uuid, request.body.plan),
  )
  app.post(
    '/api/marketplace-resources/:uuid/update_limits/',
    {
      schema: {
        tags: rtags,
        params: UuidParams,
        body: s.UpdateLimitsBody,
        response: { 200: s.OrderUuidResponse, ...errors },
      },
    },
    async (request) => svc.updateLimits(ctx, actorOf(request), request.params.uuid, request.body.limits),
  )
}

/**
 * can_approve_as_*: the reference's quirk — any present value restricts to the pending state;
 * a true value also restricts to orders the caller may approve.
 */
function boolOrAny(q: Query, name: string): boolean | undefined {
  if (single(q, name) === undefined) return undefined
  return boolFilter(q, name) === true
}
