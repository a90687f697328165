// Row types of the event outbox.
import type { Generated } from 'kysely'
import type { Json } from './values.js'

export interface OutboxEventsTable {
  id: Generated<number>
  /** Null on PostgreSQL until the sequencer gives it one, after the commit. */
  position: number | null
  uuid: string
  type: string
  object_type: string
  object_uuid: string
  offering_uuid: string | null
  project_uuid: string | null
  customer_uuid: string | null
  /** The CloudEvents 1.0 envelope, as JSON. */
  envelope: Json
  created: string
}

export interface OutboxPositionsTable {
  name: string
  last: number
}

export interface EventTables {
  outbox_events: OutboxEventsTable
  outbox_positions: OutboxPositionsTable
}
