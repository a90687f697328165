// HTTP for /api/marketplace-orders/ and the order-creating actions of marketplace resources: the
// resources' declarations. The order list and record are the hot path: the service answers them as
// JSON text (`render: 'json'`), from its record cache.
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import { fieldError, forbiddenNoBody } from '../../http/errors.js'
import { filter } from '../../http/filters.js'
import { uuidFromLink } from '../../http/links.js'
import { boolFilter, single, values } from '../../http/query.js'
import {
  defineAction,
  defineResource,
  resourceRoutes,
  type BodyCall,
  type ItemCall,
  columnsOf,
  orderedBy,
} from '../../http/resource.js'
import { DetailBody, errors, FreeObject, NoContent, StatusBody } from '../../http/schemas.js'
import { normalizeUuid } from '../../http/uuid.js'
import { registerResourceOrderRecord } from '../catalog/service.js'
import * as svc from './service.js'
import * as s from './schema.js'
import { ORDER_STATES, ORDER_TYPES } from './state-machine.js'

/** The transitions also document 405: the offering type does not support the action. */
const transitionErrors = { ...errors, 405: DetailBody }

/**
 * can_approve_as_*: the reference's quirk — any present value restricts to the pending state;
 * a true value also restricts to orders the caller may approve.
 */
const approvable = (description: string) =>
  filter.custom(Type.Boolean({ description }), (q, name) =>
    single(q, name) === undefined ? undefined : boolFilter(q, name) === true,
  )

/** Size limits keep their 413; any other failure to read the form (cut short, no boundary, a
 * malformed part) is the client's: 400 on the field the file goes in, as a body that fails its
 * schema is 400 before anything else is looked at. */
function unreadableUpload(e: unknown): unknown {
  const code = (e as { code?: unknown } | null)?.code
  if (code === 'FST_REQ_FILE_TOO_LARGE' || code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT') return e
  if (code === 'FST_FILES_LIMIT') return fieldError('attachment', 'Only one file may be submitted.')
  return fieldError('attachment', 'The submitted data was not a file. Check the encoding type on the form.')
}

/** The PDF in the form's `attachment` field (other files are read and dropped); null without one. */
async function uploadedAttachment(request: FastifyRequest) {
  let file: { mimetype: string; data: Buffer } | null = null
  if (!request.isMultipart()) return file
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
  return file
}

/** A transition answering no body (`status`: 200, or 202 for a cancellation). */
function transition<B extends TSchema>(
  name: string,
  summary: string,
  run: (c: ItemCall & BodyCall<Static<B>>) => Promise<void>,
  body?: B,
  status = 200,
) {
  return defineAction({ name, summary, body, status, response: null, errors: transitionErrors, run })
}

/** An approval answers a detail message (the newest clients read it). */
function approval(name: string, summary: string, run: typeof svc.approveByConsumer) {
  return defineAction({
    name,
    summary,
    response: s.DetailResponse,
    errors: transitionErrors,
    run: async (c) => {
      await run(c.ctx, c.actor, c.uuid)
      return { detail: 'Order has been approved.' }
    },
  })
}

export const orders = defineResource({
  path: s.PATH,
  noun: 'order',
  record: s.OrderSchema,
  list: {
    // In the order they were always read: the first malformed one answers.
    filters: {
      can_approve_as_consumer: approvable('any value: pending consumer review; true: also by the caller'),
      can_approve_as_provider: approvable('any value: pending provider review; true: also by the caller'),
      category_uuid: filter.uuid(),
      created: filter.after(),
      customer_uuid: filter.uuid(),
      modified: filter.after(),
      offering_slug: filter.strings(),
      offering_type: filter.custom(
        Type.Array(Type.String()),
        (q, name) => {
          const types = values(q, name)
            .flatMap((v) => v.split(','))
            .filter(Boolean)
          return types.length ? types : undefined
        },
        undefined,
        { repeatable: true },
      ),
      parent_offering_uuid: filter.uuid(),
      project_uuid: filter.uuid(),
      provider_uuid: filter.uuid(),
      resource_uuid: filter.uuid(),
      resource_name: filter.exact(),
      service_manager_uuid: filter.uuid(),
      state: filter.choice(ORDER_STATES),
      type: filter.choice(ORDER_TYPES),
      offering_uuid: filter.uuid(),
      offering: filter.custom(Type.String({ description: 'offering URL or uuid' }), (q, name) => {
        const v = single(q, name)
        return v === undefined
          ? undefined
          : (normalizeUuid(v) ?? uuidFromLink(v, 'marketplace-provider-offerings'))
      }),
      resource: filter.link('marketplace-resources'),
      query: filter.exact(undefined, {
        description: 'the order uuid or slug, or its project or resource name',
      }),
      // Read after the older ones, so a request that was answered before still is.
      created_before: filter.before(undefined, { description: 'created at or before (date-time)' }),
      modified_before: filter.before(undefined, { description: 'modified at or before (date-time)' }),
      created_after: filter.after(undefined, { description: 'created at or after (date-time), as created' }),
      modified_after: filter.after(undefined, {
        description: 'modified at or after (date-time), as modified',
      }),
      slug: filter.exact(undefined, { description: 'the order slug' }),
      was_auto_approved: filter.boolean(undefined, {
        description: "true: orders placed without waiting for the consumer's review; false: the others",
      }),
    },
    ordering: orderedBy(columnsOf('orders', 'created', 'consumer_reviewed_at', 'cost', 'state'), 'created'),
    render: 'json',
    run: (c) => svc.listOrders(c.ctx, c.actor, c.filters, c.listing.order, c.base, c.pageJson),
  },
  retrieve: { render: 'json', run: (c) => svc.getOrder(c.ctx, c.actor, c.uuid, c.base) },
  create: {
    body: s.OrderCreateBody,
    fieldErrors: true,
    render: 'json',
    run: async (c) => {
      // PostgreSQL renders the new order's record with its insert; SQLite reads it after.
      const { orderId, record } = await svc.createOrder(c.ctx, c.actor, c.body, c.fieldErrors, c.base)
      return record ?? svc.orderRecord(c.ctx, c.actor, orderId, c.base)
    },
  },
  destroy: { run: (c) => svc.deleteOrder(c.ctx, c.actor, c.uuid) },
  actions: [
    defineAction({
      name: 'unlink',
      summary: 'Forget the order without touching the backend (staff only)',
      // Staff only, decided before the order is looked up; the refusal has no body.
      permission: (actor) => {
        if (!actor.isStaff) throw forbiddenNoBody()
      },
      status: 204,
      response: null,
      errors: { 403: NoContent, 404: DetailBody },
      run: (c) => svc.unlinkOrder(c.ctx, c.actor, c.uuid),
    }),
    approval('approve_by_consumer', 'Approve the order as its consumer', svc.approveByConsumer),
    approval('approve_by_provider', 'Approve the order as its provider', svc.approveByProvider),
    transition(
      'reject_by_consumer',
      'Reject the order as its consumer',
      (c) => svc.rejectByConsumer(c.ctx, c.actor, c.uuid, c.body),
      s.ConsumerRejectionBody,
    ),
    transition(
      'reject_by_provider',
      'Reject the order as its provider',
      (c) => svc.rejectByProvider(c.ctx, c.actor, c.uuid, c.body),
      s.ProviderRejectionBody,
    ),
    transition('cancel', 'Cancel the order', (c) => svc.cancelOrder(c.ctx, c.actor, c.uuid), undefined, 202),
    transition('set_state_executing', 'Mark the order as executing', (c) =>
      svc.setStateExecuting(c.ctx, c.actor, c.uuid),
    ),
    transition('set_state_done', 'Mark the order as done', (c) => svc.setStateDone(c.ctx, c.actor, c.uuid)),
    transition(
      'set_state_erred',
      'Mark the order as erred',
      (c) => svc.setStateErred(c.ctx, c.actor, c.uuid, c.body),
      s.ErrorFieldsBody,
    ),
    defineAction({
      name: 'set_backend_id',
      summary: "Set the order's backend id (and its resource's)",
      body: s.BackendIdBody,
      response: StatusBody,
      run: async (c) => {
        await svc.setBackendId(c.ctx, c.actor, c.uuid, c.body.backend_id)
        return { status: 'Backend ID has been set.' }
      },
    }),
    defineAction({
      name: 'update_attachment',
      summary: "Upload the order's PDF attachment",
      description: 'multipart/form-data with a PDF file in the field `attachment`',
      consumes: ['multipart/form-data'],
      response: s.AttachmentResponse,
      run: async (c) =>
        svc.updateAttachment(c.ctx, c.actor, c.uuid, await uploadedAttachment(c.request), c.base),
    }),
    defineAction({
      name: 'delete_attachment',
      summary: "Remove the order's attachment",
      status: 204,
      response: null,
      run: (c) => svc.deleteAttachment(c.ctx, c.actor, c.uuid),
    }),
    defineAction({
      name: 'attachment',
      method: 'GET',
      summary: "Download the order's attachment",
      description: 'The attachment file (application/pdf)',
      response: {
        description: 'PDF file',
        content: { 'application/pdf': { schema: { type: 'string', format: 'binary' } } },
      } as never,
      run: async (c) => {
        const stream = await svc.openAttachment(c.ctx, c.actor, c.uuid)
        return c.reply
          .type('application/pdf')
          .header('content-disposition', 'attachment; filename="attachment.pdf"')
          .send(stream)
      },
    }),
    defineAction({
      name: 'offering',
      method: 'GET',
      summary: 'Retrieve the offering of the order',
      response: FreeObject,
      run: (c) => svc.getOrderOffering(c.ctx, c.actor, c.uuid, c.base),
    }),
  ],
})

/** The marketplace resource actions that place an order: they answer its uuid. */
export const resourceOrders = defineResource({
  path: 'marketplace-resources',
  noun: 'resource',
  record: s.OrderUuidResponse,
  actions: [
    defineAction({
      name: 'terminate',
      summary: 'Terminate the resource (places a Terminate order)',
      body: s.TerminateBody,
      response: s.OrderUuidResponse,
      run: (c) =>
        svc.terminateResource(
          c.ctx,
          c.actor,
          c.uuid,
          (c.body?.attributes ?? undefined) as Record<string, unknown> | undefined,
        ),
    }),
    defineAction({
      name: 'switch_plan',
      summary: "Switch the resource's plan (places an Update order)",
      body: s.SwitchPlanBody,
      response: s.OrderUuidResponse,
      run: (c) => svc.switchPlan(c.ctx, c.actor, c.uuid, c.body.plan),
    }),
    defineAction({
      name: 'update_limits',
      summary: "Change the resource's limits (places an Update order)",
      body: s.UpdateLimitsBody,
      response: s.OrderUuidResponse,
      run: (c) => svc.updateLimits(c.ctx, c.actor, c.uuid, c.body.limits),
    }),
  ],
})

export const ordersRoutes = resourceRoutes([orders, resourceOrders], (app, ctx) => {
  // A resource record shows its order in progress and its creating order as order records.
  registerResourceOrderRecord(svc.orderRecord)
  const jobs = svc.defineOrderJobs(ctx)
  app.addHook('onClose', jobs.close)
})
