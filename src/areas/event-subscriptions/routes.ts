// HTTP for /api/event-subscriptions/ (list, retrieve, delete, create_queue) and the read-only
// /api/event-subscription-queues/.
import { presentedToken } from '../../http/auth.js'
import { DetailBody, errors } from '../../http/schemas.js'
import { filter } from '../../http/filters.js'
import { defineAction, defineResource, resourceRoutes } from '../../http/resource.js'
import * as svc from './service.js'
import * as s from './schema.js'

export const eventSubscriptions = defineResource({
  path: s.PATH,
  noun: 'event subscription',
  record: s.EventSubscriptionSchema,
  visibility: svc.visibility,
  list: {
    filters: {
      user_uuid: filter.uuid('users.uuid'),
      user_username: filter.exact('users.username'),
    },
    ordering: { default: [{ column: 'event_subscriptions.created', desc: false }] },
    run: (c) => svc.listSubscriptions(c.ctx, c.scope, c.listing, c.base, c.page),
  },
  retrieve: { run: (c) => svc.getSubscription(c.ctx, c.actor, c.uuid, c.base) },
  destroy: { run: (c) => svc.deleteSubscription(c.ctx, c.actor, c.uuid) },
  actions: [
    defineAction({
      name: 'create_queue',
      summary: 'Create (201) or find again (200) the RabbitMQ queue of an offering and object type',
      description:
        "Makes the virtual host (the user's uuid hex), the subscription's RabbitMQ user (its uuid hex; " +
        'its password is the token of this request, the STOMP passcode) and the durable queue. ' +
        '503 when the broker is not configured or does not answer.',
      body: s.QueueCreateBody,
      otherStatuses: [201],
      response: s.EventSubscriptionQueueSchema,
      errors: { ...errors, 503: DetailBody },
      run: async (c) => {
        const r = await svc.createQueue(c.ctx, c.actor, c.uuid, c.body, presentedToken(c.request), c.base)
        return c.reply.code(r.created ? 201 : 200).send(r.record)
      },
    }),
  ],
})

export const eventSubscriptionQueues = defineResource({
  path: s.QUEUE_PATH,
  noun: 'event subscription queue',
  record: s.EventSubscriptionQueueSchema,
  visibility: svc.visibility,
  list: {
    filters: {
      event_subscription_uuid: filter.uuid('event_subscriptions.uuid'),
      offering_uuid: filter.uuid('offerings.uuid'),
      object_type: filter.exact('event_subscription_queues.object_type'),
    },
    ordering: { default: [{ column: 'event_subscription_queues.created', desc: false }] },
    run: (c) => svc.listQueues(c.ctx, c.scope, c.listing, c.base, c.page),
  },
  retrieve: { run: (c) => svc.getQueue(c.ctx, c.scope, c.uuid, c.base) },
})

export const eventSubscriptionsRoutes = resourceRoutes([eventSubscriptions, eventSubscriptionQueues])
