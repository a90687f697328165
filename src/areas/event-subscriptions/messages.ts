// What the relay reads (the event log, through the events area's public functions, handed in as an
// `EventSource`) and what it sends: for each event, the kind of queue that observes it and the JSON
// body the reference's site agent reads from that kind of queue. A role grant's message names what
// its event does not carry (the user's username, the project's name and the offerings of the
// project's resources): the relay reads those `GrantFacts` for a whole batch of events at once.
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

/**
 * What the role grant events of a batch need besides themselves, read when the batch is sent: the
 * username of each user they name, and each project's name and the offerings of its resources
 * that are not Terminated.
 */
export interface GrantFacts {
  usernames: ReadonlyMap<string, string>
  projects: ReadonlyMap<string, { name: string; offerings: readonly string[] }>
}

/** A grant or revocation of a role on a project: the only grants the agent's `user_role` reads. */
function projectGrant(event: StoredEvent): { user: string; project: string; granted: boolean } | null {
  if (event.objectType !== 'role_grant') return null
  const granted = event.envelope.type === 'role.granted'
  if (!granted && event.envelope.type !== 'role.revoked') return null
  const data = event.envelope.data
  if (data.scope_type !== 'project') return null
  const user = data.user_uuid
  const project = data.scope_uuid
  if (typeof user !== 'string' || !user || typeof project !== 'string' || !project) return null
  return { user, project, granted }
}

/** The users and projects a batch's role grant events name (what `GrantFacts` are read for). */
export function grantFactsWanted(events: readonly StoredEvent[]): { users: string[]; projects: string[] } {
  const users = new Set<string>()
  const projects = new Set<string>()
  for (const e of events) {
    const g = projectGrant(e)
    if (!g) continue
    users.add(g.user)
    projects.add(g.project)
  }
  return { users: [...users], projects: [...projects] }
}

/**
 * Every message an event gives: those of `messageFor`, and for a role granted on or revoked from
 * a project, one `user_role` message per offering with a resource (not Terminated) in the project
 * when the event is sent: `{"user_uuid", "user_username", "project_uuid", "project_name",
 * "role_name", "granted", "offering_uuid"}` (`granted` true or false). Grants on a customer or an
 * offering give none (the agent's `user_role` handler acts on a project's resources), nor does a
 * grant whose user or project no longer exists.
 */
export function messagesFor(event: StoredEvent, facts: GrantFacts): QueueMessage[] {
  const g = projectGrant(event)
  if (!g) {
    const m = messageFor(event)
    return m ? [m] : []
  }
  const username = facts.usernames.get(g.user)
  const project = facts.projects.get(g.project)
  if (username === undefined || !project) return []
  const role = event.envelope.data.role_name
  return [...new Set(project.offerings)].map((offering) => ({
    objectType: 'user_role' as const,
    offeringUuid: offering,
    body: {
      user_uuid: hex(g.user),
      user_username: username,
      project_uuid: hex(g.project),
      project_name: project.name,
      role_name: typeof role === 'string' ? role : '',
      granted: g.granted,
      offering_uuid: hex(offering),
    },
  }))
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
