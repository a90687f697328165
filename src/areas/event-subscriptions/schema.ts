// Event subscriptions (/api/event-subscriptions/) and their RabbitMQ queues, as the reference's
// site agent registers and reads them in its event mode.
import { Type, type Static } from '@sinclair/typebox'
import { Body, DateTime, Nullable, OneOf, Url, Uuid, UuidInput } from '../../http/schemas.js'
import { OBSERVABLE_OBJECT_TYPES } from './messages.js'

export const PATH = 'event-subscriptions'
export const QUEUE_PATH = 'event-subscription-queues'

export const ObservableObjectSchema = Type.Object({
  object_type: Type.String(),
  offering_uuid: Type.Optional(Uuid),
})

export const EventSubscriptionSchema = Type.Object({
  uuid: Uuid,
  url: Url,
  user: Url,
  user_uuid: Uuid,
  user_username: Type.String(),
  user_full_name: Type.String(),
  created: DateTime,
  modified: DateTime,
  source_ip: Nullable(Type.String({ description: 'the address it was registered from' })),
  description: Type.String(),
  observable_objects: Type.Array(ObservableObjectSchema, {
    description: 'what it observes: [{"object_type": ..., "offering_uuid": ...}]',
  }),
})
export type EventSubscription = Static<typeof EventSubscriptionSchema>

export const EventSubscriptionQueueSchema = Type.Object({
  uuid: Uuid,
  url: Url,
  event_subscription: Url,
  event_subscription_uuid: Type.String({ description: 'the subscription uuid, 32 hex digits' }),
  offering_uuid: Type.String({ description: 'the offering uuid, 32 hex digits' }),
  object_type: Type.String({ description: 'the observable object type (order, resource…)' }),
  queue_name: Type.String({
    description: 'subscription_<subscription uuid hex>_offering_<offering uuid hex>_<object type>',
  }),
  vhost: Type.String({ description: "RabbitMQ virtual host: the subscription's user's uuid hex" }),
  created: DateTime,
})
export type EventSubscriptionQueue = Static<typeof EventSubscriptionQueueSchema>

export const ObservableObjectType = OneOf(OBSERVABLE_OBJECT_TYPES)

/** POST marketplace-site-agent-identities/{uuid}/register_event_subscription/ */
export const AgentEventSubscriptionBody = Body({
  observable_object_type: ObservableObjectType,
  description: Type.Optional(Type.String({ maxLength: 2000 })),
})
export type AgentEventSubscriptionCreate = Static<typeof AgentEventSubscriptionBody>

/** POST event-subscriptions/{uuid}/create_queue/ */
export const QueueCreateBody = Body({
  offering_uuid: UuidInput,
  object_type: ObservableObjectType,
})
export type QueueCreate = Static<typeof QueueCreateBody>
