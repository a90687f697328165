// What the relay reads (the event log, through the events area's public functions, handed in as an
// `EventSource`) and what it sends: for each event, the kind of queue that observes it and the JSON
// body the reference's site agent reads from that kind of queue.
import type { AppContext } from '../../context.js'
import type { StoredEvent } from '../events/service.js'
import { hex } from './broker.js'

export type { StoredEvent }

/** The event log's reading side, as the relay uses it. */
export interface EventSource {
  /** Up to `limit` committed events after `position`, in position order. */
  eventsAfter(ctx: AppContext, position: number, limit: number): Promise<StoredEvent[]>
  /** Calls `listener` whenever events may have been committed; answers the function that stops it. */
  onEventsCommitted(ctx: AppContext, listener: () => void): () => void
}

/** The kinds of queue an agent may ask for (the reference's observable object types). */
export const OBSERVABLE_OBJECT_TYPES = [
  'order',
  'user_role',
  'resource',
  'offering_user',
  'importable_resources',
  'service_account',
  'course_account',
  'resource_periodic_limits',
  'offering_resources_sync',
  'resource_api_key_rotation',
  'resource_end_date_change_request',
  'user_lifecycle',
  'user_profile',
  'user_ssh_key',
] as const
export type ObservableObjectType = (typeof OBSERVABLE_OBJECT_TYPES)[number]

/** A message for the queues of one offering and one object type. */
export interface QueueMessage {
  objectType: ObservableObjectType
  offeringUuid: string
  body: Record<string, unknown>
}

const ORDER_STATE_EVENTS = new Set(['marketplace.order.created', 'marketplace.order.state_changed'])

/**
 * The message an event gives, if any queue kind observes it:
 * - an order created or changing state: `order`, `{"order_uuid", "order_state", "offering_uuid"}`
 *   (the agent acts on the state it reads, and re-reads the order over REST);
 * - any change of a marketplace resource: `resource`, `{"resource_uuid"}`;
 * - a backend resource request created: `importable_resources`, `{"backend_resource_request_uuid"}`.
 * Uuids are written as 32 hex digits, as the reference writes them.
 */
export function messageFor(event: StoredEvent): QueueMessage | null {
  const data = event.envelope.data
  const text = (v: unknown) => (typeof v === 'string' && v ? v : null)
  const offering = event.offeringUuid ?? text(data.offering_uuid)
  const uuid = text(data.uuid)
  if (!offering || !uuid) return null
  switch (event.objectType) {
    case 'order': {
      if (!ORDER_STATE_EVENTS.has(event.envelope.type)) return null
      const state = text(data.state_after)
      if (!state) return null
      return {
        objectType: 'order',
        offeringUuid: offering,
        body: { order_uuid: hex(uuid), order_state: state, offering_uuid: hex(offering) },
      }
    }
    case 'resource':
      return { objectType: 'resource', offeringUuid: offering, body: { resource_uuid: hex(uuid) } }
    case 'backend_resource_request':
      if (!event.envelope.type.endsWith('.created')) return null
      return {
        objectType: 'importable_resources',
        offeringUuid: offering,
        body: { backend_resource_request_uuid: hex(uuid) },
      }
    default:
      return null
  }
}
