import type { Generated } from 'kysely'
import type { Json } from './values.js'

export interface EventSubscriptionsTable {
  id: Generated<number>
  uuid: string
  user_id: number
  /** The agent identity that registered it (null once that identity is deleted). */
  identity_id: number | null
  description: Generated<string>
  /** [{"object_type": ..., "offering_uuid": ...}] */
  observable_objects: Generated<Json>
  source_ip: string | null
  created: string
  modified: string
}

export interface EventSubscriptionQueuesTable {
  id: Generated<number>
  uuid: string
  subscription_id: number
  offering_id: number
  object_type: string
  created: string
}

export interface EventRelayPositionsTable {
  name: string
  /** The last event published (bigint: PostgreSQL answers it as text). */
  position: Generated<number | string>
  holder: string | null
  lease_until: string | null
  modified: string
}

export interface EventSubscriptionsTables {
  event_subscriptions: EventSubscriptionsTable
  event_subscription_queues: EventSubscriptionQueuesTable
  event_relay_positions: EventRelayPositionsTable
}
